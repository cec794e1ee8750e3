#pragma once
// The cache's batch operation (one functor serving every cache_op of a mixed batch) and its
// whole-table passes (initialise, count live entries, export).
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_ref.hpp"
#include "warpkv/cache/detail/set_groups.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/launcher.hpp"
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
  set_groups<Key> groups{};  ///< set absorption (slots 0: off)

  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const std::size_t vw = ref.value_words();
    const cache_op o = ops != nullptr ? ops[i] : uniform;
    const cache_clock c{stamp_base + i, now, stamp_base};
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
      case cache_op::set:
        // an absorbed set is linearized just before its key's winning set: it writes nothing
        if (groups.absorbed(keys, i)) return status::assigned;
        return ref.set(t, keys[i], in, exp, c, ev);
      case cache_op::add: return ref.add(t, keys[i], in, exp, c, ev);
      case cache_op::erase: return ref.erase(t, keys[i], c);
      case cache_op::get_or_set: return ref.get_or_set(t, keys[i], in, out, exp, c, ev);
      case cache_op::contains: return ref.contains(t, keys[i], c);
    }
    return status::invalid_key;
  }
};

/// Set absorption's passes over a batch (operation i; `ops` null: every operation is `uniform`):
/// join the set groups before the batch, fix the winners' statuses up after it.
template <class Key>
struct set_groups_pass_fn {
  set_groups<Key> g;
  const cache_op* ops = nullptr;
  cache_op uniform = cache_op::get;
  const Key* keys = nullptr;
  status* statuses = nullptr;  ///< null: the join pass; else the fix-up pass
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if ((ops != nullptr ? ops[i] : uniform) != cache_op::set) return;
    if (statuses == nullptr) g.join(keys, i);
    else g.fix_up(keys, i, statuses);
  }
};

/// Operation i of a batch of gets (`refresh`) or contains only: the read path alone, so the
/// kernel of such a batch does not carry the writers' code and registers (occupancy).
template <class Ref>
struct cache_read_op {
  using Key = typename Ref::key_type;
  Ref ref;
  const Key* keys = nullptr;
  std::uint64_t* values_out = nullptr;  ///< n x value words, or null
  bool refresh = true;                  ///< get (true) or contains (false)
  std::uint64_t stamp_base = 0;
  std::uint64_t now = 0;

  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const cache_clock c{stamp_base + i, now, stamp_base};
    if (!refresh) return ref.contains(t, keys[i], c);
    return ref.get(t, keys[i], values_out != nullptr ? values_out + i * ref.value_words() : nullptr, c);
  }
};

/// The foundation's batch body with the status counts summed over the tile before they are
/// added to the shared counters (one atomic per tile and status, not one per lane: at full
/// occupancy an H100 runs ~270k threads, whose same-address adds meet at one L2 slice).
template <int T, class Op>
struct cache_batch_body : batch_body<T, Op> {
  using typename batch_body<T, Op>::accumulator;
  template <class Tile>
  WARPKV_HD void flush(const Tile& tile, accumulator& acc) const {
    if (this->counters == nullptr) return;
    for (int k = 0; k < num_status_kinds; ++k) {
      unsigned long long c = acc.c[k];
      for (unsigned off = 1; off < static_cast<unsigned>(T); off <<= 1) c += tile.shfl(c, tile.thread_rank() ^ off);
      if (tile.thread_rank() == 0 && c != 0)
        atomic_ref<unsigned long long>(this->counters[k]).fetch_add(c, memory_order::relaxed);
    }
  }
};

/// Queues operations [0, n) of `op` as one launch on `ex`; `counters` null: no status counts.
template <int T, class Op>
void launch_cache_batch(const execution& ex, std::size_t n, const Op& op, status* statuses, unsigned long long* counters) {
  if (n == 0) return;
  cache_batch_body<T, Op> body{{op, n, statuses, counters, false}};
  launch<T>(ex, (n + T - 1) / T, body);
}

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
    if (i == 0)
      for (std::size_t k = 0; k < occupancy_shards * occupancy_stride; ++k) s.occupied[k] = 0;
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
