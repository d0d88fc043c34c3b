// Scans of mmapped u64 arrays (BPF histograms, per-cgroup slots): mechanism
// only, so the agent's interpreted JS does not walk hundreds of zero words a
// refresh.
#pragma once

#include <napi.h>

namespace rezolus {

// scanU64(src: BigUint64Array, index: Uint32Array, value: Float64Array) -> n.
// Writes the position and value of each non-zero u64 of src, in order, to
// index[0..n) and value[0..n): one aligned 64-bit load per word (no torn
// read when the kernel adds meanwhile); a value past 2^53 is the nearest
// double (so above Number.MAX_SAFE_INTEGER). Stops when index or value is
// full; the caller sizes them to src.
Napi::Value ScanU64(const Napi::CallbackInfo& info);

}  // namespace rezolus
