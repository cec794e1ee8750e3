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
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpkv/core/bulk_map.hpp"
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

/// The bulk API (insert, insert_or_assign, find, contains, erase, execute, their span overloads,
/// size, capacity, reserve, rehash, clear, retrieve_all) is the shared one of core/bulk_map.hpp.
template <hash_key Key, map_value Value, int TileSize = 4>
class hopscotch_map
    : public detail::bulk_map_base<hopscotch_map<Key, Value, TileSize>, hopscotch_ref<Key, Value>, hopscotch_config,
                                   TileSize> {
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

}  // namespace warpkv
