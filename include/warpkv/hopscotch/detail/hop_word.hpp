#pragma once
// The per-bucket hop word: 64 bits = [ version:31 | lock:1 | bitmap:32 ].
//  - bitmap bit o set  <=> slot (bucket + o) holds a key whose home is this bucket;
//  - lock set          <=> one writer is moving an entry of this bucket or assigning a value;
//  - version           increments with every change, so a reader that sees the same word
//                      before and after reading the slots saw a consistent neighborhood.
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv::detail::hop {

inline constexpr std::uint64_t lock_bit = 1ull << 32;
inline constexpr int version_shift = 33;

WARPKV_HD constexpr std::uint32_t bitmap(std::uint64_t h) { return static_cast<std::uint32_t>(h); }
WARPKV_HD constexpr bool locked(std::uint64_t h) { return (h & lock_bit) != 0; }

/// The word that follows `h` with a new bitmap and lock state (version + 1).
WARPKV_HD constexpr std::uint64_t next(std::uint64_t h, std::uint32_t new_bitmap, bool lock) {
  const std::uint64_t version = (h >> version_shift) + 1;
  return (version << version_shift) | (lock ? lock_bit : 0) | new_bitmap;
}

}  // namespace warpkv::detail::hop
