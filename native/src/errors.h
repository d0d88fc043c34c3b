// Errors as JS sees them: an Error whose `code` is the errno name and whose
// message says what failed ("attach tp_btf/sched_switch: EPERM").
#pragma once

#include <napi.h>
#include <string>

namespace rezolus {

// The symbolic name of an errno value ("EPERM"), or "E<number>" when unknown.
std::string ErrnoName(int err);

// Builds the error for `what` failing with errno `err`; `detail` (libbpf's
// last log lines) is appended when not empty.
Napi::Error ErrnoError(Napi::Env env, const std::string& what, int err, const std::string& detail = "");

// libbpf's warnings since the last call, the last few lines only.
std::string TakeLibbpfLog();

// Routes libbpf's log into the buffer TakeLibbpfLog reads; call once.
void CaptureLibbpfLog();

}  // namespace rezolus
