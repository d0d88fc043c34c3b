/**
 * Counts the CPUs in a sysfs CPU list such as `0-3,8,10-11`. Returns undefined
 * when the text is not a CPU list.
 */
export function parseCpuList(text: string): number[] | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const cpus: number[] = [];
  for (const part of trimmed.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 65536) return undefined;
    for (let c = lo; c <= hi; c++) cpus.push(c);
  }
  return cpus;
}
