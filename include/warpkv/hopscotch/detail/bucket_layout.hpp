#pragma once
// Storage of the bucketized hopscotch layout ("H64", hopscotch_buckets; design and argument:
// docs/design/hopscotch_buckets.md): buckets of 64 bytes, one cache line each.
//   word 0     the header: hop:16 | digest:16 | lock:1 | overflow:1 | version:30
//              (the lock, overflow and version fields and their update rule are the slot layout's
//              hop word, detail/hop_word.hpp; its 32-bit "bitmap" holds hop and digest here)
//   words 1-7  slots: one packed 8-byte (key, value) word each (core/packed_pair.hpp), or a
//              reserved key: empty (value 0), tomb (an erased key; value 0), claimed (the
//              claiming insert's key as its value: a slow-path insert between its claim and its
//              store)
// Hop bit j (1 <= j <= 15) of bucket h: bucket h + j may hold keys whose home is h (external
// members); digest bit d(k) is set for every external member k of h. Overflow: keys homed at h
// may be in the stash.
// The stash: stash_buckets(B) more buckets after the B of the table, of the same shape (word 0
// unused, 0; words 1-7 slots), for keys that their neighbourhood cannot place (tried before
// displacement). Key k may sit in stash_window consecutive stash buckets from its stash hash,
// only while its home's overflow bit is set.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/packed_pair.hpp"
#include "warpkv/hopscotch/detail/hop_word.hpp"

namespace warpkv::detail {

/// One bucket: the header, then seven packed slots.
struct alignas(64) hop_bucket {
  std::uint64_t word[8];
};

namespace h64 {

inline constexpr unsigned words = 8;   ///< words of a bucket (word 0: the header)
inline constexpr unsigned slots = 7;   ///< slots of a bucket (words 1-7)
inline constexpr unsigned reach = 15;  ///< buckets after the home that may hold its external members
inline constexpr unsigned digest_shift = 16;
inline constexpr unsigned stash_window = 4;  ///< stash buckets a key may sit in (28 slots), read whole

/// Stash buckets of a table of `buckets` buckets (a power of two >= 64): 1/32 of them, at least
/// stash_window (so the stash holds 1/32 of the table's slots; 1/64 overflowed its windows at
/// LF 0.95 once keys went to the stash before displacement: docs/perf.md, session 26, call D).
WARPKV_HD constexpr std::size_t stash_buckets(std::size_t buckets) {
  return buckets / 32 > stash_window ? buckets / 32 : stash_window;
}

WARPKV_HD constexpr std::uint32_t hop_bits(std::uint64_t h) { return static_cast<std::uint32_t>(h) & 0xffffu; }
WARPKV_HD constexpr std::uint32_t digest(std::uint64_t h) { return (static_cast<std::uint32_t>(h) >> digest_shift) & 0xffffu; }
/// The header that follows `h` with these hop and digest bits and lock state (version + 1,
/// overflow kept): hop::next over the 32 low bits.
WARPKV_HD constexpr std::uint64_t next(std::uint64_t h, std::uint32_t hop, std::uint32_t dig, bool lock) {
  return hop::next(h, (hop & 0xffffu) | (dig << digest_shift), lock);
}

using pair = packed_pair<std::uint32_t, std::uint32_t>;

/// Lowest and highest set bit of a nonzero 64-bit mask (displacement's bucket sets).
WARPKV_HD inline unsigned lowest_bit(std::uint64_t m) {
#if WARPKV_DEVICE_PASS
  return static_cast<unsigned>(__ffsll(static_cast<long long>(m)) - 1);
#else
  return static_cast<unsigned>(std::countr_zero(m));
#endif
}
WARPKV_HD inline unsigned highest_bit(std::uint64_t m) {
#if WARPKV_DEVICE_PASS
  return 63u - static_cast<unsigned>(__clzll(static_cast<long long>(m)));
#else
  return 63u - static_cast<unsigned>(std::countl_zero(m));
#endif
}

/// Words a lane of a T-lane tile reads: lane r reads words r*W .. r*W + W - 1 (a 4-lane tile: 16
/// bytes per lane; one lane: the whole bucket; lanes past word 7 read nothing).
template <unsigned T>
inline constexpr unsigned words_per_lane = T >= words ? 1u : words / T;

/// Lane `rank` of a T-lane tile loads its words of bucket `b`: relaxed atomic loads, 16 bytes at a
/// time where a lane reads two or more words (each 8-byte word single-copy atomic: core's
/// load_relaxed_pair; the host backend's model of a lane's 16-byte read is two relaxed loads),
/// or, for a table nothing writes meanwhile (read_mode::quiescent), plain loads (16 bytes at a
/// time on the GPU). Words past the bucket read as `none`.
template <read_mode Reads, unsigned T>
WARPKV_HD inline void load_lane_words(hop_bucket& b, unsigned rank, std::uint64_t none,
                                      std::uint64_t (&w)[words_per_lane<T>]) {
  constexpr unsigned W = words_per_lane<T>;
  const unsigned first = rank * W;
  if (first >= words) {
    WARPKV_UNROLL
    for (unsigned i = 0; i < W; ++i) w[i] = none;
    return;
  }
  if constexpr (W % 2 == 0) {
    WARPKV_UNROLL
    for (unsigned i = 0; i < W; i += 2) load_pair<Reads>(&b.word[first + i], w[i], w[i + 1]);
  } else if constexpr (Reads == read_mode::quiescent) {
    WARPKV_UNROLL
    for (unsigned i = 0; i < W; ++i) w[i] = b.word[first + i];
  } else {
    WARPKV_UNROLL
    for (unsigned i = 0; i < W; ++i) w[i] = atomic_ref<std::uint64_t>(b.word[first + i]).load(memory_order::relaxed);
  }
}

}  // namespace h64
}  // namespace warpkv::detail
