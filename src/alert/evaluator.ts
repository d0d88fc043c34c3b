/**
 * Frames in, observations out: the part of `rezolus alert` that knows
 * frames. Each frame feeds the windows of the rules whose metric it carries
 * (one window per host and rule when the rule sums, per series when it does
 * not); each tick reads every window into an Observation. Pure (the clock
 * is passed in), so tests drive it with frames whose timing they choose.
 */
import type { Frame, FrameValue } from '../frame/types.js';
import type { SparseHistogram } from '../metrics/histogram.js';
import { alertKey, seriesId, type SeriesLabels } from './contract.js';
import type { Observation } from './machine.js';
import type { AlertRule } from './rules.js';
import { addHistograms, SampleWindow, type SampleValue } from './window.js';

/** One alert's inputs: its rule, host, series and window. */
export interface AlertInput {
  readonly key: string;
  readonly rule: AlertRule;
  readonly host: string;
  readonly series: SeriesLabels;
  readonly window: SampleWindow;
  /** receive time (ms) of the last frame that fed it */
  heardAt: number;
}

/** How one descriptor's series feed one rule: groups of series indexes, each one alert. */
interface Plan {
  readonly rule: AlertRule;
  /** inputs: each group's alerts by host, so a frame finds its alert without building its key */
  readonly groups: readonly { readonly series: SeriesLabels; readonly indexes: readonly number[]; readonly inputs: Map<string, AlertInput> }[];
}

/** Descriptors planned for, at most (a fleet has few distinct ones; a flood must not grow memory without bound). */
const MAX_PLANS = 10_000;
/** Alerts of one rule on one host, at most: a host that sends thousands of series cannot open thousands of alerts. */
export const MAX_ALERTS_PER_HOST_RULE = 1000;
/** A frame that ends further ahead of its arrival than this is left out (a clock set wrong would freeze the window). */
const FUTURE_MS = 60_000;

export interface EvaluatorStats {
  frames: number;
  /** frames of no rule's metric */
  unused: number;
  /** frames stamped more than a minute after they arrived: left out */
  future: number;
  /** series left out because their host and rule had MAX_ALERTS_PER_HOST_RULE alerts already */
  capped: number;
}

export class AlertEvaluator {
  readonly #byMetric = new Map<string, AlertRule[]>();
  readonly #plans = new Map<string, Plan[]>();
  readonly #inputs = new Map<string, AlertInput>();
  /** inputs fed since takeDirty() was last called */
  #dirty = new Set<AlertInput>();
  readonly stats: EvaluatorStats = { frames: 0, unused: 0, future: 0, capped: 0 };
  /** alerts per `<host>.<rule>` */
  readonly #perHostRule = new Map<string, number>();
  /** `<host>.<rule>` that reached the cap and have not been said yet (takeCapped) */
  #newlyCapped = new Set<string>();
  readonly #saidCapped = new Set<string>();

  constructor(readonly rules: readonly AlertRule[]) {
    for (const r of rules) {
      const list = this.#byMetric.get(r.metric) ?? [];
      list.push(r);
      this.#byMetric.set(r.metric, list);
    }
  }

  /** Feeds one frame received at `now` (ms). */
  ingest(frame: Frame, now: number): void {
    this.stats.frames++;
    const plans = this.#plansOf(frame);
    if (plans.length === 0) {
      this.stats.unused++;
      return;
    }
    const t = Number(frame.endNs / 1_000_000n);
    if (t > now + FUTURE_MS) {
      this.stats.future++;
      return;
    }
    for (const plan of plans) {
      const cumulative = plan.rule.kind !== 'gauge';
      for (const g of plan.groups) {
        const value = combine(frame.values, g.indexes, plan.rule.kind === 'histogram');
        if (value === undefined) continue;
        let input = g.inputs.get(frame.host);
        if (input === undefined) {
          input = this.#input(plan.rule, frame.host, g.series);
          if (input === undefined) continue;
          g.inputs.set(frame.host, input);
        }
        input.heardAt = now;
        input.window.push(t, value, frame.instance, cumulative);
        this.#dirty.add(input);
      }
    }
  }

  /** Every alert's observation at `now`. */
  *observe(now: number): Generator<[AlertInput, Observation]> {
    for (const input of this.#inputs.values()) yield [input, observation(input, now)];
  }

  /** The inputs fed since the last call (to judge at once, not at the next tick). */
  takeDirty(): AlertInput[] {
    const dirty = [...this.#dirty];
    this.#dirty = new Set();
    return dirty;
  }

  /** An alert's input by key (undefined when no frame fed it yet). */
  input(key: string): AlertInput | undefined {
    return this.#inputs.get(key);
  }

  /**
   * Registers an alert known from the state bucket but not fed yet (a
   * restart): its silence counts from `heardAt`, which the caller takes
   * from the record (an `age` alert knows when its host was last heard)
   * or sets to now.
   */
  adopt(rule: AlertRule, host: string, series: SeriesLabels, heardAt: number): void {
    const input = this.#input(rule, host, series);
    if (input !== undefined && input.window.t.length === 0 && input.heardAt === 0) input.heardAt = heardAt;
  }

  /** `<host>.<rule>` pairs that reached MAX_ALERTS_PER_HOST_RULE since the last call (each said once). */
  takeCapped(): string[] {
    const out = [...this.#newlyCapped];
    this.#newlyCapped = new Set();
    return out;
  }

  /**
   * Drops the windows not fed for `quietMs` whose alert `keep` does not
   * hold on to (an active one): hosts and series that went away (a cgroup
   * removed, a host retired) do not grow memory for ever. Returns the keys dropped.
   */
  forget(now: number, quietMs: number, keep: (key: string) => boolean): string[] {
    const dropped: string[] = [];
    for (const [key, input] of this.#inputs) {
      if (now - input.heardAt > Math.max(quietMs, input.rule.missingAfterMs + input.rule.windowMs) && !keep(key)) {
        this.#inputs.delete(key);
        this.#dirty.delete(input);
        const pair = `${input.host}.${input.rule.name}`;
        const n = (this.#perHostRule.get(pair) ?? 1) - 1;
        if (n > 0) this.#perHostRule.set(pair, n);
        else this.#perHostRule.delete(pair);
        dropped.push(key);
      }
    }
    // the plans' groups hold their inputs by host: made again from #inputs on the next frame
    if (dropped.length > 0) this.#plans.clear();
    return dropped;
  }

  get size(): number {
    return this.#inputs.size;
  }

  #input(rule: AlertRule, host: string, series: SeriesLabels): AlertInput | undefined {
    const key = alertKey(host, rule.name, seriesId(series));
    let input = this.#inputs.get(key);
    if (input === undefined) {
      const pair = `${host}.${rule.name}`;
      const n = this.#perHostRule.get(pair) ?? 0;
      if (n >= MAX_ALERTS_PER_HOST_RULE) {
        this.stats.capped++;
        if (!this.#saidCapped.has(pair)) {
          this.#saidCapped.add(pair);
          this.#newlyCapped.add(pair);
        }
        return undefined;
      }
      this.#perHostRule.set(pair, n + 1);
      input = { key, rule, host, series, window: new SampleWindow(rule.windowMs), heardAt: 0 };
      this.#inputs.set(key, input);
    }
    return input;
  }

  #plansOf(frame: Frame): Plan[] {
    const cached = this.#plans.get(frame.descriptorHash);
    if (cached !== undefined) return cached;
    const plans: Plan[] = [];
    const d = frame.descriptor;
    for (const metric of Object.keys(d.metrics)) {
      const rules = this.#byMetric.get(metric);
      if (rules === undefined) continue;
      const labelsOf = d.metrics[metric]?.labels ?? [];
      for (const rule of rules) {
        if (d.metrics[metric]?.kind !== rule.kind) continue; // a descriptor that says otherwise than the catalog
        const groups = new Map<string, { series: SeriesLabels; indexes: number[]; inputs: Map<string, AlertInput> }>();
        d.series.forEach(([name, values], i) => {
          if (name !== metric) return;
          const labels: Record<string, string> = Object.create(null) as Record<string, string>;
          labelsOf.forEach((l, k) => (labels[l] = values[k] ?? ''));
          if (!rule.match.every(([l, m]) => m(labels[l] ?? ''))) return;
          const series = rule.group === 'sum' ? {} : { ...labels };
          const id = seriesId(series);
          const g = groups.get(id) ?? { series, indexes: [], inputs: new Map<string, AlertInput>() };
          g.indexes.push(i);
          groups.set(id, g);
        });
        if (groups.size > 0) plans.push({ rule, groups: [...groups.values()] });
      }
    }
    if (this.#plans.size >= MAX_PLANS) this.#plans.clear();
    this.#plans.set(frame.descriptorHash, plans);
    return plans;
  }
}

/** One alert's observation at `now`. */
export function observation(input: AlertInput, now: number): Observation {
  const r = input.rule;
  const missing = now - input.heardAt >= r.missingAfterMs;
  const value = r.reduce.kind === 'age' ? now - input.heardAt : input.window.value(r.reduce);
  return { value, missing };
}

/** The sum of the values at `indexes` (numbers, or histograms bucket-wise); undefined when a value is not of the kind. */
function combine(values: readonly FrameValue[], indexes: readonly number[], histogram: boolean): SampleValue | undefined {
  if (histogram) {
    let sum: SparseHistogram | undefined;
    for (const i of indexes) {
      const v = values[i];
      if (typeof v !== 'object' || v === null) return undefined;
      sum = sum === undefined ? v : addHistograms(sum, v);
    }
    return sum;
  }
  let sum = 0;
  for (const i of indexes) {
    const v = values[i];
    if (typeof v === 'number') sum += v;
    else if (typeof v === 'bigint') sum += Number(v);
    else return undefined;
  }
  return sum;
}
