#pragma once
// A kv_cache design: one choice per mechanism, fixed at compile time, so that a cache type's
// kernels carry exactly that design's code (docs/design/cache.md, "Designs").
//
//   cache_design<Sync, Eviction, Layout, KeyMatch>
//     Sync      detail::optimistic_slots (version-validated reads that write nothing) or
//               detail::rw_lock_slots (the seed's per-slot reader/writer locks)
//     Eviction  detail::lru_eviction, detail::random_eviction, detail::clock_eviction, or a score
//               policy (HierarchicalKV's): detail::lfu_eviction, detail::epoch_lru_eviction,
//               detail::epoch_lfu_eviction, detail::custom_eviction
//     Layout    detail::value_slab (values in their own array) or detail::inline_values
//     KeyMatch  detail::plain_keys or detail::digest_keys (a byte per slot compared first)
//
// Named designs (cache_designs::):
//   optimistic_lru  optimistic, lru, value slab, no digests: the measured fastest correct
//                   design, kv_cache's default (default_cache_design)
//   ccht            the seed's CCHT configuration: the seed's per-slot reader/writer locks, LRU,
//                   each slot's key and value in one record; with buckets of 4 (ccht_cache)
//   optimistic_lfu, optimistic_epoch_lru, optimistic_epoch_lfu, optimistic_custom
//                   the default design with a score policy in place of lru (HKV's kLfu,
//                   kEpochLru, kEpochLfu, kCustomized; docs/design/cache.md, "Score policies")
//   by_config       no design of its own: the cache takes each mechanism from cache_config's
//                   run-time fields (eviction, sync, layout, key_digests) and the host picks
//                   the matching instantiation for every launch (visit_design); its kernels are
//                   still one design each, it only compiles all of them: the three policies
//                   lru, random and clock (the score policies are fixed designs only, so that
//                   by_config's 24 instantiations do not become 56).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "warpkv/cache/detail/bucket_view.hpp"
#include "warpkv/cache/detail/cache_types.hpp"
#include "warpkv/cache/detail/eviction_policy.hpp"
#include "warpkv/cache/detail/slot_sync.hpp"

namespace warpkv {

struct cache_config {
  std::size_t capacity = 0;        ///< entries (rounded up to whole buckets); must be > 0
  std::size_t value_bytes = 8;     ///< bytes per value, 1 .. max_value_bytes; stored in value_stride() bytes
  std::uint32_t max_kicks = 5000;  ///< cuckoo displacement steps an insert may try before evicting (0: evict at once)
  double kick_load_limit = 0.95;   ///< cuckoo moves only while fewer than this x capacity slots are filled; 1.0
                                   ///< is the seed's (a walk then hunts the last free slots: up to max_kicks steps per insert)
  std::uint64_t seed = 0;          ///< hash seed
  // The design fields: read by a kv_cache<..., cache_designs::by_config>. A cache of a fixed
  // design accepts each left at its default or equal to its design's, and reports its design's
  // in config().
  /// lru (default), random (the seed's baseline), clock; lfu, epoch_lru, epoch_lfu, custom (a
  /// fixed design's only: by_config takes the first three)
  cache_eviction_policy eviction = cache_eviction_policy::lru;
  cache_slot_sync sync = cache_slot_sync::optimistic;  ///< optimistic (default) or rw_lock (the seed's per-slot locks)
  cache_layout layout = cache_layout::value_slab;       ///< values in their own array (default) or inline after the key
  /// Set absorption (execute_resident and the host-span batches; not enqueue_resident): of the
  /// sets of one key in one batch only the last (largest index) writes; the others report
  /// `assigned` (one of them `inserted` when the winner inserted), linearized just before it.
  /// Two passes and a scratch table of 12 x 2n bytes per batch; removes hot keys' lock convoys.
  bool absorb_sets = false;
  /// get_or_set combining (execute_resident and the host-span batches; not enqueue_resident):
  /// of the get_or_set operations of one key in one batch only the last (largest index) runs;
  /// the others report `found` with its result value, linearized just after it. Shares set
  /// absorption's passes and scratch; removes a hot key's cache-aside convoy (thousands of
  /// lanes missing on one key and queueing on its bucket locks).
  bool combine_get_or_set = false;
  /// Key digests: a byte per slot from the key's hash, 8 slots per word, kept beside the
  /// buckets; readers compare a slot's key words only where its digest matches (a layout trial:
  /// fewer bytes per probe, one dependent load more; docs/perf.md). Adds capacity bytes.
  bool key_digests = false;
};

template <class Sync, class Eviction, class Layout, class KeyMatch, class Placement = detail::two_buckets>
struct cache_design {
  using sync = Sync;
  using eviction = Eviction;
  using layout = Layout;
  using key_match = KeyMatch;
  /// two_buckets (cuckoo: the default) or one_bucket (HierarchicalKV's placement: no cuckoo moves,
  /// so cache_config::max_kicks and kick_load_limit have no effect).
  using placement = Placement;

  /// Whether cfg's design fields agree with this design: each equal to it or left at its default.
  static bool accepts(const cache_config& cfg) {
    const cache_config d{};
    return (cfg.eviction == d.eviction || cfg.eviction == Eviction::value) && (cfg.sync == d.sync || cfg.sync == Sync::value) &&
           (cfg.layout == d.layout || cfg.layout == Layout::value) && (cfg.key_digests == d.key_digests || cfg.key_digests == KeyMatch::digests);
  }
  /// cfg with this design's fields.
  static cache_config applied(cache_config cfg) {
    cfg.eviction = Eviction::value;
    cfg.sync = Sync::value;
    cfg.layout = Layout::value;
    cfg.key_digests = KeyMatch::digests;
    return cfg;
  }
};

namespace cache_designs {
/// The default: optimistic reads, LRU, values in a slab, no digests (measured fastest: docs/perf.md).
using optimistic_lru = cache_design<detail::optimistic_slots, detail::lru_eviction, detail::value_slab, detail::plain_keys>;
/// The seed's CCHT: per-slot reader/writer locks, LRU, key and value in one record per slot.
using ccht = cache_design<detail::rw_lock_slots, detail::lru_eviction, detail::inline_values, detail::plain_keys>;
/// The default design with one of HierarchicalKV's score policies in place of lru.
using optimistic_lfu = cache_design<detail::optimistic_slots, detail::lfu_eviction, detail::value_slab, detail::plain_keys>;
using optimistic_epoch_lru =
    cache_design<detail::optimistic_slots, detail::epoch_lru_eviction, detail::value_slab, detail::plain_keys>;
using optimistic_epoch_lfu =
    cache_design<detail::optimistic_slots, detail::epoch_lfu_eviction, detail::value_slab, detail::plain_keys>;
using optimistic_custom = cache_design<detail::optimistic_slots, detail::custom_eviction, detail::value_slab, detail::plain_keys>;
/// HierarchicalKV's placement: a key's one bucket, LRU, values in a slab, key words compared
/// directly (measured faster than digests here: the digest is a dependent round trip more). A
/// write locks and scans one bucket and never moves an entry; an insert into a full bucket evicts
/// there even while other buckets have room (docs/design/cache.md, "One bucket"). Made for
/// kv_cache<Key, 32, 4, one_bucket_lru>: a probe reads a bucket's 32 keys, 8 a lane, at once.
using one_bucket_lru =
    cache_design<detail::optimistic_slots, detail::lru_eviction, detail::value_slab, detail::plain_keys, detail::one_bucket>;
/// The design taken from cache_config at run time (every combination compiled, one picked per launch).
struct by_config {};
}  // namespace cache_designs

using default_cache_design = cache_designs::optimistic_lru;

template <class D>
inline constexpr bool is_cache_design = false;
template <class S, class E, class L, class M, class P>
inline constexpr bool is_cache_design<cache_design<S, E, L, M, P>> = true;

namespace detail {
template <class S, class E, class L, class F>
decltype(auto) visit_key_match(const cache_config& c, F&& f) {
  if (c.key_digests) return f(std::type_identity<cache_design<S, E, L, digest_keys>>{});
  return f(std::type_identity<cache_design<S, E, L, plain_keys>>{});
}
template <class S, class E, class F>
decltype(auto) visit_layout(const cache_config& c, F&& f) {
  if (c.layout == cache_layout::inline_values) return visit_key_match<S, E, inline_values>(c, f);
  return visit_key_match<S, E, value_slab>(c, f);
}
template <class S, class F>
decltype(auto) visit_eviction(const cache_config& c, F&& f) {
  if (c.eviction == cache_eviction_policy::random) return visit_layout<S, random_eviction>(c, f);
  if (c.eviction == cache_eviction_policy::clock) return visit_layout<S, clock_eviction>(c, f);
  return visit_layout<S, lru_eviction>(c, f);
}
}  // namespace detail

/// Calls f(std::type_identity<D>{}) with D the cache_design that cfg's design fields name: the
/// host-side dispatch of cache_designs::by_config (every branch must return the same type).
template <class F>
decltype(auto) visit_design(const cache_config& cfg, F&& f) {
  if (cfg.sync == cache_slot_sync::rw_lock) return detail::visit_eviction<detail::rw_lock_slots>(cfg, f);
  return detail::visit_eviction<detail::optimistic_slots>(cfg, f);
}

}  // namespace warpkv
