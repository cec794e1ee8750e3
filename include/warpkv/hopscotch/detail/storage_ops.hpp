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

template <class Slot>
struct init_slot_fn {
  Slot* slots;
  std::uint64_t* hops;
  decltype(Slot::key) empty;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    slots[i].key = empty;
    slots[i].value = 0;
    hops[i] = 0;
  }
};

template <class Slot>
void init_storage(const execution& ex, Slot* slots, std::uint64_t* hops, std::size_t capacity,
                  decltype(Slot::key) empty) {
  if (ex.where == backend::host) {
    for (std::size_t i = 0; i < capacity; ++i) init_slot_fn<Slot>{slots, hops, empty}(0, i);
    return;
  }
  launch<1>(ex, capacity, simple_body<init_slot_fn<Slot>>{{slots, hops, empty}});
}

/// Batch operation i: re-insert old slot i (if it holds a key) through the new table's ref.
template <class Ref>
struct reinsert_op {
  Ref ref;
  const typename Ref::slot_type* old_slots;
  typename Ref::key_bits empty;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const auto k = old_slots[i].key;
    if (k == empty) return status::not_found;
    return ref.insert(t, from_bits<typename Ref::key_type>(k), from_bits<typename Ref::mapped_type>(old_slots[i].value));
  }
};

template <class Key, class Value, class Slot>
struct collect_fn {
  const Slot* slots;
  decltype(Slot::key) empty;
  Key* keys_out;
  Value* values_out;
  unsigned long long* count;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if (slots[i].key == empty) return;
    const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
    keys_out[at] = from_bits<Key>(slots[i].key);
    values_out[at] = from_bits<Value>(slots[i].value);
  }
};

template <class Key, class Value, class Slot>
std::size_t collect_entries(const execution& ex, const Slot* slots, std::size_t capacity, decltype(Slot::key) empty,
                            Key* keys_out, Value* values_out) {
  buffer<unsigned long long> count(1, ex);
  const unsigned long long zero = 0;
  count.copy_from_host(&zero, 1);
  const collect_fn<Key, Value, Slot> fn{slots, empty, keys_out, values_out, count.data()};
  if (ex.where == backend::host) {
    for (std::size_t i = 0; i < capacity; ++i) fn(0, i);
  } else {
    launch<1>(ex, capacity, simple_body<collect_fn<Key, Value, Slot>>{fn});
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
std::string validate_table(const Ref& ref, const std::vector<Slot>& slots, const std::vector<std::uint64_t>& hops,
                           std::size_t size) {
  const std::size_t cap = slots.size();
  const auto empty = to_bits(ref.empty_key());
  std::vector<unsigned char> named(cap, 0);
  std::size_t keys = 0;
  for (std::size_t b = 0; b < cap; ++b) {
    if (hop::locked(hops[b])) return "bucket " + std::to_string(b) + " is locked";
    const std::uint32_t bm = hop::bitmap(hops[b]);
    if (ref.neighborhood() < 32 && (bm >> ref.neighborhood()) != 0)
      return "bucket " + std::to_string(b) + " has bits beyond the neighborhood";
    for (unsigned o = 0; o < 32; ++o) {
      if (((bm >> o) & 1u) == 0) continue;
      const std::size_t i = (b + o) & (cap - 1);
      if (slots[i].key == empty) return "bucket " + std::to_string(b) + " names empty slot " + std::to_string(i);
      const auto k = from_bits<typename Ref::key_type>(slots[i].key);
      if (ref.home(k) != b) return "slot " + std::to_string(i) + " is named by bucket " + std::to_string(b) + " but homes elsewhere";
      if (named[i]++) return "slot " + std::to_string(i) + " is named twice";
    }
  }
  std::vector<decltype(Slot::key)> seen;
  for (std::size_t i = 0; i < cap; ++i) {
    if (slots[i].key == empty) continue;
    if (!named[i]) return "slot " + std::to_string(i) + " holds a key no bitmap names";
    ++keys;
    seen.push_back(slots[i].key);
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return "a key is stored twice";
  if (keys != size) return "table holds " + std::to_string(keys) + " keys but size() is " + std::to_string(size);
  return {};
}

}  // namespace warpkv::detail
