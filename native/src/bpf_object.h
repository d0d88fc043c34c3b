// A BPF object file opened with libbpf: mechanism only, no policy. JS decides
// which programs load, attaches them one by one and reads the maps.
#pragma once

#include <napi.h>
#include <bpf/libbpf.h>
#include <map>
#include <string>

namespace rezolus {

class BpfObject : public Napi::ObjectWrap<BpfObject> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit BpfObject(const Napi::CallbackInfo& info);
  ~BpfObject() override;

 private:
  Napi::Value Programs(const Napi::CallbackInfo& info);
  Napi::Value SetAutoload(const Napi::CallbackInfo& info);
  Napi::Value Maps(const Napi::CallbackInfo& info);
  Napi::Value SetMaxEntries(const Napi::CallbackInfo& info);
  Napi::Value Load(const Napi::CallbackInfo& info);
  Napi::Value Attach(const Napi::CallbackInfo& info);
  Napi::Value Detach(const Napi::CallbackInfo& info);
  Napi::Value Mmap(const Napi::CallbackInfo& info);
  Napi::Value Lookup(const Napi::CallbackInfo& info);
  Napi::Value Update(const Napi::CallbackInfo& info);
  Napi::Value ProgramStats(const Napi::CallbackInfo& info);
  Napi::Value ReadRunStats(const Napi::CallbackInfo& info);
  Napi::Value TestRun(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  bool Open(const Napi::CallbackInfo& info) const;
  // The string argument `arg` (a program or map name); throws and returns false otherwise.
  bool NameArg(const Napi::CallbackInfo& info, size_t arg, const char* what, std::string* name) const;
  struct bpf_program* Program(const Napi::CallbackInfo& info, size_t arg) const;
  struct bpf_map* Map(const Napi::CallbackInfo& info, size_t arg) const;
  void Destroy();

  std::string path_;
  struct bpf_object* obj_ = nullptr;
  bool loaded_ = false;
  std::map<std::string, struct bpf_link*> links_;
};

}  // namespace rezolus
