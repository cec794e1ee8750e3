#pragma once
// The assignment step with TF32 distances (params.precision = tf32 or tf32x3): the x.c term
// on tensor cores (nvcuda::wmma, m16n16k8 TF32, sm_80+), fused with the argmin and the same
// fixed-point accumulation as the float32 body (assign.hpp); the n x k distance matrix is
// never materialised.
//
// Score. argmin_c ||x - c||^2 = argmin_c ||c||^2 - 2 x.c (||x||^2 is the same for every c).
// Both x and c are first taken relative to a centre mu (the mean of the centroids, fixed per
// assignment step): distances do not change, but the magnitudes entering the dot product -
// and with them TF32's rounding error, about 2^-11 |x| |c| - shrink from the data's offset to
// its spread. ||c - mu||^2 is summed in float32; only (x - mu).(c - mu) uses TF32 operands.
// The label is the lowest-index minimum of the score; the distance then reported for it
// (inertia, empty-cluster re-seeding, k-means||) is recomputed exactly in float32, in the
// float32 body's order, so tf32 changes which centroid wins a near-tie and nothing else.
//
// Work split. A block of 128 threads (4 warps) takes 128 points; warp w owns points
// 32w .. 32w + 31 and scores them against a tile of 64 centroids at a time: 2 x 4 accumulator
// fragments of 16 x 16 per warp (register blocking: each A fragment is used 4 times, each B
// fragment twice). Dimensions are staged 32 at a time (d padded to a multiple of 8 with
// zeros, which add exactly 0 to every dot product and norm), so any k x d fits the same
// ~46 KiB of shared memory. After the last chunk of a centroid tile each warp stores its
// 32 x 64 scores column-major (point index fastest) and thread t reads its own point's 64
// scores - 32 consecutive words per warp load, conflict-free - for the argmin.
//
// Shared-memory layout. Point and centroid rows are read by fragment loads, whose stride
// must be a multiple of 4 words; padded_odd uses 4 x an odd number (mma_row_stride,
// layout.hpp: the 16-byte version of the odd stride, conflict-free), natural the bare width
// (conflicting: kept for the benchmark). The score tile's stride follows the same rule
// (36 words: the accumulator store - lane 4g + q writes rows g, columns 2q, 2q + 1 - hits 32
// banks).
//
// Backends. On sm_80+ the dot products run on tensor cores. The host backend (and older GPUs)
// runs the same phases with the same staged operands, emulating the tensor core: each operand
// rounded to TF32 (tf32.hpp, the same rounding as the GPU's cvt.rna), exact products, float32
// accumulation in dimension order. The tensor core's own summation order is unspecified, so
// GPU scores may differ from the emulation in the last bits.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/config.hpp"
#include "warpkv/kmeans/detail/assign.hpp"
#include "warpkv/kmeans/detail/layout.hpp"
#include "warpkv/kmeans/detail/tf32.hpp"

#if WARPKV_DEVICE_PASS && __CUDA_ARCH__ >= 800
#define WARPKV_KMEANS_TENSOR_CORES 1
#else
#define WARPKV_KMEANS_TENSOR_CORES 0
#endif

namespace warpkv::detail {

template <smem_layout L, kmeans::distance_precision P>
struct assign_mma_body {
  static_assert(P != kmeans::distance_precision::fp32, "fp32 distances use assign_body");
  static constexpr bool split3 = P == kmeans::distance_precision::tf32x3;
  static constexpr unsigned block_threads = 128;  ///< 4 warps x 32 points
  static constexpr unsigned warp_points = 32;
  static constexpr unsigned centroid_tile = 64;  ///< centroids scored per pass: 4 fragments of 16
  static constexpr unsigned max_chunk = 32;      ///< dimensions staged at once: 4 k-steps of 8
  static constexpr unsigned per_thread = warp_points * centroid_tile / 32;  ///< 64 = 2 x 4 fragments x 8

  struct thread_state {
    // Running dot products of the current centroid tile. Tensor-core path: the 2 x 4 accumulator
    // fragments' elements (layout private to wmma); emulation: acc[c] = this thread's point . centroid c.
    float acc[per_thread];
    float best;  ///< lowest score so far
    std::int32_t label;
  };

  assign_args a;
  unsigned chunk = 0;    ///< min(d, max_chunk)
  unsigned nchunks = 0;  ///< ceil(d / chunk)
  unsigned ldm = 0;      ///< words per staged point / centroid row (chunk padded to 8, then mma_row_stride)
  unsigned ldc = 0;      ///< words per column of a warp's score tile (one column = one centroid's 32 scores)
  std::size_t sc_off = 0, scores_off = 0, norms_off = 0;  ///< float offsets from the 32-byte-aligned base
  block_accumulators accum;

  static assign_mma_body make(const assign_args& args) {
    assign_mma_body b;
    b.a = args;
    b.chunk = args.d < max_chunk ? args.d : max_chunk;
    b.nchunks = (args.d + b.chunk - 1) / b.chunk;
    b.ldm = mma_row_stride<L>(pad8(b.chunk));
    b.ldc = mma_row_stride<L>(warp_points);
    b.sc_off = std::size_t{block_threads} * b.ldm;
    b.scores_off = b.sc_off + std::size_t{centroid_tile} * b.ldm;
    b.norms_off = b.scores_off + std::size_t{block_threads / 32} * centroid_tile * b.ldc;
    const std::size_t floats = b.norms_off + centroid_tile;
    b.accum = block_accumulators::plan(args, floats * sizeof(float) + 32);  // + 32: room to align the base
    return b;
  }
  WARPKV_HD static constexpr unsigned pad8(unsigned w) { return (w + 7u) / 8u * 8u; }
  [[nodiscard]] std::size_t smem_bytes() const { return accum.end_bytes(a); }
  [[nodiscard]] std::size_t num_tiles() const { return (a.n + block_threads - 1) / block_threads; }

  /// wmma fragment pointers must be 32-byte aligned; dynamic shared memory is promised 16.
  template <class Block>
  WARPKV_HD float* base(const Block& b) const {
    const auto p = reinterpret_cast<std::uintptr_t>(b.smem());
    return reinterpret_cast<float*>((p + 31u) & ~std::uintptr_t{31});
  }

  template <class Block>
  WARPKV_HD void start(Block& b) const {
    accum.start(b, a, block_threads);
  }
  template <class Block>
  WARPKV_HD void finish(Block& b) const {
    accum.finish(b, a, block_threads);
  }

  /// Stages columns [col0, col0 + width) of `rows` rows of m x d matrix `src` starting at row
  /// `first`, minus the centre, zero-padded to a multiple of 8 columns and past row m.
  template <class Block>
  WARPKV_HD void stage(Block& b, float* dst, const float* src, std::size_t m, std::size_t first, unsigned rows,
                       unsigned col0, unsigned width) const {
    const unsigned padded = pad8(width);
    const std::size_t total = std::size_t{rows} * padded;
    b.for_each_thread([&](unsigned t, thread_state&) {
      for (std::size_t e = t; e < total; e += block_threads) {  // consecutive threads, consecutive columns
        const std::size_t row = e / padded, col = e % padded;
        const std::size_t r = first + row;
        dst[row * ldm + col] = r < m && col < width ? src[r * a.d + col0 + col] - a.centre[col0 + col] : 0.0f;
      }
    });
  }

  /// One staged chunk: centroid norms (threads 0..63, one centroid each) and every thread's dot products.
  template <class Block>
  WARPKV_HD void dot_chunk(Block& b, const float* sx, const float* sc, float* norms, unsigned padded, bool first) const {
    b.for_each_thread([&](unsigned t, thread_state& s) {
      if (t < centroid_tile) {
        float sum = first ? 0.0f : norms[t];
        for (unsigned j = 0; j < padded; ++j) sum = fmaf(sc[t * ldm + j], sc[t * ldm + j], sum);
        norms[t] = sum;
      }
#if WARPKV_KMEANS_TENSOR_CORES
      namespace wmma = nvcuda::wmma;
      using frag_a = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
      using frag_b = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major>;
      wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][4];
      WARPKV_KMEANS_UNROLL
      for (unsigned f = 0; f < 8; ++f) {
        WARPKV_KMEANS_UNROLL
        for (unsigned e = 0; e < 8; ++e) acc[f / 4][f % 4].x[e] = s.acc[f * 8 + e];
      }
      const float* rows = sx + std::size_t{t / 32u} * warp_points * ldm;
      for (unsigned k0 = 0; k0 < padded; k0 += 8) {
        frag_a big_a[2];
        frag_b big_b[4];
        [[maybe_unused]] frag_a small_a[2];
        [[maybe_unused]] frag_b small_b[4];
        WARPKV_KMEANS_UNROLL
        for (unsigned mi = 0; mi < 2; ++mi) {
          wmma::load_matrix_sync(big_a[mi], rows + mi * 16u * ldm + k0, ldm);
          WARPKV_KMEANS_UNROLL
          for (int e = 0; e < big_a[mi].num_elements; ++e) {
            const float v = big_a[mi].x[e];
            big_a[mi].x[e] = to_tf32(v);
            if constexpr (split3) small_a[mi].x[e] = to_tf32(v - big_a[mi].x[e]);
          }
        }
        WARPKV_KMEANS_UNROLL
        for (unsigned ni = 0; ni < 4; ++ni) {
          // B = centroids^T (d x 64), column-major: column n is centroid row n, contiguous.
          wmma::load_matrix_sync(big_b[ni], sc + ni * 16u * ldm + k0, ldm);
          WARPKV_KMEANS_UNROLL
          for (int e = 0; e < big_b[ni].num_elements; ++e) {
            const float v = big_b[ni].x[e];
            big_b[ni].x[e] = to_tf32(v);
            if constexpr (split3) small_b[ni].x[e] = to_tf32(v - big_b[ni].x[e]);
          }
        }
        WARPKV_KMEANS_UNROLL
        for (unsigned mi = 0; mi < 2; ++mi) {
          WARPKV_KMEANS_UNROLL
          for (unsigned ni = 0; ni < 4; ++ni) {
            if constexpr (split3) {  // small terms first, so they are not lost against the big one
              wmma::mma_sync(acc[mi][ni], small_a[mi], big_b[ni], acc[mi][ni]);
              wmma::mma_sync(acc[mi][ni], big_a[mi], small_b[ni], acc[mi][ni]);
            }
            wmma::mma_sync(acc[mi][ni], big_a[mi], big_b[ni], acc[mi][ni]);
          }
        }
      }
      WARPKV_KMEANS_UNROLL
      for (unsigned f = 0; f < 8; ++f) {
        WARPKV_KMEANS_UNROLL
        for (unsigned e = 0; e < 8; ++e) s.acc[f * 8 + e] = acc[f / 4][f % 4].x[e];
      }
#else
      // Emulation: the same operands, products exact, float32 sums in dimension order.
      float big[max_chunk], small[max_chunk];
      for (unsigned j = 0; j < padded; ++j) {
        const float v = sx[std::size_t{t} * ldm + j];
        big[j] = to_tf32(v);
        small[j] = split3 ? to_tf32(v - big[j]) : 0.0f;
      }
      for (unsigned c = 0; c < centroid_tile; ++c) {
        const float* cent = sc + std::size_t{c} * ldm;
        float acc = s.acc[c];
        for (unsigned j = 0; j < padded; ++j) {
          const float cb = to_tf32(cent[j]);
          if constexpr (split3) {
            acc = fmaf(small[j], cb, acc);
            acc = fmaf(big[j], to_tf32(cent[j] - cb), acc);
          }
          acc = fmaf(big[j], cb, acc);
        }
        s.acc[c] = acc;
      }
#endif
    });
  }

  /// The tile's scores into the warp's column-major score tile (point index fastest).
  template <class Block>
  WARPKV_HD void store_scores(Block& b, float* scores) const {
    b.for_each_thread([&](unsigned t, thread_state& s) {
      float* tile = scores + std::size_t{t / 32u} * centroid_tile * ldc;
#if WARPKV_KMEANS_TENSOR_CORES
      namespace wmma = nvcuda::wmma;
      WARPKV_KMEANS_UNROLL
      for (unsigned f = 0; f < 8; ++f) {
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
        WARPKV_KMEANS_UNROLL
        for (unsigned e = 0; e < 8; ++e) acc.x[e] = s.acc[f * 8 + e];
        // rows (points) 16 (f / 4) .., columns (centroids) 16 (f % 4) ..
        wmma::store_matrix_sync(tile + (f % 4) * 16u * ldc + (f / 4) * 16u, acc, ldc, wmma::mem_col_major);
      }
#else
      for (unsigned c = 0; c < centroid_tile; ++c) tile[std::size_t{c} * ldc + t % 32u] = s.acc[c];
#endif
    });
  }

  template <class Block>
  WARPKV_HD void operator()(Block& b, std::size_t tile) const {
    float* sx = base(b);
    float* sc = sx + sc_off;
    float* scores = sx + scores_off;
    float* norms = sx + norms_off;
    const std::size_t first = tile * block_threads;
    b.for_each_thread([&](unsigned, thread_state& s) {
      s.best = __builtin_huge_valf();
      s.label = 0;
    });
    for (unsigned c0 = 0; c0 < a.k; c0 += centroid_tile) {
      b.for_each_thread([&](unsigned, thread_state& s) {
        WARPKV_KMEANS_UNROLL
        for (unsigned e = 0; e < per_thread; ++e) s.acc[e] = 0.0f;
      });
      for (unsigned ch = 0; ch < nchunks; ++ch) {
        const unsigned col0 = ch * chunk;
        const unsigned width = a.d - col0 < chunk ? a.d - col0 : chunk;
        b.sync();  // every thread is done with the previous chunk, tile and argmin
        if (nchunks > 1 || c0 == 0) stage(b, sx, a.points, a.n, first, block_threads, col0, width);
        stage(b, sc, a.centroids, a.k, c0, centroid_tile, col0, width);
        b.sync();
        dot_chunk(b, sx, sc, norms, pad8(width), ch == 0);
      }
      store_scores(b, scores);
      b.sync();  // scores and norms visible to every thread
      const unsigned count = a.k - c0 < centroid_tile ? a.k - c0 : centroid_tile;
      b.for_each_thread([&](unsigned t, thread_state& s) {
        const float* col = scores + std::size_t{t / 32u} * centroid_tile * ldc + t % 32u;
        for (unsigned c = 0; c < count; ++c) {
          const float score = fmaf(-2.0f, col[std::size_t{c} * ldc], norms[c]);  // ||c||^2 - 2 x.c
          if (score < s.best) {
            s.best = score;
            s.label = static_cast<std::int32_t>(c0 + c);
          }
        }
      });
    }
    std::uint64_t* acc = accum.shared(b);
    b.for_each_thread([&](unsigned t, thread_state& s) {
      const std::size_t i = first + t;
      if (i >= a.n) return;
      const float* x = a.points + i * a.d;
      const float* c = a.centroids + static_cast<std::size_t>(s.label) * a.d;
      float dist = 0;  // exact float32, in the float32 body's order
      for (unsigned j = 0; j < a.d; ++j) {
        const float diff = x[j] - c[j];
        dist = fmaf(diff, diff, dist);
      }
      block_accumulators::record(a, acc, i, s.label, dist, [&](unsigned j) { return x[j]; });
    });
  }
};

}  // namespace warpkv::detail
