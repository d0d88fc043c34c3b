/**
 * One alert's state machine, pure: given the state it is in, what its window
 * says now and the clock, the transition to make (or none).
 *
 *   inactive ──true──▶ pending ──true for `for`──▶ firing ──false for `keep_firing_for`──▶ resolved
 *       ▲                 │ false                      │ frames stop for missing_after
 *       └─────────────────┘ (inactive)                 ▼
 *                                                    stale ──frames again──▶ firing / resolved
 *
 * A pending or firing alert holds while its value is past `clear` (hysteresis).
 * Missing data is decided here, once, by the rule's `missing`: `stale` (an
 * active alert says it cannot tell), `resolve`, or `fire`.
 */
import type { AlertState } from './contract.js';
import { conditionMet, type AlertRule } from './rules.js';
import type { WindowValue } from './window.js';

/** What the machine needs of the alert's current record. */
export interface Current {
  readonly state: AlertState;
  readonly previous: AlertState;
  readonly activeAt: number;
  readonly firedAt?: number | undefined;
  readonly seq: number;
}

export interface Observation {
  /** the window's value (see WindowValue) */
  readonly value: WindowValue;
  /** no frame for the rule's missing_after */
  readonly missing: boolean;
}

export interface Transition {
  readonly state: AlertState;
  readonly previous: AlertState;
  readonly activeAt: number;
  readonly firedAt: number | undefined;
  readonly resolvedAt: number | undefined;
  readonly staleAt: number | undefined;
  readonly seq: number;
  readonly value: number | null;
}

/**
 * The next transition of an alert, or undefined. `lastTrueAt` is when its
 * condition was last met (for keep_firing_for); the caller keeps it.
 */
export function step(rule: AlertRule, cur: Current | undefined, obs: Observation, now: number, lastTrueAt: number): Transition | undefined {
  const state: AlertState = cur?.state ?? 'inactive';
  const open = state === 'inactive' || state === 'resolved';
  const value = obs.value ?? null;
  const to = (next: AlertState, o: { value?: number | null; firedAt?: number; resolvedAt?: number; staleAt?: number } = {}): Transition => {
    const fresh = open && next !== 'inactive' && next !== 'resolved';
    return {
      state: next,
      previous: state,
      activeAt: fresh || cur === undefined ? now : cur.activeAt,
      firedAt: o.firedAt ?? (fresh ? undefined : cur?.firedAt),
      resolvedAt: o.resolvedAt,
      staleAt: o.staleAt,
      seq: fresh || cur === undefined ? 1 : cur.seq + 1,
      value: o.value === undefined ? value : o.value,
    };
  };

  if (obs.missing && rule.reduce.kind !== 'age') {
    if (rule.missing === 'fire') return state === 'firing' ? undefined : to('firing', { value: null, firedAt: now });
    if (state !== 'pending' && state !== 'firing') return undefined;
    if (rule.missing === 'stale') return to('stale', { value: null, staleAt: now });
    return state === 'firing' ? to('resolved', { value: null, resolvedAt: now }) : to('inactive', { value: null });
  }
  if (obs.value === undefined) return undefined; // too few samples to tell: hold
  // an open episode (pending or firing) holds while the value is past `clear`: a value that
  // hovers at the threshold does not flap pending <-> inactive
  const inEpisode = state === 'firing' || state === 'pending' || state === 'stale';
  const active = obs.value !== null && conditionMet(rule, obs.value, inEpisode);

  if (open) {
    if (!active) return undefined;
    return rule.forMs === 0 ? to('firing', { firedAt: now }) : to('pending');
  }
  const wasPending = state === 'pending' || (state === 'stale' && cur?.previous === 'pending');
  if (wasPending) {
    if (!active) return to('inactive');
    if (now - (cur as Current).activeAt >= rule.forMs) return to('firing', { firedAt: now });
    return state === 'stale' ? to('pending') : undefined;
  }
  // firing, or stale after firing
  if (active) return state === 'stale' ? to('firing') : undefined;
  if (now - lastTrueAt >= rule.keepFiringForMs) return to('resolved', { resolvedAt: now });
  return state === 'stale' ? to('firing') : undefined;
}

/**
 * step() with the bookkeeping of when each alert's condition was last met
 * (`lastTrue`, by alert key, kept by the caller across calls): the one
 * decision the evaluator makes per alert and tick. `since` is when this
 * evaluator started: an alert it adopts firing counts as true until then.
 */
export function decide(rule: AlertRule, key: string, cur: Current | undefined, at: number | undefined, obs: Observation, now: number, lastTrue: Map<string, number>, since: number): Transition | undefined {
  const inEpisode = cur?.state === 'firing' || cur?.state === 'pending' || cur?.state === 'stale';
  if (typeof obs.value === 'number' && !obs.missing && conditionMet(rule, obs.value, inEpisode)) lastTrue.set(key, now);
  if (obs.missing && rule.missing === 'fire') lastTrue.set(key, now);
  if (!lastTrue.has(key) && cur !== undefined) lastTrue.set(key, Math.max(at ?? since, since));
  return step(rule, cur, obs, now, lastTrue.get(key) ?? now);
}
