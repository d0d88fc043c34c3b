import { spawnSync } from 'node:child_process';

export interface PromtoolResult {
  /** 0 clean, 3 lint problems, 1 parse error; null when killed */
  readonly status: number | null;
  /** stdout and stderr together */
  readonly output: string;
}

/**
 * Runs `promtool check metrics` with `text` on stdin. Undefined when promtool
 * is not installed (`apt-get install prometheus` provides it).
 */
export function promtoolCheck(text: string): PromtoolResult | undefined {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  if (r.error !== undefined) {
    if ((r.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw r.error;
  }
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
