#pragma once
// The cache's batch operation (one functor serving every cache_op of a mixed batch) and its
// whole-table passes (initialise, count live entries, export).
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_ref.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv {

/// Operation codes of a cache batch.
enum class cache_op : std::uint8_t { get = 0, set = 1, add = 2, erase = 3, get_or_set = 4, contains = 5 };

constexpr std::string_view to_string(cache_op o) {
  switch (o) {
    case cache_op::get: return "get";
    case cache_op::set: return "set";
    case cache_op::add: return "add";
    case cache_op::erase: return "erase";
    case cache_op::get_or_set: return "get_or_set";
    case cache_op::contains: return "contains";
  }
  return "unknown";
}

namespace detail {

/// Operation i of a batch; arrays in the backend's memory (null where the batch has none).
template <class Ref>
struct cache_batch_op {
  using Key = typename Ref::key_type;
  Ref ref;
  const cache_op* ops = nullptr;  ///< per-operation codes, or null: every operation is `uniform`
  cache_op uniform = cache_op::get;
  const Key* keys = nullptr;
  const std::uint64_t* values_in = nullptr;  ///< n x value words (set, add, get_or_set)
  std::uint64_t* values_out = nullptr;       ///< n x value words (get, get_or_set)
  const std::uint64_t* expires = nullptr;    ///< n expiry times, or null: `expires_all`
  std::uint64_t expires_all = 0;
  std::uint64_t stamp_base = 0;  ///< operation i's recency stamp is stamp_base + i
  std::uint64_t now = 0;
  Key* evicted_keys = nullptr;
  std::uint64_t* evicted_values = nullptr;
  std::uint8_t* evicted_flags = nullptr;

  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const std::size_t vw = ref.value_words();
    const cache_op o = ops != nullptr ? ops[i] : uniform;
    const cache_clock c{stamp_base + i, now};
    const std::uint64_t* in = values_in != nullptr ? values_in + i * vw : nullptr;
    std::uint64_t* out = values_out != nullptr ? values_out + i * vw : nullptr;
    const std::uint64_t exp = expires != nullptr ? expires[i] : expires_all;
    cache_eviction<Key> ev;
    if (evicted_flags != nullptr) {
      if (t.thread_rank() == 0) evicted_flags[i] = 0;  // operations that cannot evict report none
      ev.flag = evicted_flags + i;
      ev.key = evicted_keys + i;
      ev.value = evicted_values != nullptr ? evicted_values + i * vw : nullptr;
    }
    switch (o) {
      case cache_op::get: return ref.get(t, keys[i], out, c);
      case cache_op::set: return ref.set(t, keys[i], in, exp, c, ev);
      case cache_op::add: return ref.add(t, keys[i], in, exp, c, ev);
      case cache_op::erase: return ref.erase(t, keys[i], c);
      case cache_op::get_or_set: return ref.get_or_set(t, keys[i], in, out, exp, c, ev);
      case cache_op::contains: return ref.contains(t, keys[i], c);
    }
    return status::invalid_key;
  }
};

/// Slot i becomes empty and unlocked (version 0, or a free reader/writer lock); bucket locks and
/// move counters cleared alongside.
template <class Ref>
struct cache_init_fn {
  cache_storage s;
  std::uint32_t bucket_width;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    for (int j = 0; j < Ref::key_words; ++j)
      s.keys[i * s.key_stride + static_cast<std::size_t>(j)] = j == Ref::key_words - 1 ? Ref::layout::empty_tag : 0;
    s.versions[i] = 0;
    s.stamps[i] = 0;
    s.expires[i] = 0;
    if (i % bucket_width == 0) {
      s.locks[i / bucket_width] = 0;
      if (s.moves != nullptr) s.moves[i / bucket_width] = 0;
    }
    if (i == 0) *s.occupied = 0;
  }
};

/// Counts live (non-empty, unexpired) slots; with outputs, also copies them out.
template <class Ref>
struct cache_collect_fn {
  using Key = typename Ref::key_type;
  Ref ref;
  std::uint64_t now;
  unsigned long long* count;
  Key* keys_out = nullptr;
  std::uint64_t* values_out = nullptr;
  std::uint64_t* expires_out = nullptr;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if (ref.slot_empty(i) || ref.slot_expired(i, now)) return;
    const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
    if (keys_out == nullptr) return;
    keys_out[at] = ref.slot_key(i);
    const std::size_t vw = ref.value_words();
    const std::uint64_t* v = ref.slot_value(i);
    for (std::size_t j = 0; j < vw; ++j) values_out[at * vw + j] = v[j];
    expires_out[at] = ref.storage().expires[i];
  }
};

}  // namespace detail
}  // namespace warpkv
