// perf_event_open per CPU and counter reads: mechanism only.
#pragma once

#include <napi.h>

namespace rezolus {

// perfOpen(type, config, cpu, pid = -1) -> fd. Counts kernel and user, starts enabled.
Napi::Value PerfOpen(const Napi::CallbackInfo& info);

// perfRead(fds: Int32Array, out: BigUint64Array): for fds[i], out[3i..3i+2] =
// value, time enabled, time running. A failed read leaves zeros and counts
// in the return value (the number of failed reads).
Napi::Value PerfRead(const Napi::CallbackInfo& info);

// closeFd(fd)
Napi::Value CloseFd(const Napi::CallbackInfo& info);

}  // namespace rezolus
