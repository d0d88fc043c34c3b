/**
 * Checks at start that a file can be made in a directory, so a service
 * refuses a bad output path when it starts rather than when the file is
 * needed (during an incident). `access()` is not enough: root passes it on
 * /proc. What the check made is removed again.
 */
import { existsSync, mkdirSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Why no file can be made in `dir`, or undefined when one can. With
 * `create`, a missing directory and its parents are made to try (and
 * removed again); without, a missing directory is the reason.
 */
export function unwritableReason(dir: string, create: boolean): string | undefined {
  const abs = resolve(dir);
  if (!create) {
    if (!existsSync(abs)) return `directory ${abs} does not exist`;
    if (!statSync(abs).isDirectory()) return `${abs} is not a directory`;
  }
  const made: string[] = [];
  for (let at = abs; !existsSync(at) && dirname(at) !== at; at = dirname(at)) made.unshift(at);
  const probe = join(abs, `.rezolus-probe-${process.pid}`);
  try {
    for (const d of made) mkdirSync(d);
    writeFileSync(probe, '');
    unlinkSync(probe);
    return undefined;
  } catch (error) {
    return `${abs} cannot be written: ${(error as Error).message}`;
  } finally {
    for (const d of made.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // not empty (something else wrote there meanwhile) or already gone: leave it
      }
    }
  }
}
