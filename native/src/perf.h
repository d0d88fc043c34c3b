// perf_event_open per CPU and counter reads: mechanism only.
#pragma once

#include <napi.h>

namespace rezolus {

// perfOpen(type, config, cpu, pid = -1, groupFd = -1) -> fd. Counts kernel
// and user, starts enabled; with a group fd the event joins that leader's
// group (scheduled together, read together). Read format: group, with time
// enabled and running.
Napi::Value PerfOpen(const Napi::CallbackInfo& info);

// perfRead(leaders: Int32Array, out: BigUint64Array, width): one read() per
// group leader into out[i*width ...] = nr, time enabled, time running, then
// the nr members' values in the order they joined. A failed read leaves
// zeros; the return value is the number of failed reads.
Napi::Value PerfRead(const Napi::CallbackInfo& info);

// closeFd(fd)
Napi::Value CloseFd(const Napi::CallbackInfo& info);

}  // namespace rezolus
