#pragma once
// warpkv::open_addressing_map: a concurrent open-addressing key-value map for the GPU (and host
// threads), with the probing scheme as a policy. linear_map and quadratic_map are its two
// instances (linear_map.hpp, quadratic_map.hpp).
//
// What it guarantees (argument and linearization points: docs/design/open_addressing.md):
//  - Every operation of a batch runs concurrently with the others and is linearizable; a key
//    is never stored twice, also when many tiles insert it at once.
//  - Murmur3 hashing into a power-of-two table read in windows of TileSize x LaneSlots slots,
//    LaneSlots per lane (default: 4 for 4-byte keys and values at tile 1, a 32-byte window read
//    by one thread; else 1).
//  - insert claims a free slot by CAS of its key; erase leaves a tombstone (the erased key,
//    default max-1). Tombstones are never reused while a batch runs; cleanup() rebuilds the
//    table without them, and runs by itself after a batch that leaves more tombstones than
//    config.tombstone_threshold x capacity, or tombstones and keys together above the maximum
//    load factor.
//  - No insert is lost: an insert whose probe sequence holds no free slot gets status::full in
//    the device ref; the bulk API then rebuilds the table (new seed, more capacity when loaded)
//    and re-runs exactly the full operations.
//  - Both sentinels (empty key, erased key) get status::invalid_key and never touch the table.
//  - size() and tombstones() count what the bulk API did; inserts and erases made through ref()
//    in user kernels are not counted (validate() then reports the difference).
// The bulk API, its span overloads and its waiting rules are those of every warpkv map
// (core/bulk_map.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "warpkv/core/bulk_map.hpp"
#include "warpkv/open_addressing/detail/probing.hpp"
#include "warpkv/open_addressing/detail/storage_ops.hpp"
#include "warpkv/open_addressing/open_addressing_ref.hpp"

namespace warpkv {

struct open_addressing_config {
  double max_load_factor = 0.9;       ///< the table grows before size/capacity would pass this
  double tombstone_threshold = 0.25;  ///< cleanup after a batch leaving more tombstones than this x capacity, (0, 1]
  std::size_t max_probe = 4096;       ///< slots an operation may probe (rounded up to windows); 0 = the whole table.
                                      ///< Bounds the scan of a nearly full table; linear probing above 0.9 may want more
  std::uint64_t seed = 0;             ///< hash seed; rebuilds pick new ones
  bool throw_on_invalid_key = false;  ///< throw warpkv::error(invalid_key) after a batch that held a sentinel
};

/// TileSize lanes per operation, each reading LaneSlots slots of a window (LaneSlots > 1: packed
/// pairs only, read 16 bytes at a time; open_addressing_ref.hpp).
template <hash_key Key, map_value Value, class Probing, int TileSize = 4,
          int LaneSlots = default_lane_slots<Key, Value, TileSize>>
class open_addressing_map
    : public detail::bulk_map_base<open_addressing_map<Key, Value, Probing, TileSize, LaneSlots>,
                                   open_addressing_ref<Key, Value, Probing, TileSize, LaneSlots>, open_addressing_config,
                                   TileSize> {
  using base = detail::bulk_map_base<open_addressing_map, open_addressing_ref<Key, Value, Probing, TileSize, LaneSlots>,
                                     open_addressing_config, TileSize>;
  friend base;

 public:
  using typename base::ref_type;
  using probing_type = Probing;
  static constexpr const char* map_name =
      std::is_same_v<Probing, linear_probing> ? "linear_map" : std::is_same_v<Probing, quadratic_probing> ? "quadratic_map"
                                                                                                            : "open_addressing_map";

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  /// empty_key and erased_key are reserved: keys equal to either are refused (invalid_key).
  explicit open_addressing_map(std::size_t capacity_hint, open_addressing_config cfg = {},
                               execution ex = execution::automatic(), Key empty_key = default_empty_key<Key>,
                               Key erased_key = default_erased_key<Key>)
      : base(cfg, ex, empty_key, erased_key) {
    require(cfg.tombstone_threshold > 0.0 && cfg.tombstone_threshold <= 1.0, "tombstone_threshold",
            "must be in (0, 1]");
    require(empty_key != erased_key, "erased_key", "must differ from the empty key");
    this->allocate(this->capacity_for(capacity_hint), cfg.seed);
  }

  /// The device view, for user kernels (tiles of TileSize lanes). Invalidated by any call that
  /// may rebuild the table.
  [[nodiscard]] ref_type ref() const {
    return ref_type(this->slots_.data(), ready_.data(), this->capacity_, this->empty_, this->erased_, this->seed_,
                    this->cfg_.max_probe);
  }
  [[nodiscard]] Key erased_key() const { return this->erased_; }
  /// Tombstones in the table (erases since the last rebuild).
  [[nodiscard]] std::size_t tombstones() const { return tombstones_; }
  /// Number of rebuilds made to drop tombstones (by cleanup(), automatic or requested).
  [[nodiscard]] std::size_t cleanup_count() const { return cleanups_; }

  /// Rebuilds the table without tombstones, at the same capacity (more if the keys need it).
  /// Does nothing when there are none.
  void cleanup() {
    if (tombstones_ == 0) return;
    this->rehash_to(std::max(this->capacity_, this->capacity_for(this->size_)));
    ++cleanups_;
  }

  /// Debug aid (copies the table to the host): checks every structural invariant and returns
  /// a description of the first violation, or an empty string. Call between batches only.
  [[nodiscard]] std::string validate() const {
    return detail::validate_open_table(ref(), this->slots_.to_vector(), ready_.to_vector(), this->size_, tombstones_);
  }

 private:
  // ---- hooks of bulk_map_base --------------------------------------------------------------
  void reset_table(bool reallocate) {
    // Packed pairs (4-byte keys and values) prove themselves: no ready bitmap.
    if (reallocate && !ref_type::packed)
      ready_ = buffer<std::uint32_t>(this->capacity_ / detail::ready_bits_per_word, this->ex_);
    detail::init_storage<ref_type>(this->ex_, this->slots_.data(), this->capacity_, this->empty_);
    detail::for_each_index(this->ex_, ready_.size(), detail::clear_ready_fn{ready_.data()});
    tombstones_ = 0;  // a fresh or cleared table, or the new table of a rebuild
  }
  struct side_arrays {
    buffer<std::uint32_t> ready;
    std::size_t tombstones = 0;
  };
  side_arrays take_side() { return {std::move(ready_), std::exchange(tombstones_, 0)}; }
  void restore_side(side_arrays s) {
    ready_ = std::move(s.ready);
    tombstones_ = s.tombstones;
  }
  void on_batch(const batch_summary& s) { tombstones_ += s[status::erased]; }
  std::size_t occupied_bound() const { return this->size_ + tombstones_; }
  /// Before n inserts: room for the keys, and room beside the tombstones, else drop them first.
  void prepare_inserts(std::size_t n) {
    this->reserve(this->size_ + n);
    if (over_load(this->size_ + tombstones_ + n)) cleanup();
  }
  void maintain() {
    base::maintain();
    const double threshold = this->cfg_.tombstone_threshold * static_cast<double>(this->capacity_);
    if (tombstones_ > 0 && (static_cast<double>(tombstones_) > threshold || over_load(this->size_ + tombstones_)))
      cleanup();
  }
  bool over_load(std::size_t occupied) const { return this->growth().over_load(occupied, this->capacity_); }

  buffer<std::uint32_t> ready_;  // bit i: slot i's first value is published
  std::size_t tombstones_ = 0;
  std::size_t cleanups_ = 0;
};

}  // namespace warpkv
