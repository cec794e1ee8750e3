#pragma once
// One table of cpu::hopscotch_map: the slot arrays, the hop words of the buckets, and the lock
// segments with their timestamps and entry counts. The operations live in hopscotch_map.hpp;
// docs/design/cpu_hopscotch.md states the invariants.
//
// Layout: `buckets` (a power of two) home buckets, followed by a tail of `probe` slots, so a probe
// from any bucket runs forward without wrapping around. Every slot index s belongs to lock
// segment s >> segment_shift. Because probes never wrap, a writer that locks the segments it
// crosses in increasing order can never deadlock with another.
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/hash.hpp"

namespace warpkv::cpu::detail {

/// Lock, timestamp and entry count of a run of slots. The lock serialises writers; the timestamp
/// is bumped whenever an entry homed in this segment is moved or removed, so that a lock-free
/// find can tell that what it read may be stale; `count` is the number of entries homed here.
struct segment {
  std::atomic<std::uint32_t> lock{0};
  std::atomic<std::uint64_t> timestamp{0};
  std::atomic<std::int64_t> count{0};
};

template <class KeyBits, class ValueBits>
struct table {
  std::size_t buckets;    ///< home buckets (power of two)
  std::size_t probe;      ///< slots an insert may search forward for a free one (the tail length)
  unsigned neighborhood;  ///< H: an entry sits at most H - 1 slots after its home bucket
  unsigned segment_shift; ///< log2(slots per segment)
  std::uint64_t seed;
  std::unique_ptr<KeyBits[]> keys;           ///< buckets + probe slots; empty_key when free
  std::unique_ptr<ValueBits[]> values;
  std::unique_ptr<std::uint32_t[]> hops;     ///< per bucket: bit d set = slot bucket+d holds an entry homed here
  std::unique_ptr<segment[]> segments;
  std::size_t num_segments;

  table(std::size_t buckets_, std::size_t probe_, unsigned h, unsigned shift, std::uint64_t seed_, KeyBits empty)
      : buckets(buckets_), probe(probe_), neighborhood(h), segment_shift(shift), seed(seed_) {
    const std::size_t n = slots();
    // nothrow allocations: a table too large for memory is an error (errc::out_of_memory), also
    // under sanitizers whose allocators abort on a failing throwing new.
    keys.reset(new (std::nothrow) KeyBits[n]);
    values.reset(keys ? new (std::nothrow) ValueBits[n]() : nullptr);
    hops.reset(values ? new (std::nothrow) std::uint32_t[buckets]() : nullptr);
    num_segments = ((n - 1) >> segment_shift) + 1;
    segments.reset(hops ? new (std::nothrow) segment[num_segments] : nullptr);
    if (!segments)
      throw error(errc::out_of_memory, "warpkv: cpu::hopscotch_map cannot allocate " + std::to_string(n) + " slots");
    for (std::size_t i = 0; i < n; ++i) keys[i] = empty;
  }

  [[nodiscard]] std::size_t slots() const { return buckets + probe; }
  [[nodiscard]] std::size_t home(KeyBits k) const { return static_cast<std::size_t>(hash_bits(k, seed)) & (buckets - 1); }
  [[nodiscard]] segment& seg_of(std::size_t slot) const { return segments[slot >> segment_shift]; }
  [[nodiscard]] std::size_t seg_index(std::size_t slot) const { return slot >> segment_shift; }

  // Every access to a slot or hop word is atomic: lock-free finds read them while writers write.
  [[nodiscard]] atomic_ref<KeyBits> key(std::size_t s) const { return atomic_ref<KeyBits>(keys[s]); }
  [[nodiscard]] atomic_ref<ValueBits> value(std::size_t s) const { return atomic_ref<ValueBits>(values[s]); }
  [[nodiscard]] atomic_ref<std::uint32_t> hop(std::size_t b) const { return atomic_ref<std::uint32_t>(hops[b]); }

  [[nodiscard]] std::int64_t entries() const {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < num_segments; ++i) n += segments[i].count.load(std::memory_order_relaxed);
    return n;
  }
};

/// A test-and-test-and-set spin lock on a segment's lock word; yields while it waits (the CI
/// machine runs more threads than cores).
inline void lock_segment(segment& s) {
  for (;;) {
    std::uint32_t expected = 0;
    if (s.lock.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
    for (int spin = 0; s.lock.load(std::memory_order_relaxed) != 0; ++spin) {
      if (spin >= 64) std::this_thread::yield();
    }
  }
}
inline void unlock_segment(segment& s) { s.lock.store(0, std::memory_order_release); }

}  // namespace warpkv::cpu::detail
