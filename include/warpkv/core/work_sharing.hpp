#pragma once
// GLHT's warp-cooperative work sharing, for the bulk batches and for user kernels alike: every
// lane of a tile may hold an operation of its own; the tile serves the lanes that hold one in
// turn, lowest lane first, each with all of its lanes (so a map operation gets the whole tile's
// cooperation while no lane's operation waits for a tile of its own).
#include <cstdint>

#include "warpkv/core/config.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

/// Every lane of `t` calls it; `mine` says whether the lane holds an operation. `serve(owner)`
/// then runs on every lane once per lane that holds one, `owner` being that lane's rank: the
/// lanes broadcast the owner's operands with t.shfl(x, owner), call the ref's method together,
/// and the owner keeps the result. With a one-lane tile it is a plain call when `mine`.
template <class Tile, class Serve>
WARPKV_HD void serve_each(const Tile& t, bool mine, Serve&& serve) {
  std::uint32_t pending = t.ballot(mine);
  while (pending != 0) {
    const int lane = lowest_lane(pending);
    pending &= pending - 1;
    serve(static_cast<unsigned>(lane));
  }
}

}  // namespace warpkv
