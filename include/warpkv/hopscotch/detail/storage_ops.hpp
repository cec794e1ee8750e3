#pragma once
// Whole-table passes of the hopscotch map: initialise, re-insert (rehash), collect.
// They run between batches, never concurrently with operations on the same table.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::detail {

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
  if (ex.where == backend::host) {
    for (std::size_t i = 0; i < capacity; ++i) init_slot_fn<Ref>{slots, empty}(0, i);
    return;
  }
  launch<1>(ex, capacity, simple_body<init_slot_fn<Ref>>{{slots, empty}});
}

/// Batch operation i: re-insert old slot i (if it holds a key) through the new table's ref.
template <class Ref>
struct reinsert_op {
  Ref ref;
  const typename Ref::slot_type* old_slots;
  typename Ref::key_bits empty;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const auto k = Ref::stored_key(old_slots[i]);
    if (k == empty) return status::not_found;
    return ref.insert(t, from_bits<typename Ref::key_type>(k),
                      from_bits<typename Ref::mapped_type>(Ref::stored_value(old_slots[i])));
  }
};

template <class Ref>
struct collect_fn {
  using Key = typename Ref::key_type;
  using Value = typename Ref::mapped_type;
  const typename Ref::slot_type* slots;
  typename Ref::key_bits empty;
  Key* keys_out;
  Value* values_out;
  unsigned long long* count;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    const auto k = Ref::stored_key(slots[i]);
    if (k == empty) return;
    const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
    keys_out[at] = from_bits<Key>(k);
    values_out[at] = from_bits<Value>(Ref::stored_value(slots[i]));
  }
};

template <class Ref>
std::size_t collect_entries(const execution& ex, const typename Ref::slot_type* slots, std::size_t capacity,
                            typename Ref::key_bits empty, typename Ref::key_type* keys_out,
                            typename Ref::mapped_type* values_out) {
  buffer<unsigned long long> count(1, ex);
  const unsigned long long zero = 0;
  count.copy_from_host(&zero, 1);
  const collect_fn<Ref> fn{slots, empty, keys_out, values_out, count.data()};
  if (ex.where == backend::host) {
    for (std::size_t i = 0; i < capacity; ++i) fn(0, i);
  } else {
    launch<1>(ex, capacity, simple_body<collect_fn<Ref>>{fn});
  }
  unsigned long long n = 0;
  count.copy_to_host(&n, 1);
  return static_cast<std::size_t>(n);
}

}  // namespace warpkv::detail

#include <string>
#include <vector>

#include "warpkv/hopscotch/detail/hop_word.hpp"

namespace warpkv::detail {

/// Host-side structural check of a quiescent table: every bitmap bit names a slot holding a
/// key homed at that bucket, every key is named by exactly one bit, no lock is held, no key
/// appears twice, and the number of keys is `size`.
template <class Ref, class Slot>
std::string validate_table(const Ref& ref, const std::vector<Slot>& slots, std::size_t size) {
  const std::size_t cap = slots.size();
  const auto empty = to_bits(ref.empty_key());
  const auto claimed = to_bits(ref.claimed_key());
  std::vector<unsigned char> named(cap, 0);
  std::size_t keys = 0;
  for (std::size_t b = 0; b < cap; ++b) {
    if (hop::locked(slots[b].meta)) return "bucket " + std::to_string(b) + " is locked";
    const std::uint32_t bm = hop::bitmap(slots[b].meta);
    if (ref.neighborhood() < 32 && (bm >> ref.neighborhood()) != 0)
      return "bucket " + std::to_string(b) + " has bits beyond the neighborhood";
    for (unsigned o = 0; o < 32; ++o) {
      if (((bm >> o) & 1u) == 0) continue;
      const std::size_t i = (b + o) & (cap - 1);
      const auto kb = Ref::stored_key(slots[i]);
      if (kb == empty || kb == claimed) return "bucket " + std::to_string(b) + " names free or claimed slot " + std::to_string(i);
      const auto k = from_bits<typename Ref::key_type>(kb);
      if (ref.home(k) != b) return "slot " + std::to_string(i) + " is named by bucket " + std::to_string(b) + " but homes elsewhere";
      if (named[i]++) return "slot " + std::to_string(i) + " is named twice";
    }
  }
  std::vector<typename Ref::key_bits> seen;
  for (std::size_t i = 0; i < cap; ++i) {
    const auto kb = Ref::stored_key(slots[i]);
    if (kb == empty) continue;
    if (kb == claimed) return "slot " + std::to_string(i) + " is still claimed between batches";
    if (!named[i]) return "slot " + std::to_string(i) + " holds a key no bitmap names";
    ++keys;
    seen.push_back(kb);
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return "a key is stored twice";
  if (keys != size) return "table holds " + std::to_string(keys) + " keys but size() is " + std::to_string(size);
  return {};
}

}  // namespace warpkv::detail
