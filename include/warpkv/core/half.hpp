#pragma once
// warpkv::half: IEEE 754 binary16 values (the typed cache's `half` elements, vector_cache.hpp).
//
// It is CUDA's __half wherever <cuda_fp16.h> is reachable: always under nvcc, and in a host
// build (g++) when the toolkit's include directory is on the include path (the CMake target
// puts it there when it finds a toolkit: cmake/warpkv_cuda.cmake). Otherwise it is
// detail::soft_half, a binary16 of this header's own with the same layout (2 bytes, the same
// bits) and the same conversions (round to nearest even, as __float2half_rn): so a host-only
// machine without a toolkit still builds and runs half values. WARPKV_NO_CUDA_FP16 defined
// chooses soft_half even where cuda_fp16.h is reachable. The choice is per translation unit:
// the TUs of one program must make the same one (a CMake target does), since it decides the
// type of warpkv::half.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "warpkv/core/config.hpp"

#if defined(__CUDACC__) || (!defined(WARPKV_NO_CUDA_FP16) && __has_include(<cuda_fp16.h>))
#include <cuda_fp16.h>
#define WARPKV_HALF_IS_CUDA 1
#else
#define WARPKV_HALF_IS_CUDA 0
#endif

namespace warpkv {
namespace detail {

/// binary16 bits -> float (exact: every binary16 value is a float).
WARPKV_HD inline float half_bits_to_float(std::uint16_t h) {
  constexpr std::uint32_t shifted_exp = 0x7c00u << 13;
  std::uint32_t u = static_cast<std::uint32_t>(h & 0x7fffu) << 13;  // exponent and mantissa
  const std::uint32_t exp = u & shifted_exp;
  u += (127u - 15u) << 23;                        // rebias the exponent
  if (exp == shifted_exp) u += (128u - 16u) << 23;  // inf, NaN: the largest exponent
  float f;
  if (exp == 0) {  // zero or subnormal: renormalize by a float subtraction (exact)
    u += 1u << 23;
    constexpr std::uint32_t magic_bits = 113u << 23;
    float magic;
    memcpy(&magic, &magic_bits, 4);
    memcpy(&f, &u, 4);
    f -= magic;
    memcpy(&u, &f, 4);
  }
  u |= static_cast<std::uint32_t>(h & 0x8000u) << 16;
  memcpy(&f, &u, 4);
  return f;
}

/// float -> binary16 bits, rounded to nearest even (overflow: inf; NaN: a quiet NaN).
WARPKV_HD inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x;
  memcpy(&x, &f, 4);
  const std::uint32_t sign = x & 0x80000000u;
  x ^= sign;
  std::uint32_t o;
  if (x >= 0x47800000u) {  // >= 2^16 (rounds to inf), inf or NaN
    o = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < (113u << 23)) {  // below 2^-14: a subnormal or zero; the float add rounds (nearest even)
    constexpr std::uint32_t magic_bits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float magic, v;
    memcpy(&magic, &magic_bits, 4);
    memcpy(&v, &x, 4);
    v += magic;
    memcpy(&o, &v, 4);
    o -= magic_bits;
  } else {  // normal: rebias, round the 13 dropped bits to nearest even (a carry may make it inf)
    const std::uint32_t odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu + odd;
    o = x >> 13;
  }
  return static_cast<std::uint16_t>(o | (sign >> 16));
}

/// A binary16 value without CUDA's header: the bits of __half and its conversions (implicit
/// from and to float, rounding to nearest even); no arithmetic of its own (add through float).
struct soft_half {
  std::uint16_t bits;
  soft_half() = default;
  WARPKV_HD soft_half(float f) : bits(float_to_half_bits(f)) {}  // NOLINT: implicit, as __half's
  WARPKV_HD operator float() const { return half_bits_to_float(bits); }  // NOLINT
};
static_assert(sizeof(soft_half) == 2 && std::is_trivially_copyable_v<soft_half>);

}  // namespace detail

#if WARPKV_HALF_IS_CUDA
using half = __half;
#else
using half = detail::soft_half;
#endif
static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>);

/// half -> float, exact.
WARPKV_HD inline float to_float(half h) {
#if WARPKV_HALF_IS_CUDA
  return __half2float(h);
#else
  return static_cast<float>(h);
#endif
}
/// float -> half, rounded to nearest even.
WARPKV_HD inline half to_half(float f) {
#if WARPKV_HALF_IS_CUDA
  return __float2half_rn(f);
#else
  return half(f);
#endif
}

namespace detail {
/// a + b in T, the accumulation of accum_or_assign: float and double natively; half through
/// float, rounded once (the float sum of two halves rounded to half is the correctly rounded
/// half sum: float's 24 bits are at least 2 x 11 + 2, so the double rounding is innocuous).
template <class T>
WARPKV_HD inline T accumulate(T a, T b) {
  if constexpr (std::is_same_v<T, half>) return to_half(to_float(a) + to_float(b));
  else return a + b;
}
}  // namespace detail

}  // namespace warpkv
