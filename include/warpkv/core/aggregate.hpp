#pragma once
// Warp-aggregated atomics: the lanes of a group that want to add to one counter do it with one
// atomic by a leader, and each lane gets its own distinct result, as if it had added alone.
// On a hot address (a global version clock) this turns one atomic per lane into one per group:
// the same-address atomic rate of one L2 slice (about 0.7 ns each on an H100) is then paid per
// group, not per lane.
//
//   aggregated_fetch_add(g, a, step, want)  lanes of g with `want` get distinct old values
//   aggregated_load(g, a, order)            one load for the group, the value on every lane
//   tile_sum(tile, v)                       the sum of v over a whole tile, on every lane
//   active_lanes                            the group of a warp's lanes that are converged at
//                                           the point of construction (GPU); the calling thread
//                                           alone on the host
//
// The group is any tile of the warp-tile layer (tile.hpp: thread_rank, ballot, shfl, sync) or
// active_lanes, so per-tile code and divergent per-thread code share one algorithm, and the host
// backend runs it on host_tile lanes (real threads) for tests.
//
// Written explicitly instead of trusting the compiler: nvcc merges some same-address fetch_adds
// itself, but that merge handed two threads one value in a divergent path once (atomic.hpp,
// fetch_add_exact), and it does not apply to every memory order. Here the leader's atomic is a
// plain atomic_ref operation, and the ranks come from one ballot.
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

/// The lanes of the calling warp that execute this constructor together (on the GPU,
/// __activemask(): under independent thread scheduling, the lanes converged here). Every lane of
/// the group must then call the same collectives in the same order, with no divergent branch in
/// between. On the host: the calling thread alone.
class active_lanes {
 public:
  WARPKV_HD active_lanes() {
#if WARPKV_DEVICE_PASS
    mask_ = __activemask();
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane_));
#endif
  }
  /// Lane index within the warp (ballot bits are indexed by it); 0 on the host.
  WARPKV_HD unsigned thread_rank() const { return lane_; }
  /// The lanes of the group, as warp lane bits.
  WARPKV_HD std::uint32_t mask() const { return mask_; }
  /// __syncwarp over the group: orders the memory operations of its lanes (PTX bar.warp.sync).
  WARPKV_HD void sync() const {
#if WARPKV_DEVICE_PASS
    __syncwarp(mask_);
#endif
  }
  WARPKV_HD std::uint32_t ballot(bool p) const {
#if WARPKV_DEVICE_PASS
    return __ballot_sync(mask_, p);
#else
    return p ? 1u : 0u;
#endif
  }
  template <class T>
  WARPKV_HD T shfl(T v, unsigned src) const {
#if WARPKV_DEVICE_PASS
    return __shfl_sync(mask_, v, static_cast<int>(src));
#else
    (void)src;
    return v;
#endif
  }

 private:
  std::uint32_t mask_ = 1;
  unsigned lane_ = 0;
};

/// Every lane of `g` calls it; each lane with `want` gets a distinct value `old + k * step`,
/// k in [0, number of wanting lanes), ordered by lane rank, as if each had done
/// `a.fetch_add(step, o)` alone (the leader adds `count * step` with order `o` in one atomic).
/// Lanes without `want` get 0. Memory ordering is the leader's: a lane whose own earlier writes
/// must be released by the atomic, or whose later reads must be acquired by it, needs `g.sync()`
/// before (resp. after) the call, as for any tile collective (docs/design/stm.md, clock).
template <class G, class T>
WARPKV_HD T aggregated_fetch_add(const G& g, atomic_ref<T> a, T step, bool want, memory_order o) {
  const std::uint32_t wanting = g.ballot(want);
  if (wanting == 0) return T{};
  const unsigned leader = static_cast<unsigned>(lowest_lane(wanting));
  const unsigned me = g.thread_rank();
  T old{};
  if (me == leader) old = a.fetch_add(static_cast<T>(step * static_cast<T>(popcount32(wanting))), o);
  old = g.shfl(old, leader);
  if (!want) return T{};
  const std::uint32_t below = me == 0 ? 0u : (wanting & (0xffffffffu >> (32u - me)));
  return static_cast<T>(old + step * static_cast<T>(popcount32(below)));
}

/// One load of `a` with order `o` for the whole group, its value on every lane. The leader (the
/// lowest lane) loads; the group then syncs, so that an acquire by the leader orders every lane's
/// later memory operations after it, as if each lane had acquired itself.
template <class G, class T>
WARPKV_HD T aggregated_load(const G& g, atomic_ref<T> a, memory_order o) {
  const unsigned leader = static_cast<unsigned>(lowest_lane(g.ballot(true)));
  T v{};
  if (g.thread_rank() == leader) v = a.load(o);
  g.sync();
  return g.shfl(v, leader);
}

/// The sum of `v` over the lanes of `tile` (every lane of a whole tile of N lanes calls it), on
/// every lane: a butterfly of log2(N) shuffles. Used to add a tile's counts to shared counters
/// with one atomic per tile instead of one per lane (core/batch_phases.hpp).
template <int N, class Tile, class T>
WARPKV_HD T tile_sum(const Tile& tile, T v) {
  for (unsigned off = 1; off < static_cast<unsigned>(N); off <<= 1) v += tile.shfl(v, tile.thread_rank() ^ off);
  return v;
}

}  // namespace warpkv
