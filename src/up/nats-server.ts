import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { RezolusError } from '../errors.js';

export interface NatsServerOptions {
  readonly binary: string;
  /** loopback port; 0 picks a free one */
  readonly port: number;
  /** JetStream store and log live here */
  readonly dataDir: string;
  readonly startTimeoutMs?: number;
  /** a nats-server config file (-c): accounts, users, tls {}; the flags here override its listen and store */
  readonly configFile?: string | undefined;
  /** picks the port when `port` is 0 (default: freePort; a test gives one that returns a taken port first) */
  readonly pickPort?: () => Promise<number>;
}

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly storeDir: string;
  readonly logFile: string;
  readonly process: ChildProcess;
  /** resolves when the process has exited, for whatever reason */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after 5 s; resolves when the process is gone */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (the kernel picks it; there is a small race until the server binds). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** True when a NATS server answers on host:port (it greets every client with an INFO line). */
export async function natsAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (d) => done(d.toString('latin1').startsWith('INFO ')));
    socket.connect(port, host);
  });
}

/** A small file's text, trimmed; undefined when it cannot be read. */
function readTrimmed(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function pidIn(file: string): number | undefined {
  const text = readTrimmed(file);
  return text === undefined ? undefined : Number(text);
}

/** The pid of a nats-server running with its store on `dataDir` (from its pid file), if any. */
function serverOn(pidFile: string, dataDir: string): number | undefined {
  const pid = pidIn(pidFile);
  if (pid === undefined) return undefined; // no pid file
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.startsWith('/') && cmdline.includes('nats-server') && cmdline.split('\0').includes(dataDir) ? pid : undefined;
  } catch {
    return undefined; // not running any more
  }
}

/**
 * A server left running on this data dir by a run that was killed (kill -9
 * skips every exit handler) would share the store with the new one: stop it.
 */
async function stopStale(pidFile: string, dataDir: string): Promise<void> {
  const pid = serverOn(pidFile, dataDir);
  if (pid === undefined) return;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 50));
  if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
  process.stderr.write(`rezolus: stopped nats-server pid ${pid} left running on ${dataDir} by an earlier run\n`);
}

/** The file in the data directory that holds a running private server's URL. */
export const URL_FILE = 'nats.url';

/** What the URL file of a data directory says, whether or not its server still runs. */
export function urlFileOf(dataDir: string): string | undefined {
  return readTrimmed(join(dataDir, URL_FILE));
}

/**
 * The URL of the private server `rezolus up` runs on `dataDir` (default
 * ./data), when one is running and answers; undefined otherwise.
 */
export async function privateServerUrl(dataDir = './data'): Promise<string | undefined> {
  const dir = resolve(dataDir);
  // the server of that store, not whatever took its old port since
  if (serverOn(join(dir, 'nats-server.pid'), dir) === undefined) return undefined;
  const url = urlFileOf(dir);
  if (url === undefined) return undefined;
  const m = /^nats:\/\/127\.0\.0\.1:(\d+)$/.exec(url);
  return m !== null && (await natsAnswers('127.0.0.1', Number(m[1]), 500)) ? url : undefined;
}

/** True when a nats-server log (or its stderr) says a port it wanted was taken. */
export function portTakenIn(text: string): boolean {
  return /bind: address already in use/.test(text);
}

/** The text a file gained past `from` bytes ('' when it cannot be read). */
function textSince(file: string, from: number): string {
  try {
    return readFileSync(file).subarray(from).toString('utf8');
  } catch {
    return '';
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Starts `nats-server -js` on loopback with its store under dataDir and waits until it answers. */
export async function startNatsServer(o: NatsServerOptions): Promise<NatsServer> {
  if (!existsSync(o.binary)) {
    throw new RezolusError(
      'NATS_SERVER_MISSING',
      `nats-server not found at ${o.binary}: install it (apt-get install nats-server) or pass --nats URL`,
    );
  }
  mkdirSync(o.dataDir, { recursive: true });
  const logFile = join(o.dataDir, 'nats-server.log');
  const pidFile = join(o.dataDir, 'nats-server.pid');
  await stopStale(pidFile, o.dataDir);
  // A port picked here is free when picked, but any process (another test, or
  // an outgoing connection's ephemeral port) may take it before the server
  // binds: then a new one is picked. A port the caller named is not changed.
  for (let attempt = 1; ; attempt++) {
    const port = o.port === 0 ? await (o.pickPort ?? freePort)() : o.port;
    try {
      return await launch(o, port, logFile, pidFile);
    } catch (error) {
      if (error instanceof PortTaken && o.port === 0 && attempt < PORT_ATTEMPTS) continue;
      throw error instanceof PortTaken ? error.cause : error;
    }
  }
}

const PORT_ATTEMPTS = 5;

/** Servers of this process still running: killed when it exits, by one
 * 'exit' listener for all of them (a test may run a dozen at once). */
const running = new Set<ChildProcess>();

function killOnExit(child: ChildProcess): void {
  if (running.size === 0) process.once('exit', killRunning);
  running.add(child);
  child.once('exit', () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', killRunning);
  });
}

function killRunning(): void {
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** The server exited at start because its port was taken (`cause` is the error to report). */
class PortTaken extends Error {}

async function launch(o: NatsServerOptions, port: number, logFile: string, pidFile: string): Promise<NatsServer> {
  const config = o.configFile === undefined ? [] : ['-c', o.configFile];
  const logFrom = sizeOf(logFile);
  const child = spawn(o.binary, [...config, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', o.dataDir, '-l', logFile, '-P', pidFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its own process group: a Ctrl-C in the terminal reaches rezolus, which stops
    // the server last, after agent and exporter have drained their connections.
    detached: true,
  });
  // ...and it never outlives this process, whatever way this process ends.
  killOnExit(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + (o.startTimeoutMs ?? 10_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const failed = new RezolusError('NATS_SERVER_FAILED', `nats-server exited (${child.exitCode ?? child.signalCode}) at start; see ${logFile} ${stderr}`.trim());
      if (portTakenIn(stderr + textSince(logFile, logFrom))) throw new PortTaken(`port ${port} taken`, { cause: failed });
      throw failed;
    }
    if (await natsAnswers('127.0.0.1', port, 500)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new RezolusError('NATS_SERVER_FAILED', `nats-server did not answer on 127.0.0.1:${port}; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // one-shot modes started in the same directory find the server here (privateServerUrl)
  const urlFile = join(o.dataDir, URL_FILE);
  writeFileSync(urlFile, `nats://127.0.0.1:${port}\n`);
  void exited.then(() => rmSync(urlFile, { force: true }));
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    // nats-server keeps its store in <-sd>/jetstream
    storeDir: join(o.dataDir, 'jetstream'),
    logFile,
    process: child,
    exited,
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      // a server killed with SIGKILL leaves its pid file behind
      if (pidIn(pidFile) === child.pid) rmSync(pidFile, { force: true });
    },
  };
}
