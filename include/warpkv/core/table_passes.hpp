#pragma once
// Whole-table passes shared by the slot-array maps: run a function over every index, initialise
// the slots, re-insert the live slots of an old table into a new one, and collect the live
// entries. They run between batches, never concurrently with operations on the same table.
//
// The map's ref says how a slot is laid out: static stored_key(slot), stored_value(slot) (bits)
// and init_slot(slot, empty_key). A slot is live when its key is neither the empty key nor the
// erased key (tombstone); maps without tombstones pass their empty key for both.
#include <cstddef>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::detail {

/// Calls fn(tile, i) for every i in [0, n): a plain loop on the host backend, a grid on the GPU.
template <class Fn>
void for_each_index(const execution& ex, std::size_t n, const Fn& fn) {
  if (ex.where == backend::host) {
    for (std::size_t i = 0; i < n; ++i) fn(0, i);
    return;
  }
  launch<1>(ex, n, simple_body<Fn>{fn});
}

/// Index i: words[i] = value (lock words, list heads, side arrays of a fresh table).
template <class T>
struct fill_fn {
  T* words;
  T value;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    words[i] = value;
  }
};

template <class T>
void fill_words(const execution& ex, T* words, std::size_t n, T value) {
  for_each_index(ex, n, fill_fn<T>{words, value});
}

/// Index i: slot i becomes empty (the ref's layout says how).
template <class Ref>
struct init_slot_fn {
  typename Ref::slot_type* slots;
  typename Ref::key_type empty;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    Ref::init_slot(slots[i], empty);
  }
};

template <class Ref>
void init_storage(const execution& ex, typename Ref::slot_type* slots, std::size_t capacity,
                  typename Ref::key_type empty) {
  for_each_index(ex, capacity, init_slot_fn<Ref>{slots, empty});
}

/// Batch operation i: re-insert old slot i (if live) through the new table's ref.
/// P = pass::fast: the ref's fast insert (a ref with fast_bulk_inserts), which hands an entry it
/// cannot place to a second, complete pass.
template <class Ref, pass P = pass::complete>
struct reinsert_op {
  /// The fast insert's budget (a rebuild runs it in the serve loop: without a bound ptxas put the
  /// one-lane open-addressing reinsert at 32 registers with 12 B of spills).
  static constexpr int register_budget = P == pass::fast ? fast_insert_register_budget_of<Ref>() : 0;
  Ref ref;
  const typename Ref::slot_type* old_slots;
  typename Ref::key_bits empty;
  typename Ref::key_bits erased;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const auto k = Ref::stored_key(old_slots[i]);
    if (k == empty || k == erased) return status::not_found;
    const auto key = from_bits<typename Ref::key_type>(k);
    const auto value = from_bits<typename Ref::mapped_type>(Ref::stored_value(old_slots[i]));
    if constexpr (P == pass::fast) return ref.insert_fast(t, key, value);  // full: for the complete pass
    else return ref.insert(t, key, value);
  }
};

template <class Ref>
struct collect_fn {
  using Key = typename Ref::key_type;
  using Value = typename Ref::mapped_type;
  const typename Ref::slot_type* slots;
  typename Ref::key_bits empty;
  typename Ref::key_bits erased;
  Key* keys_out;
  Value* values_out;
  unsigned long long* count;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    const auto k = Ref::stored_key(slots[i]);
    if (k == empty || k == erased) return;
    const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
    keys_out[at] = from_bits<Key>(k);
    values_out[at] = from_bits<Value>(Ref::stored_value(slots[i]));
  }
};

/// Writes the live entries of `slots` to keys_out/values_out (backend memory); returns how many.
template <class Ref>
std::size_t collect_entries(const execution& ex, const typename Ref::slot_type* slots, std::size_t capacity,
                            typename Ref::key_bits empty, typename Ref::key_bits erased,
                            typename Ref::key_type* keys_out, typename Ref::mapped_type* values_out) {
  buffer<unsigned long long> count(1, ex);
  const unsigned long long zero = 0;
  count.copy_from_host(&zero, 1);
  for_each_index(ex, capacity, collect_fn<Ref>{slots, empty, erased, keys_out, values_out, count.data()});
  unsigned long long n = 0;
  count.copy_to_host(&n, 1);
  return static_cast<std::size_t>(n);
}

}  // namespace warpkv::detail
