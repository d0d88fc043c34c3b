/**
 * What `main` hands a mode: the parsed flags and the words around them, as
 * one explicit value (no module state). Each mode file exports a CliMode that
 * lists the options it takes next to its code.
 */

/** Every option any mode takes; parseArgs reads all of them, then main refuses the ones the mode does not list. */
export const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
  nats: { type: 'string' },
  'log-level': { type: 'string' },
  host: { type: 'string' },
  interval: { type: 'string' },
  'scrape-interval': { type: 'string' },
  procfs: { type: 'string' },
  sysfs: { type: 'string' },
  listen: { type: 'string' },
  hosts: { type: 'string' },
  'data-dir': { type: 'string' },
  'nats-port': { type: 'string' },
  duration: { type: 'string' },
  output: { type: 'string', short: 'o' },
  since: { type: 'string' },
  until: { type: 'string' },
  stream: { type: 'string' },
  last: { type: 'string' },
  'hindsight-listen': { type: 'string' },
  'hosts-file': { type: 'string' },
  nkeys: { type: 'boolean' },
  'secrets-dir': { type: 'string' },
  durable: { type: 'string' },
  window: { type: 'string' },
  'save-dir': { type: 'string' },
  'view-listen': { type: 'string' },
  alerts: { type: 'string' },
  json: { type: 'boolean' },
  'silent-after': { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;

/**
 * The options whose value is a comma-separated list: given twice, the
 * values are joined (`--hosts a --hosts b` is `--hosts a,b`; `--nats` takes
 * the URLs of a cluster). Any other option given twice is refused (main.ts):
 * which of two --host values was meant cannot be guessed.
 */
export const LIST_OPTIONS: ReadonlySet<OptionName> = new Set(['hosts', 'nats']);

export type Flags = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

export interface CliContext {
  readonly flags: Flags;
  /** `rezolus record URL OUTPUT` (the seeds' form); empty for the other modes */
  readonly positionals: readonly string[];
  /** the command `rezolus record … -- cmd args` wraps; empty when none */
  readonly command: readonly string[];
  /** `rezolus hindsight <subcommand>` */
  readonly subcommand: string | undefined;
}

export interface CliMode {
  /** the options it takes besides --help */
  readonly options: readonly OptionName[];
  /** takes positional arguments (record: URL OUTPUT) */
  readonly positionals?: boolean;
  /** wraps a command given after `--` (record) */
  readonly wrapsCommand?: boolean;
  /** a first word that is not an option is a subcommand (hindsight snapshot) */
  readonly subcommands?: boolean;
  /** the exit code; undefined for a service, which runs until a signal */
  run(ctx: CliContext): Promise<number | undefined>;
}
