#pragma once
// Whole-table check of the hopscotch map (initialise, re-insert and collect are the shared
// passes of core/table_passes.hpp). It runs between batches, never concurrently with operations.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpkv/core/key_value.hpp"
#include "warpkv/core/table_passes.hpp"
#include "warpkv/hopscotch/detail/hop_word.hpp"
#include "warpkv/hopscotch/detail/stash.hpp"

namespace warpkv::detail {

/// Host-side structural check of a quiescent table (`slots`: the table, then its stash): every
/// bitmap bit names a slot holding a key homed at that bucket, every key in the table is named by
/// exactly one bit, every stash key sits in its stash window and its home bucket has the overflow
/// flag, no lock is held, no slot is claimed, no key appears twice, and the number of keys is `size`.
template <class Ref, class Slot>
std::string validate_table(const Ref& ref, const std::vector<Slot>& slots, std::size_t size) {
  const std::size_t cap = ref.capacity();
  if (slots.size() != Ref::storage_slots(cap)) return "storage holds " + std::to_string(slots.size()) + " slots, expected " +
                                                      std::to_string(Ref::storage_slots(cap));
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
  const std::size_t stash = slots.size() - cap;
  for (std::size_t j = 0; j < stash; ++j) {
    const auto kb = Ref::stored_key(slots[cap + j]);
    if (kb == empty) continue;
    const std::string where = "stash slot " + std::to_string(j);
    if (kb == claimed) return where + " is still claimed between batches";
    const auto k = from_bits<typename Ref::key_type>(kb);
    if (((j - ref.stash_home(k)) & (stash - 1)) >= stash_window) return where + " lies outside its key's stash window";
    if (!hop::overflowed(slots[ref.home(k)].meta)) return where + " holds a key whose home bucket has no overflow flag";
    ++keys;
    seen.push_back(kb);
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return "a key is stored twice";
  if (keys != size) return "table holds " + std::to_string(keys) + " keys but size() is " + std::to_string(size);
  return {};
}

}  // namespace warpkv::detail
