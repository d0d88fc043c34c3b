/**
 * `rezolus alert`: a subscriber like any other. A LiveSource feeds the
 * frames of the selected hosts to the AlertEvaluator; every `every` (aligned
 * to the wall clock) each alert's observation goes through the state
 * machine, and a transition is written to the state bucket and published
 * (transitions.ts). Firing alerts capture their incident window
 * (capture.ts) and, with [alertmanager] urls, are forwarded.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { hostMatcher } from '../bus/subjects.js';
import type { AlertsConfig } from '../config/alerts.js';
import { formatDuration } from '../config/units.js';
import { ConfigError } from '../errors.js';
import { unwritableReason } from '../files/writable.js';
import { BusLink } from '../sources/link.js';
import type { SkipStats } from '../sources/checks.js';
import { LiveSource } from '../sources/live.js';
import { AlertmanagerForwarder } from './alertmanager.js';
import { alertStateBucket, ensureAlertStream } from './bus.js';
import { IncidentCapture } from './capture.js';
import { AlertEvaluator, MAX_ALERTS_PER_HOST_RULE } from './evaluator.js';
import { Judge } from './judge.js';
import { AlertStateWatch } from './state-watch.js';
import { Transitions, type TransitionStats } from './transitions.js';

export interface RunningAlert {
  /** this evaluator's id in records and events */
  readonly evaluator: string;
  readonly stats: () => {
    readonly frames: number; readonly alerts: number; readonly transitions: TransitionStats; readonly captures: number; readonly captureFailures: number;
    /** messages the frame source left out, by reason (sources/checks.ts) */
    readonly skipped: SkipStats;
  };
  /** runs one evaluation now (tests) */
  evaluate(now?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Checks at start what a capture will need: that a file can be made in the directory. */
function checkCaptureDir(dir: string): void {
  const reason = unwritableReason(dir, true);
  if (reason !== undefined) throw new ConfigError(`[capture] dir ${reason} (set [capture] dir or -o, or enabled = false)`);
}

/** How often windows and records that went quiet are dropped, and after how long. */
const FORGET_EVERY_MS = 60_000;
const FORGET_AFTER_MS = 3_600_000;

const isActive = (state: string | undefined): boolean => state === 'pending' || state === 'firing' || state === 'stale';

export async function runAlert(config: AlertsConfig, log: Logger): Promise<RunningAlert> {
  const captureOn = config.capture.enabled && config.rules.some((r) => r.capture !== undefined);
  if (captureOn) checkCaptureDir(config.capture.dir);
  const evaluatorId = `${hostname()}:${process.pid}:${randomBytes(2).toString('hex')}`;
  const link = await BusLink.open({ url: config.natsUrl, security: config.nats, name: `rezolus-alert ${evaluatorId}`, waitOnFirstConnect: true }, log);
  let watch: AlertStateWatch | undefined;
  let source: LiveSource | undefined;
  let forwarder: AlertmanagerForwarder | undefined;
  try {
    await ensureAlertStream(link.nc, { maxAgeMs: config.eventsMaxAgeMs, maxBytes: config.eventsMaxBytes, replicas: config.replicas }, log);
    const kv = await alertStateBucket(link.nc, config.replicas, log);
    watch = new AlertStateWatch(kv, log.child({ component: 'state' }));
    await watch.start();
    const w = watch;
    /** The stream or bucket was lost: make them again, and put back the active alerts this evaluator knew (as the agent puts back its descriptors). */
    const restore = async (): Promise<void> => {
      const known = [...w.records()].filter(([, { record }]) => isActive(record.state));
      await ensureAlertStream(link.nc, { maxAgeMs: config.eventsMaxAgeMs, maxBytes: config.eventsMaxBytes, replicas: config.replicas }, log);
      await alertStateBucket(link.nc, config.replicas, log);
      let restored = 0;
      for (const [key, { record }] of known) {
        try {
          await kv.create(key, new TextEncoder().encode(JSON.stringify(record)));
          restored++;
        } catch {
          // another evaluator put it back first, or wrote a newer one
        }
      }
      await w.restart();
      log.warn({ restored }, `the alert events stream and state bucket are there again; ${restored} active alerts put back`);
    };
    const transitions = new Transitions(kv, jetstream(link.nc), w, evaluatorId, log, restore);
    let maxAgeMs = 15 * 60_000;
    try {
      const info = await (await jetstreamManager(link.nc)).streams.info(config.stream);
      maxAgeMs = info.config.max_age > 0 ? info.config.max_age / 1e6 : maxAgeMs;
    } catch {
      log.info({ stream: config.stream }, 'the frames stream is not there yet; captures assume a 15m window');
    }
    for (const r of config.rules) {
      if (captureOn && r.capture !== undefined && r.capture.beforeMs > maxAgeMs) {
        log.warn({ rule: r.name, before_ms: r.capture.beforeMs, max_age_ms: maxAgeMs }, `rule ${r.name} captures ${formatDuration(r.capture.beforeMs)} before an alert, but stream ${config.stream} keeps ${formatDuration(maxAgeMs)}: its captures start ${formatDuration(maxAgeMs)} back`);
      }
    }
    const capture = captureOn
      ? new IncidentCapture({ dir: config.capture.dir, everyMs: config.capture.everyMs, intervalMs: config.capture.intervalMs, stream: config.stream, maxAgeMs }, link, kv, w, transitions, log)
      : undefined;
    if (config.alertmanager.urls.length > 0) {
      forwarder = new AlertmanagerForwarder({ urls: config.alertmanager.urls, resendMs: config.alertmanager.resendMs, timeoutMs: config.alertmanager.timeoutMs }, w, log.child({ component: 'alertmanager' }));
      forwarder.start();
    }

    const evaluator = new AlertEvaluator(config.rules);
    const rules = new Map(config.rules.map((r) => [r.name, r] as const));
    const inScope = hostMatcher(config.hosts);
    const started = Date.now();
    // alerts left active by an earlier run: their silence counts from now
    const orphans = new Set<string>();
    for (const [, { record }] of w.records()) {
      if (!isActive(record.state)) continue;
      const rule = rules.get(record.rule);
      // an age alert's value at its last transition is how long the host had been silent then
      const heardAt = rule?.reduce.kind === 'age' && record.value !== null ? Math.min(started, record.at - record.value) : started;
      if (rule !== undefined && inScope(record.host)) evaluator.adopt(rule, record.host, record.series, heardAt);
      else orphans.add(rule === undefined ? `rule ${record.rule} (not in ${config.file})` : `host ${record.host} (not in --hosts ${config.hosts})`);
    }
    for (const o of orphans) {
      log.warn(`alerts of ${o} are active in rezolus_alert_state and this evaluator does not judge them: they stay as they are until an evaluator that has them resolves them`);
    }

    const judge = new Judge(evaluator, w, transitions, capture, started, log);
    let lastForget = started;
    let stopped = false;
    const evaluate = async (now: number): Promise<void> => {
      await judge.all(now);
      await transitions.sweep(now, (name) => rules.get(name));
      capture?.tick(now);
      for (const pair of evaluator.takeCapped()) {
        log.warn({ alerts: MAX_ALERTS_PER_HOST_RULE }, `${pair}: the rule matches more series on this host than an evaluator keeps alerts for (${MAX_ALERTS_PER_HOST_RULE}); the others are left out (narrow its match, or group = "sum")`);
      }
      if (now - lastForget >= FORGET_EVERY_MS) {
        lastForget = now;
        judge.forget(evaluator.forget(now, FORGET_AFTER_MS, (k) => isActive(w.get(k)?.record.state)));
        await transitions.prune(now, FORGET_AFTER_MS, (k) => evaluator.input(k) !== undefined);
      }
    };

    source = new LiveSource({ bus: link, hosts: config.hosts, waitForBucket: true }, log);
    const src = source;
    void src.start((frame) => {
      evaluator.ingest(frame, Date.now());
      judge.fed();
    }).catch((error: unknown) => log.error({ err: error }, 'the frame source failed'));

    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    const schedule = (): void => {
      if (stopped) return;
      const now = Date.now();
      // evaluated at the tick's own time, not the timer's (a few ms late, by a different amount
      // each tick): a `for` of 2 s ends on the tick 2 s after the pending one, not one later
      const tickAt = now - (now % config.everyMs) + config.everyMs;
      timer = setTimeout(() => {
        running = evaluate(Math.max(tickAt, Date.now() - config.everyMs)).catch((error: unknown) => log.error({ err: error }, 'evaluation failed'));
        void running.then(schedule);
      }, tickAt - now);
    };
    schedule();
    log.info({ rules: config.rules.length, hosts: config.hosts, every_ms: config.everyMs, evaluator: evaluatorId, capture: captureOn ? resolve(config.capture.dir) : false, alertmanager: config.alertmanager.urls }, 'alert evaluator running');

    return {
      evaluator: evaluatorId,
      stats: () => ({
        frames: evaluator.stats.frames, alerts: evaluator.size, transitions: { ...transitions.stats },
        captures: capture?.captures ?? 0, captureFailures: capture?.failures ?? 0, skipped: { ...src.skipped },
      }),
      evaluate: (now = Date.now()) => evaluate(now),
      async stop() {
        stopped = true;
        clearTimeout(timer);
        judge.stop();
        src.stop();
        await running;
        await capture?.idle();
        await forwarder?.stop();
        await w.stop();
        await link.close();
      },
    };
  } catch (error) {
    source?.stop();
    await forwarder?.stop();
    await watch?.stop();
    await link.close();
    throw error;
  }
}

