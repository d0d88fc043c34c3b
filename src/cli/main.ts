/**
 * `rezolus <mode> [options]`: picks the mode, parses its options and hands
 * them to the mode's file as one CliContext; maps errors to exit codes
 * (usage and config errors 2, other RezolusErrors 1).
 */
import { parseArgs } from 'node:util';
import { ConfigError, RezolusError } from '../errors.js';
import { VERSION } from '../version.js';
import { AGENT } from './agent.js';
import { ALERT } from './alert.js';
import { EXPORTER } from './exporter.js';
import { HELP, type Mode } from './help.js';
import { HINDSIGHT } from './hindsight.js';
import { LIST_OPTIONS, OPTIONS, type CliContext, type CliMode, type Flags, type OptionName } from './mode.js';
import { NATS_AUTH } from './nats-auth.js';
import { RECORD } from './record.js';
import { SETUP } from './setup.js';
import { STATUS } from './status.js';
import { UP } from './up.js';
import { VIEW } from './view.js';

export const MODES: Record<Mode, CliMode> = { agent: AGENT, exporter: EXPORTER, up: UP, record: RECORD, hindsight: HINDSIGHT, 'nats-auth': NATS_AUTH, view: VIEW, alert: ALERT, status: STATUS, setup: SETUP };

/**
 * `--interval -1s` as `--interval=-1s`: parseArgs takes a value that starts
 * with a dash for another option and says "ambiguous"; joined, the value
 * reaches our own check and its message.
 */
function joinNegativeValues(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const next = args[i + 1];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    const option = name !== undefined && Object.hasOwn(OPTIONS, name) ? OPTIONS[name as OptionName] : undefined;
    if (option?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** OPTIONS with every string option collected as a list, so that one given twice is seen (parseArgs keeps the last). */
const PARSED_OPTIONS = Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, o.type === 'string' ? { ...o, multiple: true } : o]));

/** `--host` for host, `-o/--output` for output: as the user may have typed it. */
function optionLabel(name: string): string {
  const short = (OPTIONS[name as OptionName] as { short?: string }).short;
  return short === undefined ? `--${name}` : `-${short}/--${name}`;
}

/**
 * One value per option: a list option given twice is joined with commas
 * (LIST_OPTIONS); any other is refused ("--host given twice (a, b); give it
 * once"), never silently the last. A flag (boolean) given twice is the same flag.
 */
function oneValueEach(values: Record<string, string[] | boolean | undefined>, m: Mode): Flags {
  const flags: Record<string, string | boolean> = {};
  for (const [name, v] of Object.entries(values)) {
    if (v === undefined) continue;
    if (typeof v === 'boolean') flags[name] = v;
    else if (v.length === 1 || LIST_OPTIONS.has(name as OptionName)) flags[name] = v.join(',');
    else {
      const times = v.length === 2 ? 'twice' : `${v.length} times`;
      // record and hindsight snapshot pick one host with --host, several with --hosts (the agent's and up's --host is its own name)
      const several = name === 'host' && (m === 'record' || m === 'hindsight') ? `, or --hosts ${v.join(',')} for all of them` : '';
      throw new Error(`${optionLabel(name)} given ${times} (${v.join(', ')}); give it once${several}`);
    }
  }
  return flags as Flags;
}

/** The mode's arguments as a context; throws Error with the usage message. */
export function parseMode(m: Mode, mode: CliMode, rest: readonly string[]): CliContext {
  // record wraps a command given after `--`
  const dashes = mode.wrapsCommand === true ? rest.indexOf('--') : -1;
  let own = dashes === -1 ? rest : rest.slice(0, dashes);
  let subcommand: string | undefined;
  if (mode.subcommands === true && own[0] !== undefined && !own[0].startsWith('-')) [subcommand, ...own] = own;
  const command = dashes === -1 ? [] : rest.slice(dashes + 1);
  if (dashes !== -1 && command.length === 0) throw new Error('no command after --');
  const parsed = parseArgs({ args: joinNegativeValues(own), options: PARSED_OPTIONS, strict: true, allowPositionals: mode.positionals === true });
  const bad = Object.keys(parsed.values).filter((k) => k !== 'help' && !mode.options.includes(k as OptionName));
  if (bad.length > 0) throw new Error(`option --${bad[0]} is not known to "rezolus ${m}"`);
  const flags = oneValueEach(parsed.values as Record<string, string[] | boolean | undefined>, m);
  return { flags, positionals: parsed.positionals, command, subcommand };
}

/** The exit code; -1 for a service, which keeps running until a signal. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP.main);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (!Object.hasOwn(MODES, name)) {
    process.stderr.write(`rezolus: unknown mode "${name}"\n\n${HELP.main}`);
    return 2;
  }
  const m = name as Mode;
  const mode = MODES[m];
  let ctx: CliContext;
  try {
    ctx = parseMode(m, mode, rest);
  } catch (error) {
    process.stderr.write(`rezolus ${m}: ${(error as Error).message} (rezolus ${m} --help lists the options)\n`);
    return 2;
  }
  if (ctx.flags.help === true) {
    process.stdout.write(HELP[m]);
    return 0;
  }
  try {
    const code = await mode.run(ctx);
    return code ?? -1; // services keep running until a signal
  } catch (error) {
    if (error instanceof RezolusError) {
      process.stderr.write(`rezolus ${m}: ${error.message}\n`);
      return error instanceof ConfigError ? 2 : 1;
    }
    throw error;
  }
}
