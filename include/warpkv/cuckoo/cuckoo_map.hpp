#pragma once
// warpkv::cuckoo_map: a concurrent bucketed cuckoo hash map for the GPU (and host threads), in
// the shape of BGHT's bcht: d = 2 or 3 seeded Murmur3 hash functions, buckets of 8 slots (one
// 64-byte line with 4-byte keys and values) filled first-fit, eviction chains with a bound.
//
// What it guarantees (argument and linearization points: docs/design/cuckoo.md):
//  - Every operation of a batch runs concurrently with the others and is linearizable; a key is
//    never stored twice. Finds take no lock (versioned buckets, retried when a writer changed
//    one); writers lock the key's candidate buckets; an eviction moves one key at a time under
//    the locks of its two buckets.
//  - Uniform insert / insert_or_assign batches with 4-byte keys and values run a lock-free
//    fast path first (one bucket read and one CAS per insert while the key's first bucket has
//    a fresh slot); the inserts whose candidate buckets are all full run the locked protocol
//    with evictions in a second launch of the same batch. Find-only batches read with plain
//    loads and stop at a bucket with a fresh (never used) slot: keys are placed first-fit and
//    an emptied slot becomes a hole, never fresh again, so no key sits behind a fresh slot.
//  - No insert is lost: when no eviction chain within config.max_chain moves (config.
//    eviction_attempts tries) frees a slot, the device ref reports status::full and the bulk
//    API rehashes into a new table (new seeds; twice the room when loaded) and re-runs exactly
//    the full operations. There is no stash: a failed chain leaves the table as it was.
//  - The empty key (default: the largest key) gets status::invalid_key and never touches the
//    table; with config.throw_on_invalid_key the call throws after the batch ran.
//  - size() counts what the bulk API did; writes made through ref() in user kernels are not
//    counted (validate() then reports the difference).
// The bulk API, its span overloads and its waiting rules are those of every warpkv map
// (core/bulk_map.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "warpkv/core/bulk_map.hpp"
#include "warpkv/core/table_passes.hpp"
#include "warpkv/cuckoo/cuckoo_ref.hpp"

namespace warpkv {

struct cuckoo_config {
  double max_load_factor = 0.9;       ///< the table grows before size/capacity would pass this
  unsigned hash_functions = 3;        ///< d: candidate buckets per key, 2 or 3
  unsigned max_chain = 32;            ///< moves of one eviction chain, 1..64
  unsigned eviction_attempts = 8;     ///< chains an insert tries before it reports full
  std::uint64_t seed = 0;             ///< hash seed; rebuilds pick new ones
  bool throw_on_invalid_key = false;  ///< throw warpkv::error(invalid_key) after a batch that held the sentinel
};

/// TileSize: lanes per operation; 8 (the default) reads a bucket of 8 slots with one load per lane
/// (on the H100 it found 5-33 % faster than 4 lanes at equal insert speed, docs/perf.md session 10).
template <hash_key Key, map_value Value, int TileSize = 8>
class cuckoo_map
    : public detail::bulk_map_base<cuckoo_map<Key, Value, TileSize>, cuckoo_ref<Key, Value>, cuckoo_config, TileSize> {
  using base = detail::bulk_map_base<cuckoo_map, cuckoo_ref<Key, Value>, cuckoo_config, TileSize>;
  friend base;

 public:
  using typename base::ref_type;
  static constexpr const char* map_name = "cuckoo_map";
  static constexpr unsigned bucket_slots = ref_type::bucket_slots;

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  explicit cuckoo_map(std::size_t capacity_hint, cuckoo_config cfg = {}, execution ex = execution::automatic(),
                      Key empty_key = default_empty_key<Key>)
      : base(cfg, ex, empty_key, empty_key) {
    require(cfg.hash_functions == 2 || cfg.hash_functions == 3, "hash_functions", "must be 2 or 3");
    require(cfg.max_chain >= 1 && cfg.max_chain <= ref_type::max_chain_limit, "max_chain", "must be in [1, 64]");
    require(cfg.eviction_attempts >= 1, "eviction_attempts", "must be at least 1");
    this->allocate(this->capacity_for(capacity_hint), cfg.seed);
  }

  /// The device view, for user kernels. Invalidated by any call that may rebuild the table.
  [[nodiscard]] ref_type ref() const {
    return ref_type(this->slots_.data(), locks_.data(), this->capacity_, this->cfg_.hash_functions, this->empty_,
                    this->seed_, this->cfg_.max_chain, this->cfg_.eviction_attempts);
  }

  /// Debug aid (copies the table to the host): every bucket unlocked, every key in one of its
  /// candidate buckets, no key twice, size() keys, and rule F: no fresh (never used) slot before
  /// any key in its order of positions. Returns the first violation or "".
  /// Call between batches only.
  [[nodiscard]] std::string validate() const {
    const auto slots = this->slots_.to_vector();
    const auto locks = locks_.to_vector();
    const ref_type r = ref();
    const auto empty = to_bits(this->empty_);
    std::vector<typename ref_type::key_bits> keys;
    const std::size_t nb = r.buckets();
    for (std::size_t b = 0; b < nb; ++b)
      if ((locks[b] & 1u) != 0) return "bucket " + std::to_string(b) + " is still locked";
    const auto no_fresh = [&](std::size_t b, unsigned upto) {  // slots [0, upto) of b: full or holes
      for (unsigned s = 0; s < upto; ++s) {
        const auto& slot = slots[b * bucket_slots + s];
        if (ref_type::stored_key(slot) == empty && ref_type::stored_value(slot) == 0) return false;
      }
      return true;
    };
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const auto kb = ref_type::stored_key(slots[i]);
      if (kb == empty) continue;
      const std::size_t b = i / bucket_slots;
      bool home = false;
      for (unsigned h = 0; h < r.hash_functions(); ++h) home = home || r.bucket(from_bits<Key>(kb), h) == b;
      if (!home) return "slot " + std::to_string(i) + " holds a key outside its candidate buckets";
      bool ok = no_fresh(b, static_cast<unsigned>(i % bucket_slots));  // rule F
      for (unsigned h = 0; h < r.hash_functions() && r.bucket(from_bits<Key>(kb), h) != b; ++h)
        ok = ok && no_fresh(r.bucket(from_bits<Key>(kb), h), bucket_slots);
      if (!ok) return "slot " + std::to_string(i) + " holds a key behind a fresh slot (rule F)";
      keys.push_back(kb);
    }
    std::sort(keys.begin(), keys.end());
    if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) return "a key is stored twice";
    if (keys.size() != this->size_)
      return "table holds " + std::to_string(keys.size()) + " keys but size() is " + std::to_string(this->size_);
    return {};
  }

 private:
  // hook of bulk_map_base: the version words live beside the slot array, one per bucket.
  void reset_table(bool reallocate) {
    if (reallocate) locks_ = buffer<std::uint32_t>(this->capacity_ / bucket_slots, this->ex_);
    detail::init_storage<ref_type>(this->ex_, this->slots_.data(), this->capacity_, this->empty_);
    detail::fill_words<std::uint32_t>(this->ex_, locks_.data(), locks_.size(), 0u);
  }

  buffer<std::uint32_t> take_side() { return std::move(locks_); }
  void restore_side(buffer<std::uint32_t> locks) { locks_ = std::move(locks); }

  buffer<std::uint32_t> locks_;  // bucket versions: even = unlocked
};

}  // namespace warpkv
