#include "scan.h"

#include <cstdint>

namespace rezolus {

Napi::Value ScanU64(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsTypedArray() || !info[1].IsTypedArray() || !info[2].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
      info[2].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    Napi::TypeError::New(env, "scanU64(src: BigUint64Array, index: Uint32Array, value: Float64Array)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto src = info[0].As<Napi::TypedArrayOf<uint64_t>>();
  auto index = info[1].As<Napi::TypedArrayOf<uint32_t>>();
  auto value = info[2].As<Napi::TypedArrayOf<double>>();
  const uint64_t* words = src.Data();
  uint32_t* idx = index.Data();
  double* val = value.Data();
  size_t words_n = src.ElementLength();
  size_t room = index.ElementLength() < value.ElementLength() ? index.ElementLength() : value.ElementLength();
  size_t n = 0;
  for (size_t i = 0; i < words_n && n < room; i++) {
    // the map is shared with BPF programs that add to it on other CPUs
    uint64_t v = __atomic_load_n(&words[i], __ATOMIC_RELAXED);
    if (v == 0) continue;
    idx[n] = static_cast<uint32_t>(i);
    val[n] = static_cast<double>(v);
    n++;
  }
  return Napi::Number::New(env, static_cast<double>(n));
}

}  // namespace rezolus
