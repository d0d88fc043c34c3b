/**
 * Log lines for a person at a terminal: pino's JSON records turned into
 * `12:04:05.123 WARN  agent/http  message  key=value …`. JSON stays the
 * format everywhere else (a file, a pipe, journald, a container's log), where
 * a machine reads it.
 */
import { writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';

const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Readonly<Record<number, string>> = { 10: '\x1b[90m', 20: '\x1b[90m', 30: '\x1b[36m', 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[41;97m' };
const RESET = '\x1b[0m';
/** record fields that have their own place in the line, or none */
const PLACED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'process', 'component', 'sampler', 'err']);

function clock(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** A value as `key=value` shows it: bare when it is one plain word, else JSON. */
function shown(v: unknown): string {
  if (typeof v === 'string') return /^[\w.:/@+,-]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v);
}

interface LoggedError {
  readonly type?: string;
  readonly message?: string;
  readonly code?: string;
  readonly stack?: string;
}

/** One pino record (parsed) as one human line, or a few when an error's stack is shown. */
export function humanLine(record: Record<string, unknown>, color = false): string {
  const level = Number(record.level);
  const label = (LEVELS[level] ?? `L${level}`).padEnd(5);
  const where = [record.process, record.component, record.sampler].filter((p) => typeof p === 'string' && p !== '').join('/');
  const fields = Object.entries(record)
    .filter(([k]) => !PLACED.has(k))
    .map(([k, v]) => `${k}=${shown(v)}`);
  const err = record.err as LoggedError | undefined;
  const errText = err === undefined ? '' : `  ${err.type ?? 'Error'}${err.code === undefined ? '' : ` ${err.code}`}: ${err.message ?? ''}`;
  const head = `${clock(Number(record.time))} ${color ? `${COLORS[level] ?? ''}${label}${RESET}` : label} ${where === '' ? '' : `${where}  `}${String(record.msg ?? '')}`;
  const tail = fields.length === 0 ? '' : `  ${fields.join(' ')}`;
  // a stack helps with a bug, not with a message meant for the user: shown from error up
  const stack = err?.stack !== undefined && level >= 50 ? `\n${err.stack.split('\n').slice(1).join('\n')}` : '';
  return `${head}${errText}${tail}${stack}`;
}

/** A pino destination writing human lines to a file descriptor (stderr by default), synchronously like pino.destination(2). */
export function humanDestination(fd = 2, color = true): DestinationStream {
  return {
    write(line: string): void {
      let out: string;
      try {
        out = humanLine(JSON.parse(line) as Record<string, unknown>, color);
      } catch {
        out = line.trimEnd();
      }
      writeSync(fd, `${out}\n`);
    },
  };
}

/** JSON unless stderr is a terminal; REZOLUS_LOG_FORMAT=json or human decides instead. */
export function wantsHumanLogs(env: NodeJS.ProcessEnv = process.env, isTty = process.stderr.isTTY === true): boolean {
  const asked = env.REZOLUS_LOG_FORMAT;
  if (asked === 'json') return false;
  if (asked === 'human') return true;
  return isTty;
}
