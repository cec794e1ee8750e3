#pragma once
// cache_ref: the device-side view of a warpkv::kv_cache, for user kernels and for the cache's own
// bulk API. Every lane of a tile of TileSize lanes calls the same method with the same arguments
// and gets the same result; a bucket of BucketWidth slots is read by the tile, BucketWidth /
// TileSize slots per lane.
//
// Guarantees (argument and linearization points: docs/design/cache.md):
//  - get/contains never return a torn value or a value the key did not hold at some instant
//    during the call. With cache_slot_sync::optimistic (default) they write no shared memory but
//    an advisory recency word; with rw_lock they take the seed's per-slot reader locks;
//  - set/add/erase/get_or_set's insert hold the key's two bucket locks (ascending order), so a
//    key is never stored twice; a value is written inside its slot's odd version window;
//  - an insert into two full buckets first looks for room by cuckoo moves (at most max_kicks
//    displacement steps, and only while fewer than kick_slots slots are filled), else evicts the
//    eviction policy's choice among the two buckets' entries (lru: least recently stamped;
//    random; clock: second chance; an expired entry goes first), reporting the evicted key and
//    value when asked.
// The caller supplies the clock: `stamp` orders recency (larger = more recent; the bulk API uses
// a batch base plus the operation's index) and `now` is compared with entries' expiry times.
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_keys.hpp"
#include "warpkv/cache/detail/slot_protocol.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

/// The clock of one operation: recency stamp and current time (for expiry; 0 = entries never expire).
/// `touch_below`: a hit refreshes an entry's recency stamp (lru, random) only while that stamp is
/// below this. The bulk API passes the batch's first stamp: the operations of a batch are
/// concurrent, so their order among themselves is free, and an entry already refreshed by this
/// batch needs no second store (a hot key's hits then stop storing to one word from thousands of
/// lanes). The default refreshes on every hit with a newer stamp.
struct cache_clock {
  std::uint64_t stamp = 0;
  std::uint64_t now = 0;
  std::uint64_t touch_below = ~0ull;
};

/// Counters of filled slots: this many shards, each in its own 32-byte sector (every 4th word),
/// so that inserts into empty slots spread their atomics over the L2 slices instead of meeting on
/// one address. A slot of bucket b counts in shard b mod occupancy_shards.
inline constexpr std::size_t occupancy_shards = 64;
inline constexpr std::size_t occupancy_stride = 4;

/// Where set/add/get_or_set report an entry they evicted (any pointer may be null).
template <class Key>
struct cache_eviction {
  Key* key = nullptr;
  std::uint64_t* value = nullptr;  ///< value_words() words
  std::uint8_t* flag = nullptr;    ///< 1 when this operation evicted a live entry, else 0
};

/// Which live entry an insert into two full buckets replaces, among the 2 x BucketWidth
/// candidates: lru, the least recently used (by recency stamps); random, any of them (the seed's
/// "random CHT", for comparison); clock, second chance: a hit sets the slot's reference bit (and
/// writes nothing when it is already set), an insert sweeps the candidates from a position drawn
/// from the operation's stamp, clearing set bits, and evicts the first candidate found clear.
enum class cache_eviction_policy : std::uint8_t { lru = 0, random = 1, clock = 2 };

/// How readers and writers of a slot synchronize (detail/slot_protocol.hpp): optimistic, per-slot
/// versions validated by readers that never write (default); rw_lock, the seed's per-slot
/// reader/writer lock (atomicMax / atomicAdd / atomicSub), kept to measure the seed's design.
enum class cache_slot_sync : std::uint8_t { optimistic = 0, rw_lock = 1 };

/// Where a slot's value words live: value_slab, a separate slot-major array (a key's words and
/// its value are in different arrays); inline_values, right after the key words in one record
/// per slot (a hit's key and value share cache lines). A layout trial, measured by warpkv-bench.
enum class cache_layout : std::uint8_t { value_slab = 0, inline_values = 1 };

/// Storage of a cache (all in the backend's memory), slot-major.
struct cache_storage {
  std::uint64_t* keys = nullptr;      ///< slot s's key words at keys + s x key_stride; the last is its tag
  std::uint64_t* values = nullptr;    ///< slot s's value words at values + s x value_stride
  std::uint32_t* versions = nullptr;  ///< per slot: a seqlock (optimistic) or the seed's reader/writer lock (rw_lock)
  std::uint64_t* stamps = nullptr;    ///< last access stamp per slot (advisory, for LRU)
  std::uint64_t* expires = nullptr;   ///< expiry time per slot, 0 = never
  std::uint32_t* locks = nullptr;     ///< one writer lock per bucket
  unsigned long long* occupied = nullptr;  ///< slots holding an entry (live or expired): occupancy_shards shards, occupancy_stride apart
  std::uint32_t* moves = nullptr;     ///< rw_lock only: per bucket, odd while a cuckoo move into or out of it runs
  std::size_t key_stride = 0;         ///< words from one slot's key to the next's (0: the key words)
  std::size_t value_stride = 0;       ///< words from one slot's value to the next's (0: the value words)
  /// Key digests (cache_config::key_digests; null: none): one byte per slot, 8 slots per 64-bit
  /// word (slot s in byte s mod 8 of word s / 8), 0 for an empty slot, else 1..255 from the key's
  /// hash. A reader compares a slot's key words only where the digest matches: a bucket's
  /// digests are one or a few words where its keys are W x key words.
  std::uint64_t* digests = nullptr;
};

template <class Key, int BucketWidth = 4, int TileSize = BucketWidth>
class cache_ref {
  static_assert(valid_tile_size<TileSize>, "tile size must be 1, 2, 4, 8, 16 or 32");
  static_assert(BucketWidth >= TileSize && BucketWidth % TileSize == 0 && BucketWidth <= 64,
                "bucket width must be a multiple of the tile size, at most 64");

 public:
  using key_type = Key;
  using layout = cache_key_layout<Key>;
  static constexpr int bucket_width = BucketWidth;
  static constexpr int tile_size = TileSize;
  static constexpr int key_words = layout::words;
  static constexpr int per_lane = BucketWidth / TileSize;  // slots of one bucket per lane
  static constexpr int max_path = 8;                       // depth of one cuckoo walk
  static constexpr std::size_t npos = ~std::size_t{0};

  cache_ref() = default;
  /// `kick_slots`: cuckoo moves are tried only while fewer slots than this are filled.
  cache_ref(cache_storage s, std::size_t buckets, std::uint32_t value_words, std::uint64_t seed, std::uint32_t max_kicks,
            std::size_t kick_slots, cache_eviction_policy policy = cache_eviction_policy::lru,
            cache_slot_sync sync = cache_slot_sync::optimistic)
      : s_(s),
        buckets_(buckets),
        value_words_(value_words),
        seed_(seed),
        max_kicks_(max_kicks),
        kick_slots_(kick_slots),
        policy_(policy),
        sync_(sync) {
    if (s_.key_stride == 0) s_.key_stride = key_words;
    if (s_.value_stride == 0) s_.value_stride = value_words;
  }

  WARPKV_HD std::size_t buckets() const { return buckets_; }
  WARPKV_HD std::size_t slots() const { return buckets_ * BucketWidth; }
  WARPKV_HD std::uint32_t value_words() const { return value_words_; }
  WARPKV_HD const cache_storage& storage() const { return s_; }
  WARPKV_HD cache_eviction_policy eviction() const { return policy_; }
  WARPKV_HD cache_slot_sync slot_sync() const { return sync_; }

  /// The two candidate buckets of a key (distinct whenever there are at least two buckets).
  struct bucket_pair {
    std::size_t first, second;
  };
  WARPKV_HD bucket_pair buckets_of(const Key& k) const {
    std::uint64_t w[key_words];
    layout::to_words(k, w);
    return pair_of(w);
  }

  // ---- operations ------------------------------------------------------------------------
  /// found (value copied to `out`, recency refreshed) or not_found; invalid_key for a sentinel.
  template <class Tile>
  WARPKV_HD status get(const Tile& t, const Key& k, std::uint64_t* out, cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    return lookup(t, q, pair_of(q), c, out, true) != npos ? status::found : status::not_found;
  }

  /// found / not_found; does not refresh recency.
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, const Key& k, cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    return lookup(t, q, pair_of(q), c, nullptr, false) != npos ? status::found : status::not_found;
  }

  /// Insert or assign: inserted (the key was absent or expired) or assigned.
  template <class Tile>
  WARPKV_HD status set(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t expires, cache_clock c,
                       cache_eviction<Key> ev = {}) const {
    return write_op(t, k, value, expires, c, ev, mode::set, nullptr);
  }

  /// Insert if absent: inserted, or found (the live entry is left as it is).
  template <class Tile>
  WARPKV_HD status add(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t expires, cache_clock c,
                       cache_eviction<Key> ev = {}) const {
    return write_op(t, k, value, expires, c, ev, mode::add, nullptr);
  }

  /// Cache-aside: found (the cached value in `out`, recency refreshed), or inserted (`value`
  /// inserted and copied to `out`). `out` may be null. A null `value` in set/add/get_or_set
  /// leaves an inserted entry's value words as they were (unspecified bytes).
  template <class Tile>
  WARPKV_HD status get_or_set(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t* out,
                              std::uint64_t expires, cache_clock c, cache_eviction<Key> ev = {}) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    if (lookup(t, q, pair_of(q), c, out, true) != npos) return status::found;  // lock-free hit path
    return write_op(t, k, value, expires, c, ev, mode::get_or_set, out);
  }

  /// erased (a live entry was removed) or not_found (absent or expired; an expired one is dropped).
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, const Key& k, cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    const bucket_pair p = pair_of(q);
    lock_pair(t, p);
    const scan_result r = locked_scan(t, q, p, c);
    status st = status::not_found;
    if (r.hit != npos) {
      clear_slot(t, r.hit);
      count_occupied(t, r.hit, ~0ull);
      if (!r.hit_expired) st = status::erased;
    }
    unlock_pair(t, p);
    return st;
  }

  // ---- slot access for whole-table passes (between batches) --------------------------------
  WARPKV_HD bool slot_empty(std::size_t slot) const { return detail::load_word(key_word(slot, key_words - 1)) == layout::empty_tag; }
  WARPKV_HD bool slot_expired(std::size_t slot, std::uint64_t now) const {
    if (now == 0) return false;  // no clock: nothing expires (and the expiry word need not be read)
    const std::uint64_t e = detail::load_word(s_.expires[slot]);
    return e != 0 && e <= now;
  }
  WARPKV_HD const std::uint64_t* slot_value(std::size_t slot) const { return value_at(slot); }
  /// Slots holding an entry (live or expired) by the sharded count the cuckoo gate reads: the
  /// shards summed (independent loads; exact between batches, an estimate while inserts run).
  WARPKV_HD std::size_t occupied_slots() const {
    unsigned long long n = 0;
    for (std::size_t k = 0; k < occupancy_shards; ++k)
      n += atomic_ref<unsigned long long>(s_.occupied[k * occupancy_stride]).load(memory_order::relaxed);
    return static_cast<std::size_t>(n);
  }
  WARPKV_HD Key slot_key(std::size_t slot) const {
    std::uint64_t w[key_words];
    for (int j = 0; j < key_words; ++j) w[j] = detail::load_word(key_word(slot, j));
    return layout::from_words(w);
  }

 private:
  enum class mode { set, add, get_or_set };

  struct scan_result {
    std::size_t hit = npos;   // slot holding the key
    bool hit_expired = false;
    std::size_t free = npos;  // first empty slot
    std::size_t stale = npos; // first expired slot (of another key)
    std::size_t victim = npos;  // the eviction policy's choice among the live candidates
    std::uint64_t victim_rank = ~0ull;
  };

  WARPKV_HD std::uint64_t& key_word(std::size_t slot, int j) const { return s_.keys[slot * s_.key_stride + static_cast<std::size_t>(j)]; }
  WARPKV_HD std::uint64_t* value_at(std::size_t slot) const { return s_.values + slot * s_.value_stride; }

  WARPKV_HD bucket_pair pair_of(const std::uint64_t* q) const {
    const std::size_t a = static_cast<std::size_t>(detail::mul_high(layout::hash(q, seed_), buckets_));
    std::size_t b = static_cast<std::size_t>(detail::mul_high(layout::hash(q, seed_ ^ 0x5bd1e9955bd1e995ull), buckets_));
    if (b == a && buckets_ > 1) b = a + 1 == buckets_ ? 0 : a + 1;
    return {a, b};
  }
  /// Lane-local slot i (0 .. 2*per_lane-1) of the pair: first bucket then second.
  template <class Tile>
  WARPKV_HD std::size_t lane_slot(const Tile& t, const bucket_pair& p, int i) const {
    const std::size_t b = i < per_lane ? p.first : p.second;
    return b * BucketWidth + static_cast<std::size_t>((i % per_lane) * TileSize) + t.thread_rank();
  }
  /// The digest of key words q: 1..255 (0 marks an empty slot).
  WARPKV_HD std::uint32_t digest_of(const std::uint64_t* q) const {
    return 1u + static_cast<std::uint32_t>(layout::hash(q, seed_ ^ 0x94d049bb133111ebull) % 255u);
  }
  WARPKV_HD std::uint32_t slot_digest(std::size_t slot) const {
    const std::uint64_t w = atomic_ref<std::uint64_t>(s_.digests[slot / 8]).load(memory_order::relaxed);
    return static_cast<std::uint32_t>(w >> (8 * (slot % 8))) & 0xffu;
  }
  /// Sets a slot's digest byte (lane 0, inside the slot's write window, holding its bucket lock:
  /// no other writer changes this byte). The word's other bytes may belong to slots of another
  /// bucket (W < 8) whose writers change them at the same time: and/or touch this byte alone.
  WARPKV_HD void set_digest(std::size_t slot, std::uint32_t d) const {
    if (s_.digests == nullptr) return;
    const unsigned shift = 8 * static_cast<unsigned>(slot % 8);
    atomic_ref<std::uint64_t> w(s_.digests[slot / 8]);
    w.fetch_and(~(std::uint64_t{0xff} << shift), memory_order::relaxed);
    if (d != 0) w.fetch_or(static_cast<std::uint64_t>(d) << shift, memory_order::relaxed);
  }
  /// False when the slot's digest rules key q out (qd: q's digest; no digests: never).
  WARPKV_HD bool digest_admits(std::size_t slot, std::uint32_t qd) const {
    return s_.digests == nullptr || slot_digest(slot) == qd;
  }
  WARPKV_HD bool key_matches(std::size_t slot, const std::uint64_t* q) const {
    bool same = true;
    for (int j = key_words - 1; j >= 0 && same; --j) same = detail::load_word(key_word(slot, j)) == q[j];
    return same;
  }

  /// Tile-wide lowest slot among lanes' candidates (npos = none).
  template <class Tile>
  WARPKV_HD static std::size_t tile_first(const Tile& t, std::size_t mine) {
    const std::uint32_t mask = t.ballot(mine != npos);
    if (mask == 0) return npos;
    // lanes' candidates come from the same (bucket, i) order, so the lowest lane's is one of the
    // earliest; any consistent choice is correct
    return static_cast<std::size_t>(t.shfl(static_cast<std::uint64_t>(mine), static_cast<unsigned>(lowest_lane(mask))));
  }

  /// The first candidate in the pair's order (the first bucket's slots, then the second's) whose
  /// lane-local flag is set, tile-wide (npos = none).
  template <class Tile>
  WARPKV_HD std::size_t first_in_order(const Tile& t, const bucket_pair& p, const bool* flag) const {
    for (int i = 0; i < 2 * per_lane; ++i) {
      const std::uint32_t mask = t.ballot(flag[i]);
      if (mask == 0) continue;
      const std::size_t b = i < per_lane ? p.first : p.second;
      return b * BucketWidth + static_cast<std::size_t>((i % per_lane) * TileSize + lowest_lane(mask));
    }
    return npos;
  }

  /// Read of both buckets without their bucket locks: the slot of a live entry of key q, or npos.
  /// Copies its value to `out` when not null and refreshes its recency when `refresh`.
  template <class Tile>
  WARPKV_HD std::size_t lookup(const Tile& t, const std::uint64_t* q, const bucket_pair& p, cache_clock c,
                               std::uint64_t* out, bool refresh) const {
    return sync_ == cache_slot_sync::rw_lock ? lookup_locked(t, q, p, c, out, refresh)
                                             : lookup_optimistic(t, q, p, c, out, refresh);
  }

  /// A hit's advisory recency update: lru/random store the operation's stamp when it is newer,
  /// clock sets the reference bit when it is clear. A lost update only ages the entry.
  /// `cur`: the slot's recency word as the caller read it. No store when it would not change the
  /// word meaningfully: clock's bit already set, or (lru, random) a stamp already at or above
  /// c.touch_below (refreshed by an operation concurrent with this one) or newer than ours.
  WARPKV_HD void touch(std::size_t slot, cache_clock c, std::uint64_t cur) const {
    if (policy_ == cache_eviction_policy::clock) {
      if (cur == 0) detail::store_word(s_.stamps[slot], 1);
    } else if (c.stamp > cur && cur < c.touch_below) {
      detail::store_word(s_.stamps[slot], c.stamp);
    }
  }
  WARPKV_HD void touch(std::size_t slot, cache_clock c) const { touch(slot, c, detail::load_word(s_.stamps[slot])); }

  /// Adds `delta` to the filled-slot count of slot's shard (lane 0).
  template <class Tile>
  WARPKV_HD void count_occupied(const Tile& t, std::size_t slot, unsigned long long delta) const {
    if (t.thread_rank() != 0) return;
    const std::size_t shard = (slot / BucketWidth) % occupancy_shards;
    atomic_ref<unsigned long long>(s_.occupied[shard * occupancy_stride]).fetch_add(delta, memory_order::relaxed);
  }

  /// The recency word an insert or assignment stores: the stamp, or clock's reference bit set.
  WARPKV_HD std::uint64_t written_stamp(cache_clock c) const { return policy_ == cache_eviction_policy::clock ? 1 : c.stamp; }

  /// The seed's read (rw_lock): each lane takes the reader lock of one candidate slot at a time,
  /// compares, and keeps it only on a match while the tile copies the value. A miss is accepted
  /// only when no cuckoo move ran into or out of either bucket meanwhile (the buckets' move
  /// counters are even and unchanged), since a reader visiting slots one at a time could
  /// otherwise pass an entry in transit between its two buckets.
  template <class Tile>
  WARPKV_HD std::size_t lookup_locked(const Tile& t, const std::uint64_t* q, const bucket_pair& p, cache_clock c,
                                      std::uint64_t* out, bool refresh) const {
    const std::uint32_t qd = s_.digests != nullptr ? digest_of(q) : 0;
    for (int attempt = 0;; ++attempt) {
      std::uint32_t m1 = 0, m2 = 0;
      if (t.thread_rank() == 0) {
        m1 = atomic_ref<std::uint32_t>(s_.moves[p.first]).load(memory_order::acquire);
        m2 = atomic_ref<std::uint32_t>(s_.moves[p.second]).load(memory_order::acquire);
      }
      m1 = t.shfl(m1, 0);
      m2 = t.shfl(m2, 0);
      if (((m1 | m2) & 1u) != 0) {
        backoff(attempt);
        continue;
      }
      std::size_t mine = npos;  // held: the reader lock of this slot
      for (int i = 0; i < 2 * per_lane && mine == npos; ++i) {
        const std::size_t slot = lane_slot(t, p, i);
        detail::read_lock_slot(s_.versions[slot]);
        if (digest_admits(slot, qd) && key_matches(slot, q) && !slot_expired(slot, c.now)) mine = slot;
        else detail::read_unlock_slot(s_.versions[slot]);
      }
      const std::size_t hit = tile_first(t, mine);
      if (hit != npos) {
        t.sync();  // the owner's lock acquisition precedes every lane's value reads
        if (out != nullptr)
          for (std::uint32_t j = t.thread_rank(); j < value_words_; j += TileSize) out[j] = detail::load_word(value_at(hit)[j]);
        t.sync();  // every lane's reads precede the release
        if (mine == hit && refresh) touch(hit, c);
        if (mine != npos) detail::read_unlock_slot(s_.versions[mine]);  // a second copy (entry in transit) too
        return hit;
      }
      atomic_thread_fence(memory_order::acquire);
      std::uint32_t same = 0;
      if (t.thread_rank() == 0)
        same = atomic_ref<std::uint32_t>(s_.moves[p.first]).load(memory_order::relaxed) == m1 &&
               atomic_ref<std::uint32_t>(s_.moves[p.second]).load(memory_order::relaxed) == m2;
      if (t.shfl(same, 0) != 0) return npos;
    }
  }

  /// The optimistic read. First the key's first bucket alone (inserts fill it first, so most
  /// entries live there): a validated hit there is a hit. Otherwise, and for every miss, both
  /// buckets at once (a miss needs the snapshot of both: an entry may be in transit between them).
  template <class Tile>
  WARPKV_HD std::size_t lookup_optimistic(const Tile& t, const std::uint64_t* q, const bucket_pair& p, cache_clock c,
                                          std::uint64_t* out, bool refresh) const {
    std::size_t hit = npos;
    const std::uint32_t qd = s_.digests != nullptr ? digest_of(q) : 0;
    if (probe(t, q, qd, p, c, out, refresh, per_lane, hit) == probe_result::valid && hit != npos) return hit;
    for (int attempt = 0;; ++attempt) {
      const probe_result r = probe(t, q, qd, p, c, out, refresh, 2 * per_lane, hit);
      if (r == probe_result::valid) return hit;
      if (r == probe_result::busy) backoff(attempt);
    }
  }

  enum class probe_result { valid, busy, changed };
  /// One optimistic read of the lane-local candidates [0, count) (per_lane: the first bucket;
  /// 2 x per_lane: both): versions, keys, value, versions again. `valid`: `hit` is the slot of
  /// a live entry of q whose value is in `out` (npos: none among the candidates), all read
  /// while no candidate changed; `busy`: a writer was inside a candidate; `changed`: one
  /// changed meanwhile. Every lane issues all its loads of one step before it uses any of them
  /// (no early exits between loads), so a step costs one round trip to memory: versions, keys,
  /// value (with the hit slot's recency word), versions again.
  template <class Tile>
  WARPKV_HD probe_result probe(const Tile& t, const std::uint64_t* q, std::uint32_t qd, const bucket_pair& p, cache_clock c,
                               std::uint64_t* out, bool refresh, int count, std::size_t& hit) const {
    std::uint32_t ver[2 * per_lane];
    bool stable = true;
    for (int i = 0; i < count; ++i) {
      ver[i] = atomic_ref<std::uint32_t>(s_.versions[lane_slot(t, p, i)]).load(memory_order::relaxed);
      stable = stable && (ver[i] & 1u) == 0;
    }
    // one fence for all version loads (as if each were an acquire load): they are ordered before
    // the key and value reads
    atomic_thread_fence(memory_order::acquire);
    if (!t.all(stable)) return probe_result::busy;
    bool match[2 * per_lane];
    for (int i = 0; i < count; ++i) {
      const std::size_t slot = lane_slot(t, p, i);
      // with digests, a slot's key words are read only where its digest matches (one dependent
      // load more, W x key words fewer bytes)
      bool same = digest_admits(slot, qd);
      if (same)
        for (int j = 0; j < key_words; ++j) same = (detail::load_word(key_word(slot, j)) == q[j]) && same;
      match[i] = same;
    }
    std::size_t mine = npos;
    for (int i = 0; i < count && mine == npos; ++i)
      if (match[i] && !slot_expired(lane_slot(t, p, i), c.now)) mine = lane_slot(t, p, i);
    hit = tile_first(t, mine);
    std::uint64_t seen = 0;  // the hit slot's recency word, read alongside its value
    if (hit != npos) {
      if (out != nullptr)
        for (std::uint32_t j = t.thread_rank(); j < value_words_; j += TileSize) out[j] = detail::load_word(value_at(hit)[j]);
      if (refresh && mine == hit) seen = detail::load_word(s_.stamps[hit]);
    }
    atomic_thread_fence(memory_order::acquire);
    t.sync();  // every lane's value reads precede the hit slot's owner's second version read
    bool same = true;
    for (int i = 0; i < count; ++i)
      same = (atomic_ref<std::uint32_t>(s_.versions[lane_slot(t, p, i)]).load(memory_order::relaxed) == ver[i]) && same;
    if (!t.all(same)) return probe_result::changed;  // a writer changed one of the slots: read again
    if (hit != npos && refresh && mine == hit) touch(hit, c, seen);
    return probe_result::valid;
  }

  template <class Tile>
  WARPKV_HD void lock_pair(const Tile& t, const bucket_pair& p) const {
    if (t.thread_rank() == 0) {
      const std::size_t lo = p.first < p.second ? p.first : p.second;
      const std::size_t hi = p.first < p.second ? p.second : p.first;
      detail::lock_bucket(s_.locks[lo]);
      if (hi != lo) detail::lock_bucket(s_.locks[hi]);
    }
    t.sync();
  }
  template <class Tile>
  WARPKV_HD void unlock_pair(const Tile& t, const bucket_pair& p) const {
    t.sync();  // every lane's writes precede the release
    if (t.thread_rank() == 0) {
      detail::unlock_bucket(s_.locks[p.first]);
      if (p.second != p.first) detail::unlock_bucket(s_.locks[p.second]);
    }
  }

  /// Position of lane-local slot i among the pair's 2 x BucketWidth candidates.
  template <class Tile>
  WARPKV_HD static std::uint64_t candidate_index(const Tile& t, int i) {
    return static_cast<std::uint64_t>((i < per_lane ? 0 : BucketWidth) + (i % per_lane) * TileSize) + t.thread_rank();
  }
  /// Where random eviction picks and clock's sweep starts: drawn from the operation's stamp.
  WARPKV_HD std::uint64_t sweep_start(cache_clock c) const {
    return hash_bits(c.stamp, seed_ + 0x2545f4914f6cdd1dull) % static_cast<std::uint64_t>(2 * BucketWidth);
  }
  /// How far along the sweep from `start` lane-local candidate i lies (random's and clock's order).
  template <class Tile>
  WARPKV_HD static std::uint64_t sweep_distance(const Tile& t, int i, std::uint64_t start) {
    return (candidate_index(t, i) + 2 * BucketWidth - start) % (2 * BucketWidth);
  }
  /// The policy's order of live candidates (the smallest is evicted): lru, the recency stamp;
  /// random, the distance from the sweep start; clock, the same, after every referenced one.
  template <class Tile>
  WARPKV_HD std::uint64_t eviction_rank(const Tile& t, int i, std::size_t slot, std::uint64_t start) const {
    if (policy_ == cache_eviction_policy::lru) return detail::load_word(s_.stamps[slot]);
    const std::uint64_t d = sweep_distance(t, i, start);
    if (policy_ == cache_eviction_policy::clock && detail::load_word(s_.stamps[slot]) != 0) return 2 * BucketWidth + d;
    return d;
  }
  /// Clock, after choosing the victim of rank `victim_rank`: the sweep clears the reference bits
  /// it passed (all of them when every candidate was referenced).
  template <class Tile>
  WARPKV_HD void clock_sweep(const Tile& t, const bucket_pair& p, std::uint64_t start, std::uint64_t victim_rank) const {
    const std::uint64_t passed = victim_rank >= 2 * BucketWidth ? 2 * BucketWidth : victim_rank;
    for (int i = 0; i < 2 * per_lane; ++i) {
      const std::uint64_t d = sweep_distance(t, i, start);
      const std::size_t slot = lane_slot(t, p, i);
      if (d < passed && detail::load_word(s_.stamps[slot]) != 0) detail::store_word(s_.stamps[slot], 0);
    }
  }

  /// Under the pair's locks: where key q is, the first free and expired slots, and the policy's
  /// victim among the live entries.
  template <class Tile>
  WARPKV_HD scan_result locked_scan(const Tile& t, const std::uint64_t* q, const bucket_pair& p, cache_clock c) const {
    const std::uint64_t now = c.now, start = sweep_start(c);
    std::size_t hit = npos, victim = npos;
    std::uint64_t oldest = ~0ull;
    // every word the scan needs is loaded before any is used: one round trip, not one per test
    bool empty[2 * per_lane], match[2 * per_lane], expired[2 * per_lane];
    std::uint64_t rank[2 * per_lane];
    for (int i = 0; i < 2 * per_lane; ++i) {
      const std::size_t slot = lane_slot(t, p, i);
      const std::uint64_t tag = detail::load_word(key_word(slot, key_words - 1));
      bool same = tag == q[key_words - 1];
      for (int j = 0; j < key_words - 1; ++j) same = (detail::load_word(key_word(slot, j)) == q[j]) && same;
      empty[i] = tag == layout::empty_tag;
      match[i] = same;  // a valid key is never the empty tag
      expired[i] = slot_expired(slot, now);
      rank[i] = eviction_rank(t, i, slot, start);
    }
    bool stale_at[2 * per_lane];  // expired entries of other keys
    for (int i = 0; i < 2 * per_lane; ++i) {
      const std::size_t slot = lane_slot(t, p, i);
      stale_at[i] = false;
      if (empty[i]) continue;
      if (hit == npos && match[i]) {
        hit = slot;
        continue;
      }
      if (expired[i]) {
        stale_at[i] = true;
        continue;
      }
      if (rank[i] < oldest || (rank[i] == oldest && slot < victim)) {
        oldest = rank[i];
        victim = slot;
      }
    }
    scan_result r;
    r.hit = tile_first(t, hit);
    r.hit_expired = r.hit != npos && slot_expired(r.hit, now);
    // free and stale slots are taken in candidate order, the first bucket's before the second's,
    // so entries fill their first bucket first and reads find most of them there (probe)
    r.free = first_in_order(t, p, empty);
    r.stale = first_in_order(t, p, stale_at);
    // butterfly minimum of (rank, slot) over the tile
    for (unsigned off = 1; off < static_cast<unsigned>(TileSize); off <<= 1) {
      const unsigned other = t.thread_rank() ^ off;
      const std::uint64_t o_stamp = t.shfl(oldest, other);
      const std::uint64_t o_slot = t.shfl(static_cast<std::uint64_t>(victim), other);
      if (o_stamp < oldest || (o_stamp == oldest && o_slot < victim)) {
        oldest = o_stamp;
        victim = static_cast<std::size_t>(o_slot);
      }
    }
    r.victim = victim;
    r.victim_rank = oldest;
    return r;
  }

  /// Opens a slot's write window; the caller holds the slot's bucket lock. optimistic: lane 0
  /// stores the odd version (returned, to close with); rw_lock: lane 0 takes the seed's writer
  /// lock, waiting for the readers inside to leave.
  template <class Tile>
  WARPKV_HD std::uint32_t open_slot(const Tile& t, std::size_t slot) const {
    std::uint32_t v = 0;
    if (t.thread_rank() == 0) {
      if (sync_ == cache_slot_sync::rw_lock) {
        detail::write_lock_slot(s_.versions[slot]);
      } else {
        atomic_ref<std::uint32_t> ver(s_.versions[slot]);
        v = ver.load(memory_order::relaxed);
        ver.store(v + 1, memory_order::relaxed);
      }
    }
    t.sync();
    atomic_thread_fence(memory_order::release);  // the odd version is ordered before every data store
    return v;
  }
  /// Closes the window: the even version (release), or the writer lock's release.
  template <class Tile>
  WARPKV_HD void close_slot(const Tile& t, std::size_t slot, std::uint32_t v) const {
    t.sync();  // every lane's stores precede it
    if (t.thread_rank() != 0) return;
    if (sync_ == cache_slot_sync::rw_lock) detail::write_unlock_slot(s_.versions[slot]);
    else atomic_ref<std::uint32_t>(s_.versions[slot]).store(v + 2, memory_order::release);
  }

  /// Writes a whole slot inside its write window. The caller holds the slot's bucket lock.
  /// `key` null leaves the key words; `value` null leaves the value words.
  template <class Tile>
  WARPKV_HD void write_slot(const Tile& t, std::size_t slot, const std::uint64_t* key, const std::uint64_t* value,
                            std::uint64_t expires, std::uint64_t stamp) const {
    const std::uint32_t v = open_slot(t, slot);
    if (value != nullptr)
      for (std::uint32_t j = t.thread_rank(); j < value_words_; j += TileSize) detail::store_word(value_at(slot)[j], value[j]);
    if (t.thread_rank() == 0) {
      if (key != nullptr) {
        for (int j = 0; j < key_words; ++j) detail::store_word(key_word(slot, j), key[j]);
        set_digest(slot, key[key_words - 1] == layout::empty_tag ? 0u : digest_of(key));
      }
      detail::store_word(s_.expires[slot], expires);
      detail::store_word(s_.stamps[slot], stamp);
    }
    close_slot(t, slot, v);
  }

  template <class Tile>
  WARPKV_HD void clear_slot(const Tile& t, std::size_t slot) const {
    std::uint64_t empty[key_words];
    for (int j = 0; j < key_words; ++j) empty[j] = j == key_words - 1 ? layout::empty_tag : 0;
    write_slot(t, slot, empty, nullptr, 0, 0);
  }

  /// Copies a slot's value (stable: the caller holds its bucket lock) to `out`.
  template <class Tile>
  WARPKV_HD void copy_value(const Tile& t, std::size_t slot, std::uint64_t* out) const {
    for (std::uint32_t j = t.thread_rank(); j < value_words_; j += TileSize) out[j] = detail::load_word(value_at(slot)[j]);
  }

  template <class Tile>
  WARPKV_HD status write_op(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t expires, cache_clock c,
                            cache_eviction<Key> ev, mode m, std::uint64_t* out) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    const bucket_pair p = pair_of(q);
    if (ev.flag != nullptr && t.thread_rank() == 0) *ev.flag = 0;
    lock_pair(t, p);
    scan_result r = locked_scan(t, q, p, c);
    status st = status::inserted;
    if (r.hit != npos && !r.hit_expired) {
      if (m == mode::set) {
        write_slot(t, r.hit, nullptr, value, expires, written_stamp(c));
        st = status::assigned;
      } else {
        if (m == mode::get_or_set) {
          if (out != nullptr) copy_value(t, r.hit, out);
          if (t.thread_rank() == 0) touch(r.hit, c);
        }
        st = status::found;
      }
    } else {
      std::size_t target = r.hit;  // an expired entry of this key is replaced in place
      bool fills_empty = false;
      if (target == npos) target = r.stale;
      if (target == npos && r.free != npos) {
        target = r.free;
        fills_empty = true;
      }
      if (target == npos) {
        // a walk may pass through p's own buckets (we hold them) even when it fails: scan again
        make_room(t, p, c.stamp);
        r = locked_scan(t, q, p, c);
        target = r.free;
        fills_empty = target != npos;
      }
      if (target == npos) {
        target = r.victim;  // both buckets hold live entries: evict the policy's victim
        if (policy_ == cache_eviction_policy::clock) clock_sweep(t, p, sweep_start(c), r.victim_rank);
        if (t.thread_rank() == 0) {
          if (ev.key != nullptr) *ev.key = slot_key(target);
          if (ev.flag != nullptr) *ev.flag = 1;
        }
        if (ev.value != nullptr) copy_value(t, target, ev.value);
      }
      write_slot(t, target, q, value, expires, written_stamp(c));
      if (fills_empty) count_occupied(t, target, 1);
      if (m == mode::get_or_set && out != nullptr && value != nullptr)
        for (std::uint32_t j = t.thread_rank(); j < value_words_; j += TileSize) out[j] = value[j];
    }
    unlock_pair(t, p);
    return st;
  }

  /// First empty slot of bucket b, tile-wide (npos = none).
  template <class Tile>
  WARPKV_HD std::size_t free_in(const Tile& t, std::size_t b) const {
    std::size_t mine = npos;
    for (int i = 0; i < per_lane && mine == npos; ++i) {
      const std::size_t slot = b * BucketWidth + static_cast<std::size_t>(i * TileSize) + t.thread_rank();
      if (slot_empty(slot)) mine = slot;
    }
    return tile_first(t, mine);
  }

  /// Under the locks of p, with both buckets full: cuckoo walks (at most max_kicks displacement
  /// steps in all, each walk at most max_path deep) for a path ending at an empty slot, then the
  /// moves from its end back to p. True when a slot of p has been emptied.
  template <class Tile>
  WARPKV_HD bool make_room(const Tile& t, const bucket_pair& p, std::uint64_t salt) const {
    if (buckets_ < 2 || max_kicks_ == 0) return false;
    // (nearly) nowhere to go. One lane reads, all follow: lanes reading a word that other tiles
    // change could disagree and then part ways around the tile's collectives
    std::uint32_t crowded = 0;
    if (t.thread_rank() == 0) crowded = occupied_slots() >= kick_slots_;
    if (t.shfl(crowded, 0) != 0) return false;
    std::uint32_t steps = 0;
    for (std::uint32_t walk = 0; steps < max_kicks_; ++walk) {
      std::size_t path_slot[max_path];
      int depth = 0;
      std::size_t cur = (walk & 1u) ? p.second : p.first;
      std::size_t target = npos;
      while (depth < max_path && steps < max_kicks_) {
        ++steps;
        const std::size_t slot =
            cur * BucketWidth + static_cast<std::size_t>(hash_bits(salt + steps, walk) % static_cast<std::uint64_t>(BucketWidth));
        // the displaced entry's other bucket (read by one lane: others may be writing it)
        std::uint64_t alt = npos;
        if (t.thread_rank() == 0 && !slot_empty(slot)) {
          std::uint64_t w[key_words];
          for (int j = 0; j < key_words; ++j) w[j] = detail::load_word(key_word(slot, j));
          const bucket_pair xp = pair_of(w);
          alt = xp.first == cur ? xp.second : xp.first;
        }
        alt = t.shfl(alt, 0);
        if (alt == npos) {  // emptied meanwhile (cannot be in p, which we hold)
          if (depth > 0) target = slot;
          break;
        }
        path_slot[depth++] = slot;
        target = free_in(t, static_cast<std::size_t>(alt));
        if (target != npos) break;
        cur = static_cast<std::size_t>(alt);
      }
      if (target == npos) continue;
      bool ok = true;
      for (int d = depth - 1; d >= 0 && ok; --d) {
        ok = move_entry(t, path_slot[d], target, p);
        target = path_slot[d];
      }
      if (ok) return true;
    }
    return false;
  }

  /// rw_lock: the move counters of buckets fb and tb (whose locks are held) go odd at the start
  /// of a move (ordered before its stores by a release fence) and back to even after it (release).
  template <class Tile>
  WARPKV_HD void move_counters(const Tile& t, std::size_t fb, std::size_t tb, bool start) const {
    if (sync_ != cache_slot_sync::rw_lock) return;
    t.sync();
    if (t.thread_rank() == 0) {
      const memory_order o = start ? memory_order::relaxed : memory_order::release;
      atomic_ref<std::uint32_t> mf(s_.moves[fb]), mt(s_.moves[tb]);
      mf.store(mf.load(memory_order::relaxed) + 1, o);
      mt.store(mt.load(memory_order::relaxed) + 1, o);
      if (start) atomic_thread_fence(memory_order::release);
    }
    t.sync();
  }

  /// Moves the entry of slot `from` to the empty slot `to` (its other bucket): try-locks the
  /// buckets not in p (held already), checks both slots, copies, then empties `from`.
  template <class Tile>
  WARPKV_HD bool move_entry(const Tile& t, std::size_t from, std::size_t to, const bucket_pair& p) const {
    const std::size_t fb = from / BucketWidth, tb = to / BucketWidth;
    const bool own_f = fb == p.first || fb == p.second, own_t = tb == p.first || tb == p.second;
    std::uint32_t got = 0;  // bit 0: locked fb, bit 1: locked tb, bit 2: checks passed
    if (t.thread_rank() == 0) {
      bool ok = true;
      if (!own_f) {
        ok = detail::try_lock_bucket(s_.locks[fb]);
        if (ok) got |= 1u;
      }
      if (ok && !own_t) {
        ok = detail::try_lock_bucket(s_.locks[tb]);
        if (ok) got |= 2u;
      }
      if (ok && slot_empty(to) && !slot_empty(from)) {
        std::uint64_t w[key_words];
        for (int j = 0; j < key_words; ++j) w[j] = detail::load_word(key_word(from, j));
        const bucket_pair xp = pair_of(w);
        if ((xp.first == fb && xp.second == tb) || (xp.first == tb && xp.second == fb)) got |= 4u;
      }
    }
    got = t.shfl(got, 0);
    t.sync();  // the locks taken by lane 0 order every lane's accesses
    const bool ok = (got & 4u) != 0;
    if (ok) {
      std::uint64_t w[key_words];
      for (int j = 0; j < key_words; ++j) w[j] = detail::load_word(key_word(from, j));
      const std::uint64_t expires = detail::load_word(s_.expires[from]);
      const std::uint64_t stamp = detail::load_word(s_.stamps[from]);
      // the copy first, then the clear: a reader of the key sees it in one of its buckets, and a
      // reader overlapping the move sees a version change (rw_lock: a move counter change) and
      // reads again
      move_counters(t, fb, tb, true);
      const std::uint32_t v = open_slot(t, to);
      for (std::uint32_t j = t.thread_rank(); j < value_words_; j += TileSize)
        detail::store_word(value_at(to)[j], detail::load_word(value_at(from)[j]));
      if (t.thread_rank() == 0) {
        for (int j = 0; j < key_words; ++j) detail::store_word(key_word(to, j), w[j]);
        set_digest(to, digest_of(w));
        detail::store_word(s_.expires[to], expires);
        detail::store_word(s_.stamps[to], stamp);
      }
      close_slot(t, to, v);
      clear_slot(t, from);
      move_counters(t, fb, tb, false);
    }
    t.sync();
    if (t.thread_rank() == 0) {
      if (got & 2u) detail::unlock_bucket(s_.locks[tb]);
      if (got & 1u) detail::unlock_bucket(s_.locks[fb]);
    }
    return ok;
  }

  cache_storage s_{};
  std::size_t buckets_ = 0;
  std::uint32_t value_words_ = 0;
  std::uint64_t seed_ = 0;
  std::uint32_t max_kicks_ = 0;
  std::size_t kick_slots_ = 0;
  cache_eviction_policy policy_ = cache_eviction_policy::lru;
  cache_slot_sync sync_ = cache_slot_sync::optimistic;
};

}  // namespace warpkv
