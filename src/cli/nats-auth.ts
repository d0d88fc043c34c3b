import { DEFAULT_STREAM } from '../bus/subjects.js';
import type { CliContext, CliMode } from './mode.js';

/** `rezolus nats-auth`: the server-side users and permissions for a list of hosts, on stdout. */
async function natsAuthMode({ flags }: CliContext): Promise<number> {
  const { runNatsAuth } = await import('../security/nats-auth-command.js');
  const out = runNatsAuth({ hosts: flags.hosts, hostsFile: flags['hosts-file'], nkeys: flags.nkeys === true, secretsDir: flags['secrets-dir'], stream: flags.stream ?? DEFAULT_STREAM });
  process.stdout.write(out.config);
  process.stderr.write(`${out.summary}\n`);
  return 0;
}

export const NATS_AUTH: CliMode = {
  options: ['hosts', 'hosts-file', 'nkeys', 'secrets-dir', 'stream'],
  run: natsAuthMode,
};
