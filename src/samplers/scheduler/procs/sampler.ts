import { readText, requireSource } from '../../read.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import {
  METRICS,
  schedulerContextSwitches,
  schedulerForks,
  schedulerInterrupts,
  schedulerLoadAverage,
  schedulerPressure,
  schedulerProcessesBlocked,
  schedulerProcessesRunning,
} from './metrics.js';
import { LOAD_PERIODS, parseLoadavg, parsePressure, parseSchedStat } from './parse.js';

const STAT = 'stat';
const LOADAVG = 'loadavg';
const PSI_RESOURCES = ['cpu', 'io', 'memory'] as const;

const PERIOD_LABELS: readonly Labels[] = LOAD_PERIODS.map((period) => Object.freeze({ period }));

/** A pressure file this host has, with its label objects. */
interface PsiSource {
  readonly path: string;
  readonly some: Labels;
  readonly full: Labels;
}

const PSI_SOURCES: readonly PsiSource[] = PSI_RESOURCES.map((resource) => ({
  path: `pressure/${resource}`,
  some: Object.freeze({ resource, kind: 'some' }),
  full: Object.freeze({ resource, kind: 'full' }),
}));

/** True when the file can be read (PSI files exist but fail with EOPNOTSUPP when PSI is disabled at boot). */
async function readable(root: string, path: string): Promise<boolean> {
  try {
    await readText(root, path);
    return true;
  } catch {
    return false;
  }
}

/** The text of an optional file, or undefined when the read fails. */
async function readOptional(root: string, path: string): Promise<string | undefined> {
  try {
    return await readText(root, path);
  } catch {
    return undefined;
  }
}

export const schedulerProcsSampler: SamplerDefinition = {
  name: 'scheduler_procs',
  description: 'Scheduler activity from /proc/stat, load averages from /proc/loadavg, stall time from /proc/pressure.',
  metrics: METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, STAT);
    const hasLoadavg = await readable(ctx.procRoot, LOADAVG);
    const psi: PsiSource[] = [];
    for (const source of PSI_SOURCES) {
      if (await readable(ctx.procRoot, source.path)) psi.push(source);
    }
    if (!hasLoadavg) ctx.log.info(`no ${LOADAVG}: load averages not reported`);
    if (psi.length < PSI_SOURCES.length) {
      ctx.log.info({ psi: psi.map((s) => s.path) }, 'pressure stall information incomplete');
    }
    return {
      name: 'scheduler_procs',
      metrics: METRICS,
      async refresh(): Promise<Reading> {
        const [statText, loadText, ...psiTexts] = await Promise.all([
          readText(ctx.procRoot, STAT),
          hasLoadavg ? readOptional(ctx.procRoot, LOADAVG) : undefined,
          ...psi.map((s) => readOptional(ctx.procRoot, s.path)),
        ]);
        const points: Point[] = [];
        const stat = parseSchedStat(statText);
        let skipped = stat.skipped;
        if (stat.contextSwitches !== undefined) {
          points.push({ metric: schedulerContextSwitches, labels: NO_LABELS, value: stat.contextSwitches });
        }
        if (stat.forks !== undefined) points.push({ metric: schedulerForks, labels: NO_LABELS, value: stat.forks });
        if (stat.interrupts !== undefined) {
          points.push({ metric: schedulerInterrupts, labels: NO_LABELS, value: stat.interrupts });
        }
        if (stat.running !== undefined) {
          points.push({ metric: schedulerProcessesRunning, labels: NO_LABELS, value: stat.running });
        }
        if (stat.blocked !== undefined) {
          points.push({ metric: schedulerProcessesBlocked, labels: NO_LABELS, value: stat.blocked });
        }
        if (hasLoadavg) {
          if (loadText === undefined) {
            skipped++;
          } else {
            const load = parseLoadavg(loadText);
            skipped += load.skipped;
            for (let i = 0; i < load.values.length; i++) {
              const value = load.values[i];
              if (value !== undefined) points.push({ metric: schedulerLoadAverage, labels: PERIOD_LABELS[i]!, value });
            }
          }
        }
        for (let i = 0; i < psi.length; i++) {
          const text = psiTexts[i];
          if (text === undefined) {
            skipped++;
            continue;
          }
          const source = psi[i]!;
          const p = parsePressure(text);
          skipped += p.skipped;
          if (p.some !== undefined) points.push({ metric: schedulerPressure, labels: source.some, value: p.some });
          if (p.full !== undefined) points.push({ metric: schedulerPressure, labels: source.full, value: p.full });
        }
        return { points, skipped };
      },
    };
  },
};
