import test from 'ava';
import { nthField, splitFields } from '../../src/samplers/fields.js';

test('nthField gives what splitFields gives at that index, for every index, separators anywhere', (t) => {
  const lines = [
    '   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0',
    '8 0 sda 1 2 3',
    '\tcpu0\t 10  20\r',
    'one',
    '',
    '   ',
    'a  b\t\tc \r d ',
  ];
  for (const line of lines) {
    const all = splitFields(line);
    for (let k = 0; k <= all.length + 2; k++) t.is(nthField(line, k), all[k], `${JSON.stringify(line)} field ${k}`);
  }
});
