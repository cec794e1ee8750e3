#pragma once
// The kernels of kv_cache's HierarchicalKV-named calls that the batch phases (cache_passes.hpp)
// do not run: assign (update only), accum_or_assign, the eviction report's compaction
// (insert_and_evict), the found flags of find/contains, and the predicate passes over a bucket
// range (export_batch, export_batch_if, erase_if). Each is its own kernel: the read phase and the
// write phase's fast pass (the hot kernels, with their register budgets) carry none of them.
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_ref.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv {

/// The predicate of export_batch: every live entry.
struct cache_all_entries {
  template <class Key>
  WARPKV_HD bool operator()(const Key&, std::uint64_t) const {
    return true;
  }
};
/// A score predicate (HKV's erase_if / export_batch_if with a threshold): score < threshold.
struct cache_score_below {
  std::uint64_t threshold = 0;
  template <class Key>
  WARPKV_HD bool operator()(const Key&, std::uint64_t score) const {
    return score < threshold;
  }
};
/// score >= threshold.
struct cache_score_at_least {
  std::uint64_t threshold = 0;
  template <class Key>
  WARPKV_HD bool operator()(const Key&, std::uint64_t score) const {
    return score >= threshold;
  }
};

namespace detail {

/// assign (update only): operation i of a uniform batch, with its own kernel through
/// launch_cache_phase (no register budget: not a hot path).
template <class Ref>
struct cache_assign_op {
  using Key = typename Ref::key_type;
  static constexpr int register_budget = 0;
  static constexpr bool defers = false;
  Ref ref;
  const Key* keys;
  const std::uint64_t* values;  ///< n x value words, or null: scores only
  const std::uint64_t* scores;  ///< n scores, or null: a write's score word
  std::uint64_t stamp_base, now, epoch;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    return ref.assign(t, keys[i], values != nullptr ? values + i * ref.value_words() : nullptr,
                      scores != nullptr ? scores + i : nullptr, cache_clock{stamp_base + i, now, stamp_base, epoch});
  }
};

/// accum_or_assign of elements T: operation i (with the eviction report of its insert).
template <class Ref, class T>
struct cache_accum_op {
  using Key = typename Ref::key_type;
  static constexpr int register_budget = 0;
  static constexpr bool defers = false;
  Ref ref;
  const Key* keys;
  const std::uint64_t* deltas;
  std::uint64_t stamp_base, now, epoch;
  Key* ev_keys = nullptr;
  std::uint64_t* ev_values = nullptr;
  std::uint8_t* ev_flags = nullptr;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const std::size_t vw = ref.value_words();
    if (ev_flags != nullptr && t.thread_rank() == 0) ev_flags[i] = 0;
    const cache_eviction<Key> ev{ev_flags != nullptr ? ev_keys + i : nullptr,
                                 ev_flags != nullptr && ev_values != nullptr ? ev_values + i * vw : nullptr,
                                 ev_flags != nullptr ? ev_flags + i : nullptr};
    return ref.template accum_or_insert<T>(t, keys[i], deltas + i * vw, cache_clock{stamp_base + i, now, stamp_base, epoch}, ev);
  }
};

/// HKV's accum_or_assign with flags, elements T: operation i accumulates into a live entry when
/// accum_or_assigns[i], else inserts an absent key (the other case of each changes nothing).
template <class Ref, class T>
struct cache_accum_flagged_op {
  static constexpr int register_budget = 0;
  static constexpr bool defers = false;
  Ref ref;
  const typename Ref::key_type* keys;
  const std::uint64_t* value_or_deltas;
  const bool* accum_or_assigns;
  std::uint64_t stamp_base, now, epoch;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const accum_kind kind = accum_or_assigns[i] ? accum_kind::accumulate_only : accum_kind::insert_only;
    return ref.template accum_or_insert<T>(t, keys[i], value_or_deltas + i * ref.value_words(),
                                           cache_clock{stamp_base + i, now, stamp_base, epoch}, {}, kind);
  }
};

/// to[i] = from[i] (words in the backend's memory).
struct copy_words_fn {
  const std::uint64_t* from;
  std::uint64_t* to;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    to[i] = from[i];
  }
};

/// found flags from statuses: found[i] = statuses[i] == found.
struct cache_found_flags_fn {
  const status* statuses;
  bool* found;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    found[i] = statuses[i] == status::found;
  }
};

/// insert_and_evict's report: the operations that evicted (flag 1) append their evicted key,
/// value and score at an index drawn from `count` (order unspecified).
template <class Key>
struct cache_compact_evictions_fn {
  const std::uint8_t* flags;
  const Key* keys;
  const std::uint64_t* values;
  const std::uint64_t* scores;
  std::size_t value_words;
  unsigned long long* count;
  Key* keys_out;
  std::uint64_t* values_out;  ///< may be null
  std::uint64_t* scores_out;  ///< may be null
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if (flags[i] == 0) return;
    const auto at = static_cast<std::size_t>(atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed));
    keys_out[at] = keys[i];
    if (values_out != nullptr)
      for (std::size_t j = 0; j < value_words; ++j) values_out[at * value_words + j] = values[i * value_words + j];
    if (scores_out != nullptr) scores_out[at] = scores[i];
  }
};

/// export_batch(_if) over slots [lo, hi): tile b reads bucket lo / W + b, each lane its slots in
/// the range; every live (non-empty, unexpired) entry for which pred(key, score) holds is
/// appended at an index drawn from `count` (keys, and values and scores where not null). A
/// whole-table pass: run while no writer changes the cache.
template <class Ref, class Pred>
struct cache_export_fn {
  using Key = typename Ref::key_type;
  Ref ref;
  Pred pred;
  std::size_t lo, hi;
  std::uint64_t now;
  unsigned long long* count;
  Key* keys_out;
  std::uint64_t* values_out;
  std::uint64_t* scores_out;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t b) const {
    constexpr int W = Ref::bucket_width, T = Ref::tile_size;
    const std::size_t vw = ref.value_words();
    for (int i = 0; i < W / T; ++i) {
      const std::size_t slot = (lo / W + b) * W + static_cast<std::size_t>(i * T) + t.thread_rank();
      if (slot < lo || slot >= hi || ref.slot_empty(slot) || ref.slot_expired(slot, now)) continue;
      const Key k = ref.slot_key(slot);
      const std::uint64_t score = ref.slot_score(slot);
      if (!pred(k, score)) continue;
      const auto at = static_cast<std::size_t>(atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed));
      keys_out[at] = k;
      if (scores_out != nullptr) scores_out[at] = score;
      if (values_out != nullptr) {
        const std::uint64_t* v = ref.slot_value(slot);
        for (std::size_t j = 0; j < vw; ++j) values_out[at * vw + j] = v[j];
      }
    }
  }
};

/// erase_if over buckets [0, tiles): tile b erases bucket b's matching live entries under the
/// bucket's lock and adds their number to `count` (one atomic per bucket that erased).
template <class Ref, class Pred>
struct cache_erase_if_fn {
  Ref ref;
  Pred pred;
  std::uint64_t now;
  unsigned long long* count;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t b) const {
    const std::uint32_t n = ref.erase_in_bucket_if(t, b, pred, now);
    if (n != 0 && t.thread_rank() == 0) atomic_ref<unsigned long long>(*count).fetch_add(n, memory_order::relaxed);
  }
};

}  // namespace detail
}  // namespace warpkv
