#pragma once
// Per-cluster coordinate sums without a global atomic per point and coordinate.
//
// When k x d is too large for the per-block shared accumulators (assign.hpp), the assignment
// step used to add every coordinate of every point to its cluster's fixed-point sums with a
// global atomic: n x d atomics per iteration (2^31 at n = 2^24, d = 128), scattered over
// k x d addresses. Instead (params.accumulation = segments, automatic's choice there):
//   1. the assignment step records labels, distances, counts and inertia as before, no sums;
//   2. offsets = the exclusive prefix of the counts (on the host: k values, read back anyway);
//   3. scatter: point i takes slot offsets[label_i] + a per-cluster cursor's fetch_add, so
//      `order` lists the points cluster by cluster (the order inside a cluster is whatever the
//      atomics decide: it does not matter, see 4);
//   4. segment pass: a tile of 32 lanes walks `piece` consecutive slots of `order`, 8 at a time
//      (indices, labels and row values loaded ahead), its lanes striding the dimensions, and adds
//      fixed-point terms in registers; it flushes them (one atomic per dimension) when the
//      cluster changes and at the end of its piece.
// The sums are 64-bit fixed-point integers (fixed_point.hpp): integer addition is associative,
// so the result is bit-identical to the per-point atomics whatever the order inside a cluster
// and whichever tile adds what (the tests compare the two paths bit for bit).
// Cost: n atomics with a result on k cursors, one read of every row in cluster order (d x 4
// bytes per point, whole rows), and about (n / piece + k) x d flush atomics, instead of n x d
// atomics.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/kmeans/detail/assign.hpp"
#include "warpkv/kmeans/detail/fixed_point.hpp"
#include "warpkv/kmeans/detail/memory.hpp"
#include "warpkv/kmeans/detail/passes.hpp"
#include "warpkv/kmeans/detail/steps.hpp"

namespace warpkv::detail {

/// Step 3: point i into its cluster's segment of `order`.
struct scatter_body {
  const std::int32_t* labels;  ///< n
  std::size_t n;
  const std::uint32_t* offsets;  ///< k: first slot of each cluster
  std::uint32_t* cursors;        ///< k, zeroed: slots taken so far
  std::uint32_t* order;          ///< n
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t chunk) const {
    const std::size_t begin = chunk * pass_chunk, end = begin + pass_chunk < n ? begin + pass_chunk : n;
    for (std::size_t i = begin + t.thread_rank(); i < end; i += t.size()) {
      const auto c = static_cast<std::size_t>(labels[i]);
      // Each slot must go to one point: the exact (unmerged) atomic, see core/atomic.hpp.
      const std::uint32_t slot = offsets[c] + atomic_ref<std::uint32_t>(cursors[c]).fetch_add_exact(1u);
      order[slot] = static_cast<std::uint32_t>(i);
    }
  }
};

/// Step 4: the fixed-point sums of the points in slots [q * piece, (q + 1) * piece) of `order`.
/// Slots are taken `batch` at a time: their indices, then their labels and row values are loaded
/// into registers before any is added (independent loads the GPU overlaps; one point at a time
/// would chain three memory latencies per point: slot, label, row).
struct segment_sum_body {
  static constexpr std::size_t piece = 256;  ///< slots per tile
  static constexpr unsigned regs = 4;        ///< dimensions per lane per sweep (d <= 128: one sweep)
  static constexpr unsigned batch = 8;       ///< slots loaded ahead
  const float* points;                       ///< n x d
  unsigned d;
  const std::int32_t* labels;  ///< n
  const std::uint32_t* order;  ///< n
  std::size_t n;
  double scale;
  std::uint64_t* sums;  ///< k x d

  WARPKV_HD void flush(std::size_t c, std::uint64_t (&acc)[regs], unsigned j0, unsigned lane, unsigned lanes) const {
    for (unsigned r = 0; r < regs; ++r) {
      const unsigned j = j0 + lane + r * lanes;
      if (j < d && acc[r] != 0) add_fixed(sums + c * d + j, acc[r]);
      acc[r] = 0;
    }
  }

  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t q) const {
    const unsigned lanes = t.size(), lane = t.thread_rank();
    const std::size_t begin = q * piece, end = begin + piece < n ? begin + piece : n;
    for (unsigned j0 = 0; j0 < d; j0 += lanes * regs) {
      std::uint64_t acc[regs] = {};
      auto cur = static_cast<std::size_t>(labels[order[begin]]);
      for (std::size_t s0 = begin; s0 < end; s0 += batch) {
        const unsigned m = end - s0 < batch ? static_cast<unsigned>(end - s0) : batch;
        std::size_t idx[batch];
        std::size_t lab[batch];
        float x[batch][regs];
        WARPKV_KMEANS_UNROLL
        for (unsigned b = 0; b < batch; ++b) idx[b] = b < m ? order[s0 + b] : order[s0];
        WARPKV_KMEANS_UNROLL
        for (unsigned b = 0; b < batch; ++b) {
          lab[b] = static_cast<std::size_t>(labels[idx[b]]);
          WARPKV_KMEANS_UNROLL
          for (unsigned r = 0; r < regs; ++r) {
            const unsigned j = j0 + lane + r * lanes;
            x[b][r] = j < d ? points[idx[b] * d + j] : 0.0f;
          }
        }
        WARPKV_KMEANS_UNROLL
        for (unsigned b = 0; b < batch; ++b) {  // unrolled with a guard: x[b] stays in registers
          if (b < m) {
            if (lab[b] != cur) {
              flush(cur, acc, j0, lane, lanes);
              cur = lab[b];
            }
            WARPKV_KMEANS_UNROLL
            for (unsigned r = 0; r < regs; ++r) acc[r] += to_fixed(static_cast<double>(x[b][r]) * scale);
          }
        }
      }
      flush(cur, acc, j0, lane, lanes);
    }
  }
};

/// Steps 2-4 for one shape: owns `order` and the per-cluster offsets and cursors.
class segment_summer {
 public:
  segment_summer(const execution& ex, std::size_t n, std::size_t k)
      : ex_(ex), order_(n, ex), offsets_(k, ex), cursors_(k, ex), counts_(k), host_offsets_(k) {}

  /// Adds the coordinates of the points to their clusters' sums: a.sums (k x d fixed point at
  /// a.sum_scale), from a.labels and a.counts as the assignment step left them. Reads the
  /// counts back (a synchronisation).
  void run(const assign_args& a) {
    const std::size_t k = a.k;
    to_host(ex_, counts_.data(), a.counts, k);
    std::uint64_t next = 0;
    for (std::size_t c = 0; c < k; ++c) {
      host_offsets_[c] = static_cast<std::uint32_t>(next);
      next += counts_[c];
    }
    require(next == a.n, "counts", "do not add up to n (the assignment step did not count every point)");
    from_host(ex_, offsets_.data(), host_offsets_.data(), k);
    fill_zero(ex_, cursors_.data(), k);
    run_tiles(ex_, chunks_of(a.n, pass_chunk),
              scatter_body{a.labels, a.n, offsets_.data(), cursors_.data(), order_.data()});
    run_tiles(ex_, chunks_of(a.n, segment_sum_body::piece),
              segment_sum_body{a.points, a.d, a.labels, order_.data(), a.n, a.sum_scale, a.sums});
  }

 private:
  execution ex_;
  buffer<std::uint32_t> order_, offsets_, cursors_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint32_t> host_offsets_;  ///< kept alive: the stream copies from it
};

}  // namespace warpkv::detail
