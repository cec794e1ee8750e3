#pragma once
// The cache's batch operation (one functor serving every cache_op of a mixed batch) and its
// whole-table passes (initialise, count live entries, export).
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_ref.hpp"
#include "warpkv/cache/cache_op.hpp"
#include "warpkv/cache/detail/op_groups.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/batch_phases.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv {
namespace detail {

/// A batch as both of its phases see it: the cache, the batch's arrays (in the backend's
/// memory, null where the batch has none), its clock and its operation groups.
template <class Ref>
struct cache_batch_args {
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
  op_groups<Key> groups{};  ///< set absorption and get_or_set combining (slots 0: off)
};

/// A batch's write phase: operation i, any kind (the read phase, cache_read_op, has done the
/// reads; the batch engine runs only the operations it left: core/batch_phases.hpp).
template <class Ref>
struct cache_batch_op : cache_batch_args<Ref> {
  using Key = typename Ref::key_type;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const cache_batch_args<Ref>& a = *this;
    const Ref& ref = a.ref;
    const std::size_t vw = ref.value_words();
    const cache_op o = a.ops != nullptr ? a.ops[i] : a.uniform;
    const cache_clock c{a.stamp_base + i, a.now, a.stamp_base};
    const std::uint64_t* in = a.values_in != nullptr ? a.values_in + i * vw : nullptr;
    std::uint64_t* out = a.values_out != nullptr ? a.values_out + i * vw : nullptr;
    const std::uint64_t exp = a.expires != nullptr ? a.expires[i] : a.expires_all;
    const Key& k = a.keys[i];
    cache_eviction<Key> ev;
    if (a.evicted_flags != nullptr) {
      if (t.thread_rank() == 0) a.evicted_flags[i] = 0;  // operations that cannot evict report none
      ev.flag = a.evicted_flags + i;
      ev.key = a.evicted_keys + i;
      ev.value = a.evicted_values != nullptr ? a.evicted_values + i * vw : nullptr;
    }
    switch (o) {
      case cache_op::get: return ref.get(t, k, out, c);
      case cache_op::set:
        // an absorbed set is linearized just before its key's winning set: it writes nothing
        if (a.groups.absorbed(a.keys, i)) return status::assigned;
        return ref.set(t, k, in, exp, c, ev);
      case cache_op::add: return ref.add(t, k, in, exp, c, ev);
      case cache_op::erase: return ref.erase(t, k, c);
      case cache_op::get_or_set:
        // a combined get_or_set is linearized just after its group's winner, which leaves the
        // key present: it finds the winner's value (copied to `out` by the fix-up pass)
        if (a.groups.absorbed(a.keys, i)) return status::found;
        return ref.get_or_set(t, k, in, out, exp, c, ev);
      case cache_op::contains: return ref.contains(t, k, c);
    }
    return status::invalid_key;
  }
};

/// The operation groups' passes over a batch (operation i): join the groups before the batch;
/// after it, fix the set winners' statuses up and copy combined get_or_sets' values.
template <class Key>
struct op_groups_pass_fn {
  op_groups<Key> g;
  const Key* keys = nullptr;
  status* statuses = nullptr;  ///< null: the join pass; else the fix-up pass
  std::uint64_t* values_out = nullptr;
  std::size_t value_words = 0;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if (!g.grouped(keys, i)) return;
    if (statuses == nullptr) g.join(keys, i);
    else g.fix_up(keys, i, statuses, values_out, value_words);
  }
};

/// A batch's read phase: operation i's lock-free read alone, so that this kernel does not carry
/// the writers' code and registers (the mixed kernel needs ~250 registers a thread for 24-byte
/// keys: one block of 256 threads per SM). gets and contains are done here; a get_or_set that
/// hits is done here (its value copied out, recency refreshed), and so is a combined one (it
/// finds its winner's value, copied by the fix-up pass); every other operation (a get_or_set
/// that missed, set, add, erase) reports `full`, the marker of the operations the write phase
/// (cache_batch_op, the second phase of launch_phased, core/batch_phases.hpp) runs. A batch of only gets or contains is this phase
/// alone. The phases are one batch: its operations are concurrent, so running its reads before
/// its writes is one of its valid executions.
template <class Ref>
struct cache_read_op : cache_batch_args<Ref> {
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const cache_batch_args<Ref>& a = *this;
    const cache_clock c{a.stamp_base + i, a.now, a.stamp_base};
    std::uint64_t* out = a.values_out != nullptr ? a.values_out + i * a.ref.value_words() : nullptr;
    // only the write phase's operations evict: the others report none
    if (a.evicted_flags != nullptr && t.thread_rank() == 0) a.evicted_flags[i] = 0;
    switch (a.ops != nullptr ? a.ops[i] : a.uniform) {
      case cache_op::get: return a.ref.get(t, a.keys[i], out, c);
      case cache_op::contains: return a.ref.contains(t, a.keys[i], c);
      case cache_op::get_or_set: {
        if (a.groups.absorbed(a.keys, i)) return status::found;  // as in cache_batch_op
        const status s = a.ref.get(t, a.keys[i], out, c);
        return s == status::not_found ? status::full : s;  // found, invalid_key: final
      }
      default: return status::full;
    }
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
    if (s.digests != nullptr && i % 8 == 0) s.digests[i / 8] = 0;  // every slot empty: digest 0
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
