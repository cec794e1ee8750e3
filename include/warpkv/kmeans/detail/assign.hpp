#pragma once
// The fused assignment step of Lloyd's algorithm: nearest centroid of every point, and (when
// asked) the per-cluster sums, counts and inertia, without ever materialising the n x k
// distance matrix.
//
// One block of 128 threads takes a tile of 128 points (thread t: point t). Both the points and
// the centroids are staged in shared memory in chunks of up to 64 dimensions; each thread
// keeps the squared distances to a register tile of 32 centroids and reads
//   its own point row  sx[t * stride + j]   (32 different rows per warp: bank-sensitive,
//                                            stride from smem_layout, see layout.hpp)
//   a centroid row     sc[c * cstride + j .. j + 3] as one 16-byte load (one address for the
//                                            whole warp: a broadcast)
// Rows are zero-padded to a multiple of 4 columns so the centroid loads can be 16 bytes wide;
// padded columns add fma(0, 0, acc) = acc exactly, so distances do not change.
// Distances are summed over dimensions in order in float32, so a point's distance and label
// are the same on every backend; ties go to the lower centroid index.
// Accumulation: each term rounded to fixed point (fixed_point.hpp) and added with integer
// atomics, per block in shared memory when k x d is small (flushed once per block), else
// straight to global memory (block_accumulators, shared with the TF32 body in assign_mma.hpp);
// the inertia in a register per thread, flushed once per block.
// Small k x d (k (d + 1) <= 128, d <= 64; args.by_owners, kmeans' accumulation_method::owners,
// opt-in): no atomic per point. 16 clusters put every lane of a warp on the same few shared
// words, so instead each thread owns one (cluster, coordinate) pair for the whole block: per
// tile, every warp publishes, per cluster, the mask of its lanes that chose it (one
// __match_any_sync), and the owner of (c, j) adds coordinate j of the points in cluster c's
// masks to a register (owner of (c, d): the count, by popcount); one atomic per owner per block.
// Measured slower than the shared atomics at d = 4, k = 16 on an H200 (docs/perf.md, session 7).
// When every centroid fits the staged rows they are staged once per block, in start().
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "warpkv/core/config.hpp"
#include "warpkv/core/tile.hpp"
#include "warpkv/kmeans/detail/fixed_point.hpp"
#include "warpkv/kmeans/detail/layout.hpp"

#if WARPKV_DEVICE_PASS
#define WARPKV_KMEANS_UNROLL _Pragma("unroll")
#else
#define WARPKV_KMEANS_UNROLL
#endif

namespace warpkv::detail {

enum class dist_output : std::uint8_t { none, write, min };

/// Four floats from a 16-byte-aligned shared-memory address (one vector load on the GPU).
WARPKV_HD WARPKV_FORCEINLINE void load4(const float* p, float (&out)[4]) {
#if WARPKV_DEVICE_PASS
  const float4 v = *reinterpret_cast<const float4*>(p);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
#else
  for (int q = 0; q < 4; ++q) out[q] = p[q];
#endif
}

/// Squared float32 distance of x to c, summed over dimensions in order: the distance every
/// assignment path reports for a point's chosen centroid (the float32 body sums in this order
/// too; its zero-padded columns add exactly 0).
WARPKV_HD inline float exact_sq_dist(const float* x, const float* c, unsigned d) {
  float dist = 0;
  for (unsigned j = 0; j < d; ++j) {
    const float diff = x[j] - c[j];
    dist = fmaf(diff, diff, dist);
  }
  return dist;
}

struct assign_args {
  const float* points = nullptr;  ///< n x d, row-major
  std::size_t n = 0;
  unsigned d = 0;
  const float* centroids = nullptr;  ///< k x d, row-major
  unsigned k = 0;
  std::int32_t* labels = nullptr;  ///< n, optional
  float* dist = nullptr;           ///< n, optional: squared distance to the nearest centroid
  dist_output dist_mode = dist_output::none;
  std::uint64_t* sums = nullptr;     ///< k x d fixed point (x * sum_scale), optional
  std::uint64_t* counts = nullptr;   ///< k, optional
  std::uint64_t* inertia = nullptr;  ///< 1, fixed point (distance * dist_scale), optional
  double sum_scale = 1;
  double dist_scale = 1;
  const float* centre = nullptr;  ///< d, tf32 paths only (assign_mma.hpp): coordinates are taken relative to it
  bool by_owners = false;  ///< fp32 fused kernel: sums and counts by (cluster, coordinate) owners where the shape allows
};

/// The per-cluster sums, counts and inertia of the assignment step, shared by both assignment
/// bodies: a copy per block in shared memory when k x d is small (zeroed in start(), flushed
/// once per block in finish()), else atomics straight to global memory.
struct block_accumulators {
  static constexpr std::size_t max_bytes = 48 * 1024;
  bool enabled = false;
  std::size_t offset = 0;  ///< byte offset of the shared copy in the block's shared memory

  static block_accumulators plan(const assign_args& a, std::size_t offset_bytes) {
    block_accumulators acc;
    acc.offset = (offset_bytes + 15) / 16 * 16;
    acc.enabled = (a.sums != nullptr || a.counts != nullptr || a.inertia != nullptr) &&
                  words(a) * sizeof(std::uint64_t) <= max_bytes;
    return acc;
  }
  WARPKV_HD static std::size_t words(const assign_args& a) { return std::size_t{a.k} * a.d + a.k + 1; }
  [[nodiscard]] std::size_t end_bytes(const assign_args& a) const {
    return offset + (enabled ? words(a) * sizeof(std::uint64_t) : 0);
  }
  template <class Block>
  WARPKV_HD std::uint64_t* shared(const Block& b) const {
    return enabled ? reinterpret_cast<std::uint64_t*>(b.smem() + offset) : nullptr;
  }

  template <class Block>
  WARPKV_HD void start(Block& b, const assign_args& a, unsigned threads) const {
    if (!enabled) return;
    std::uint64_t* acc = shared(b);
    const std::size_t n = words(a);
    b.for_each_thread([&](unsigned t, auto&) {
      for (std::size_t e = t; e < n; e += threads) acc[e] = 0;
    });
    b.sync();
  }

  /// Once per block: each thread's inertia (thread_state::inertia, summed in a register over
  /// the block's points: one word for the whole block would put every thread of a warp on one
  /// address, per point) goes to the shared copy or, without one, straight to global memory;
  /// then the shared copy is flushed.
  template <class Block>
  WARPKV_HD void finish(Block& b, const assign_args& a, unsigned threads) const {
    const std::size_t kd = std::size_t{a.k} * a.d;
    std::uint64_t* acc = shared(b);
    if (a.inertia != nullptr) {
      b.sync();
      b.for_each_thread([&](unsigned, auto& s) {
        if (s.inertia != 0) add_fixed(acc != nullptr ? acc + kd + a.k : a.inertia, s.inertia);
      });
    }
    if (!enabled) return;
    b.sync();
    const std::size_t n = words(a);
    b.for_each_thread([&](unsigned t, auto&) {
      for (std::size_t e = t; e < n; e += threads) {
        const std::uint64_t v = acc[e];
        if (v == 0) continue;
        if (e < kd) {
          if (a.sums != nullptr) add_fixed(a.sums + e, v);
        } else if (e < kd + a.k) {
          if (a.counts != nullptr) add_fixed(a.counts + (e - kd), v);
        } else if (a.inertia != nullptr) {
          add_fixed(a.inertia, v);
        }
      }
    });
  }

  /// Point i's results: label, distance, and its share of the counts, inertia and sums
  /// (`acc` = shared(b); x_at(j) = coordinate j of the point).
  /// `own_inertia`: the calling thread's running inertia (block bodies; finish() flushes it), or
  /// nullptr to add the point's share straight to the shared copy or global memory.
  template <class X>
  WARPKV_HD static void record(const assign_args& a, std::uint64_t* acc, std::size_t i, std::int32_t label, float best,
                               X&& x_at, std::uint64_t* own_inertia = nullptr) {
    record_point(a, acc, i, label, best, own_inertia);
    record_sums(a, acc, label, 0, 1, x_at);
  }

  /// record() without the sums: label, distance, count and inertia of point i.
  WARPKV_HD static void record_point(const assign_args& a, std::uint64_t* acc, std::size_t i, std::int32_t label,
                                     float best, std::uint64_t* own_inertia = nullptr) {
    const std::size_t kd = std::size_t{a.k} * a.d;
    if (a.labels != nullptr) a.labels[i] = label;
    if (a.dist_mode == dist_output::write) a.dist[i] = best;
    if (a.dist_mode == dist_output::min && best < a.dist[i]) a.dist[i] = best;
    const std::size_t c = static_cast<std::size_t>(label);
    if (a.counts != nullptr) add_fixed(acc != nullptr ? acc + kd + c : a.counts + c, 1);
    if (a.inertia != nullptr) {
      const std::uint64_t term = to_fixed(static_cast<double>(best) * a.dist_scale);
      if (own_inertia != nullptr) *own_inertia += term;  // integer sums: any grouping, same total
      else add_fixed(acc != nullptr ? acc + kd + a.k : a.inertia, term);
    }
  }

  /// The point's coordinates j = first, first + step, ... added to its cluster's sums: lanes of
  /// a tile that share one point take j = lane, lane + lanes, ... so their atomics are coalesced
  /// (the sums are fixed point: the result does not depend on who adds what, or in which order).
  template <class X>
  WARPKV_HD static void record_sums(const assign_args& a, std::uint64_t* acc, std::int32_t label, unsigned first,
                                    unsigned step, X&& x_at) {
    if (a.sums == nullptr) return;
    std::uint64_t* row_sum = (acc != nullptr ? acc : a.sums) + static_cast<std::size_t>(label) * a.d;
    for (unsigned j = first; j < a.d; j += step)
      add_fixed(row_sum + j, to_fixed(static_cast<double>(x_at(j)) * a.sum_scale));
  }
};

template <smem_layout L>
struct assign_body {
  static constexpr unsigned block_threads = 128;
  static constexpr unsigned reg_tile = 32;          ///< centroids whose distances a thread keeps in registers
  static constexpr unsigned max_chunk = 64;         ///< dimensions staged at once
  static constexpr unsigned staged_centroids = 128;  ///< centroids staged at once when d <= max_chunk

  static constexpr unsigned warps = block_threads / 32;

  struct thread_state {
    float acc[reg_tile];
    float best;
    std::int32_t label;
    std::uint64_t inertia;  ///< fixed point, this thread's points so far (zero-initialised per block)
    std::uint64_t owned;    ///< aggregate mode: the sum (or count) of the (cluster, coordinate) this thread owns
  };

  assign_args a;
  unsigned chunk = 0;    ///< min(d, max_chunk)
  unsigned nchunks = 0;  ///< ceil(d / chunk)
  unsigned cwidth = 0;   ///< chunk rounded up to a multiple of 4 (zero-padded columns)
  unsigned stride = 0;   ///< words per point row in shared memory (from cwidth and the layout)
  unsigned cstride = 0;  ///< words per centroid row in shared memory (= cwidth: 16-byte rows)
  unsigned staged = 0;   ///< centroid rows in shared memory
  bool resident = false;   ///< every centroid fits the staged rows: staged once per block, in start()
  bool aggregate = false;  ///< small k x d: sums and counts by (cluster, coordinate) owners (header comment)
  std::size_t masks_offset = 0;  ///< aggregate: byte offset of the k x warps lane masks in shared memory
  assign_args point_args;        ///< aggregate: `a` without sums and counts (what record_point still does)
  block_accumulators accum;

  static assign_body make(const assign_args& args) {
    assign_body b;
    b.a = args;
    b.chunk = args.d < max_chunk ? args.d : max_chunk;
    b.nchunks = (args.d + b.chunk - 1) / b.chunk;
    b.cwidth = (b.chunk + 3) / 4 * 4;
    b.stride = row_stride<L>(b.cwidth);
    b.cstride = b.cwidth;
    b.staged = b.nchunks == 1 ? staged_centroids : reg_tile;
    b.resident = b.nchunks == 1 && args.k <= b.staged;
    b.aggregate = args.by_owners && b.nchunks == 1 && (args.sums != nullptr || args.counts != nullptr) &&
                  std::size_t{args.k} * (args.d + 1) <= block_threads;
    b.point_args = args;
    if (b.aggregate) b.point_args.sums = b.point_args.counts = nullptr;
    // 128 * stride floats = a multiple of 16 bytes: the centroid rows start 16-byte aligned.
    const std::size_t floats = std::size_t{block_threads} * b.stride + std::size_t{b.staged} * b.cstride;
    b.masks_offset = floats * sizeof(float);
    const std::size_t mask_bytes = b.aggregate ? std::size_t{args.k} * warps * sizeof(std::uint32_t) : 0;
    b.accum = block_accumulators::plan(b.point_args, b.masks_offset + mask_bytes);
    return b;
  }
  [[nodiscard]] std::size_t smem_bytes() const { return accum.end_bytes(point_args); }
  /// Centroid rows to stage from c0 on: whole register tiles, no more than the centroids left.
  [[nodiscard]] WARPKV_HD unsigned rows_from(unsigned c0) const {
    const unsigned tiles = (a.k - c0 + reg_tile - 1) / reg_tile * reg_tile;
    return tiles < staged ? tiles : staged;
  }
  [[nodiscard]] std::size_t num_tiles() const { return (a.n + block_threads - 1) / block_threads; }

  template <class Block>
  WARPKV_HD void start(Block& b) const {
    // Resident centroids: the first tile's barrier (after its points are staged) orders this.
    if (resident) stage_centroids(b, centroid_rows(b), 0, rows_from(0), 0, a.d);
    accum.start(b, point_args, block_threads);
  }
  template <class Block>
  WARPKV_HD void finish(Block& b) const {
    if (aggregate) {
      b.for_each_thread([&](unsigned t, thread_state& s) {
        if (s.owned == 0) return;
        const unsigned c = t / (a.d + 1), j = t % (a.d + 1);
        add_fixed(j < a.d ? a.sums + std::size_t{c} * a.d + j : a.counts + c, s.owned);
      });
    }
    accum.finish(b, point_args, block_threads);
  }
  template <class Block>
  WARPKV_HD float* centroid_rows(Block& b) const {
    return reinterpret_cast<float*>(b.smem()) + std::size_t{block_threads} * stride;
  }
  template <class Block>
  WARPKV_HD std::uint32_t* lane_masks(Block& b) const {
    return reinterpret_cast<std::uint32_t*>(b.smem() + masks_offset);
  }

  /// Stages columns [col0, col0 + width) of points [first, first + 128) (zeros past n).
  template <class Block>
  WARPKV_HD void stage_points(Block& b, float* sx, std::size_t first, unsigned col0, unsigned width) const {
    const unsigned padded = (width + 3) / 4 * 4;
    b.for_each_thread([&](unsigned t, thread_state&) {
      // Consecutive threads take consecutive columns of a row: coalesced global reads.
      for_each_element(t, block_threads, padded, [&](unsigned row, unsigned col) {
        const std::size_t i = first + row;
        sx[row * stride + col] = i < a.n && col < width ? a.points[i * a.d + col0 + col] : 0.0f;
      });
    });
  }

  /// Elements e = t, t + 128, ... of a rows x padded block, as (row, col), with no division per
  /// element (at d = 4 the kernel is instruction-bound, ncu in docs/perf.md session 7; removing
  /// the divisions measured no change there, so they were not its bottleneck).
  template <class F>
  WARPKV_HD static void for_each_element(unsigned t, unsigned rows, unsigned padded, F&& f) {
    const unsigned drow = block_threads / padded, dcol = block_threads % padded;
    unsigned row = t / padded, col = t % padded;
    while (row < rows) {
      f(row, col);
      row += drow;
      col += dcol;
      if (col >= padded) {  // dcol < padded: at most one wrap
        col -= padded;
        ++row;
      }
    }
  }

  /// Stages columns [col0, col0 + width) of centroids [c0, c0 + rows) (zeros past k).
  template <class Block>
  WARPKV_HD void stage_centroids(Block& b, float* sc, unsigned c0, unsigned rows, unsigned col0,
                                 unsigned width) const {
    const unsigned padded = (width + 3) / 4 * 4;
    b.for_each_thread([&](unsigned t, thread_state&) {
      for_each_element(t, rows, padded, [&](unsigned row, unsigned col) {
        const std::size_t c = std::size_t{c0} + row;
        sc[row * cstride + col] = c < a.k && col < width ? a.centroids[c * a.d + col0 + col] : 0.0f;
      });
    });
  }

  template <class Block>
  WARPKV_HD void operator()(Block& b, std::size_t tile) const {
    float* sx = reinterpret_cast<float*>(b.smem());
    float* sc = centroid_rows(b);
    const std::size_t first = tile * block_threads;
    b.for_each_thread([&](unsigned, thread_state& s) {
      s.best = __builtin_huge_valf();
      s.label = 0;
    });
    for (unsigned c0 = 0; c0 < a.k; c0 += staged) {
      const unsigned c_end = c0 + staged < a.k ? c0 + staged : a.k;
      if (nchunks == 1) {
        b.sync();  // every thread is done with the previous stage (and the previous tile)
        if (c0 == 0) {
          stage_points(b, sx, first, 0, a.d);
          if (aggregate) clear_masks(b);
        }
        if (!resident) stage_centroids(b, sc, c0, rows_from(c0), 0, a.d);
        b.sync();
      }
      for (unsigned r0 = c0; r0 < c_end; r0 += reg_tile) {
        b.for_each_thread([&](unsigned, thread_state& s) {
WARPKV_KMEANS_UNROLL
          for (unsigned c = 0; c < reg_tile; ++c) s.acc[c] = 0.0f;  // unrolled: acc stays in registers
        });
        const unsigned row0 = nchunks == 1 ? r0 - c0 : 0;
        for (unsigned ch = 0; ch < nchunks; ++ch) {
          const unsigned col0 = ch * chunk;
          const unsigned width = a.d - col0 < chunk ? a.d - col0 : chunk;
          if (nchunks > 1) {
            b.sync();
            stage_points(b, sx, first, col0, width);
            stage_centroids(b, sc, r0, reg_tile, col0, width);
            b.sync();
          }
          const unsigned padded = (width + 3) / 4 * 4;
          const unsigned live = c_end - r0;  // < reg_tile only in the last register tile
          b.for_each_thread([&](unsigned t, thread_state& s) {
            const float* row = sx + std::size_t{t} * stride;
            const float* cent = sc + std::size_t{row0} * cstride;
            for (unsigned j = 0; j < padded; j += 4) {
              float x[4];
WARPKV_KMEANS_UNROLL
              for (unsigned q = 0; q < 4; ++q) x[q] = row[j + q];  // the bank-sensitive loads
WARPKV_KMEANS_UNROLL
              for (unsigned c = 0; c < reg_tile; ++c) {
                if (c >= live) break;  // k = 16: half the tile; the loop stays unrolled (acc in registers)
                float cv[4];
                load4(cent + c * cstride + j, cv);  // broadcast, 16 bytes
                float acc = s.acc[c];
WARPKV_KMEANS_UNROLL
                for (unsigned q = 0; q < 4; ++q) {  // dimensions in order: same sum as a scalar loop
                  const float diff = x[q] - cv[q];
                  acc = fmaf(diff, diff, acc);
                }
                s.acc[c] = acc;
              }
            }
          });
        }
        b.for_each_thread([&](unsigned, thread_state& s) {
WARPKV_KMEANS_UNROLL
          for (unsigned c = 0; c < reg_tile; ++c) {
            if (r0 + c < a.k && s.acc[c] < s.best) {
              s.best = s.acc[c];
              s.label = static_cast<std::int32_t>(r0 + c);
            }
          }
        });
      }
    }
    emit(b, sx, first);
  }

  template <class Block>
  WARPKV_HD void clear_masks(Block& b) const {
    std::uint32_t* masks = lane_masks(b);
    b.for_each_thread([&](unsigned t, thread_state&) {
      for (unsigned e = t; e < a.k * warps; e += block_threads) masks[e] = 0;
    });
  }

  template <class Block>
  WARPKV_HD void emit(Block& b, const float* sx, std::size_t first) const {
    std::uint64_t* acc = accum.shared(b);
    if (aggregate) return emit_aggregated(b, sx, first, acc);
    b.for_each_thread([&](unsigned t, thread_state& s) {
      const std::size_t i = first + t;
      if (i >= a.n) return;
      block_accumulators::record(
          a, acc, i, s.label, s.best,
          [&](unsigned j) { return nchunks == 1 ? sx[std::size_t{t} * stride + j] : a.points[i * a.d + j]; }, &s.inertia);
    });
  }

  /// Aggregate mode (header comment): labels, distances and inertia per point as usual; the
  /// sums and counts through the per-cluster lane masks and their owners. The masks were
  /// cleared with this tile's points staged; the next tile's first barrier guards sx and them.
  template <class Block>
  WARPKV_HD void emit_aggregated(Block& b, const float* sx, std::size_t first, std::uint64_t* acc) const {
    std::uint32_t* masks = lane_masks(b);
    b.for_each_thread([&](unsigned t, thread_state& s) {
      const std::size_t i = first + t;
      const bool valid = i < a.n;
      if (valid) block_accumulators::record_point(point_args, acc, i, s.label, s.best, &s.inertia);
      std::uint32_t* mask = masks + static_cast<std::size_t>(s.label) * warps + t / 32;
#if WARPKV_DEVICE_PASS
      const unsigned in_tile = __ballot_sync(0xffffffffu, valid);  // every lane of the block gets here
      if (valid) {
        const unsigned peers = __match_any_sync(in_tile, s.label);
        if (static_cast<unsigned>(lowest_lane(peers)) == t % 32) *mask = peers;
      }
#else
      if (valid) *mask |= 1u << (t % 32);  // the block's threads run in turn here: no race
#endif
    });
    b.sync();
    b.for_each_thread([&](unsigned t, thread_state& s) {
      if (t >= a.k * (a.d + 1)) return;
      const unsigned c = t / (a.d + 1), j = t % (a.d + 1);
      const std::uint32_t* cluster = masks + std::size_t{c} * warps;
      if (j == a.d) {
        if (a.counts == nullptr) return;
        for (unsigned w = 0; w < warps; ++w) s.owned += static_cast<unsigned>(popcount32(cluster[w]));
        return;
      }
      if (a.sums == nullptr) return;
      for (unsigned w = 0; w < warps; ++w) {
        for (std::uint32_t m = cluster[w]; m != 0; m &= m - 1) {
          const unsigned lane = static_cast<unsigned>(lowest_lane(m));
          s.owned += to_fixed(static_cast<double>(sx[std::size_t{w * 32 + lane} * stride + j]) * a.sum_scale);
        }
      }
    });
  }
};

}  // namespace warpkv::detail
