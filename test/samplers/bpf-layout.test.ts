import test from 'ava';
import { existsSync } from 'node:fs';
import { bpfObjectPath, loadNative } from '../../src/native/index.js';
import { declaredShape } from '../../src/samplers/kernel/layout.js';
import { SAMPLERS } from '../../src/samplers/registry.js';

// Each BPF sampler declares its object's programs and maps in TS (maps.ts);
// the compiled object must match, map by map and program by program. Opening
// an object reads its ELF and BTF only: nothing is loaded into the kernel.

const BPF_MAP_TYPE_HASH = 1;
const BPF_MAP_TYPE_ARRAY = 2;

const layouts = SAMPLERS.flatMap((s) => (s.layouts ?? []).map((layout) => ({ sampler: s.name, layout })));

test('every kernel sampler declares its BPF layout or reads perf events only', (t) => {
  t.true(layouts.length >= 1);
  for (const s of SAMPLERS.filter((x) => x.kernel)) t.true(s.layouts !== undefined, `${s.name} declares layouts`);
});

for (const { sampler, layout } of layouts) {
  test(`${sampler}: the maps and programs of ${layout.object}.bpf.o are the ones maps.ts declares`, (t) => {
    const path = bpfObjectPath(layout.object);
    t.true(existsSync(path), `${path} is built`);
    const object = new (loadNative().BpfObject)(path);
    try {
      const maps = object.maps().filter((m) => !m.name.includes('.'));
      t.deepEqual(maps.map((m) => m.name).sort(), Object.keys(layout.maps).sort(), 'the same maps');
      for (const m of maps) {
        const declared = layout.maps[m.name];
        if (declared === undefined) continue;
        const shape = declaredShape(declared);
        t.is(m.valueSize, shape.valueSize, `${m.name} value size`);
        t.is(m.maxEntries, shape.maxEntries, `${m.name} entries`);
        t.is(m.mmapable, shape.mmapable, `${m.name} mmapable`);
        t.is(m.type, shape.hash ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_ARRAY, `${m.name} type`);
        if (declared.kind === 'counters') t.is(declared.width % 8, 0, `${m.name}: whole cache lines per CPU`);
      }
      const programs = object.programs();
      t.deepEqual(
        programs.map((p) => [p.name, p.section]).sort(),
        layout.programs.map((p) => [p.name, `tp_btf/${p.event}`]).sort(),
        'the same programs on the same tracepoints',
      );
    } finally {
      object.close();
    }
  });
}
