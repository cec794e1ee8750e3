#pragma once
// Whole-table passes of the open-addressing maps beyond the shared ones (core/table_passes.hpp):
// clear the ready bits, validate. They run between batches, never concurrently with operations
// on the same table.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpkv/core/key_value.hpp"
#include "warpkv/core/table_passes.hpp"
#include "warpkv/open_addressing/open_addressing_ref.hpp"

namespace warpkv::detail {

/// Index i: ready word i is cleared (no slot of its 32 is published).
struct clear_ready_fn {
  std::uint32_t* words;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    words[i] = 0;
  }
};

/// Host-side structural check of a quiescent table (the invariants of docs/design/open_addressing.md):
/// a slot's ready bit is set iff it holds a key or a tombstone (no insert is half-done), no live
/// key appears twice, every live key lies within the first max_windows() windows of its probe
/// sequence with no empty slot before it (so every operation on it reaches it), and the table
/// holds `size` live keys and `tombstones` tombstones.
template <class Ref>
std::string validate_open_table(const Ref& ref, const std::vector<typename Ref::slot_type>& slots,
                                const std::vector<std::uint32_t>& ready, std::size_t size, std::size_t tombstones) {
  using key_bits = typename Ref::key_bits;
  const std::size_t cap = slots.size();
  const key_bits empty = to_bits(ref.empty_key());
  const key_bits erased = to_bits(ref.erased_key());
  std::size_t live = 0, dead = 0;
  std::vector<key_bits> keys;
  for (std::size_t i = 0; i < cap; ++i) {
    const key_bits k = slots[i].key;
    // Packed tables have no ready bitmap (a pair is published by the CAS that writes it).
    const bool is_ready =
        ready.empty() ? k != empty : ((ready[i / ready_bits_per_word] >> (i % ready_bits_per_word)) & 1u) != 0;
    if (is_ready != (k != empty))
      return "slot " + std::to_string(i) + (is_ready ? " is empty but marked ready" : " holds a key never published");
    if (k == empty) continue;
    if (k == erased) {
      ++dead;
      continue;
    }
    ++live;
    keys.push_back(k);
    auto seq = ref.sequence(from_bits<typename Ref::key_type>(k));
    bool reached = false;
    for (std::size_t j = 0; j < ref.max_windows() && !reached; ++j, seq.next()) {
      for (unsigned r = 0; r < static_cast<unsigned>(Ref::window) && !reached; ++r) {
        const std::size_t s = seq.probe_slot(r);
        if (s == i) reached = true;
        else if (slots[s].key == empty) return "slot " + std::to_string(i) + ": an empty slot precedes it in its probe sequence";
      }
    }
    if (!reached) return "slot " + std::to_string(i) + " lies beyond its key's probe limit";
  }
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) return "a key is stored twice";
  if (live != size) return "table holds " + std::to_string(live) + " keys but size() is " + std::to_string(size);
  if (dead != tombstones)
    return "table holds " + std::to_string(dead) + " tombstones but the map counted " + std::to_string(tombstones);
  return {};
}

}  // namespace warpkv::detail
