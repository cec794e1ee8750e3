#pragma once
// The assignment step with TF32 distances (params.precision = tf32 or tf32x3): the x.c term
// on tensor cores (mma.sync m16n8k8 TF32, sm_80+), fused with the argmin and the same
// fixed-point accumulation as the float32 body (assign.hpp); the n x k distance matrix is
// never materialised, not even per block.
//
// Score. argmin_c ||x - c||^2 = argmin_c ||c||^2 - 2 x.c (||x||^2 is the same for every c).
// Both x and c are first taken relative to a centre mu (the mean of the centroids, fixed per
// assignment step; centroids are staged centred, points as given - emit needs them - and
// centred as their fragments are loaded): distances do not change, but the magnitudes entering the dot product -
// and with them TF32's rounding error, about 2^-11 |x| |c| - shrink from the data's offset to
// its spread. ||c - mu||^2 is summed in float32; only (x - mu).(c - mu) uses TF32 operands.
// The label is the lowest-index minimum of the score; the distance then reported for it
// (inertia, empty-cluster re-seeding, k-means||) is recomputed exactly in float32, in the
// float32 body's order, so tf32 changes which centroid wins a near-tie and nothing else.
//
// Work split. A block of 128 threads (4 warps) takes 128 points; warp w owns points
// 32w .. 32w + 31 and scores them against a tile of 64 centroids at a time: 2 x 8 m16n8
// accumulator tiles per warp, 64 floats per thread (register blocking: each A fragment feeds
// 8 products, each B fragment 2). Dimensions are staged 32 at a time (d padded to a multiple
// of 8 with zeros, which add exactly 0 to every dot product and norm), so any k x d fits the
// same ~28 KiB of shared memory. The argmin runs on the accumulators in registers: the
// m16n8k8 accumulator layout is documented (PTX ISA: lane 4g + q holds rows g and g + 8,
// columns 2q and 2q + 1), so each lane keeps the best centroid of its 4 points among its
// columns, across all centroid tiles, and the 4 lanes of a row group combine theirs with two
// shuffles at the end (lowest score, then lowest index: ties still go to the lower index).
//
// Shared-memory layout. Fragments are loaded with 32-bit loads, lane 4g + q reading row g,
// column q (+ 4) of a row-major tile: words g * stride + q. An odd stride would conflict here
// (rows one bank apart: lanes (g, q) and (g + 1, q - 1) collide); padded_odd uses a stride of
// 4 x an odd number (mma_row_stride, layout.hpp), which puts the 8 rows in 8 different
// 4-bank groups: conflict-free. natural uses the bare width (8-way conflicts at width 32),
// kept for the benchmark.
//
// Backends. On sm_80+ the dot products run on tensor cores. The host backend (and older GPUs)
// runs the same phases with the same staged operands, emulating the tensor core: each operand
// rounded to TF32 (tf32.hpp, the same rounding as the GPU's cvt.rna), exact products, float32
// accumulation in dimension order; each thread scans its own point's 64 scores. The tensor
// core's own summation order is unspecified, so GPU scores may differ from the emulation in
// the last bits.
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

#if WARPKV_KMEANS_TENSOR_CORES
/// c += a b for one m16n8k8 TF32 tile (operands: TF32 bit patterns in the PTX fragment layout).
__device__ WARPKV_FORCEINLINE void mma_tf32(float* c, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

template <smem_layout L, kmeans::distance_precision P>
struct assign_mma_body {
  static_assert(P != kmeans::distance_precision::fp32, "fp32 distances use assign_body");
  static constexpr bool split3 = P == kmeans::distance_precision::tf32x3;
  static constexpr unsigned block_threads = 128;  ///< 4 warps x 32 points
  static constexpr unsigned warp_points = 32;
  static constexpr unsigned centroid_tile = 64;  ///< centroids scored per pass: 8 m16n8 tiles wide
  static constexpr unsigned max_chunk = 32;      ///< centroid dimensions staged at once: 4 k-steps of 8
  /// The whole point tile (every dimension) stays in shared memory while all centroid tiles
  /// pass when it fits in this much (d <= 136); else point chunks are re-staged per centroid tile.
  static constexpr std::size_t max_resident_bytes = 72 * 1024;
  static constexpr unsigned per_thread = warp_points * centroid_tile / 32;  ///< 64 accumulators per thread

  struct thread_state {
    // Running dot products of the current centroid tile. Tensor cores: the 2 x 8 m16n8
    // accumulator tiles, acc[(mi * 8 + ni) * 4 + r] (PTX layout); emulation: acc[c] = this
    // thread's point . centroid c.
    float acc[per_thread];
    float best;  ///< emulation: lowest score so far of this thread's point
    std::int32_t label;
    float part_best[4];  ///< tensor cores: per point held (mi, row half), best among this lane's columns
    std::int32_t part_label[4];
    std::uint64_t inertia;  ///< fixed point, this thread's points so far (block_accumulators::finish flushes it)
  };

  assign_args a;
  unsigned chunk = 0;    ///< min(d, max_chunk)
  unsigned nchunks = 0;  ///< ceil(d / chunk)
  unsigned ldm = 0;      ///< words per staged centroid row (chunk padded to 8, then mma_row_stride)
  bool resident = false;  ///< the point tile holds every dimension (staged once per 128 points)
  unsigned ldx = 0;       ///< words per staged point row (= ldm unless resident)
  unsigned xwidth = 0;    ///< columns of the staged point tile and centre (padded to 8)
  std::size_t sc_off = 0, norms_off = 0, centre_off = 0, labels_off = 0;  ///< float offsets in shared memory
  block_accumulators accum;

  static assign_mma_body make(const assign_args& args) {
    assign_mma_body b;
    b.a = args;
    b.chunk = args.d < max_chunk ? args.d : max_chunk;
    b.nchunks = (args.d + b.chunk - 1) / b.chunk;
    b.ldm = mma_row_stride<L>(pad8(b.chunk));
    const unsigned full = mma_row_stride<L>(pad8(args.d));
    b.resident = b.nchunks > 1 && std::size_t{block_threads} * full * sizeof(float) <= max_resident_bytes;
    b.ldx = b.resident ? full : b.ldm;
    b.xwidth = b.resident ? pad8(args.d) : pad8(b.chunk);
    b.sc_off = std::size_t{block_threads} * b.ldx;
    b.norms_off = b.sc_off + std::size_t{centroid_tile} * b.ldm;
    b.centre_off = b.norms_off + centroid_tile;
    b.labels_off = b.centre_off + b.xwidth;
    const std::size_t floats = b.labels_off + block_threads;
    b.accum = block_accumulators::plan(args, floats * sizeof(float));
    return b;
  }
  WARPKV_HD static constexpr unsigned pad8(unsigned w) { return (w + 7u) / 8u * 8u; }
  [[nodiscard]] std::size_t smem_bytes() const { return accum.end_bytes(a); }
  [[nodiscard]] std::size_t num_tiles() const { return (a.n + block_threads - 1) / block_threads; }

  template <class Block>
  WARPKV_HD void start(Block& b) const {
    accum.start(b, a, block_threads);
  }
  template <class Block>
  WARPKV_HD void finish(Block& b) const {
    accum.finish(b, a, block_threads);
  }

  /// Stages columns [col0, col0 + width) of `rows` rows of m x d matrix `src` starting at row
  /// `first` (minus the centre when `centred`), zero-padded to a multiple of 8 columns and past row m.
  template <class Block>
  WARPKV_HD void stage(Block& b, float* dst, unsigned stride, const float* src, std::size_t m, std::size_t first,
                       unsigned rows, unsigned col0, unsigned width, bool centred) const {
    const unsigned padded = pad8(width);
    const std::size_t total = std::size_t{rows} * padded;
    b.for_each_thread([&](unsigned t, thread_state&) {
      for (std::size_t e = t; e < total; e += block_threads) {  // consecutive threads, consecutive columns
        const std::size_t row = e / padded, col = e % padded;
        const std::size_t r = first + row;
        const float v = r < m && col < width ? src[r * a.d + col0 + col] : 0.0f;
        dst[row * stride + col] = centred && r < m && col < width ? v - a.centre[col0 + col] : v;
      }
    });
  }

  /// Columns [col0, col0 + width) of the centre, zero-padded to a multiple of 8.
  template <class Block>
  WARPKV_HD void stage_centre(Block& b, float* dst, unsigned col0, unsigned width) const {
    b.for_each_thread([&](unsigned t, thread_state&) {
      for (unsigned e = t; e < pad8(width); e += block_threads) dst[e] = e < width ? a.centre[col0 + e] : 0.0f;
    });
  }

  /// One staged chunk: centroid norms (threads 0..63, one centroid each) and every thread's dot
  /// products. `sx` and `centre` point at the chunk's first column (row stride ldx).
  template <class Block>
  WARPKV_HD void dot_chunk(Block& b, const float* sx, const float* sc, const float* centre, float* norms,
                           unsigned padded, bool first) const {
    b.for_each_thread([&](unsigned t, thread_state& s) {
      if (t < centroid_tile) {  // 16-byte loads: a row per lane at stride 4 x odd, conflict-free (see emit)
        float sum = first ? 0.0f : norms[t];
        for (unsigned j = 0; j < padded; j += 4) {  // padded columns are zeros: fma(0, 0, sum) = sum
          float v[4];
          load4(sc + std::size_t{t} * ldm + j, v);
          WARPKV_KMEANS_UNROLL
          for (unsigned e = 0; e < 4; ++e) sum = fmaf(v[e], v[e], sum);
        }
        norms[t] = sum;
      }
#if WARPKV_KMEANS_TENSOR_CORES
      const unsigned lane = t % 32u, g = lane / 4u, q = lane % 4u;
      const float* rows = sx + (std::size_t{t / 32u} * warp_points + g) * ldx + q;  // A: row g, column q
      const float* cols = sc + std::size_t{g} * ldm + q;                             // B: centroid g, dim q
      for (unsigned k0 = 0; k0 < padded; k0 += 8) {
        const float mu[2] = {centre[k0 + q], centre[k0 + q + 4]};  // the A columns this lane loads
        std::uint32_t big_a[2][4], big_b[8][2];
        [[maybe_unused]] std::uint32_t small_a[2][4], small_b[8][2];
        WARPKV_KMEANS_UNROLL
        for (unsigned mi = 0; mi < 2; ++mi) {
          WARPKV_KMEANS_UNROLL
          for (unsigned r = 0; r < 4; ++r) {  // a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4)
            split_operand<split3>(rows[(mi * 16u + (r % 2) * 8u) * ldx + k0 + (r / 2) * 4u] - mu[r / 2], big_a[mi][r],
                                  small_a[mi][r]);
          }
        }
        WARPKV_KMEANS_UNROLL
        for (unsigned ni = 0; ni < 8; ++ni) {
          WARPKV_KMEANS_UNROLL
          for (unsigned r = 0; r < 2; ++r) {  // b0 (k = q, n = g), b1 (k = q + 4, n = g)
            split_operand<split3>(cols[ni * 8u * ldm + k0 + r * 4u], big_b[ni][r], small_b[ni][r]);
          }
        }
        WARPKV_KMEANS_UNROLL
        for (unsigned mi = 0; mi < 2; ++mi) {
          WARPKV_KMEANS_UNROLL
          for (unsigned ni = 0; ni < 8; ++ni) {
            float* c = s.acc + (mi * 8u + ni) * 4u;
            if constexpr (split3) {  // small terms first, so they are not lost against the big one
              mma_tf32(c, small_a[mi], big_b[ni]);
              mma_tf32(c, big_a[mi], small_b[ni]);
            }
            mma_tf32(c, big_a[mi], big_b[ni]);
          }
        }
      }
#else
      // Emulation: the same operands, products exact, float32 sums in dimension order.
      float big[max_chunk], small[max_chunk];
      for (unsigned j = 0; j < padded; ++j) {
        const float v = sx[std::size_t{t} * ldx + j] - centre[j];
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

  /// After a centroid tile's last chunk (and a barrier: all 64 norms written): fold the tile's
  /// scores ||c||^2 - 2 x.c into each thread's running minimum.
  template <class Block>
  WARPKV_HD void argmin_tile(Block& b, const float* norms, unsigned c0) const {
    const unsigned count = a.k - c0 < centroid_tile ? a.k - c0 : centroid_tile;
    b.for_each_thread([&](unsigned t, thread_state& s) {
#if WARPKV_KMEANS_TENSOR_CORES
      const unsigned q = t % 4u;
      WARPKV_KMEANS_UNROLL
      for (unsigned ni = 0; ni < 8; ++ni) {
        WARPKV_KMEANS_UNROLL
        for (unsigned e = 0; e < 2; ++e) {  // columns in increasing order: strict < keeps the lowest index
          const unsigned col = ni * 8u + 2u * q + e;
          if (col >= count) continue;
          const float norm = norms[col];
          WARPKV_KMEANS_UNROLL
          for (unsigned p = 0; p < 4; ++p) {  // p = 2 mi + row half
            const float score = fmaf(-2.0f, s.acc[((p / 2u) * 8u + ni) * 4u + (p % 2u) * 2u + e], norm);
            if (score < s.part_best[p]) {
              s.part_best[p] = score;
              s.part_label[p] = static_cast<std::int32_t>(c0 + col);
            }
          }
        }
      }
#else
      (void)t;
      for (unsigned c = 0; c < count; ++c) {
        const float score = fmaf(-2.0f, s.acc[c], norms[c]);  // ||c||^2 - 2 x.c
        if (score < s.best) {
          s.best = score;
          s.label = static_cast<std::int32_t>(c0 + c);
        }
      }
#endif
    });
  }

  /// Tensor cores: the 4 lanes sharing a row group combine their partial minima (lowest score,
  /// then lowest index), and each point's label goes through shared memory to its owner thread.
  template <class Block>
  WARPKV_HD void gather_labels(Block& b, std::int32_t* labels) const {
#if WARPKV_KMEANS_TENSOR_CORES
    b.for_each_thread([&](unsigned t, thread_state& s) {
      const unsigned lane = t % 32u, g = lane / 4u, q = lane % 4u;
      WARPKV_KMEANS_UNROLL
      for (unsigned p = 0; p < 4; ++p) {
        float best = s.part_best[p];
        std::int32_t label = s.part_label[p];
        WARPKV_KMEANS_UNROLL
        for (unsigned off = 1; off <= 2; off *= 2) {
          const float other = __shfl_xor_sync(0xffffffffu, best, off);
          const std::int32_t other_label = __shfl_xor_sync(0xffffffffu, label, off);
          if (other < best || (other == best && other_label < label)) {
            best = other;
            label = other_label;
          }
        }
        if (q == 0) labels[(t / 32u) * warp_points + (p / 2u) * 16u + (p % 2u) * 8u + g] = label;
      }
    });
    b.sync();
    b.for_each_thread([&](unsigned t, thread_state& s) { s.label = labels[t]; });
#else
    (void)b;
    (void)labels;
#endif
  }

  template <class Block>
  WARPKV_HD void operator()(Block& b, std::size_t tile) const {
    float* sx = reinterpret_cast<float*>(b.smem());
    float* sc = sx + sc_off;
    float* norms = sx + norms_off;
    float* centre = sx + centre_off;
    auto* labels = reinterpret_cast<std::int32_t*>(sx + labels_off);
    const std::size_t first = tile * block_threads;
    b.for_each_thread([&](unsigned, thread_state& s) {
      s.best = __builtin_huge_valf();
      s.label = 0;
      WARPKV_KMEANS_UNROLL
      for (unsigned p = 0; p < 4; ++p) {
        s.part_best[p] = __builtin_huge_valf();
        s.part_label[p] = 0;
      }
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
        if (resident ? c0 == 0 && ch == 0 : nchunks > 1 || c0 == 0) {  // points as given: emit sums them
          stage(b, sx, ldx, a.points, a.n, first, block_threads, resident ? 0 : col0, resident ? a.d : width, false);
          stage_centre(b, centre, resident ? 0 : col0, resident ? a.d : width);
        }
        stage(b, sc, ldm, a.centroids, a.k, c0, centroid_tile, col0, width, true);
        b.sync();
        const unsigned xcol = resident ? col0 : 0;  // the chunk's first column in sx and centre
        dot_chunk(b, sx + xcol, sc, centre + xcol, norms, pad8(width), ch == 0);
      }
      b.sync();  // all 64 norms written
      argmin_tile(b, norms, c0);
    }
    gather_labels(b, labels);
    std::uint64_t* acc = accum.shared(b);
    b.for_each_thread([&](unsigned t, thread_state& s) {
      const std::size_t i = first + t;
      if (i >= a.n) return;
      // The point is still in shared memory when staged whole (no second read from DRAM).
      const bool staged = nchunks == 1 || resident;
      const float* x = staged ? sx + std::size_t{t} * ldx : a.points + i * a.d;
      const float* c = a.centroids + static_cast<std::size_t>(s.label) * a.d;
      float dist = 0;  // exact float32, in the float32 body's order
      if (staged) {
        // Row stride 4 x odd: scalar loads of a column would be 4-way conflicts (lanes t and
        // t + 8 share a bank); 16-byte loads are served 8 lanes at a time, and 8 rows at
        // stride 4 x odd cover all 32 banks. Rows are zero-padded to a multiple of 8.
        for (unsigned j = 0; j < a.d; j += 4) {
          float xv[4];
          load4(x + j, xv);
          WARPKV_KMEANS_UNROLL
          for (unsigned e = 0; e < 4; ++e) {
            if (j + e < a.d) {
              const float diff = xv[e] - c[j + e];
              dist = fmaf(diff, diff, dist);
            }
          }
        }
      } else {
        dist = exact_sq_dist(x, c, a.d);
      }
      block_accumulators::record(a, acc, i, s.label, dist, [&](unsigned j) { return x[j]; }, &s.inertia);
    });
  }
};

}  // namespace warpkv::detail
