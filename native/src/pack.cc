#include "pack.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace rezolus {

namespace {

constexpr double kTwo32 = 4294967296.0;
constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

inline uint8_t* Be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
  return p + 2;
}

inline uint8_t* Be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
  return p + 4;
}

inline uint8_t* Be64(uint8_t* p, uint64_t v) {
  Be32(p, static_cast<uint32_t>(v >> 32));
  return Be32(p + 4, static_cast<uint32_t>(v));
}

inline uint8_t* Float64(uint8_t* p, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  *p++ = 0xcb;
  return Be64(p, bits);
}

uint8_t* Pack(uint8_t* p, double v, bool plain) {
  // JS: v >>> 0 === v (-0 included, as 0)
  if (v >= 0 && v < kTwo32 && v == std::floor(v)) {
    uint32_t u = static_cast<uint32_t>(v);
    if (u < 0x80) {
      *p++ = static_cast<uint8_t>(u);
    } else if (u < 0x100) {
      *p++ = 0xcc;
      *p++ = static_cast<uint8_t>(u);
    } else if (u < 0x10000) {
      *p++ = 0xcd;
      p = Be16(p, static_cast<uint16_t>(u));
    } else {
      *p++ = 0xce;
      p = Be32(p, u);
    }
    return p;
  }
  // JS: v >> 0 === v, the negative ones (the non-negative ones were taken above)
  if (v < 0 && v >= -2147483648.0 && v == std::floor(v)) {
    int32_t i = static_cast<int32_t>(v);
    if (i >= -0x20) {
      *p++ = static_cast<uint8_t>(0x100 + i);
    } else if (i >= -0x80) {
      *p++ = 0xd0;
      *p++ = static_cast<uint8_t>(i + 0x100);
    } else if (i >= -0x8000) {
      *p++ = 0xd1;
      p = Be16(p, static_cast<uint16_t>(static_cast<int16_t>(i)));
    } else {
      *p++ = 0xd2;
      p = Be32(p, static_cast<uint32_t>(i));
    }
    return p;
  }
  // JS: Number.isInteger(v) && v < 2^64 && v >= -2^63 (NaN and the infinities fail every test)
  if (!plain && v < kTwo64 && v >= -kTwo63 && v == std::floor(v)) {
    if (v >= kTwo63) {
      *p++ = 0xcf;
      return Be64(p, static_cast<uint64_t>(v));
    }
    *p++ = 0xd3;
    return Be64(p, static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  return Float64(p, v);
}

}  // namespace

Napi::Value PackNumbers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsTypedArray() || !info[1].IsNumber() || !info[2].IsBoolean() || !info[3].IsTypedArray() ||
      !info[4].IsNumber() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
      info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    Napi::TypeError::New(env, "packNumbers(src: Float64Array, n: number, plain: boolean, dst: Uint8Array, at: number)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto src = info[0].As<Napi::TypedArrayOf<double>>();
  auto dst = info[3].As<Napi::TypedArrayOf<uint8_t>>();
  double n_arg = info[1].As<Napi::Number>().DoubleValue();
  double at_arg = info[4].As<Napi::Number>().DoubleValue();
  size_t dst_n = dst.ElementLength();
  if (!(n_arg >= 0) || n_arg > static_cast<double>(src.ElementLength()) || !(at_arg >= 0) ||
      at_arg + 9 * n_arg > static_cast<double>(dst_n)) {
    Napi::RangeError::New(env, "packNumbers: n beyond src, or fewer than 9 bytes a number left in dst").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  size_t n = static_cast<size_t>(n_arg);
  bool plain = info[2].As<Napi::Boolean>().Value();
  const double* s = src.Data();
  uint8_t* start = dst.Data();
  uint8_t* p = start + static_cast<size_t>(at_arg);
  for (size_t i = 0; i < n; i++) p = Pack(p, s[i], plain);
  return Napi::Number::New(env, static_cast<double>(p - start));
}

}  // namespace rezolus
