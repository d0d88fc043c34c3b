/**
 * rezolus_self's unlabelled series, by name, as an agent's own HTTP snapshot
 * serves them (GET /metrics/json): what an operator can read while the bus is
 * down (rezolus_publish_buffered, _dropped ...). Empty before its first frame.
 */
export async function selfFigures(port: number): Promise<Record<string, number>> {
  const doc = (await (await fetch(`http://127.0.0.1:${port}/metrics/json`)).json()) as {
    frames: { sampler: string; descriptor: string; values: unknown[] }[];
    descriptors: Record<string, { series: [string, string[]][] }>;
  };
  const self = doc.frames.find((f) => f.sampler === 'rezolus_self');
  const out: Record<string, number> = {};
  if (self === undefined) return out;
  doc.descriptors[self.descriptor]?.series.forEach(([name, labels], i) => {
    if (labels.length === 0) out[name] = Number(self.values[i]);
  });
  return out;
}
