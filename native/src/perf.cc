#include "perf.h"

#include <cerrno>
#include <cstring>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errors.h"

namespace rezolus {

Napi::Value PerfOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3) {
    Napi::TypeError::New(env, "perfOpen(type, config, cpu, pid = -1)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uint32_t type = info[0].ToNumber().Uint32Value();
  uint64_t config = info[1].IsBigInt() ? info[1].As<Napi::BigInt>().Uint64Value(nullptr)
                                        : static_cast<uint64_t>(info[1].ToNumber().Int64Value());
  int cpu = info[2].ToNumber().Int32Value();
  int pid = info.Length() > 3 && info[3].IsNumber() ? info[3].ToNumber().Int32Value() : -1;
  int group = info.Length() > 4 && info[4].IsNumber() ? info[4].ToNumber().Int32Value() : -1;
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = type;
  attr.config = config;
  // Always the group layout: a read of a leader returns every member at once.
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_GROUP;
  long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    ErrnoError(env, "perf_event_open type " + std::to_string(type) + " config " + std::to_string(config) + " cpu " +
                        std::to_string(cpu), errno).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, static_cast<double>(fd));
}

Napi::Value PerfRead(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsTypedArray() || !info[1].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array) {
    Napi::TypeError::New(env, "perfRead(leaders: Int32Array, out: BigUint64Array, width)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto fds = info[0].As<Napi::TypedArrayOf<int32_t>>();
  auto out = info[1].As<Napi::TypedArrayOf<uint64_t>>();
  size_t width = info[2].ToNumber().Uint32Value();
  if (width < 4 || out.ElementLength() < fds.ElementLength() * width) {
    Napi::RangeError::New(env, "perfRead: out needs `width` (>= 4) slots per leader").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uint32_t failed = 0;
  uint64_t* base = out.Data();
  for (size_t i = 0; i < fds.ElementLength(); i++) {
    uint64_t* slot = base + i * width;
    ssize_t n = read(fds[i], slot, width * sizeof(uint64_t));
    // nr, enabled, running, then nr values: a short read or a group larger than `width` fails.
    if (n < static_cast<ssize_t>(3 * sizeof(uint64_t)) || slot[0] + 3 > width ||
        n != static_cast<ssize_t>((slot[0] + 3) * sizeof(uint64_t))) {
      failed++;
      for (size_t j = 0; j < width; j++) slot[j] = 0;
    }
  }
  return Napi::Number::New(env, failed);
}

Napi::Value CloseFd(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(info.Env(), "closeFd(fd): fd must be a number").ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  if (fd >= 0) close(fd);
  return info.Env().Undefined();
}

}  // namespace rezolus
