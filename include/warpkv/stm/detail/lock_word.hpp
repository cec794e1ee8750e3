#pragma once
// The versioned lock word of one transactional object: 64 bits = [ version:63 | locked:1 ].
//  - version: opaque mode stores the global-clock value of the commit that last wrote the
//    object; baseline mode counts the object's commits. 63 bits cannot wrap in practice
//    (2^63 commits at 10^10 per second take 29 years), so there is no ABA on versions.
//  - locked: a committing transaction owns the object. The version bits keep the value from
//    before the lock, so an aborting owner restores the word exactly, and a reader that meets
//    a locked word can still tell whether the version it read is already gone.
#include <cstddef>
#include <cstdint>

#include "warpkv/core/config.hpp"

namespace warpkv::stm::detail {

inline constexpr std::uint64_t lock_bit = 1;

WARPKV_HD constexpr bool is_locked(std::uint64_t w) { return (w & lock_bit) != 0; }
WARPKV_HD constexpr std::uint64_t version_of(std::uint64_t w) { return w >> 1; }
WARPKV_HD constexpr std::uint64_t unlocked_word(std::uint64_t version) { return version << 1; }

// The heap's control words: [0] the clock word = clock value << 1 | serial flag (set while an
// escalated transaction runs alone), [1] next serial ticket, [2] ticket now served, [3] unused,
// then per queue stripe s: [4 + 2s] next ticket, [5 + 2s] ticket now served (contention
// queues: docs/design/stm.md). A commit adds clock_step; the clock value is the version the
// commit installs.
inline constexpr unsigned control_words = 4;
inline constexpr std::uint64_t serial_flag = 1;
inline constexpr std::uint64_t clock_step = 2;
WARPKV_HD constexpr std::uint64_t clock_value(std::uint64_t clock_word) { return clock_word >> 1; }

/// Contention-queue stripes of a heap of n objects: one per object up to 2^16, a power of two
/// (object id & (stripes - 1) picks the stripe), so small hot heaps queue per object and large
/// heaps, where conflicts are rare and spread, pay at most 1 MiB for the queue words.
WARPKV_HD constexpr std::size_t queue_stripes(std::size_t n) {
  std::size_t s = 1;
  while (s < n && s < (std::size_t{1} << 16)) s <<= 1;
  return s;
}

}  // namespace warpkv::stm::detail
