/**
 * The frame encoder's numbers written by the native addon (packNumbers) when
 * the agent runs without TurboFan (--no-opt at one tick a second, or
 * --lite-mode): in V8's interpreter, writing a tick's ~800 values one by one
 * was most of the cost of emitting its frames, and one call per run of
 * numbers takes 0.51-0.60x the CPU. With TurboFan (a sampler faster than 1 s)
 * the encoder's optimised loop is faster than a call into the addon per run
 * (1.23x): it keeps it (test/bench/README.md, "frame numbers in one call").
 * The bytes are the same either way; without the addon (not built, or
 * libbpf missing) the encoder writes them in JS.
 */
import { setNumberPacker, type NumberPacker } from '../frame/encode.js';
import { loadNative } from '../native/index.js';

/** Whether V8 runs without its optimising compiler under these flags (the last that says wins). */
export function withoutTurbofan(v8Flags: readonly string[]): boolean {
  let off = false;
  for (const f of v8Flags) {
    if (f === '--no-opt' || f === '--lite-mode' || f === '--jitless') off = true;
    else if (f === '--opt') off = false;
  }
  return off;
}

/** Sets the native packer when V8 runs without TurboFan and the addon loads (else the JS one); says whether it did. */
export function useNativeNumberPacker(v8Flags: readonly string[]): boolean {
  if (withoutTurbofan(v8Flags)) {
    try {
      // an addon built before packNumbers existed (npm run build does not rebuild native/) has none
      const pack = loadNative().packNumbers as NumberPacker | undefined;
      if (typeof pack === 'function') {
        setNumberPacker(pack);
        return true;
      }
    } catch {
      // no addon: the JS encoder's bytes are the same
    }
  }
  setNumberPacker(undefined);
  return false;
}
