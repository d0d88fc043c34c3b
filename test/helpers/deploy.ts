/**
 * The shipped deployment files (docker/, systemd/, k8s/) read the way their tools read them:
 * compose.yaml with YAML merge keys and compose's ${VAR} interpolation, systemd units as
 * key=value lines, the Kubernetes manifests as YAML documents. Every rezolus command line they
 * hold, so tests can check those lines against the CLI and run them.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../../scripts/gen-docs.js';
import type { Mode } from '../../src/cli/help.js';
import { MODES, parseMode } from '../../src/cli/main.js';

export { ROOT };
export const DOCKER_DIR = join(ROOT, 'docker');
export const COMPOSE_FILE = join(DOCKER_DIR, 'compose.yaml');
export const SYSTEMD_DIR = join(ROOT, 'systemd');
export const K8S_DIR = join(ROOT, 'k8s');
/** The image the compose file and the manifests run rezolus from. */
export const IMAGE = 'rezolus-nats';

/** Values for the variables compose.yaml requires (${VAR:?...}); a test's docker/.env. */
export const COMPOSE_ENV: Readonly<Record<string, string>> = {
  REZOLUS_HOST: 'deploy-test',
  NATS_ROUTE_PASSWORD: 'route-secret-for-tests',
  REZOLUS_HTTP_TOKEN: 'http-token-for-tests-0123456789',
};

/** Runs a tool; never throws (a missing binary is status null with error set). */
export function run(cmd: string, args: readonly string[], o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> & { output2: string } {
  const r = spawnSync(cmd, args, { cwd: o.cwd ?? ROOT, env: o.env ?? process.env, encoding: 'utf8', timeout: 60_000 });
  return Object.assign(r, { output2: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` });
}

export const bin = (name: string): string => join(ROOT, 'node_modules', '.bin', name);

/** Compose's ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?message}, ${VAR?message}, $VAR and $$. */
export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_]\w*)(?:(:?)([-?])([^}]*))?\}|\$([A-Za-z_]\w*)/g, (m, name: string | undefined, colon: string | undefined, op: string | undefined, arg: string | undefined, bare: string | undefined) => {
    if (m === '$$') return '$';
    if (bare !== undefined) return env[bare] ?? '';
    const value = env[name as string];
    const unset = value === undefined || (colon === ':' && value === '');
    if (op === '-') return unset ? (arg as string) : (value as string);
    if (op === '?') {
      if (unset) throw new Error(`${name}: ${arg}`);
      return value as string;
    }
    return value ?? '';
  });
}

function interpolateAll(value: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((v) => interpolateAll(v, env));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env)]));
  return value;
}

export interface ComposeService {
  image?: string;
  command?: string[];
  user?: string;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  network_mode?: string;
  depends_on?: Record<string, { condition: string }>;
}

/** docker/compose.yaml as docker-compose resolves it (merge keys, interpolation from env). */
export function loadCompose(env: Readonly<Record<string, string | undefined>> = COMPOSE_ENV): { services: Record<string, ComposeService> } {
  const doc = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
  return interpolateAll(doc, env) as { services: Record<string, ComposeService> };
}

export interface CommandLine {
  /** where the line is: "compose exporter", "systemd rezolus-agent.service", "k8s rezolus-agent/agent" */
  readonly where: string;
  /** the rezolus arguments: the mode first */
  readonly args: readonly string[];
}

export function composeCommands(env: Readonly<Record<string, string | undefined>> = COMPOSE_ENV): CommandLine[] {
  return Object.entries(loadCompose(env).services)
    .filter(([, s]) => s.image === IMAGE)
    .map(([name, s]) => ({ where: `compose ${name}`, args: s.command ?? ['agent', '--config', '/etc/rezolus/agent.toml'] }));
}

export interface UnitLine {
  readonly section: string;
  readonly key: string;
  readonly value: string;
}

/** A systemd unit's assignments, in order (no line continuations: the units use none). */
export function parseUnit(text: string): UnitLine[] {
  const out: UnitLine[] = [];
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head !== null) {
      section = head[1] as string;
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`not a key=value line: ${line}`);
    out.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() });
  }
  return out;
}

export const unitFiles = (): string[] => readdirSync(SYSTEMD_DIR).filter((f) => f.endsWith('.service')).sort();

const REZOLUS_JS = '/opt/rezolus/bin/rezolus.js';

export function systemdCommands(): CommandLine[] {
  return unitFiles().map((f) => {
    const exec = parseUnit(readFileSync(join(SYSTEMD_DIR, f), 'utf8')).find((l) => l.key === 'ExecStart');
    const words = (exec?.value ?? '').split(/\s+/);
    const at = words.indexOf(REZOLUS_JS);
    if (at < 0) throw new Error(`${f}: ExecStart does not run ${REZOLUS_JS}`);
    return { where: `systemd ${f}`, args: words.slice(at + 1) };
  });
}

export interface K8sContainer {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
  livenessProbe?: { exec?: { command: string[] } };
  readinessProbe?: { exec?: { command: string[] }; httpGet?: { path: string; port: string | number } };
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: { template?: { spec: { containers: K8sContainer[]; volumes?: { name: string; configMap?: { name: string } }[] } }; ports?: { port: number; targetPort: string | number }[] };
}

export const k8sFiles = (): string[] => readdirSync(K8S_DIR).filter((f) => f.endsWith('.yaml')).sort();

export function loadK8s(): { file: string; object: K8sObject }[] {
  return k8sFiles().flatMap((file) => parseAllDocuments(readFileSync(join(K8S_DIR, file), 'utf8')).map((d) => ({ file, object: d.toJS() as K8sObject })));
}

export function k8sContainers(): { where: string; container: K8sContainer }[] {
  return loadK8s().flatMap(({ object }) => (object.spec?.template?.spec.containers ?? []).map((c) => ({ where: `k8s ${object.metadata.name}/${c.name}`, container: c })));
}

export function k8sCommands(): CommandLine[] {
  return k8sContainers()
    .filter(({ container }) => container.image.startsWith(`${IMAGE}:`))
    .map(({ where, container }) => ({ where, args: container.args ?? [] }));
}

/** The value after `--flag` in a command line, or undefined. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

/** The problem `rezolus ARGS` has with its arguments before running anything, or '' */
export function parseProblem(args: readonly string[]): string {
  const [mode, ...rest] = args;
  if (mode === undefined || !Object.hasOwn(MODES, mode)) return `unknown mode ${mode}`;
  try {
    parseMode(mode as Mode, MODES[mode as Mode], rest);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}
