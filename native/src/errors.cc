#include "errors.h"

#include <bpf/libbpf.h>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace rezolus {

namespace {

// Keeps the tail of libbpf's output: a verifier log can be megabytes, the
// reason is in its last lines.
constexpr size_t kLogKeep = 2048;
std::string g_log;

int OnLibbpfPrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[1024];
  int n = vsnprintf(line, sizeof(line), format, args);
  if (n <= 0) return 0;
  g_log.append(line, std::min(static_cast<size_t>(n), sizeof(line) - 1));
  if (g_log.size() > kLogKeep) g_log.erase(0, g_log.size() - kLogKeep);
  return 0;
}

}  // namespace

std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  if (name != nullptr) return name;
  return "E" + std::to_string(err);
}

Napi::Error ErrnoError(Napi::Env env, const std::string& what, int err, const std::string& detail) {
  if (err < 0) err = -err;
  std::string code = ErrnoName(err);
  std::string message = what + ": " + code;
  if (!detail.empty()) message += " (" + detail + ")";
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  error.Set("errno", Napi::Number::New(env, err));
  return error;
}

std::string TakeLibbpfLog() {
  std::string out;
  out.swap(g_log);
  // Keep whole lines, joined by "; ", without the trailing newline.
  std::string joined;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    if (!line.empty()) {
      if (!joined.empty()) joined += "; ";
      joined += line;
    }
    start = end + 1;
  }
  if (joined.size() > 600) joined = "..." + joined.substr(joined.size() - 600);
  return joined;
}

void CaptureLibbpfLog() {
  libbpf_set_print(OnLibbpfPrint);
}

}  // namespace rezolus
