#pragma once
// warpkv::linear_map: the open-addressing map with linear probing (windows of TileSize slots,
// one after the other). Everything about it is open_addressing_map's: open_addressing_map.hpp,
// docs/design/open_addressing.md.
#include "warpkv/open_addressing/open_addressing_map.hpp"

namespace warpkv {

template <hash_key Key, map_value Value, int TileSize = 4, int LaneSlots = default_lane_slots<Key, Value, TileSize>>
using linear_map = open_addressing_map<Key, Value, linear_probing, TileSize, LaneSlots>;

}  // namespace warpkv
