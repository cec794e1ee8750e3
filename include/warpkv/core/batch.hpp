#pragma once
// The batch: one launch runs n operations concurrently and records a status per
// operation plus counts of each status. Every structure's bulk API is a thin
// layer over launch_batch.
//
// Work sharing (GLHT): a tile of T lanes owns T consecutive operations; it
// ballots the lanes that still hold one, broadcasts the lowest, serves it with
// all T lanes, and repeats. With T = 1 each thread serves its own operation.
#include <array>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv {

inline constexpr int num_status_kinds = 7;

/// Counts of each status over one batch.
struct batch_summary {
  std::array<std::uint64_t, num_status_kinds> count{};
  [[nodiscard]] std::uint64_t operator[](status s) const { return count[static_cast<int>(s)]; }
  batch_summary& operator+=(const batch_summary& o) {
    for (int i = 0; i < num_status_kinds; ++i) count[i] += o.count[i];
    return *this;
  }
};

namespace detail {

/// Op: copyable, `template <class Tile> WARPKV_HD status operator()(const Tile&, std::size_t i) const`,
/// called by every lane of the tile for operation i; returns the same status on every lane.
template <int T, class Op>
struct batch_body {
  Op op;
  std::size_t n;
  status* statuses;
  unsigned long long* counters;  // num_status_kinds counters in the backend's memory, or null
  bool only_full;                // re-run only operations whose previous status was `full`

  struct accumulator {
    unsigned long long c[num_status_kinds] = {};
  };

  template <class Tile>
  WARPKV_HD void operator()(const Tile& tile, std::size_t tile_index, accumulator& acc) const {
    const unsigned rank = tile.thread_rank();
    const std::size_t i = tile_index * T + rank;
    const bool mine = i < n && (!only_full || statuses[i] == status::full);
    std::uint32_t pending = tile.ballot(mine);
    while (pending != 0) {
      const int lane = lowest_lane(pending);
      pending &= pending - 1;
      const std::size_t j = tile_index * T + static_cast<std::size_t>(lane);
      const status s = op(tile, j);
      if (rank == static_cast<unsigned>(lane)) {
        statuses[j] = s;
        ++acc.c[static_cast<int>(s)];
      }
    }
  }

  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    if (counters == nullptr) return;  // read-only batches do not count
    for (int k = 0; k < num_status_kinds; ++k)
      if (acc.c[k] != 0) atomic_ref<unsigned long long>(counters[k]).fetch_add(acc.c[k], memory_order::relaxed);
  }
};

}  // namespace detail

/// Runs operations [0, n) of `op` as one concurrent batch on `ex`; `statuses` (n entries in the
/// backend's memory) receives each operation's status. Waits for the batch and returns its counts.
template <int T, class Op>
batch_summary launch_batch(const execution& ex, std::size_t n, const Op& op, status* statuses,
                           bool only_full = false) {
  batch_summary summary;
  if (n == 0) return summary;
  buffer<unsigned long long> counters(num_status_kinds, ex);
  const std::array<unsigned long long, num_status_kinds> zeros{};
  counters.copy_from_host(zeros.data(), zeros.size());
  launch<T>(ex, (n + T - 1) / T, detail::batch_body<T, Op>{op, n, statuses, counters.data(), only_full});
  std::array<unsigned long long, num_status_kinds> host{};
  counters.copy_to_host(host.data(), host.size());
  for (int k = 0; k < num_status_kinds; ++k) summary.count[k] = host[k];
  return summary;
}

}  // namespace warpkv
