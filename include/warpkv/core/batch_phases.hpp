#pragma once
// A batch in phases, and where its status counts go: the shared mechanisms of the batch engine
// (core/batch.hpp) that the maps' bulk API and the cache both run.
//
//   status_flush                 how a serve-loop batch adds its lanes' status counts to the
//                                shared counters: per lane (batch_body), or summed over the tile
//                                first (tile_summed_body: one atomic per tile and status kind, not
//                                one per lane: at full occupancy an H100 runs ~270k threads,
//                                whose same-address adds meet at one L2 slice)
//   launch_phase<T, Shape, F>    one launch of a batch's op in a shape, with that flush
//   launch_phased<T, Shape, F>   a batch of two phases that answer as one concurrent batch: the
//                                first phase runs every operation and reports `full` for those it
//                                leaves to the second, which runs only those (only_full). The
//                                maps' fast pass and complete pass (core/map_ops.hpp, pass) and
//                                the cache's reads-first split (a read kernel without writer code
//                                serves the reads; the write kernel runs what it left) are both
//                                this shape.
// Either phase may be absent (null): without a first phase the second runs every operation;
// without a second the batch ends after the first. Each phase counts into its own counters
// (null: uncounted); a caller that gives both phases the same counters gets the operations the
// first phase deferred counted twice, once as `full` (the cache, whose operations never end
// full, drops that count).
#include <cstddef>

#include "warpkv/core/aggregate.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv {

/// How a serve-loop batch flushes its status counts (op_per_tile batches always sum per warp).
enum class status_flush { per_lane, tile_summed };

namespace detail {

/// The serve-loop batch body with the status counts summed over the tile before they are added
/// to the shared counters (one atomic per tile and status kind that occurred).
template <int T, class Op>
struct tile_summed_body : batch_body<T, Op> {
  using typename batch_body<T, Op>::accumulator;
  template <class Tile>
  WARPKV_HD void flush(const Tile& tile, accumulator& acc) const {
    if (this->counters == nullptr) return;
    for (int k = 0; k < num_status_kinds; ++k) {
      const unsigned long long c = tile_sum<T>(tile, acc.c[k]);
      if (tile.thread_rank() == 0 && c != 0)
        atomic_ref<unsigned long long>(this->counters[k]).fetch_add(c, memory_order::relaxed);
    }
  }
};

}  // namespace detail

/// Queues operations [0, n) of `op` as one launch on `ex` without waiting: `counters` null: no
/// status counts; `only_full`: only the operations whose status is `full` run.
template <int T, batch_shape Shape = batch_shape::serve_loop, status_flush Flush = status_flush::per_lane, class Op>
void launch_phase(const execution& ex, std::size_t n, const Op& op, status* statuses, unsigned long long* counters,
                  bool only_full = false) {
  static_assert(Flush == status_flush::per_lane || Shape == batch_shape::serve_loop,
                "op_per_tile batches sum their counts per warp");
  if constexpr (Flush == status_flush::tile_summed) {
    if (n == 0) return;
    launch<T>(ex, (n + T - 1) / T, detail::tile_summed_body<T, Op>{{op, n, statuses, counters, only_full}});
  } else {
    launch_uncounted<T, Op, Shape>(ex, n, op, statuses, counters, only_full);
  }
}

/// Queues a batch of two phases (see the header): `first` (may be null) over every operation,
/// then `second` (may be null) over the operations the first left `full`, or over every
/// operation when there is no first phase. Counts go to first_counters and second_counters
/// (either may be null). `statuses` must be given when both phases run.
template <int T, batch_shape Shape = batch_shape::serve_loop, status_flush Flush = status_flush::per_lane, class First,
          class Second>
void launch_phased(const execution& ex, std::size_t n, const First* first, const Second* second, status* statuses,
                   unsigned long long* first_counters, unsigned long long* second_counters) {
  if (first != nullptr) launch_phase<T, Shape, Flush>(ex, n, *first, statuses, first_counters);
  if (second != nullptr) launch_phase<T, Shape, Flush>(ex, n, *second, statuses, second_counters, first != nullptr);
}

}  // namespace warpkv
