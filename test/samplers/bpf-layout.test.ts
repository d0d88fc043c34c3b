import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
        layout.programs.map((p) => [p.name, `${p.raw === true ? 'raw_tp' : 'tp_btf'}/${p.event}`]).sort(),
        'the same programs on the same tracepoints',
      );
    } finally {
      object.close();
    }
  });
}

// The slot and count constants: a `#define NAME n` of the C and an export of
// the same name in the sampler's maps.ts (a number, or an array whose length
// is n) must agree, and a lone counter bank's BANK_WIDTH must be its width.
const ROOT = new URL('../..', import.meta.url).pathname;

function cDefines(object: string): Map<string, number> {
  const text = readFileSync(join(ROOT, 'bpf', `${object}.bpf.c`), 'utf8');
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^#define ([A-Z][A-Z0-9_]*) (\d+)\s*$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

for (const { sampler, layout } of layouts) {
  test(`${sampler}: the slot constants of maps.ts are the #defines of ${layout.object}.bpf.c`, async (t) => {
    const defines = cDefines(layout.object);
    const ts = (await import(join(ROOT, 'src', 'samplers', layout.object, 'maps.ts'))) as Record<string, unknown>;
    let compared = 0;
    for (const [name, value] of Object.entries(ts)) {
      const c = defines.get(name);
      if (c === undefined) continue;
      if (typeof value === 'number') t.is(value, c, `${name}`);
      else if (Array.isArray(value)) t.is(value.length, c, `${name}.length`);
      else continue;
      compared++;
    }
    const banks = Object.values(layout.maps).filter((m) => m.kind === 'counters');
    if (banks.length === 1 && defines.has('BANK_WIDTH')) {
      t.is(banks[0]!.kind === 'counters' ? banks[0]!.width : -1, defines.get('BANK_WIDTH') ?? -2, 'BANK_WIDTH');
      compared++;
    }
    const exportsNumbers = Object.values(ts).some((v) => typeof v === 'number');
    if (exportsNumbers || banks.length > 0) t.true(compared > 0, 'at least one constant shared by the C and the TS');
    else t.pass('no slot constants: its maps are histograms indexed by label order alone');
  });
}
