#pragma once
// The per-bucket hop word: 64 bits = [ version:30 | overflow:1 | lock:1 | bitmap:32 ].
//  - bitmap bit o set  <=> slot (bucket + o) holds a key whose home is this bucket;
//  - lock set          <=> one writer is moving an entry of this bucket, assigning a value, or
//                          placing or removing one of its keys in the stash;
//  - overflow set      <=> keys homed here may live in the stash (set with the first such key,
//                          cleared only by a rebuild of the table), so a lookup that misses in
//                          the neighborhood also searches the stash;
//  - version           increments with every change, so a reader that sees the same word
//                      before and after reading the slots saw a consistent neighborhood. 30 bits:
//                      a reader would have to stall through 2^30 changes of one bucket to be
//                      fooled (minutes of updates to that one bucket between two loads).
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv::detail::hop {

inline constexpr std::uint64_t lock_bit = 1ull << 32;
inline constexpr std::uint64_t overflow_bit = 1ull << 33;
inline constexpr int version_shift = 34;

WARPKV_HD constexpr std::uint32_t bitmap(std::uint64_t h) { return static_cast<std::uint32_t>(h); }
WARPKV_HD constexpr bool locked(std::uint64_t h) { return (h & lock_bit) != 0; }
WARPKV_HD constexpr bool overflowed(std::uint64_t h) { return (h & overflow_bit) != 0; }

/// The word that follows `h` with a new bitmap and lock state (version + 1, overflow kept).
WARPKV_HD constexpr std::uint64_t next(std::uint64_t h, std::uint32_t new_bitmap, bool lock) {
  const std::uint64_t version = (h >> version_shift) + 1;
  return (version << version_shift) | (h & overflow_bit) | (lock ? lock_bit : 0) | new_bitmap;
}

}  // namespace warpkv::detail::hop
