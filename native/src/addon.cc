// rezolus_native: libbpf and perf_event_open for the agent's kernel samplers.
// Mechanism only; which programs load and how maps are read is decided in
// src/native and the samplers. Main thread only: the BTF cache and libbpf's
// log buffer are process globals without locks (the agent loads it once, in
// its main thread).
#include <napi.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <map>
#include <memory>
#include <string>

#include "bpf_object.h"
#include "errors.h"
#include "perf.h"
#include "pack.h"
#include "scan.h"

namespace rezolus {

namespace {

// BTF of vmlinux (key "") and of modules, loaded once each; nullptr when absent.
std::map<std::string, struct btf*> g_btf;

struct btf* KernelBtf(const std::string& module) {
  auto it = g_btf.find("");
  struct btf* base = nullptr;
  if (it == g_btf.end()) {
    base = btf__load_vmlinux_btf();
    if (base == nullptr) base = nullptr;
    g_btf[""] = base;
  } else {
    base = it->second;
  }
  if (module.empty() || base == nullptr) return base;
  auto mit = g_btf.find(module);
  if (mit != g_btf.end()) return mit->second;
  std::string path = "/sys/kernel/btf/" + module;
  struct btf* split = btf__parse_split(path.c_str(), base);
  if (split == nullptr) split = nullptr;
  g_btf[module] = split;
  return split;
}

int KindOf(const std::string& kind) {
  if (kind == "typedef") return BTF_KIND_TYPEDEF;
  if (kind == "struct") return BTF_KIND_STRUCT;
  if (kind == "enum") return BTF_KIND_ENUM;
  if (kind == "func") return BTF_KIND_FUNC;
  return -1;
}

// btfHasType(name, kind, module = "") -> boolean; false when the kernel has no BTF.
Napi::Value BtfHasType(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].ToString().Utf8Value();
  int kind = KindOf(info[1].ToString().Utf8Value());
  std::string module = info.Length() > 2 && info[2].IsString() ? info[2].As<Napi::String>().Utf8Value() : "";
  struct btf* btf = KernelBtf(module);
  if (btf == nullptr || kind < 0) return Napi::Boolean::New(env, false);
  return Napi::Boolean::New(env, btf__find_by_name_kind(btf, name.c_str(), kind) > 0);
}

// btfTracepointArgs(event, module = "") -> how many arguments tracepoint
// `event` passes to tp_btf programs (the prototype of btf_trace_<event>,
// less its leading void *), or -1 when this kernel has no such tracepoint.
Napi::Value BtfTracepointArgs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = "btf_trace_" + info[0].ToString().Utf8Value();
  std::string module = info.Length() > 1 && info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
  struct btf* btf = KernelBtf(module);
  if (btf == nullptr) return Napi::Number::New(env, -1);
  int id = btf__find_by_name_kind(btf, name.c_str(), BTF_KIND_TYPEDEF);
  if (id <= 0) return Napi::Number::New(env, -1);
  const struct btf_type* t = btf__type_by_id(btf, id);
  // typedef -> pointer -> function prototype
  for (int hops = 0; hops < 2 && t != nullptr; hops++) t = btf__type_by_id(btf, t->type);
  if (t == nullptr || !btf_is_func_proto(t) || btf_vlen(t) < 1) return Napi::Number::New(env, -1);
  return Napi::Number::New(env, btf_vlen(t) - 1);
}

// btfEnum(name) -> { NAME: value } of a vmlinux enum, or null.
Napi::Value BtfEnum(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].ToString().Utf8Value();
  struct btf* btf = KernelBtf("");
  if (btf == nullptr) return env.Null();
  int id = btf__find_by_name_kind(btf, name.c_str(), BTF_KIND_ENUM);
  if (id <= 0) return env.Null();
  const struct btf_type* t = btf__type_by_id(btf, id);
  const struct btf_enum* e = btf_enum(t);
  Napi::Object out = Napi::Object::New(env);
  for (int i = 0; i < btf_vlen(t); i++) {
    out.Set(btf__name_by_offset(btf, e[i].name_off), Napi::Number::New(env, e[i].val));
  }
  return out;
}

// releaseBtf(): frees the BTF loaded by btfHasType / btfEnum (~6 MB for
// vmlinux); the next lookup loads it again.
Napi::Value ReleaseBtf(const Napi::CallbackInfo& info) {
  for (auto& [name, btf] : g_btf) {
    if (!name.empty()) btf__free(btf);
  }
  auto base = g_btf.find("");
  if (base != g_btf.end()) btf__free(base->second);
  g_btf.clear();
  return info.Env().Undefined();
}

// enableStats() -> fd: the kernel counts run time of every BPF program while the fd is open.
Napi::Value EnableStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd < 0) {
    ErrnoError(env, "enable BPF run time stats", errno).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, fd);
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  CaptureLibbpfLog();
  exports.Set("BpfObject", BpfObject::Define(env));
  exports.Set("btfHasType", Napi::Function::New(env, BtfHasType));
  exports.Set("btfEnum", Napi::Function::New(env, BtfEnum));
  exports.Set("btfTracepointArgs", Napi::Function::New(env, BtfTracepointArgs));
  exports.Set("releaseBtf", Napi::Function::New(env, ReleaseBtf));
  exports.Set("enableStats", Napi::Function::New(env, EnableStats));
  exports.Set("perfOpen", Napi::Function::New(env, PerfOpen));
  exports.Set("perfRead", Napi::Function::New(env, PerfRead));
  exports.Set("closeFd", Napi::Function::New(env, CloseFd));
  exports.Set("scanU64", Napi::Function::New(env, ScanU64));
  exports.Set("packNumbers", Napi::Function::New(env, PackNumbers));
  exports.Set("numPossibleCpus", Napi::Number::New(env, libbpf_num_possible_cpus()));
  exports.Set("libbpfVersion", Napi::String::New(env, std::to_string(libbpf_major_version()) + "." +
                                                         std::to_string(libbpf_minor_version())));
  return exports;
}

}  // namespace rezolus

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return rezolus::Init(env, exports); }

NODE_API_MODULE(rezolus_native, InitModule)
