#pragma once
// The stash: a small side table, after the slot array, for the rare key that hopscotch cannot
// place within its neighborhood (every hole in reach is stuck). Without it a table with H = 32
// blocks near load 0.81-0.88 and must double; with it the table fills past 0.95 (docs/perf.md,
// "hopscotch_map: the stash"). A key homed at bucket b lives in the stash only while b's hop word
// has its overflow flag set, so lookups elsewhere never look there.
#include <cstddef>

#include "warpkv/core/config.hpp"

namespace warpkv::detail {

/// Slots a key may occupy in the stash: a window of this many consecutive slots from its stash
/// hash (searched whole, so erase needs no tombstones).
inline constexpr unsigned stash_window = 32;

/// Stash slots of a table of `capacity` (a power of two >= 64): 1/64 of it, at least 64. A
/// sequential fill of 2^22 slots puts 0.2% of its keys there by load 0.95 (a third of this).
WARPKV_HD constexpr std::size_t stash_slots(std::size_t capacity) { return capacity / 64 > 64 ? capacity / 64 : 64; }

}  // namespace warpkv::detail
