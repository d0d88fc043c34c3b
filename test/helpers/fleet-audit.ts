/**
 * How the fleet run counts frames lost and doubled at each consumer, the
 * cheapest faithful way for each:
 *
 * - exporter: its own counters (rezolus_exporter_frames_total is every frame
 *   used; a frame seen twice is skipped as out_of_order) against the frames
 *   the schedule made, and the sim_publish_time gauge it serves for every
 *   host against the last tick's.
 * - recorder and hindsight: the Parquet file read back with DuckDB. Every
 *   series moves every tick (simValue), and a row holds the values as of
 *   its time, so for each host and sampler one column must take exactly as
 *   many distinct values as the host sent ticks: a lost frame leaves its
 *   row with the tick before's value. Doubles do not show in a file; those
 *   come from the frame counts the recorder logs and the dump answers.
 * - alert evaluator: the frames it fed its rules and the messages its
 *   source skipped, which it logs when it stops.
 */
import { columnName } from '../../src/parquet/columns.js';
import { Duck } from './duckdb.js';
import { CLOCK_METRIC } from './fleet-shape.js';
import { simHost, type SimSampler } from './sim-fleet.js';

export interface Tally {
  /** frames of the schedule this consumer did not take */
  readonly lost: number;
  /** frames taken more than once (into its output) */
  readonly doubled: number;
  /**
   * messages delivered again and left out as out of order: a live subscriber
   * sees every publish, so a Publisher retry after an ack timeout that
   * JetStream deduplicated still reaches it once more; a frame stored twice
   * reaches every consumer twice
   */
  readonly repeats: number;
  /** what the figure rests on */
  readonly note: string;
}

export interface ExporterScrape {
  /** host -> the sim_publish_time it serves */
  readonly clock: Map<string, number>;
  /** rezolus_exporter_frames_total (frames used) */
  readonly used: number;
  readonly received: number;
  readonly skipped: Record<string, number>;
  readonly bytes: number;
}

const CLOCK_PREFIX = `${CLOCK_METRIC}{host="`;

/** The parts of an exposition the audit reads, found without splitting the whole text (it is ~40 MB for 1000 hosts). */
export function parseScrape(body: string): ExporterScrape {
  const clock = new Map<string, number>();
  for (let at = body.indexOf(CLOCK_PREFIX); at !== -1; at = body.indexOf(CLOCK_PREFIX, at + 1)) {
    if (at > 0 && body[at - 1] !== '\n') continue;
    const q = body.indexOf('"', at + CLOCK_PREFIX.length);
    const end = body.indexOf('\n', q);
    const sp = body.lastIndexOf(' ', end === -1 ? body.length : end);
    clock.set(body.slice(at + CLOCK_PREFIX.length, q), Number(body.slice(sp + 1, end === -1 ? undefined : end)));
  }
  const own = (name: string): number => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(body);
    return m === null ? Number.NaN : Number(m[1]);
  };
  const skipped: Record<string, number> = {};
  for (const m of body.matchAll(/^rezolus_exporter_frames_skipped_total\{reason="([a-z_]+)"\} (\S+)$/gm)) skipped[m[1] as string] = Number(m[2]);
  return { clock, used: own('rezolus_exporter_frames_total'), received: own('rezolus_exporter_frames_received_total'), skipped, bytes: body.length };
}

/**
 * One exporter (or the shards together): frames used against `expected`,
 * out_of_order as doubles, and hosts whose served clock is not their last
 * tick's publish time.
 */
export function exporterTally(scrapes: readonly ExporterScrape[], expected: number, lastClock: ReadonlyMap<string, number>): Tally & { wrongHosts: string[] } {
  const used = scrapes.reduce((n, s) => n + s.used, 0);
  const repeats = scrapes.reduce((n, s) => n + (s.skipped.out_of_order ?? 0), 0);
  const otherSkips = scrapes.reduce((n, s) => n + Object.entries(s.skipped).filter(([r]) => r !== 'out_of_order').reduce((m, [, v]) => m + v, 0), 0);
  const served = new Map<string, number>();
  let servedTwice = 0;
  for (const s of scrapes) {
    for (const [h, v] of s.clock) {
      if (served.has(h)) servedTwice++;
      served.set(h, v);
    }
  }
  const wrongHosts = [...lastClock].filter(([h, v]) => served.get(h) !== v).map(([h]) => h);
  return {
    lost: Math.max(0, expected - used),
    doubled: Math.max(0, used - expected),
    repeats,
    wrongHosts,
    note: `used ${used} of ${expected}, out_of_order ${repeats}, other skips ${otherSkips}, hosts served ${served.size} (${servedTwice} by two shards), hosts not at their last tick ${wrongHosts.length}`,
  };
}

/**
 * Missing frames in a Parquet file: for every host and sampler, ticks - the
 * distinct values of the sampler's first series. Hosts absent count all
 * their frames. Returns the total and the first few (host, sampler, missing).
 */
export async function parquetMissing(path: string, samplers: readonly SimSampler[], hosts: number, ticks: number): Promise<{ missing: number; rows: number; examples: string[] }> {
  const duck = await Duck.open();
  const columns = samplers.map((s) => {
    const p = s.points[0];
    if (p === undefined) throw new Error(`${s.name} has no points`);
    return columnName(p.metric.name, p.metric.labels.map((l) => p.labels[l] as string));
  });
  const present = new Set((await duck.rows(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).map((r) => String(r.column_name)));
  const select = columns.map((c, i) => (present.has(c) ? `count(DISTINCT "${c.replaceAll('"', '""')}") AS d${i}` : `0 AS d${i}`)).join(', ');
  const rows = await duck.rows(`SELECT host, count(*) AS n, ${select} FROM read_parquet('${path}') GROUP BY host`);
  const byHost = new Map(rows.map((r) => [String(r.host), r]));
  let missing = 0;
  let total = 0;
  const examples: string[] = [];
  for (let i = 0; i < hosts; i++) {
    const r = byHost.get(simHost(i));
    total += Number(r?.n ?? 0);
    samplers.forEach((s, k) => {
      const gone = ticks - Number(r?.[`d${k}`] ?? 0);
      if (gone !== 0 && examples.length < 5) examples.push(`${simHost(i)} ${s.name}: ${gone}`);
      missing += gone;
    });
  }
  return { missing, rows: total, examples };
}

/** p-quantiles of an ascending-sortable list. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}
