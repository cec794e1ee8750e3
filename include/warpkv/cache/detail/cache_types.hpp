#pragma once
// The plain types every part of the cache shares: the operation clock, the storage arrays, the
// eviction report, the design axes' run-time names (cache_config's fields) and the occupancy
// shards. No algorithm here.
#include <cstddef>
#include <cstdint>

namespace warpkv {

/// The clock of one operation: recency stamp and current time (for expiry; 0 = entries never expire).
/// `touch_below`: a hit refreshes an entry's recency stamp (lru, random) only while that stamp is
/// below this. The bulk API passes the batch's first stamp: the operations of a batch are
/// concurrent, so their order among themselves is free, and an entry already refreshed by this
/// batch needs no second store (a hot key's hits then stop storing to one word from thousands of
/// lanes). The default refreshes on every hit with a newer stamp.
/// `epoch`: the cache-wide epoch (kv_cache::set_global_epoch) that the epoch policies
/// (epoch_lru, epoch_lfu) put in a score's high 32 bits; the other policies ignore it.
struct cache_clock {
  std::uint64_t stamp = 0;
  std::uint64_t now = 0;
  std::uint64_t touch_below = ~0ull;
  std::uint64_t epoch = 0;
};

/// The two candidate buckets of a key (distinct whenever there are at least two buckets).
struct cache_bucket_pair {
  std::size_t first, second;
};

/// Counters of filled slots: this many shards, each in its own 32-byte sector (every 4th word),
/// so that inserts into empty slots spread their atomics over the L2 slices instead of meeting on
/// one address. A slot of bucket b counts in shard b mod occupancy_shards.
inline constexpr std::size_t occupancy_shards = 64;
inline constexpr std::size_t occupancy_stride = 4;
/// The cuckoo gate word of the batch write phase's fast pass (bucket_view::kick_gate_closed), in
/// the sector after the shards: the occupancy array holds occupancy_words words.
inline constexpr std::size_t kick_gate_index = occupancy_shards * occupancy_stride;
inline constexpr std::size_t occupancy_words = kick_gate_index + occupancy_stride;
/// The kick gate word's values (bucket_view::kick_gate): open (0, also after clear()), closed, near.
inline constexpr std::uint64_t kick_gate_open_word = 0, kick_gate_closed_word = 1, kick_gate_near_word = 2;
/// The first-bucket word (bucket_view::first_bucket_writes), beside the kick gate word in its
/// sector: nonzero while the batch's fast write pass may hold a key's first bucket's lock alone
/// (the gate pass sets it when the table, with the whole batch inserted, stays at most
/// first_bucket_load_eighths / 8 full; 0 after clear(): the two-lock path).
inline constexpr std::size_t first_bucket_gate_index = kick_gate_index + 1;
inline constexpr std::size_t first_bucket_load_eighths = 5;

/// Where set/add/get_or_set report an entry they evicted (any pointer may be null).
template <class Key>
struct cache_eviction {
  Key* key = nullptr;
  std::uint64_t* value = nullptr;  ///< value_words() words
  std::uint8_t* flag = nullptr;    ///< 1 when this operation evicted a live entry, else 0
};

/// What accum_or_assign does per key (HierarchicalKV's accum_or_assigns flags: true is
/// accumulate_only, false insert_only; without flags, accumulate_or_insert): accumulate into a
/// live entry and/or insert an absent key with the operation's vector as its value.
enum class accum_kind : std::uint8_t { accumulate_or_insert = 0, accumulate_only = 1, insert_only = 2 };

/// Which live entry an insert into two full buckets replaces, among the 2 x BucketWidth
/// candidates: lru, the least recently used (by recency stamps); random, any of them (the seed's
/// "random CHT", for comparison); clock, second chance: a hit sets the slot's reference bit (and
/// writes nothing when it is already set), an insert sweeps the candidates from a position drawn
/// from the operation's stamp, clearing set bits, and evicts the first candidate found clear.
/// The score policies (HierarchicalKV's kLfu, kEpochLru, kEpochLfu, kCustomized; the smallest
/// score is evicted): lfu, an access count; epoch_lru, (epoch << 32) | the stamp's low 32 bits;
/// epoch_lfu, (epoch << 32) | a saturating 32-bit count; custom, the caller's scores.
/// The policy types: detail/eviction_policy.hpp. cache_designs::by_config compiles the first
/// three only; the score policies are fixed designs (cache_designs::optimistic_lfu, ...).
enum class cache_eviction_policy : std::uint8_t { lru = 0, random = 1, clock = 2, lfu = 3, epoch_lru = 4, epoch_lfu = 5, custom = 6 };

/// How readers and writers of a slot synchronize (detail/slot_protocol.hpp): optimistic, per-slot
/// versions validated by readers that never write (default); rw_lock, the seed's per-slot
/// reader/writer lock (atomicMax / atomicAdd / atomicSub), kept to measure the seed's design.
enum class cache_slot_sync : std::uint8_t { optimistic = 0, rw_lock = 1 };

/// Where a slot's value words live: value_slab, a separate slot-major array (a key's words and
/// its value are in different arrays); inline_values, right after the key words in one record
/// per slot (a hit's key and value share cache lines). A layout trial, measured by warpkv-bench.
/// The policy types: detail/bucket_view.hpp.
enum class cache_layout : std::uint8_t { value_slab = 0, inline_values = 1 };

/// Storage of a cache (all in the backend's memory), slot-major.
struct cache_storage {
  std::uint64_t* keys = nullptr;      ///< slot s's key words at keys + s x key_stride; the last is its tag
  std::uint64_t* values = nullptr;    ///< slot s's value words at values + s x value_stride
  std::uint32_t* versions = nullptr;  ///< per slot: the seed's reader/writer lock (rw_lock); null for optimistic
  std::uint64_t* stamps = nullptr;    ///< last access stamp per slot (advisory, for LRU)
  std::uint64_t* expires = nullptr;   ///< expiry time per slot, 0 = never
  std::uint32_t* locks = nullptr;     ///< one writer lock per bucket
  unsigned long long* occupied = nullptr;  ///< slots holding an entry (live or expired): occupancy_shards shards, occupancy_stride apart, then the kick gate word
  std::uint32_t* moves = nullptr;     ///< rw_lock only: per bucket, odd while a cuckoo move into or out of it runs
  std::size_t key_stride = 0;         ///< words from one slot's key to the next's (0: the key words)
  std::size_t value_stride = 0;       ///< words from one slot's value to the next's (0: the value words)
  /// Key digests (cache_config::key_digests; null: none): one byte per slot, 8 slots per 64-bit
  /// word (slot s in byte s mod 8 of word s / 8), 0 for an empty slot, else 1..255 from the key's
  /// hash. A reader compares a slot's key words only where the digest matches: a bucket's
  /// digests are one or a few words where its keys are W x key words.
  std::uint64_t* digests = nullptr;
};

}  // namespace warpkv
