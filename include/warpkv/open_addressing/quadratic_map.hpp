#pragma once
// warpkv::quadratic_map: the open-addressing map with quadratic probing (windows of TileSize
// slots at triangular distances 0, 1, 3, 6, ... windows from home, which visit the whole table).
// Everything about it is open_addressing_map's: open_addressing_map.hpp,
// docs/design/open_addressing.md.
#include "warpkv/open_addressing/open_addressing_map.hpp"

namespace warpkv {

template <hash_key Key, map_value Value, int TileSize = 4, int LaneSlots = default_lane_slots<Key, Value, TileSize>>
using quadratic_map = open_addressing_map<Key, Value, quadratic_probing, TileSize, LaneSlots>;

}  // namespace warpkv
