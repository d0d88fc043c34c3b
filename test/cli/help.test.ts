/**
 * Every mode's --help lists every option the mode takes, and no option it
 * does not take: the help text is compared with the mode's option table
 * (src/cli/<mode>.ts), so the two cannot drift apart. An option is listed
 * when a line of the help starts with it (`  --host NAME  ...`, `  -o,
 * --output FILE ...`).
 */
import test from 'ava';
import { HELP, type Mode } from '../../src/cli/help.js';
import { MODES } from '../../src/cli/main.js';
import { OPTIONS } from '../../src/cli/mode.js';

/** The options a help text lists: the first word of lines that start with - (after the indent). */
function listed(help: string): string[] {
  const out = new Set<string>();
  for (const line of help.split('\n')) {
    const m = /^\s+(?:-([a-zA-Z]), )?--([a-z][a-z-]*)/.exec(line);
    if (m?.[2] !== undefined) out.add(m[2]);
  }
  return [...out].sort();
}

for (const [name, mode] of Object.entries(MODES) as [Mode, (typeof MODES)[Mode]][]) {
  test(`rezolus ${name} --help lists exactly the options ${name} takes`, (t) => {
    const help = HELP[name];
    t.deepEqual(listed(help), [...mode.options, 'help'].sort());
    // a short form is shown where the option has one
    for (const option of mode.options) {
      const short = (OPTIONS[option] as { short?: string }).short;
      if (short !== undefined) t.regex(help, new RegExp(`^\\s+-${short}, --${option}\\b`, 'm'), `-${short} shown with --${option}`);
    }
  });
}

test('rezolus up --help says what up starts, where, and how to leave each out', (t) => {
  const help = HELP.up;
  for (const [service, where, off] of [
    ['nats-server', '127.0.0.1:4222', 'Off: --nats URL'],
    ['agent', 'http://127.0.0.1:4241', '[http] enabled = false'],
    ['exporter', 'http://0.0.0.0:4242/metrics', 'Always on'],
    ['hindsight', 'http://127.0.0.1:4243', 'Always on'],
    ['viewer', '--view-listen HOST:PORT', 'Off: --view-listen off'],
    ['alerts', 'rezolus.alerts.>', 'Off: --alerts off'],
  ] as const) {
    const block = new RegExp(`^  ${service} +[^]*?(?=^  [a-z-]+ {2,}|^\\n)`, 'm').exec(help)?.[0] ?? '';
    t.true(block.includes(where), `${service}: where (${where})`);
    t.true(block.includes(off), `${service}: how to leave it out (${off})`);
  }
});

test('rezolus --help names every mode', (t) => {
  for (const name of Object.keys(MODES)) t.regex(HELP.main, new RegExp(`^  ${name} +\\S`, 'm'));
});
