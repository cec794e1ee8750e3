#pragma once
// The two synchronization words of kv_cache (argument: docs/design/cache.md).
//
//  - A per-bucket lock word that is also the bucket's version: even = free, odd = held. A writer
//    takes it by fetch_or(1) (acquire; in when the old word was even: a taken word is left as it
//    was) and releases it by adding 1 (release), so every hold of a bucket moves its word to the
//    next even value. Every operation that changes a bucket holds its lock; an operation on key k
//    takes both of k's buckets in ascending order (blocking), a cuckoo move takes any further
//    bucket only by try-lock, so no cycle of waits can form. The optimistic readers validate
//    against this word (slot_sync.hpp, optimistic_slots): unchanged and even = the bucket did not
//    change in between.
//  - Per slot, one 32-bit word (cache_slot_sync):
//    optimistic (default): unused (the readers validate against the bucket lock words);
//    rw_lock: the seed's reader/writer lock (CCHT section 4.4): 2 x (readers inside) + 1 while a
//      writer is inside. Writer: atomicMax(word, 1), in when it returned 0. Reader:
//      atomicAdd(word, 2), in when it returned an even word, else atomicSub(word, 2) and retry;
//      out by atomicSub(word, 2). The seed releases a writer by atomicExch(word, 0); that erases
//      the +2 of a reader that is about to take it back after seeing the odd word, and the word
//      then goes to -2 and admits a writer beside a reader (CacheSlotLock.SeedReleaseLosesReaders
//      replays it), so a writer here leaves by atomicSub(word, 1) -- the same as atomicExch(word,
//      0) whenever no reader is passing through.
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/config.hpp"

namespace warpkv::detail {

/// One attempt (acquire): true when the lock was taken (the word was even and is now odd). A
/// failed attempt leaves the word as it was (or-ing 1 into an odd word).
WARPKV_HD inline bool try_lock_bucket(std::uint32_t& word) {
  return (atomic_ref<std::uint32_t>(word).fetch_or(1u, memory_order::acquire) & 1u) == 0;
}

/// Spins until the bucket lock is taken (acquire).
WARPKV_HD inline void lock_bucket(std::uint32_t& word) {
  for (int attempt = 0; !try_lock_bucket(word); ++attempt) backoff(attempt);
}

/// Releases a held bucket lock (release): the word goes to the next even value.
WARPKV_HD inline void unlock_bucket(std::uint32_t& word) { atomic_ref<std::uint32_t>(word).fetch_add(1u, memory_order::release); }
/// Releases a bucket lock under which nothing was written (relaxed: nothing to publish; what was
/// read under it is discarded, or decides only a deferral to a later pass).
WARPKV_HD inline void unlock_bucket_unwritten(std::uint32_t& word) { atomic_ref<std::uint32_t>(word).fetch_add(1u, memory_order::relaxed); }

// ---- the seed's per-slot reader/writer lock (rw_lock mode) ----------------------------------
/// One attempt of a writer: true when it is in (the word was 0 and is now 1).
WARPKV_HD inline bool try_write_lock_slot(std::uint32_t& word) {
  return atomic_ref<std::uint32_t>(word).fetch_max(1u, memory_order::acquire) == 0;
}
WARPKV_HD inline void write_lock_slot(std::uint32_t& word) {
  for (int attempt = 0; !try_write_lock_slot(word); ++attempt) backoff(attempt);
}
WARPKV_HD inline void write_unlock_slot(std::uint32_t& word) {
  atomic_ref<std::uint32_t>(word).fetch_sub(1u, memory_order::release);
}
/// One attempt of a reader: true when it is in; false leaves the word as it was.
WARPKV_HD inline bool try_read_lock_slot(std::uint32_t& word) {
  atomic_ref<std::uint32_t> w(word);
  if ((w.fetch_add(2u, memory_order::acquire) & 1u) == 0) return true;
  w.fetch_sub(2u, memory_order::relaxed);  // a writer is inside: take the +2 back
  return false;
}
WARPKV_HD inline void read_lock_slot(std::uint32_t& word) {
  for (int attempt = 0; !try_read_lock_slot(word); ++attempt) backoff(attempt);
}
WARPKV_HD inline void read_unlock_slot(std::uint32_t& word) {
  atomic_ref<std::uint32_t>(word).fetch_sub(2u, memory_order::release);
}

WARPKV_HD inline std::uint64_t load_word(const std::uint64_t& w) {
  return atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(w)).load(memory_order::relaxed);
}
WARPKV_HD inline void store_word(std::uint64_t& w, std::uint64_t v) {
  atomic_ref<std::uint64_t>(w).store(v, memory_order::relaxed);
}

/// 64 x 64 -> high 64 bits: maps a hash onto [0, n) without a division (identical on both backends).
WARPKV_HD inline std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
#if WARPKV_DEVICE_PASS
  return __umul64hi(a, b);
#else
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
#endif
}

}  // namespace warpkv::detail
