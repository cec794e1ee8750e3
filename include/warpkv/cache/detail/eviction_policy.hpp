#pragma once
// Eviction policies of kv_cache: which live entry of a key's two full buckets an insert replaces,
// and what a hit or a write stores in the slot's recency word (docs/design/cache.md, Placement).
// Each is a type with static members over a bucket view (bucket_view.hpp):
//   value                            its cache_eviction_policy name (cache_config::eviction)
//   touch(v, slot, c, cur)           a hit's advisory refresh (cur: the recency word as read)
//   written_stamp(c)                 the recency word an insert or assignment stores
//   rank(v, t, i, slot, start)       the order of live candidates: the smallest is evicted
//   after_choice(v, t, p, start, r)  after the victim of rank r is chosen (clock's sweep)
// `start`: where random picks and clock's sweep starts, drawn per operation from its stamp.
#include <cstdint>

#include "warpkv/cache/detail/cache_types.hpp"
#include "warpkv/cache/detail/slot_protocol.hpp"
#include "warpkv/core/hash.hpp"

namespace warpkv::detail {

/// Where random eviction picks and clock's sweep starts: drawn from the operation's stamp.
template <int BucketWidth>
WARPKV_HD std::uint64_t sweep_start(std::uint64_t seed, cache_clock c) {
  return hash_bits(c.stamp, seed + 0x2545f4914f6cdd1dull) % static_cast<std::uint64_t>(2 * BucketWidth);
}
/// How far along the sweep from `start` lane-local candidate i lies (random's and clock's order).
template <class View, class Tile>
WARPKV_HD std::uint64_t sweep_distance(const Tile& t, int i, std::uint64_t start) {
  constexpr int W = View::bucket_width;
  const std::uint64_t index =
      static_cast<std::uint64_t>((i < View::per_lane ? 0 : W) + (i % View::per_lane) * View::tile_size) + t.thread_rank();
  return (index + 2 * W - start) % (2 * W);
}

/// Least recently used by per-slot recency stamps (exact LRU when the table has two buckets).
struct lru_eviction {
  static constexpr cache_eviction_policy value = cache_eviction_policy::lru;
  static constexpr bool uses_start = false;
  /// Stores the operation's stamp when it is newer, and only while the entry's stamp is below
  /// c.touch_below (refreshed by an operation concurrent with this one: no second store).
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock c, std::uint64_t cur) {
    if (c.stamp > cur && cur < c.touch_below) store_word(v.s.stamps[slot], c.stamp);
  }
  WARPKV_HD static std::uint64_t written_stamp(cache_clock c) { return c.stamp; }
  template <class View, class Tile>
  WARPKV_HD static std::uint64_t rank(const View& v, const Tile&, int, std::size_t slot, std::uint64_t) {
    return load_word(v.s.stamps[slot]);
  }
  template <class View, class Tile, class Pair>
  WARPKV_HD static void after_choice(const View&, const Tile&, const Pair&, std::uint64_t, std::uint64_t) {}
};

/// The seed's "random CHT": the candidate at position h mod 2W (h from the operation's stamp).
/// Hits refresh stamps as lru's do (the stamps order nothing here; kept so that switching the
/// policy compares eviction alone).
struct random_eviction : lru_eviction {
  static constexpr cache_eviction_policy value = cache_eviction_policy::random;
  static constexpr bool uses_start = true;
  template <class View, class Tile>
  WARPKV_HD static std::uint64_t rank(const View&, const Tile& t, int i, std::size_t, std::uint64_t start) {
    return sweep_distance<View>(t, i, start);
  }
};

/// Second chance (MemC3's CLOCK): the recency word is a reference bit. A hit sets it when clear
/// (a hot entry's hits then write nothing); a write sets it; an eviction sweeps from `start`,
/// evicts the first candidate with a clear bit and clears the bits it passed (all of them when
/// every candidate was referenced, then evicting the first).
struct clock_eviction {
  static constexpr cache_eviction_policy value = cache_eviction_policy::clock;
  static constexpr bool uses_start = true;
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock, std::uint64_t cur) {
    if (cur == 0) store_word(v.s.stamps[slot], 1);
  }
  WARPKV_HD static std::uint64_t written_stamp(cache_clock) { return 1; }
  template <class View, class Tile>
  WARPKV_HD static std::uint64_t rank(const View& v, const Tile& t, int i, std::size_t slot, std::uint64_t start) {
    constexpr std::uint64_t W = View::bucket_width;
    const std::uint64_t d = sweep_distance<View>(t, i, start);
    return load_word(v.s.stamps[slot]) != 0 ? 2 * W + d : d;
  }
  /// The sweep clears the reference bits it passed (all of them when every candidate was referenced).
  template <class View, class Tile, class Pair>
  WARPKV_HD static void after_choice(const View& v, const Tile& t, const Pair& p, std::uint64_t start, std::uint64_t victim_rank) {
    constexpr std::uint64_t W = View::bucket_width;
    const std::uint64_t passed = victim_rank >= 2 * W ? 2 * W : victim_rank;
    for (int i = 0; i < 2 * View::per_lane; ++i) {
      const std::uint64_t d = sweep_distance<View>(t, i, start);
      const std::size_t slot = v.lane_slot(t, p, i);
      if (d < passed && load_word(v.s.stamps[slot]) != 0) store_word(v.s.stamps[slot], 0);
    }
  }
};

}  // namespace warpkv::detail
