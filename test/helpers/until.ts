/** Polls `ok` until it holds (true) or `ms` pass (false); the assertions after it say what is wrong. */
export async function until(ok: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

/**
 * `p`, or `fallback` once `ms` pass, whichever comes first. The timer is cleared when `p`
 * settles: a bare `setTimeout` in a `Promise.race` keeps the test process alive until it
 * fires, and ava waits for it (a 120 s guard held a file 100 s past its last test).
 */
export function within<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((r) => {
    timer = setTimeout(() => r(fallback), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
