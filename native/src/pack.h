// msgpack numbers written in one call: mechanism only, so the agent's
// interpreted JS does not run its number encoder per value once a second.
#pragma once

#include <napi.h>

namespace rezolus {

// packNumbers(src: Float64Array, n, plain: boolean, dst: Uint8Array, at) -> the position after.
// Writes src[0..n) at dst[at..) as msgpackr writes them (src/frame/encode.ts says which bytes):
// an integer in 0..2^32-1 as a positive fixint, uint8, uint16 or uint32, one in -2^31..-1 as a
// negative fixint, int8, int16 or int32; with `plain` any other number as a float64, without it
// any other integer of the 64-bit range as an int64 (a uint64 from 2^63 up) and the rest as a
// float64. The caller makes room for 9 bytes a number; throws when there is not.
Napi::Value PackNumbers(const Napi::CallbackInfo& info);

}  // namespace rezolus
