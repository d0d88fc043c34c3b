import test from 'ava';
import { checkExposition } from '../helpers/exposition-check.js';
import { promtoolCheck } from '../helpers/promtool.js';

const OK = `# HELP a_total A
# TYPE a_total counter
a_total{host="x",k="v \\" \\\\ \\n"} 1
a_total{host="y"} 2.5e-9
# HELP b B \\\\ \\n
# TYPE b gauge
b 3
`;

test('a clean exposition has no problems', (t) => {
  t.deepEqual(checkExposition(OK), []);
  t.deepEqual(checkExposition(''), []);
});

test('problems promtool does not report are found', (t) => {
  const has = (text: string, fragment: string) => {
    const problems = checkExposition(text);
    t.true(
      problems.some((p) => p.includes(fragment)),
      `expected "${fragment}" in ${JSON.stringify(problems)}`,
    );
  };
  has(`${OK}a_total{host="x"} 1\n`, 'not contiguous');
  has(OK.replace('a_total{host="y"}', 'a_total{host="x",k="v \\" \\\\ \\n"}'), 'duplicate series');
  has(OK.replace('# HELP b B \\\\ \\n\n', ''), 'without a HELP');
  has(OK.replace('# TYPE b gauge\n', ''), 'without a TYPE');
  has(OK.replace('b 3', 'b NaN'), 'not a finite number');
  has(OK.replace('b 3', 'b +Inf'), 'not a finite number');
  has(OK.replace('2.5e-9', '1,5'), 'not a finite number');
  has(OK.replace('host="y"', '0bad="y"'), 'invalid label name');
  has(OK.replace('host="y"', 'host=y'), 'expected label name');
  has(OK.replace('host="y"', '__name__="y"'), 'invalid label name');
  has(OK.replace('host="y"', 'host="y",host="z"'), 'repeated');
  has(OK.replace('k="v', 'k="\\t'), 'invalid escape');
  has(OK.replace('HELP b B', 'HELP b B \\t'), 'invalid escape in HELP');
  has(OK.replaceAll('a_total', 'a'), 'does not end with _total');
  has(`${OK}# HELP b again\n`, 'second HELP');
  has(`# HELP c C\n# TYPE c gauge\n`, 'has no samples');
  has(OK.replace('b 3\n', 'b 3'), 'newline');
  has(OK.replace('b 3', 'b 3 extra'), 'cannot parse value');
});

test('the promtool helper reports status and output', (t) => {
  const clean = promtoolCheck(OK);
  if (clean === undefined) {
    t.log('promtool missing (apt-get install prometheus); skipped');
    t.pass();
    return;
  }
  t.is(clean.status, 0, clean.output);
  const broken = promtoolCheck('a_total{ 1\n');
  t.is(broken?.status, 1);
  const lint = promtoolCheck('# HELP a A\n# TYPE a counter\na 1\n');
  t.is(lint?.status, 3);
  t.regex(lint?.output ?? '', /_total/);
});
