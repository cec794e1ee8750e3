#pragma once
// TF32 ("tensor float 32"): float32's sign and 8-bit exponent with 10 explicit mantissa bits
// (float32 has 23). Ampere and later tensor cores multiply TF32 operands exactly (an 11 x 11
// bit significand product fits float32's 24 bits) and accumulate in float32.
//
// Rounding: round to nearest, ties away from zero, the rounding of cvt.rna.tf32.f32 (what
// nvcuda::wmma::__float_to_tf32 and cuBLAS' TF32 conversion use). Tensor cores fed raw
// float32 would ignore the low 13 bits (truncation), so the kernel always converts
// explicitly; round_tf32 below is the same rounding done with integer bit operations, so the
// host backend (and GPUs without TF32 tensor cores) compute with the very same operands.
// What may still differ on a GPU is the accumulation: the tensor core sums the 8 products of
// an m16n16k8 step in its own order and internal precision, so a GPU score can differ from
// the host's in the last bits (and a point whose two best scores are that close can get the
// other label); the operands themselves are identical.
//
// 3xTF32: a = big + small with big = tf32(a), small = tf32(a - big) keeps 21 of float32's 24
// significand bits; a.b ~ big.big + big.small + small.big (small.small, about 2^-22
// relative, dropped) gives float32-class accuracy from three tensor-core products.
#include <cstdint>

#include "warpkv/core/config.hpp"
#include "warpkv/core/key_value.hpp"

#if WARPKV_HAS_CUDA
#include <mma.h>
#endif

namespace warpkv::kmeans {

/// How the assignment step computes point-centroid distances.
enum class distance_precision : std::uint8_t {
  fp32,   ///< exact float32, sum over dimensions of (x - c)^2 (the default)
  tf32,   ///< ||c||^2 - 2 x.c with x.c from TF32 operands (tensor cores on sm_80+): faster, approximate
  tf32x3  ///< as tf32, x.c from the 3xTF32 split: float32-class accuracy at tensor-core speed
};

}  // namespace warpkv::kmeans

namespace warpkv::detail {

/// float32 -> TF32 (as a float with the low 13 bits zero), round to nearest, ties away from zero.
WARPKV_HD WARPKV_FORCEINLINE float round_tf32(float v) {
  std::uint32_t bits = to_bits(v);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;  // NaN / inf unchanged
  return from_bits<float>(bits);
}

/// round_tf32, with the conversion instruction where the GPU has one (same result).
WARPKV_HD WARPKV_FORCEINLINE float to_tf32(float v) {
#if WARPKV_DEVICE_PASS && __CUDA_ARCH__ >= 800
  return nvcuda::wmma::__float_to_tf32(v);
#else
  return round_tf32(v);
#endif
}

/// An operand of a TF32 product as the mma instruction takes it (a float's bits): its TF32 part
/// and, for the 3xTF32 split, the TF32 part of what that leaves (`small` untouched otherwise).
template <bool Split3>
WARPKV_HD WARPKV_FORCEINLINE void split_operand(float v, std::uint32_t& big, std::uint32_t& small) {
  const float b = to_tf32(v);
  big = to_bits(b);
  if constexpr (Split3) small = to_bits(to_tf32(v - b));
}

}  // namespace warpkv::detail
