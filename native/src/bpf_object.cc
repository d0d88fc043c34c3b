#include "bpf_object.h"

#include <bpf/bpf.h>
#include <cerrno>
#include <sys/mman.h>
#include <unistd.h>

#include "errors.h"

namespace rezolus {

namespace {

size_t PageRound(size_t n) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

bool IsPerCpu(enum bpf_map_type type) {
  return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

// The errno of a libbpf call that returned NULL or a negative value.
int LastError(long ret) {
  if (ret < 0) return static_cast<int>(-ret);
  return errno != 0 ? errno : EINVAL;
}

}  // namespace

Napi::Function BpfObject::Define(Napi::Env env) {
  return DefineClass(env, "BpfObject", {
      InstanceMethod<&BpfObject::Programs>("programs"),
      InstanceMethod<&BpfObject::SetAutoload>("setAutoload"),
      InstanceMethod<&BpfObject::Maps>("maps"),
      InstanceMethod<&BpfObject::SetMaxEntries>("setMaxEntries"),
      InstanceMethod<&BpfObject::Load>("load"),
      InstanceMethod<&BpfObject::Attach>("attach"),
      InstanceMethod<&BpfObject::Detach>("detach"),
      InstanceMethod<&BpfObject::Mmap>("mmap"),
      InstanceMethod<&BpfObject::Lookup>("lookup"),
      InstanceMethod<&BpfObject::Update>("update"),
      InstanceMethod<&BpfObject::ProgramStats>("programStats"),
      InstanceMethod<&BpfObject::ReadRunStats>("readRunStats"),
      InstanceMethod<&BpfObject::TestRun>("testRun"),
      InstanceMethod<&BpfObject::Close>("close"),
  });
}

BpfObject::BpfObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<BpfObject>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "BpfObject(path): path must be a string").ThrowAsJavaScriptException();
    return;
  }
  path_ = info[0].As<Napi::String>().Utf8Value();
  TakeLibbpfLog();
  errno = 0;
  obj_ = bpf_object__open_file(path_.c_str(), nullptr);
  if (obj_ == nullptr) {
    ErrnoError(env, "open " + path_, LastError(0), TakeLibbpfLog()).ThrowAsJavaScriptException();
  }
}

BpfObject::~BpfObject() { Destroy(); }

void BpfObject::Destroy() {
  for (auto& [name, link] : links_) bpf_link__destroy(link);
  links_.clear();
  if (obj_ != nullptr) bpf_object__close(obj_);
  obj_ = nullptr;
}

bool BpfObject::Open(const Napi::CallbackInfo& info) const {
  if (obj_ != nullptr) return true;
  ErrnoError(info.Env(), "BPF object " + path_ + " is closed", EBADF).ThrowAsJavaScriptException();
  return false;
}

bool BpfObject::NameArg(const Napi::CallbackInfo& info, size_t arg, const char* what, std::string* name) const {
  if (!Open(info)) return false;
  if (info.Length() <= arg || !info[arg].IsString()) {
    Napi::TypeError::New(info.Env(), std::string(what) + " name must be a string").ThrowAsJavaScriptException();
    return false;
  }
  *name = info[arg].As<Napi::String>().Utf8Value();
  return true;
}

struct bpf_program* BpfObject::Program(const Napi::CallbackInfo& info, size_t arg) const {
  std::string name;
  if (!NameArg(info, arg, "program", &name)) return nullptr;
  struct bpf_program* prog = bpf_object__find_program_by_name(obj_, name.c_str());
  if (prog == nullptr) ErrnoError(info.Env(), "no program " + name + " in " + path_, ENOENT).ThrowAsJavaScriptException();
  return prog;
}

struct bpf_map* BpfObject::Map(const Napi::CallbackInfo& info, size_t arg) const {
  std::string name;
  if (!NameArg(info, arg, "map", &name)) return nullptr;
  struct bpf_map* map = bpf_object__find_map_by_name(obj_, name.c_str());
  if (map == nullptr) ErrnoError(info.Env(), "no map " + name + " in " + path_, ENOENT).ThrowAsJavaScriptException();
  return map;
}

Napi::Value BpfObject::Programs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Open(info)) return env.Undefined();
  Napi::Array out = Napi::Array::New(env);
  struct bpf_program* prog;
  uint32_t i = 0;
  bpf_object__for_each_program(prog, obj_) {
    Napi::Object p = Napi::Object::New(env);
    p.Set("name", bpf_program__name(prog));
    p.Set("section", bpf_program__section_name(prog));
    p.Set("autoload", bpf_program__autoload(prog));
    p.Set("attached", links_.count(bpf_program__name(prog)) > 0);
    out.Set(i++, p);
  }
  return out;
}

Napi::Value BpfObject::SetAutoload(const Napi::CallbackInfo& info) {
  struct bpf_program* prog = Program(info, 0);
  if (prog == nullptr) return info.Env().Undefined();
  int err = bpf_program__set_autoload(prog, info[1].ToBoolean().Value());
  if (err != 0) ErrnoError(info.Env(), std::string("set autoload of ") + bpf_program__name(prog), err).ThrowAsJavaScriptException();
  return info.Env().Undefined();
}

Napi::Value BpfObject::Maps(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Open(info)) return env.Undefined();
  Napi::Array out = Napi::Array::New(env);
  struct bpf_map* map;
  uint32_t i = 0;
  bpf_object__for_each_map(map, obj_) {
    Napi::Object m = Napi::Object::New(env);
    m.Set("name", bpf_map__name(map));
    m.Set("type", static_cast<double>(bpf_map__type(map)));
    m.Set("keySize", bpf_map__key_size(map));
    m.Set("valueSize", bpf_map__value_size(map));
    m.Set("maxEntries", bpf_map__max_entries(map));
    m.Set("mmapable", (bpf_map__map_flags(map) & BPF_F_MMAPABLE) != 0);
    out.Set(i++, m);
  }
  return out;
}

Napi::Value BpfObject::SetMaxEntries(const Napi::CallbackInfo& info) {
  struct bpf_map* map = Map(info, 0);
  if (map == nullptr) return info.Env().Undefined();
  uint32_t n = info[1].ToNumber().Uint32Value();
  int err = bpf_map__set_max_entries(map, n);
  if (err != 0) ErrnoError(info.Env(), std::string("set max entries of ") + bpf_map__name(map), err).ThrowAsJavaScriptException();
  return info.Env().Undefined();
}

Napi::Value BpfObject::Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Open(info)) return env.Undefined();
  TakeLibbpfLog();
  int err = bpf_object__load(obj_);
  if (err != 0) {
    ErrnoError(env, "load " + path_, err, TakeLibbpfLog()).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  loaded_ = true;
  return env.Undefined();
}

Napi::Value BpfObject::Attach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct bpf_program* prog = Program(info, 0);
  if (prog == nullptr) return env.Undefined();
  std::string name = bpf_program__name(prog);
  std::string what = std::string("attach ") + bpf_program__section_name(prog);
  if (links_.count(name) > 0) return env.Undefined();
  if (!loaded_ || bpf_program__fd(prog) < 0) {
    ErrnoError(env, what + " (program " + name + " is not loaded)", EBADF).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  TakeLibbpfLog();
  errno = 0;
  struct bpf_link* link = bpf_program__attach(prog);
  if (link == nullptr) {
    ErrnoError(env, what, LastError(0), TakeLibbpfLog()).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  links_[name] = link;
  return env.Undefined();
}

Napi::Value BpfObject::Detach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct bpf_program* prog = Program(info, 0);
  if (prog == nullptr) return env.Undefined();
  auto it = links_.find(bpf_program__name(prog));
  if (it == links_.end()) return env.Undefined();
  bpf_link__destroy(it->second);
  links_.erase(it);
  return env.Undefined();
}

Napi::Value BpfObject::Mmap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct bpf_map* map = Map(info, 0);
  if (map == nullptr) return env.Undefined();
  std::string what = std::string("mmap ") + bpf_map__name(map);
  if ((bpf_map__map_flags(map) & BPF_F_MMAPABLE) == 0 || bpf_map__type(map) != BPF_MAP_TYPE_ARRAY) {
    ErrnoError(env, what + " (not an mmapable array)", EINVAL).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int fd = bpf_map__fd(map);
  if (fd < 0) {
    ErrnoError(env, what + " (object not loaded)", EBADF).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  size_t stride = (bpf_map__value_size(map) + 7) / 8 * 8;
  size_t bytes = stride * bpf_map__max_entries(map);
  size_t length = PageRound(bytes);
  void* addr = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) {
    ErrnoError(env, what, errno).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // The mapping holds its own reference to the map: it outlives close().
  return Napi::ArrayBuffer::New(
      env, addr, bytes,
      [](Napi::Env, void* data, size_t* len) {
        munmap(data, *len);
        delete len;
      },
      new size_t(length));
}

Napi::Value BpfObject::Lookup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct bpf_map* map = Map(info, 0);
  if (map == nullptr) return env.Undefined();
  if (info.Length() < 2 || !info[1].IsBuffer()) {
    Napi::TypeError::New(env, "lookup(map, key): key must be a Buffer").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto key = info[1].As<Napi::Buffer<uint8_t>>();
  if (key.Length() != bpf_map__key_size(map)) {
    ErrnoError(env, std::string("lookup ") + bpf_map__name(map) + " (key size " + std::to_string(key.Length()) + ", map wants " +
                        std::to_string(bpf_map__key_size(map)) + ")", EINVAL).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  size_t size = bpf_map__value_size(map);
  if (IsPerCpu(bpf_map__type(map))) size = (size + 7) / 8 * 8 * libbpf_num_possible_cpus();
  Napi::Buffer<uint8_t> value = Napi::Buffer<uint8_t>::New(env, size);
  if (bpf_map_lookup_elem(bpf_map__fd(map), key.Data(), value.Data()) != 0) {
    if (errno == ENOENT) return env.Null();
    ErrnoError(env, std::string("lookup ") + bpf_map__name(map), errno).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return value;
}

Napi::Value BpfObject::Update(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct bpf_map* map = Map(info, 0);
  if (map == nullptr) return env.Undefined();
  if (info.Length() < 3 || !info[1].IsBuffer() || !info[2].IsBuffer()) {
    Napi::TypeError::New(env, "update(map, key, value): key and value must be Buffers").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto key = info[1].As<Napi::Buffer<uint8_t>>();
  auto value = info[2].As<Napi::Buffer<uint8_t>>();
  if (key.Length() != bpf_map__key_size(map) || value.Length() != bpf_map__value_size(map)) {
    ErrnoError(env, std::string("update ") + bpf_map__name(map) + " (wrong key or value size)", EINVAL).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (bpf_map_update_elem(bpf_map__fd(map), key.Data(), value.Data(), BPF_ANY) != 0) {
    ErrnoError(env, std::string("update ") + bpf_map__name(map), errno).ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

Napi::Value BpfObject::ProgramStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Open(info)) return env.Undefined();
  Napi::Array out = Napi::Array::New(env);
  struct bpf_program* prog;
  uint32_t i = 0;
  bpf_object__for_each_program(prog, obj_) {
    int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    struct bpf_prog_info pinfo = {};
    __u32 len = sizeof(pinfo);
    if (bpf_obj_get_info_by_fd(fd, &pinfo, &len) != 0) continue;
    Napi::Object p = Napi::Object::New(env);
    p.Set("name", bpf_program__name(prog));
    p.Set("id", pinfo.id);
    p.Set("attached", links_.count(bpf_program__name(prog)) > 0);
    p.Set("runCount", Napi::BigInt::New(env, static_cast<uint64_t>(pinfo.run_cnt)));
    p.Set("runTimeNs", Napi::BigInt::New(env, static_cast<uint64_t>(pinfo.run_time_ns)));
    out.Set(i++, p);
  }
  return out;
}

Napi::Value BpfObject::ReadRunStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Open(info)) return env.Undefined();
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array) {
    Napi::TypeError::New(env, "readRunStats(out: BigUint64Array)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto out = info[0].As<Napi::TypedArrayOf<uint64_t>>();
  size_t n = 0;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj_) {
    if (links_.count(bpf_program__name(prog)) == 0) continue;
    if (2 * n + 2 > out.ElementLength()) break;
    struct bpf_prog_info pinfo = {};
    __u32 len = sizeof(pinfo);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &pinfo, &len) == 0) {
      out[2 * n] = pinfo.run_cnt;
      out[2 * n + 1] = pinfo.run_time_ns;
    } else {
      out[2 * n] = out[2 * n + 1] = 0;
    }
    n++;
  }
  return Napi::Number::New(env, static_cast<double>(n));
}

Napi::Value BpfObject::TestRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct bpf_program* prog = Program(info, 0);
  if (prog == nullptr) return env.Undefined();
  LIBBPF_OPTS(bpf_test_run_opts, opts);
  if (info.Length() > 1 && info[1].IsBuffer()) {
    auto ctx = info[1].As<Napi::Buffer<uint8_t>>();
    opts.ctx_in = ctx.Data();
    opts.ctx_size_in = static_cast<__u32>(ctx.Length());
  }
  int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
  if (err != 0) {
    ErrnoError(env, std::string("test run ") + bpf_program__name(prog), LastError(err)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Number::New(env, opts.retval);
}

Napi::Value BpfObject::Close(const Napi::CallbackInfo& info) {
  Destroy();
  return info.Env().Undefined();
}

}  // namespace rezolus
