#pragma once
// Shared-memory layout of the point tile in k-means' assignment step.
//
// Thread t of a block owns point t of the tile and reads its coordinates from row t of the
// tile: word t * stride + j. A warp's 32 threads therefore load 32 words `stride` apart at
// once. Shared memory has 32 banks of 4 bytes (word w lives in bank w mod 32), so the load
// takes gcd(stride, 32) wavefronts: a row stride of d = 32 or 128 words puts the whole warp
// on one bank (32-way conflict), d = 4 on 8 banks (4-way). An odd stride is coprime with 32
// and spreads the warp over all 32 banks. padded_odd therefore stores rows with stride
// width | 1 (the row width, plus one word when it is even): one wasted word per row, no
// conflicts. natural keeps stride = width, the layout a straightforward port would use; it
// exists so the benchmark can run the very same kernel with the conflicts
// (docs/design/kmeans.md). The assignment kernel's row width is min(d, 64) rounded up to a
// multiple of 4 (zero-padded), so natural rows of d = 4, 32, 64, 128 have strides 4, 32, 64, 64.
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv {

enum class smem_layout : std::uint8_t {
  padded_odd,  ///< row stride rounded up to an odd number of 32-bit words: conflict-free (default)
  natural      ///< row stride = row width: bank conflicts whenever the width is even (benchmark only)
};

namespace detail {

/// Row stride in 32-bit words of a shared-memory tile whose rows hold `width` floats.
template <smem_layout L>
WARPKV_HD constexpr unsigned row_stride(unsigned width) {
  if constexpr (L == smem_layout::padded_odd) return width | 1u;
  else return width;
}

/// Row stride in 32-bit words of a tile that TF32 tensor-core fragments (mma.sync m16n8k8)
/// load from shared memory; `width` is a multiple of 8. A fragment load sends lane 4g + q
/// (g = 0..7, q = 0..3) to row g, column q: words g * stride + q. An odd stride does not help
/// here: rows one bank apart make lanes (g, q) and (g + 1, q - 1) collide (4 ways at stride
/// 33). With stride = 4 x odd, g * stride mod 32 = 4 x (g x odd mod 8) takes the 8 values
/// 0, 4, .., 28 once each and the 4 columns fill each 4-bank group: 32 lanes, 32 banks, the
/// 16-byte-unit version of the odd stride (and a multiple of 16 bytes, as wmma and vector
/// loads require). natural (stride = width, a multiple of 8 words) puts g and g + 4 (width 8),
/// or all eight rows (width a multiple of 32), on the same banks.
template <smem_layout L>
WARPKV_HD constexpr unsigned mma_row_stride(unsigned width) {
  if constexpr (L == smem_layout::padded_odd) return (width / 4u | 1u) * 4u;
  else return width;
}

/// Ways of bank conflict of a warp loading words t * stride (t = 0..31) at once.
WARPKV_HD constexpr unsigned conflict_ways(unsigned stride) {
  unsigned a = stride % 32u, b = 32u;
  if (a == 0) return 32u;
  while (a != 0) {
    const unsigned r = b % a;
    b = a;
    a = r;
  }
  return b;  // gcd(stride, 32)
}

static_assert(conflict_ways(row_stride<smem_layout::padded_odd>(32)) == 1);
static_assert(conflict_ways(row_stride<smem_layout::natural>(32)) == 32);
static_assert(conflict_ways(row_stride<smem_layout::natural>(4)) == 4);
static_assert(conflict_ways(row_stride<smem_layout::padded_odd>(4)) == 1);

/// Ways of bank conflict of a TF32 fragment load (lanes 4g + q at words g * stride + q).
WARPKV_HD constexpr unsigned fragment_conflict_ways(unsigned stride) {
  unsigned worst = 0;
  for (unsigned bank = 0; bank < 32; ++bank) {
    unsigned hits = 0;
    for (unsigned g = 0; g < 8; ++g)
      for (unsigned q = 0; q < 4; ++q) hits += (g * stride + q) % 32u == bank ? 1u : 0u;
    worst = hits > worst ? hits : worst;
  }
  return worst;
}

static_assert(mma_row_stride<smem_layout::padded_odd>(32) == 36);
static_assert(mma_row_stride<smem_layout::padded_odd>(8) == 12);
static_assert(mma_row_stride<smem_layout::padded_odd>(16) == 20);
static_assert(fragment_conflict_ways(mma_row_stride<smem_layout::padded_odd>(8)) == 1);
static_assert(fragment_conflict_ways(mma_row_stride<smem_layout::padded_odd>(32)) == 1);
static_assert(fragment_conflict_ways(mma_row_stride<smem_layout::natural>(32)) == 8);
static_assert(fragment_conflict_ways(mma_row_stride<smem_layout::natural>(8)) == 2);
static_assert(fragment_conflict_ways(33) == 4);  // the fp32 kernel's odd stride would conflict here

}  // namespace detail
}  // namespace warpkv
