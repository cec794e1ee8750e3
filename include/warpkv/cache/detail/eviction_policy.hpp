#pragma once
// Eviction policies of kv_cache: which live entry of a key's two full buckets an insert replaces,
// and what a hit or a write stores in the slot's score word (cache_storage::stamps; the
// recency word of lru/random/clock) (docs/design/cache.md, Placement and "Score policies").
// Each is a type with static members over a bucket view (bucket_view.hpp):
//   value                             its cache_eviction_policy name (cache_config::eviction)
//   takes_scores                      whether an insert takes the caller's score (the batch
//                                     operands hand one only then: a compile-time choice)
//   touch(v, slot, c, cur)            a hit's advisory refresh (cur: the score word as read)
//   inserted_score(c, given)          the word an insert of a new entry stores (given: the
//                                     caller's score, or null)
//   assigned_score(v, slot, c, given) the word a write to a live entry stores (set, assign with
//                                     its score as given, accum_or_assign), under its bucket locks
//   rank(v, t, i, slot, start)        the order of live candidates: the smallest is evicted
//   after_choice(v, t, p, start, r)   after the victim of rank r is chosen (clock's sweep)
// `start`: where random picks and clock's sweep starts, drawn per operation from its stamp.
// The recency policies (lru, random, clock, epoch_lru) also have written_stamp(c), the word
// every write of theirs stores. Ties of rank go to the candidate scanned first (the lowest slot).
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/detail/cache_types.hpp"
#include "warpkv/cache/detail/slot_protocol.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/hash.hpp"

namespace warpkv::detail {

/// Where random eviction picks and clock's sweep starts among a key's `Span` candidate slots:
/// drawn from the operation's stamp.
template <int Span>
WARPKV_HD std::uint64_t sweep_start(std::uint64_t seed, cache_clock c) {
  return hash_bits(c.stamp, seed + 0x2545f4914f6cdd1dull) % static_cast<std::uint64_t>(Span);
}
/// How far along the sweep from `start` lane-local candidate i lies (random's and clock's order).
template <class View, class Tile>
WARPKV_HD std::uint64_t sweep_distance(const Tile& t, int i, std::uint64_t start) {
  constexpr std::uint64_t S = View::span;
  return (View::candidate_index(t, i) + S - start) % S;
}

/// a + b, saturating at 2^64 - 1.
WARPKV_HD inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > ~0ull - b ? ~0ull : a + b; }

/// The order of every policy but random and clock: the slot's score word, smallest evicted first.
struct by_score {
  static constexpr bool uses_start = false;
  template <class View, class Tile>
  WARPKV_HD static std::uint64_t rank(const View& v, const Tile&, int, std::size_t slot, std::uint64_t) {
    return load_word(v.s.stamps[slot]);
  }
  template <class View, class Tile, class Pair>
  WARPKV_HD static void after_choice(const View&, const Tile&, const Pair&, std::uint64_t, std::uint64_t) {}
};

/// The scores of the recency policies (P: lru, random, clock, epoch_lru): a write stores
/// P::written_stamp; an insert takes no caller score (as HierarchicalKV's kLru ignores them);
/// assign stores the score it is given.
template <class P>
struct stamp_scores {
  static constexpr bool takes_scores = false;
  WARPKV_HD static std::uint64_t inserted_score(cache_clock c, const std::uint64_t*) { return P::written_stamp(c); }
  template <class View>
  WARPKV_HD static std::uint64_t assigned_score(const View&, std::size_t, cache_clock c, const std::uint64_t* given) {
    return given != nullptr ? *given : P::written_stamp(c);
  }
};

/// Least recently used by per-slot recency stamps (exact LRU when the table has two buckets).
struct lru_eviction : by_score, stamp_scores<lru_eviction> {
  static constexpr cache_eviction_policy value = cache_eviction_policy::lru;
  /// Stores the operation's stamp when it is newer, and only while the entry's stamp is below
  /// c.touch_below (refreshed by an operation concurrent with this one: no second store).
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock c, std::uint64_t cur) {
    if (c.stamp > cur && cur < c.touch_below) store_word(v.s.stamps[slot], c.stamp);
  }
  WARPKV_HD static std::uint64_t written_stamp(cache_clock c) { return c.stamp; }
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
struct clock_eviction : stamp_scores<clock_eviction> {
  static constexpr cache_eviction_policy value = cache_eviction_policy::clock;
  static constexpr bool uses_start = true;
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock, std::uint64_t cur) {
    if (cur == 0) store_word(v.s.stamps[slot], 1);
  }
  WARPKV_HD static std::uint64_t written_stamp(cache_clock) { return 1; }
  template <class View, class Tile>
  WARPKV_HD static std::uint64_t rank(const View& v, const Tile& t, int i, std::size_t slot, std::uint64_t start) {
    constexpr std::uint64_t S = View::span;
    const std::uint64_t d = sweep_distance<View>(t, i, start);
    return load_word(v.s.stamps[slot]) != 0 ? S + d : d;
  }
  /// The sweep clears the reference bits it passed (all of them when every candidate was referenced).
  template <class View, class Tile, class Pair>
  WARPKV_HD static void after_choice(const View& v, const Tile& t, const Pair& p, std::uint64_t start, std::uint64_t victim_rank) {
    constexpr std::uint64_t S = View::span;
    const std::uint64_t passed = victim_rank >= S ? S : victim_rank;
    for (int i = 0; i < View::candidates; ++i) {
      const std::uint64_t d = sweep_distance<View>(t, i, start);
      const std::size_t slot = v.lane_slot(t, p, i);
      if (d < passed && load_word(v.s.stamps[slot]) != 0) store_word(v.s.stamps[slot], 0);
    }
  }
};

// ---- score policies (HierarchicalKV's kLfu, kEpochLru, kEpochLfu, kCustomized) ----------------
/// The low 32 bits of an epoch score: the stamp or the count.
inline constexpr std::uint64_t score_low_bits = 0xffffffffull;

/// One attempt to replace a hit's score word `cur` by `next` (relaxed CAS): a count increment
/// that a concurrent hit or write got in first is dropped, never applied over a newer word.
template <class View>
WARPKV_HD void advance_score(const View& v, std::size_t slot, std::uint64_t cur, std::uint64_t next) {
  if (next == cur) return;
  atomic_ref<std::uint64_t>(v.s.stamps[slot]).compare_exchange(cur, next, memory_order::relaxed);
}

/// Least frequently used (HierarchicalKV's kLfu): the score is an access count. An insert stores
/// the caller's score (HKV: the frequency increment) or 1; a write to a live entry (set,
/// accum_or_assign, assign) adds the caller's score or 1; a hit (get, find, get_or_set found)
/// adds 1. All saturate at 2^64 - 1. The smallest count is evicted (ties: the lowest slot).
struct lfu_eviction : by_score {
  static constexpr cache_eviction_policy value = cache_eviction_policy::lfu;
  static constexpr bool takes_scores = true;
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock, std::uint64_t cur) {
    advance_score(v, slot, cur, saturating_add(cur, 1));
  }
  WARPKV_HD static std::uint64_t inserted_score(cache_clock, const std::uint64_t* given) { return given != nullptr ? *given : 1; }
  template <class View>
  WARPKV_HD static std::uint64_t assigned_score(const View& v, std::size_t slot, cache_clock, const std::uint64_t* given) {
    return saturating_add(load_word(v.s.stamps[slot]), given != nullptr ? *given : 1);
  }
};

/// HierarchicalKV's kEpochLru: score = (epoch << 32) | the stamp's low 32 bits (the epoch's low
/// 32 bits; HKV takes the device clock's). An older epoch's entries are evicted before a newer
/// one's whatever their recency; within an epoch, LRU (between stamps less than 2^32 operations
/// apart: the low bits wrap). Hits refresh as lru's (a larger word only, once per batch).
struct epoch_lru_eviction : by_score, stamp_scores<epoch_lru_eviction> {
  static constexpr cache_eviction_policy value = cache_eviction_policy::epoch_lru;
  WARPKV_HD static std::uint64_t written_stamp(cache_clock c) { return (c.epoch << 32) | (c.stamp & score_low_bits); }
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock c, std::uint64_t cur) {
    const std::uint64_t w = written_stamp(c);
    if (w > cur && cur < ((c.epoch << 32) | (c.touch_below & score_low_bits))) store_word(v.s.stamps[slot], w);
  }
};

/// HierarchicalKV's kEpochLfu: score = (epoch << 32) | a count saturating at 2^32 - 1. An insert
/// stores the caller's score's low 32 bits (or 1) under the current epoch; a write to a live
/// entry adds the caller's low 32 bits (or 1) to its count, a hit adds 1, and both move it to the
/// current epoch (as HKV's update does). An older epoch's entries go first, then the smallest count.
struct epoch_lfu_eviction : by_score {
  static constexpr cache_eviction_policy value = cache_eviction_policy::epoch_lfu;
  static constexpr bool takes_scores = true;
  /// cur's count plus inc's low 32 bits (saturating) under c's epoch.
  WARPKV_HD static std::uint64_t counted(cache_clock c, std::uint64_t cur, std::uint64_t inc) {
    const std::uint64_t n = (cur & score_low_bits) + (inc & score_low_bits);
    return (c.epoch << 32) | (n > score_low_bits ? score_low_bits : n);
  }
  template <class View>
  WARPKV_HD static void touch(const View& v, std::size_t slot, cache_clock c, std::uint64_t cur) {
    advance_score(v, slot, cur, counted(c, cur, 1));
  }
  WARPKV_HD static std::uint64_t inserted_score(cache_clock c, const std::uint64_t* given) {
    return counted(c, 0, given != nullptr ? *given : 1);
  }
  template <class View>
  WARPKV_HD static std::uint64_t assigned_score(const View& v, std::size_t slot, cache_clock c, const std::uint64_t* given) {
    return counted(c, load_word(v.s.stamps[slot]), given != nullptr ? *given : 1);
  }
};

/// HierarchicalKV's kCustomized: the caller's scores. An insert or a write to a live entry stores
/// the caller's score (insert_or_assign, insert_and_evict, find_or_insert and assign take them;
/// kv_cache's calls require them); a write without one (the span API, a device ref's set, add,
/// get_or_set; accum_or_assign) stores the operation's stamp. Hits change nothing. The smallest
/// score is evicted (ties: the lowest slot).
struct custom_eviction : by_score {
  static constexpr cache_eviction_policy value = cache_eviction_policy::custom;
  static constexpr bool takes_scores = true;
  template <class View>
  WARPKV_HD static void touch(const View&, std::size_t, cache_clock, std::uint64_t) {}
  WARPKV_HD static std::uint64_t inserted_score(cache_clock c, const std::uint64_t* given) {
    return given != nullptr ? *given : c.stamp;
  }
  template <class View>
  WARPKV_HD static std::uint64_t assigned_score(const View&, std::size_t, cache_clock c, const std::uint64_t* given) {
    return inserted_score(c, given);
  }
};

}  // namespace warpkv::detail
