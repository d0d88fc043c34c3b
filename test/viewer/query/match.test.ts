import test from 'ava';
import { globToRegExp, labelMatcher } from '../../../src/viewer/query/match.js';

test('globs: * any run, ? one character, the rest literal, whole value', (t) => {
  const cases: [string, string, boolean][] = [
    ['*', '', true],
    ['*', 'anything at all', true],
    ['eth*', 'eth0', true],
    ['eth*', 'veth0', false],
    ['?', '7', true],
    ['?', '17', false],
    ['1?', '17', true],
    ['1*', '1', true],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['(x)+[y]', '(x)+[y]', true],
    ['^$\\|{2}', '^$\\|{2}', true],
    ['sd?', 'sdä', true],
    ['/sys/*', '/sys/fs/cgroup', true],
    ['a*b*c', 'a-x-b-y-c', true],
    ['a*b*c', 'a-x-c-y-b', false],
  ];
  for (const [glob, value, expected] of cases) t.is(globToRegExp(glob).test(value), expected, `${glob} ~ ${value}`);
});

test('labelMatcher: every glob must match; a missing label is the empty string', (t) => {
  const m = labelMatcher({ state: 'user', id: '1?' });
  t.true(m({ state: 'user', id: '12' }));
  t.false(m({ state: 'system', id: '12' }));
  t.false(m({ state: 'user', id: '2' }));
  t.false(m({ state: 'user' }));
  t.true(labelMatcher({})({ anything: 'x' }));
  t.true(labelMatcher({ device: '*' })({}));
  t.false(labelMatcher({ device: '?*' })({}));
});
