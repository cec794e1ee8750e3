#pragma once
// warpkv::hopscotch_map: a lock-free, warp-cooperative hopscotch key-value map
// (after GLHT) for the GPU, with the same code running on host threads.
//
// What it guarantees (argument and linearization points: docs/design/hopscotch.md):
//  - Every operation of a batch runs concurrently with the others and is linearizable.
//  - Keys that hopscotch displacement cannot bring into their neighborhood (rare below
//    load 0.9) go to a stash of capacity/64 slots after the table (detail/stash.hpp).
//  - No insert is lost: when an insert finds no room (status::full inside the device
//    ref), the bulk API grows the table on the backend (rehash into more capacity,
//    with a fresh hash seed) and re-runs exactly the operations that were full.
//  - A key equal to the empty-key sentinel gets status::invalid_key and never touches
//    the table; with config.throw_on_invalid_key the call throws after the batch ran.
//  - Mutating bulk calls wait for their batch (they must learn whether anything was
//    full); find/contains on the cuda backend are stream-ordered and do not wait.
//    One map must not be used by two host threads at once.
// Pointers passed to the bulk API point to memory of the map's backend (device memory
// for cuda, host memory for host); the std::span overloads take host data on either.
//
// Layouts (the Layout parameter): hopscotch_slots (the default, above: GLHT's slot
// neighbourhoods, docs/design/hopscotch.md) and hopscotch_buckets ("H64", issue 24: 64-byte
// buckets of a header and 7 packed pairs, a find of one bucket read, an insert of one CAS;
// 4-byte keys and values; displacement and a stash for a key whose home and 15 next buckets are
// full; docs/design/hopscotch_buckets.md and bucket_ref.hpp).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "warpkv/core/bulk_map.hpp"
#include "warpkv/hopscotch/bucket_ref.hpp"
#include "warpkv/hopscotch/detail/bucket_table.hpp"
#include "warpkv/hopscotch/detail/storage_ops.hpp"
#include "warpkv/hopscotch/hopscotch_ref.hpp"

namespace warpkv {

struct hopscotch_config {
  double max_load_factor = 0.9;      ///< the table grows before size/capacity would pass this. H = 32
                                     ///< blocks near 0.81-0.88 without the stash; with it a table fills
                                     ///< past 0.95, but inserts slow down there (docs/perf.md)
  unsigned neighborhood = 32;        ///< H, 1..32: slots a key may sit from its home bucket. 32 by measurement
                                     ///< (docs/perf.md, session 5): it holds the highest load before growth;
                                     ///< 16 builds ~18% faster at load <= 0.5 but grows sooner; 8 grows below 0.5
  std::size_t max_probe = 4096;      ///< how far an insert looks for a free slot to hop back
  std::uint64_t seed = 0;            ///< hash seed; growth picks new ones
  bool throw_on_invalid_key = false; ///< throw warpkv::error(invalid_key) after a batch that held one
};

/// Layout policies of hopscotch_map.
struct hopscotch_slots {};    ///< GLHT's layout: a hop word beside each slot, neighbourhoods of slots, stash (default)
struct hopscotch_buckets {};  ///< H64: 64-byte buckets (header + 7 packed pairs), neighbourhoods of 16 buckets

/// The bulk API (insert, insert_or_assign, find, contains, erase, execute, their span overloads,
/// size, capacity, reserve, rehash, clear, retrieve_all) is the shared one of core/bulk_map.hpp.
template <hash_key Key, map_value Value, int TileSize = 4, class Layout = hopscotch_slots>
class hopscotch_map
    : public detail::bulk_map_base<hopscotch_map<Key, Value, TileSize, Layout>, hopscotch_ref<Key, Value>,
                                   hopscotch_config, TileSize> {
  static_assert(std::is_same_v<Layout, hopscotch_slots>, "Layout must be hopscotch_slots or hopscotch_buckets");
  using base = detail::bulk_map_base<hopscotch_map, hopscotch_ref<Key, Value>, hopscotch_config, TileSize>;
  friend base;

 public:
  using typename base::ref_type;
  using typename base::slot_type;
  static constexpr const char* map_name = "hopscotch_map";

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  explicit hopscotch_map(std::size_t capacity_hint, hopscotch_config cfg = {},
                         execution ex = execution::automatic(), Key empty_key = default_empty_key<Key>)
      : base(cfg, ex, empty_key, empty_key) {
    require(cfg.neighborhood >= 1 && cfg.neighborhood <= 32, "neighborhood", "must be in [1, 32]");
    require(cfg.max_probe >= cfg.neighborhood, "max_probe", "must be at least the neighborhood");
    this->allocate(this->capacity_for(capacity_hint), cfg.seed);
  }

  /// The device view, for user kernels. Invalidated by any call that may grow the table.
  [[nodiscard]] ref_type ref() const {
    return ref_type(this->slots_.data(), this->capacity_, this->cfg_.neighborhood, this->empty_, this->seed_,
                    this->cfg_.max_probe);
  }

  /// Keys that live in the stash: those hopscotch displacement could not place (a diagnostic; it
  /// copies the stash, capacity/64 slots, to the host). Call between batches.
  [[nodiscard]] std::size_t stashed() const {
    std::vector<slot_type> stash(ref_type::storage_slots(this->capacity_) - this->capacity_);
    this->slots_.copy_to_host(stash.data(), stash.size(), this->capacity_);
    std::size_t keys = 0;
    for (const slot_type& s : stash) keys += ref_type::stored_key(s) != to_bits(this->empty_) ? 1 : 0;
    return keys;
  }

  /// Debug aid (copies the table to the host): checks every structural invariant and returns
  /// a description of the first violation, or an empty string. Call between batches only.
  [[nodiscard]] std::string validate() const {
    return detail::validate_table(ref(), this->slots_.to_vector(), this->size_);
  }

 private:
  // hook of bulk_map_base: the hop word of bucket i sits beside slot i, so there is no side array.
  // The stash after the table is initialised with it.
  void reset_table(bool) {
    detail::init_storage<ref_type>(this->ex_, this->slots_.data(), ref_type::storage_slots(this->capacity_), this->empty_);
  }
};

/// hopscotch_map with the bucketized layout (H64; docs/design/hopscotch_buckets.md).
///  - capacity() counts slots, 7 per 64-byte bucket (the buckets: a power of two, at least 64);
///    max_load_factor bounds size() / capacity() as for the default layout. The config's
///    neighborhood and max_probe do not apply (an external member lives at most 15 buckets from
///    its home).
///  - 4-byte keys and values only in this landing (a static_assert says so).
///  - An insert whose home and next 15 buckets have no free slot goes to the stash (1/32 of the
///    slots, after the table, a window of 4 buckets per home); when its window is full it
///    displaces external members of other homes (within 64 buckets) to make room in reach; only
///    when that fails too does it answer full inside the ref, and the bulk API grows the table (a
///    new seed, doubled when at least half loaded) and re-runs it.
///  - Tombstones: an erase leaves one; the slow path reuses its home's; every rebuild clears them
///    all: growth, reserve, rehash, and maintain() after a mutating call, which rebuilds the table
///    at the same capacity when the erases since the last rebuild pass a quarter of the capacity.
template <hash_key Key, map_value Value, int TileSize>
class hopscotch_map<Key, Value, TileSize, hopscotch_buckets>
    : public detail::bulk_map_base<hopscotch_map<Key, Value, TileSize, hopscotch_buckets>,
                                   hopscotch_bucket_ref<Key, Value>, hopscotch_config, TileSize> {
  using base = detail::bulk_map_base<hopscotch_map, hopscotch_bucket_ref<Key, Value>, hopscotch_config, TileSize>;
  friend base;

 public:
  using typename base::ref_type;
  using typename base::slot_type;
  static constexpr const char* map_name = "hopscotch_map(buckets)";

  /// A map with room for at least `capacity_hint` keys at the configured maximum load factor.
  explicit hopscotch_map(std::size_t capacity_hint, hopscotch_config cfg = {}, execution ex = execution::automatic(),
                         Key empty_key = default_empty_key<Key>)
      : base(cfg, ex, empty_key, from_bits<Key>(to_bits(empty_key) ^ 1u)) {
    this->allocate(capacity_for(capacity_hint), cfg.seed);
  }

  /// The device view, for user kernels. Invalidated by any call that may rebuild the table.
  [[nodiscard]] ref_type ref() const {
    return ref_type(this->slots_.data(), buckets(), this->empty_, this->seed_);
  }
  /// Erases since the last rebuild: a bound on the tombstones in the table.
  [[nodiscard]] std::size_t tombstones() const { return tombs_; }

  /// Keys that live in the stash: those that neither their neighbourhood nor displacement could
  /// place (a diagnostic; it copies the stash to the host). Call between batches.
  [[nodiscard]] std::size_t stashed() const {
    const ref_type r = ref();
    std::vector<slot_type> stash(r.stash_buckets());
    this->slots_.copy_to_host(stash.data(), stash.size(), buckets());
    std::size_t keys = 0;
    for (const slot_type& b : stash)
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const auto k = detail::h64::pair::unpack(b.word[w]).key;
        keys += k != to_bits(r.empty_key()) && k != to_bits(r.tomb_key()) && k != to_bits(r.claimed_key()) ? 1 : 0;
      }
    return keys;
  }

  /// Writes all entries to keys_out/values_out (backend memory, room for size()); returns the count
  /// (more than size() only if the table is broken: then only size() entries are written).
  std::size_t retrieve_all(Key* keys_out, Value* values_out) const {
    buffer<unsigned long long> count(1, this->ex_);
    const unsigned long long zero = 0;
    count.copy_from_host(&zero, 1);
    const ref_type r = ref();
    detail::for_each_index(this->ex_, storage_buckets(),
                           detail::collect_bucket_fn<Key, Value>{this->slots_.data(), to_bits(r.empty_key()),
                                                                 to_bits(r.tomb_key()), to_bits(r.claimed_key()), keys_out,
                                                                 values_out, count.data(), this->size_});
    unsigned long long n = 0;
    count.copy_to_host(&n, 1);
    return static_cast<std::size_t>(n);
  }
  using base::retrieve_all;

  /// Debug aid (copies the table to the host): checks every structural invariant and returns
  /// a description of the first violation, or an empty string. Call between batches only.
  [[nodiscard]] std::string validate() const {
    return detail::validate_buckets(ref(), this->slots_.to_vector(), this->size_, tombs_);
  }

 private:
  static constexpr std::size_t slots_per_bucket = detail::h64::slots;
  [[nodiscard]] std::size_t buckets() const { return this->capacity_ / slots_per_bucket; }
  /// The table's buckets and its stash's.
  [[nodiscard]] std::size_t storage_buckets() const { return ref_type::storage_slots(this->capacity_); }
  /// Slots for `keys` keys at the maximum load factor (not rounded).
  [[nodiscard]] std::size_t room_for(std::size_t keys) const {
    return static_cast<std::size_t>(std::ceil(static_cast<double>(keys) / this->cfg_.max_load_factor));
  }
  /// The capacity of the smallest table with at least `slots` slots: 7 x a power of two buckets
  /// (core's rounding: at least 64).
  [[nodiscard]] std::size_t slots_for(std::size_t slots) const {
    return slots_per_bucket * this->growth().round((slots + slots_per_bucket - 1) / slots_per_bucket);
  }

  // ---- hooks of bulk_map_base ----------------------------------------------------------------
  void reset_table(bool) {
    detail::for_each_index(this->ex_, storage_buckets(),
                           detail::init_bucket_fn{this->slots_.data(), detail::h64::pair::pack(to_bits(this->empty_), 0)});
    tombs_ = 0;
  }
  void on_batch(const batch_summary& s) { tombs_ += s[status::erased]; }
  /// The capacity of the smallest table that holds `keys` keys at the maximum load factor. The
  /// base's reserve (and so its prepare_inserts and maintain) sizes through it: its own rounding
  /// of slots to a power of two would read a table of 7 x 2^k slots as too small.
  [[nodiscard]] std::size_t capacity_for(std::size_t keys) const { return slots_for(room_for(keys)); }
  /// After a mutating call: keep the load factor (the base's rule), and drop the tombstones when
  /// the erases since the last rebuild pass a quarter of the slots.
  void maintain() {
    base::maintain();
    if (tombs_ > this->capacity_ / 4) rehash_to(this->capacity_);
  }
  /// Rebuild into at least `capacity` slots (reserve, rehash, growth, tombstone cleanup): collect
  /// the entries, then insert them into a fresh table with a new seed (fast pass, then the
  /// complete insert for what it hands back; a new seed or twice the room until all fit: core's
  /// rebuild_until_placed). Strong guarantee: the old table comes back when anything throws.
  void rehash_to(std::size_t capacity) {
    const std::size_t n = this->size_;
    const auto entries = this->entries_for_rebuild();
    const buffer<Key>& keys = entries.first;
    const buffer<Value>& values = entries.second;
    buffer<slot_type> old_slots = std::move(this->slots_);
    const std::size_t old_capacity = this->capacity_;
    const std::uint64_t old_seed = this->seed_;
    const std::size_t old_tombs = tombs_;
    try {
      buffer<status> st(std::max<std::size_t>(n, 1), this->ex_);
      batch_counters counters(this->ex_);
      detail::rebuild_until_placed(capacity, this->seed_, "warpkv: hopscotch_map(buckets): rehash could not place every key",
                                   [&](std::size_t slots, std::uint64_t seed) {
        this->allocate(slots_for(slots), seed);
        if (n == 0) return true;
        using fast = detail::insert_op<ref_type, Key, Value, detail::pass::fast>;
        using complete = detail::insert_op<ref_type, Key, Value>;
        batch_summary s = launch_batch<TileSize, fast, batch_shape::op_per_tile>(
            this->ex_, n, fast{ref(), keys.data(), values.data(), false}, st.data(), counters);
        if (s[status::full] > 0)
          s = this->template launch_full<batch_shape::op_per_tile>(n, s[status::full],
                                                                   complete{ref(), keys.data(), values.data(), false}, st.data());
        return s[status::full] == 0;
      });
    } catch (...) {
      this->slots_ = std::move(old_slots);
      this->capacity_ = old_capacity;
      this->seed_ = old_seed;
      tombs_ = old_tombs;
      throw;
    }
    ++this->rehashes_;
  }

  std::size_t tombs_ = 0;  // erases since the last rebuild (bulk API only): a bound on the tombs
};

}  // namespace warpkv
