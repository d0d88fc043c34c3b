#include "scan.h"

#include <cstdint>

namespace rezolus {

namespace {

// One napi_get_typedarray_info per argument: node-addon-api's checked casts
// asked for it two or three times each, most of a call's cost on a
// 496-word histogram (the agent scans ~70 arrays a tick).
bool TypedArrayOf(napi_env env, napi_value v, napi_typedarray_type want, void** data, size_t* length) {
  bool is = false;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return false;
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, v, &type, length, data, nullptr, nullptr) != napi_ok) return false;
  return type == want;
}

}  // namespace

Napi::Value ScanU64(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  void* src_data = nullptr;
  void* idx_data = nullptr;
  void* val_data = nullptr;
  size_t words_n = 0, idx_n = 0, val_n = 0;
  if (info.Length() < 3 || !TypedArrayOf(env, info[0], napi_biguint64_array, &src_data, &words_n) ||
      !TypedArrayOf(env, info[1], napi_uint32_array, &idx_data, &idx_n) ||
      !TypedArrayOf(env, info[2], napi_float64_array, &val_data, &val_n)) {
    Napi::TypeError::New(env, "scanU64(src: BigUint64Array, index: Uint32Array, value: Float64Array)")
        .ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  const uint64_t* words = static_cast<const uint64_t*>(src_data);
  uint32_t* idx = static_cast<uint32_t*>(idx_data);
  double* val = static_cast<double*>(val_data);
  size_t room = idx_n < val_n ? idx_n : val_n;
  size_t n = 0;
  size_t i = 0;
  // the map is shared with BPF programs that add to it on other CPUs: every
  // load is a relaxed atomic one (one aligned 64-bit load, never torn).
  // Most words are zero: four at a time are tested together first.
  while (i < words_n && n < room) {
    if (i + 4 <= words_n) {
      uint64_t a = __atomic_load_n(&words[i], __ATOMIC_RELAXED);
      uint64_t b = __atomic_load_n(&words[i + 1], __ATOMIC_RELAXED);
      uint64_t c = __atomic_load_n(&words[i + 2], __ATOMIC_RELAXED);
      uint64_t d = __atomic_load_n(&words[i + 3], __ATOMIC_RELAXED);
      if ((a | b | c | d) == 0) {
        i += 4;
        continue;
      }
      const uint64_t four[4] = {a, b, c, d};
      for (size_t k = 0; k < 4 && n < room; k++) {
        if (four[k] == 0) continue;
        idx[n] = static_cast<uint32_t>(i + k);
        val[n] = static_cast<double>(four[k]);
        n++;
      }
      i += 4;
      continue;
    }
    uint64_t v = __atomic_load_n(&words[i], __ATOMIC_RELAXED);
    if (v != 0) {
      idx[n] = static_cast<uint32_t>(i);
      val[n] = static_cast<double>(v);
      n++;
    }
    i++;
  }
  napi_value out;
  napi_create_uint32(env, static_cast<uint32_t>(n), &out);
  return Napi::Value(env, out);
}

}  // namespace rezolus
