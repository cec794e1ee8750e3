#pragma once
// cache_ref: the device-side view of a warpkv::kv_cache, for user kernels and for the cache's own
// bulk API. Every lane of a tile of TileSize lanes calls the same method with the same arguments
// and gets the same result; a bucket of BucketWidth slots is read by the tile, BucketWidth /
// TileSize slots per lane.
//
// The Design (cache_design.hpp) fixes every mechanism at compile time: the slot protocol
// (detail/slot_sync.hpp), the eviction policy (detail/eviction_policy.hpp), the value layout and
// key match (detail/bucket_view.hpp). This file is the algorithm over them: placement, writes
// under the bucket locks, cuckoo moves.
//
// Guarantees (argument and linearization points: docs/design/cache.md):
//  - get/contains never return a torn value or a value the key did not hold at some instant
//    during the call. With optimistic slots (default) they write no shared memory but an
//    advisory recency word; with rw_lock slots they take the seed's per-slot reader locks;
//  - set/add/erase/get_or_set's insert hold the key's two bucket locks (ascending order), so a
//    key is never stored twice; a value is written inside its slot's write window;
//  - an insert into two full buckets first looks for room by cuckoo moves (at most max_kicks
//    displacement steps, and only while fewer than kick_slots slots are filled), else evicts the
//    eviction policy's choice among the two buckets' entries (an expired entry goes first),
//    reporting the evicted key and value when asked. The batch write phase's fast pass
//    (cache_pass::fast) hands such an insert back as `full` instead while cuckoo moves may run
//    (as the kick gate word says: set from the filled-slot count by the batch's gate pass); the
//    complete pass then runs it whole, gated by the count itself.
// The caller supplies the clock: `stamp` orders recency (larger = more recent; the bulk API uses
// a batch base plus the operation's index) and `now` is compared with entries' expiry times.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "warpkv/cache/cache_design.hpp"
#include "warpkv/cache/cache_keys.hpp"
#include "warpkv/cache/detail/bucket_view.hpp"
#include "warpkv/cache/detail/cache_types.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/half.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

/// What a write does with a live entry of its key: set assigns it; add and get_or_set leave it
/// (found; get_or_set copies its value out).
enum class cache_write_mode { set, add, get_or_set };

/// A write's operands as a caller passes them (values, not where to load them from). The batch
/// write phase passes its own kind instead (detail::batch_write_operands), which loads each
/// operand from the batch's arrays where the write uses it, so that none is held in registers
/// across the lock wait and the scan. Both have: value(), expires(), out(), clock(), score()
/// (the caller's score for the design's eviction policy, or null), and the eviction report's
/// ev_flag(), ev_key(), ev_value() (each may be null).
template <class Key>
struct cache_write_operands {
  const std::uint64_t* value_ = nullptr;
  std::uint64_t expires_ = 0;
  std::uint64_t* out_ = nullptr;
  cache_clock clock_{};
  cache_eviction<Key> ev_{};
  /// the caller's score: an insert's under lfu, epoch_lfu and custom (takes_scores), an
  /// assignment's under every policy (as assign's); null: none
  const std::uint64_t* score_ = nullptr;
  WARPKV_HD const std::uint64_t* value() const { return value_; }
  WARPKV_HD const std::uint64_t* score() const { return score_; }
  WARPKV_HD std::uint64_t expires() const { return expires_; }
  WARPKV_HD std::uint64_t* out() const { return out_; }
  WARPKV_HD cache_clock clock() const { return clock_; }
  WARPKV_HD std::uint8_t* ev_flag() const { return ev_.flag; }
  WARPKV_HD Key* ev_key() const { return ev_.key; }
  WARPKV_HD std::uint64_t* ev_value() const { return ev_.value; }
};

/// Which part of a write the caller wants run: complete (everything: what a user kernel calls;
/// cuckoo moves gated by the occupancy count itself), fast (the batch write phase's hot kernel:
/// an insert that finds both buckets full while cuckoo moves may run returns `full`, touching
/// nothing, for the batch's complete pass to run), or batch_complete (that pass: everything, as
/// complete, with cuckoo moves gated by the kick gate word that the batch's gate pass set from
/// the count before its write phase: one load of a word nobody writes during the phase, where
/// summing the 64 occupancy shards that every filling insert adds to cost 40 % of the pass at
/// λ 0.75; the sum only when the gate says the batch may cross the limit; docs/design/cache.md,
/// "Cuckoo moves").
enum class cache_pass { complete, fast, batch_complete };

template <class Key, int BucketWidth = 4, int TileSize = BucketWidth, class Design = default_cache_design>
class cache_ref {
  static_assert(valid_tile_size<TileSize>, "tile size must be 1, 2, 4, 8, 16 or 32");
  static_assert(BucketWidth >= TileSize && BucketWidth % TileSize == 0 && BucketWidth <= 64,
                "bucket width must be a multiple of the tile size, at most 64");
  static_assert(is_cache_design<Design>, "Design must be a cache_design<...> (cache_designs::by_config is kv_cache's only)");

  using sync_policy = typename Design::sync;
  using eviction_policy = typename Design::eviction;
  using view_type =
      detail::bucket_view<Key, BucketWidth, TileSize, typename Design::layout, typename Design::key_match, typename Design::placement>;

 public:
  using key_type = Key;
  using design = Design;
  using layout = cache_key_layout<Key>;
  using bucket_pair = typename view_type::bucket_pair;
  static constexpr int bucket_width = BucketWidth;
  static constexpr int tile_size = TileSize;
  static constexpr int key_words = layout::words;
  static constexpr int per_lane = BucketWidth / TileSize;  // slots of one bucket per lane
  static constexpr int candidates = view_type::candidates;  // lane-local candidate slots of a key
  /// Buckets per key: 2 (two_buckets: cuckoo moves) or 1 (one_bucket: none).
  static constexpr int choices = view_type::choices;
  static constexpr int max_path = 8;                       // depth of one cuckoo walk
  static constexpr std::size_t npos = ~std::size_t{0};
  /// Whether an insert takes the caller's score (the eviction policy's takes_scores: lfu,
  /// epoch_lfu, custom); the batch operands hand scores to the write path only then.
  static constexpr bool takes_scores = eviction_policy::takes_scores;
  /// Register budgets of the batch kernels (core/launcher.hpp, register_budget): the write
  /// phase's fast pass and the read phase. The complete pass (cuckoo walks) has none.
  static constexpr int hot_register_budget = 64;
  static constexpr int find_register_budget = 64;

  cache_ref() = default;
  /// `kick_slots`: cuckoo moves are tried only while fewer slots than this are filled.
  cache_ref(cache_storage s, std::size_t buckets, std::uint32_t value_words, std::uint64_t seed, std::uint32_t max_kicks,
            std::size_t kick_slots)
      : v_{s, buckets, value_words, seed}, max_kicks_(max_kicks), kick_slots_(kick_slots) {
    if (v_.s.key_stride == 0) v_.s.key_stride = key_words;
    if (v_.s.value_stride == 0) v_.s.value_stride = value_words;
  }

  WARPKV_HD std::size_t buckets() const { return v_.buckets; }
  WARPKV_HD std::size_t slots() const { return v_.buckets * BucketWidth; }
  WARPKV_HD std::uint32_t value_words() const { return v_.value_words; }
  WARPKV_HD const cache_storage& storage() const { return v_.s; }
  WARPKV_HD static constexpr cache_eviction_policy eviction() { return eviction_policy::value; }
  WARPKV_HD static constexpr cache_slot_sync slot_sync() { return sync_policy::value; }

  WARPKV_HD bucket_pair buckets_of(const Key& k) const { return pair_of(k); }

  // ---- operations ------------------------------------------------------------------------
  /// found (value copied to `out`, recency refreshed) or not_found; invalid_key for a sentinel.
  template <class Tile>
  WARPKV_HD status get(const Tile& t, const Key& k, std::uint64_t* out, cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    return lookup(t, q, v_.pair_of(q), c, out, true) != npos ? status::found : status::not_found;
  }

  /// found / not_found; does not refresh recency.
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, const Key& k, cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    return lookup(t, q, v_.pair_of(q), c, nullptr, false) != npos ? status::found : status::not_found;
  }

  /// Insert or assign: inserted (the key was absent or expired) or assigned.
  template <cache_pass P = cache_pass::complete, class Tile>
  WARPKV_HD status set(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t expires, cache_clock c,
                       cache_eviction<Key> ev = {}) const {
    return write<P>(t, k, cache_write_mode::set, cache_write_operands<Key>{value, expires, nullptr, c, ev});
  }

  /// Insert if absent: inserted, or found (the live entry is left as it is).
  template <cache_pass P = cache_pass::complete, class Tile>
  WARPKV_HD status add(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t expires, cache_clock c,
                       cache_eviction<Key> ev = {}) const {
    return write<P>(t, k, cache_write_mode::add, cache_write_operands<Key>{value, expires, nullptr, c, ev});
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
    if (lookup(t, q, v_.pair_of(q), c, out, true) != npos) return status::found;  // lock-free hit path
    return write<cache_pass::complete>(t, k, cache_write_mode::get_or_set, cache_write_operands<Key>{value, expires, out, c, ev});
  }
  /// get_or_set without its lock-free read: straight to the locked path (a hit under the locks
  /// is `found` as in add, with the value copied out and recency refreshed). The batch write
  /// phase calls it for the get_or_sets its read phase saw miss: one probe per miss.
  template <cache_pass P = cache_pass::complete, class Tile>
  WARPKV_HD status get_or_set_locked(const Tile& t, const Key& k, const std::uint64_t* value, std::uint64_t* out,
                                     std::uint64_t expires, cache_clock c, cache_eviction<Key> ev = {}) const {
    return write<P>(t, k, cache_write_mode::get_or_set, cache_write_operands<Key>{value, expires, out, c, ev});
  }
  /// set, add or get_or_set_locked by a run-time mode, with its operands from `ops`
  /// (cache_write_operands or the batch's own): one copy of the write path in a kernel that
  /// serves all three (the batch write phase).
  template <cache_pass P = cache_pass::complete, class Tile, class Operands>
  WARPKV_HD status write(const Tile& t, const Key& k, cache_write_mode m, const Operands& ops) const {
    return write_op<P>(t, k, m, ops);
  }

  // ---- lock groups (docs/design/cache.md, "Lock groups") ---------------------------------
  /// Whether the batch's fast write pass takes its writes' locks as a group: each lane one
  /// try-lock of its own write's bucket, all at once, the tile then writing under every lock it
  /// got and releasing them together (one acquire, one fence each way for up to T writes where
  /// each write paid its own). Optimistic slots, and a held write that never waits for a lock:
  /// one bucket (the write needs no other), or two buckets with one-word keys while the batch's
  /// one-lock gate is on (the held write stays in its first bucket, "One lock", or is left to
  /// the complete pass).
  static constexpr bool lock_groups =
      sync_policy::value == cache_slot_sync::optimistic && (choices == 1 || key_words == 1);
  /// The bucket a write of k locks in a group (npos for an invalid key, and in a two-bucket
  /// design while the batch's fast pass may not hold a first bucket alone: the write runs alone).
  WARPKV_HD std::size_t write_bucket(const Key& k) const {
    if constexpr (choices == 2)
      if (!v_.first_bucket_writes()) return npos;
    return layout::valid(k) ? pair_of(k).first : npos;
  }
  /// One attempt of one lane (not the tile) at bucket b's lock (acquire): true when taken.
  WARPKV_HD bool try_hold(std::size_t b) const { return detail::try_lock_bucket(v_.s.locks[b]); }
  /// After lanes took their group's locks (try_hold): the tile sync and the slot protocol's step
  /// after locking (the release fence of every lane that orders the odd words before its stores).
  template <class Tile>
  WARPKV_HD void group_locked(const Tile& t) const {
    t.sync();
    sync_policy::locked(v_, t);
  }
  /// Releases the group's locks: every lane's writes precede each lane's release (tile sync,
  /// release fence), then each lane that holds one (b != npos) adds 1 to its word.
  template <class Tile>
  WARPKV_HD void group_release(const Tile& t, std::size_t b) const {
    t.sync();
    atomic_thread_fence(memory_order::release);
    if (b != npos) atomic_ref<std::uint32_t>(v_.s.locks[b]).fetch_add(1u, memory_order::relaxed);
  }
  /// A write whose bucket's lock the tile holds in a lock group (group_locked done): the locked
  /// path without taking or releasing the lock.
  template <cache_pass P = cache_pass::complete, class Tile, class Operands>
  WARPKV_HD status write_held(const Tile& t, const Key& k, cache_write_mode m, const Operands& ops) const {
    return write_op<P, true>(t, k, m, ops);
  }

  /// erased (a live entry was removed) or not_found (absent or expired; an expired one is dropped).
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, const Key& k, cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    const bucket_pair p = pair_of(k);
    lock_pair(t, p);
    const scan_result r = locked_scan(t, k, p, c);
    status st = status::not_found;
    if (r.hit != npos) {
      clear_slot(t, r.hit);
      v_.count_occupied(t, r.hit, ~0ull);
      if (!r.hit_expired) st = status::erased;
    }
    v_.unlock_pair(t, p);
    return st;
  }

  // ---- HierarchicalKV's update-only and accumulate operations (their own kernels) -----------
  /// Update only (HKV's assign): when k holds a live entry, its value (unless `value` is null)
  /// and its score (the design's score word: the policy's assigned_score with `score`, which
  /// the recency and custom policies store as given, lfu and epoch_lfu add to the count; null:
  /// as a write stores it) are replaced, its expiry time kept: assigned. Otherwise nothing
  /// changes: not_found.
  /// Linearizes at the unlocking add of the slot's bucket (under both bucket locks).
  template <class Tile>
  WARPKV_HD status assign(const Tile& t, const Key& k, const std::uint64_t* value, const std::uint64_t* score,
                          cache_clock c) const {
    if (!layout::valid(k)) return status::invalid_key;
    const bucket_pair p = pair_of(k);
    lock_pair(t, p);
    const scan_result r = locked_scan(t, k, p, c);
    status st = status::not_found;
    if (r.hit != npos && !r.hit_expired) {
      const std::uint64_t expires = detail::load_word(v_.s.expires[r.hit]);
      write_slot(t, r.hit, nullptr, value, expires, eviction_policy::assigned_score(v_, r.hit, c, score));
      st = status::assigned;
    }
    v_.unlock_pair(t, p);
    return st;
  }

  /// Accumulate or insert (HKV's accum_or_assign for vectors of T: float, double, or half, which
  /// adds through float and rounds once, detail::accumulate): a live entry of k gets `delta`
  /// added element-wise to its value (value words read as T[]): assigned;
  /// an absent key is inserted with `delta` as its value (as set, evicting when it must):
  /// inserted. The accumulation is one write window under both bucket locks; when the key is
  /// absent the locks are released and the insert runs as `add`, which finds a key inserted
  /// meanwhile (then the accumulation is tried again): no delta is lost or applied twice.
  ///
  /// `kind` (HKV's accum_or_assigns flags): accum_kind::accumulate_only adds to a live entry
  /// (assigned) and changes nothing for an absent key (not_found); accum_kind::insert_only inserts
  /// an absent key with `delta` as its value (inserted) and changes nothing for a live one
  /// (found: the `add` write's own answer, under the locks).
  template <class T, class Tile>
  WARPKV_HD status accum_or_insert(const Tile& t, const Key& k, const std::uint64_t* delta, cache_clock c,
                                   cache_eviction<Key> ev = {}, accum_kind kind = accum_kind::accumulate_or_insert) const {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "accumulated elements are 2, 4 or 8 bytes");
    if (!layout::valid(k)) return status::invalid_key;
    if (kind == accum_kind::insert_only)  // linearized as the add write: inserted, or found (unchanged)
      return write_op<cache_pass::complete>(t, k, mode::add, cache_write_operands<Key>{delta, 0, nullptr, c, ev});
    const bucket_pair p = pair_of(k);
    for (;;) {
      lock_pair(t, p);
      const scan_result r = locked_scan(t, k, p, c);
      if (r.hit != npos && !r.hit_expired) {
        const std::uint32_t ver = sync_policy::open(v_, t, r.hit);
        for (std::uint32_t j = t.thread_rank(); j < v_.value_words; j += TileSize) {
          T a[8 / sizeof(T)], b[8 / sizeof(T)];
          const std::uint64_t old = detail::load_word(v_.value_at(r.hit)[j]), d = delta[j];
          memcpy(static_cast<void*>(a), &old, 8);  // T may be a class (__half)
          memcpy(static_cast<void*>(b), &d, 8);
          for (std::size_t e = 0; e < 8 / sizeof(T); ++e) a[e] = detail::accumulate(a[e], b[e]);
          std::uint64_t sum = 0;
          memcpy(&sum, a, 8);
          detail::store_word(v_.value_at(r.hit)[j], sum);
        }
        if (t.thread_rank() == 0) detail::store_word(v_.s.stamps[r.hit], eviction_policy::assigned_score(v_, r.hit, c, nullptr));
        sync_policy::close(v_, t, r.hit, ver);
        v_.unlock_pair(t, p);
        return status::assigned;
      }
      v_.unlock_pair(t, p);
      if (kind == accum_kind::accumulate_only) return status::not_found;  // linearized at the locked scan
      const status s = write_op<cache_pass::complete>(t, k, mode::add, cache_write_operands<Key>{delta, 0, nullptr, c, ev});
      if (s != status::found) return s;  // inserted; `found`: inserted by another meanwhile, accumulate
    }
  }

  /// Erases the live entries of bucket b for which pred(key, score) holds (score: the slot's
  /// recency word), under b's lock (every writer of a slot of b holds it, a cuckoo move too):
  /// returns how many, the same on every lane. Expired entries are dropped whatever pred says
  /// (they read as absent) and not counted.
  template <class Tile, class Pred>
  WARPKV_HD std::uint32_t erase_in_bucket_if(const Tile& t, std::size_t b, const Pred& pred, std::uint64_t now) const {
    if (t.thread_rank() == 0) detail::lock_bucket(v_.s.locks[b]);
    t.sync();
    sync_policy::locked(v_, t);
    std::uint32_t erased = 0;
    for (int i = 0; i < per_lane; ++i) {
      const std::size_t mine = b * BucketWidth + view_type::in_bucket(t.thread_rank(), i);
      bool drop = false, live = false;
      if (!v_.slot_empty(mine)) {
        live = !v_.slot_expired(mine, now);
        drop = !live || pred(slot_key(mine), detail::load_word(v_.s.stamps[mine]));
      }
      // the tile clears each chosen slot together (a write window is a tile's)
      for (std::uint32_t mask = t.ballot(drop); mask != 0; mask &= mask - 1) {
        const unsigned lane = static_cast<unsigned>(lowest_lane(mask));
        clear_slot(t, b * BucketWidth + view_type::in_bucket(lane, i));
        v_.count_occupied(t, b * BucketWidth, ~0ull);
      }
      erased += static_cast<std::uint32_t>(popcount32(t.ballot(drop && live)));
    }
    t.sync();
    if (t.thread_rank() == 0) detail::unlock_bucket(v_.s.locks[b]);
    return erased;
  }

  // ---- slot access for whole-table passes (between batches) --------------------------------
  WARPKV_HD bool slot_empty(std::size_t slot) const { return v_.slot_empty(slot); }
  WARPKV_HD bool slot_expired(std::size_t slot, std::uint64_t now) const { return v_.slot_expired(slot, now); }
  WARPKV_HD const std::uint64_t* slot_value(std::size_t slot) const { return v_.value_at(slot); }
  /// The slot's score: the design's score word (lru, random: the stamp of its last write or
  /// refreshing hit; clock: the reference bit; lfu: the count; epoch_lru, epoch_lfu: the epoch
  /// in the high 32 bits, the stamp's low bits or the count in the low; custom: the caller's).
  WARPKV_HD std::uint64_t slot_score(std::size_t slot) const { return detail::load_word(v_.s.stamps[slot]); }
  WARPKV_HD std::uint64_t slot_expires(std::size_t slot) const { return detail::load_word(v_.s.expires[slot]); }
  /// Slots holding an entry (live or expired) by the sharded count the cuckoo gate reads.
  WARPKV_HD std::size_t occupied_slots() const { return v_.occupied_slots(); }
  /// The gate pass (one thread, before the write phase of a batch of `batch` operations): sets
  /// the kick gate word that both write passes read: closed when the sharded count is at least
  /// kick_slots (or moves cannot run); open when even `batch` more filled slots would stay below
  /// it (no insert of the batch can reach the limit, so none need look again); else near (the
  /// complete pass then sums the count per insert into full buckets, as a user kernel's write).
  WARPKV_HD void refresh_kick_gate(std::size_t batch) const {
    const std::size_t filled = v_.occupied_slots();
    const std::size_t slots = v_.buckets * static_cast<std::size_t>(BucketWidth);
    v_.set_first_bucket_writes(filled + batch <= slots / 8 * first_bucket_load_eighths);
    if (choices == 1 || v_.buckets < 2 || max_kicks_ == 0 || filled >= kick_slots_) v_.set_kick_gate(kick_gate_closed_word);
    else if (batch > kick_slots_ - filled) v_.set_kick_gate(kick_gate_near_word);
    else v_.set_kick_gate(kick_gate_open_word);
  }
  WARPKV_HD Key slot_key(std::size_t slot) const {
    std::uint64_t w[key_words];
    v_.load_key(slot, w);
    return layout::from_words(w);
  }

 private:
  using mode = cache_write_mode;

  /// What the locked scan found. hit, free, stale: tile-wide; victim and victim_rank: this
  /// lane's own candidate (the tile's victim is their minimum, taken only when an insert evicts).
  struct scan_result {
    std::size_t hit = npos;   // slot holding the key
    bool hit_expired = false;
    std::size_t free = npos;  // first empty slot
    std::size_t stale = npos; // first expired slot (of another key)
    std::size_t victim = npos;  // the eviction policy's choice among the live candidates
    std::uint64_t victim_rank = ~0ull;
  };

  /// Read of both buckets without their bucket locks (the design's slot protocol): the slot of a
  /// live entry of key q, or npos. Copies its value to `out` when not null and refreshes its
  /// recency when `refresh`.
  template <class Tile>
  WARPKV_HD std::size_t lookup(const Tile& t, const std::uint64_t* q, const bucket_pair& p, cache_clock c,
                               std::uint64_t* out, bool refresh) const {
    return sync_policy::template lookup<eviction_policy>(v_, t, q, p, c, out, refresh);
  }

  WARPKV_HD std::uint64_t sweep_start(cache_clock c) const {
    if constexpr (eviction_policy::uses_start) return detail::sweep_start<view_type::span>(v_.seed, c);
    else return 0;
  }

  /// Under the pair's locks, in one pass over the candidates: where key q is, the first free
  /// and expired slots, and each lane's eviction candidate (the policy's smallest rank).
  /// The key's words are taken from `k` here (and again where a write stores them), not kept in
  /// registers across the lock wait: a 24-byte key is 5 words.
  template <class Tile>
  WARPKV_HD scan_result locked_scan(const Tile& t, const Key& k, const bucket_pair& p, cache_clock c) const {
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    const std::uint64_t now = c.now, start = sweep_start(c);
    std::size_t hit = npos, victim = npos;
    bool hit_expired = false;  // the expiry of this lane's hit, as the scan loaded it
    std::uint64_t oldest = ~0ull;
    // the keys (and expiry words) of every candidate are loaded before any is used: one round
    // trip; the eviction ranks only when the write must evict (no hit, no free or stale slot)
    bool empty[candidates], match[candidates], expired[candidates];
    if constexpr (view_type::lane_runs) {
      // the digests first (a lane's 8 slots in one word; under the locks they are exact: 0 for
      // an empty slot, the key's digest for a full one), then the key words only where a slot's
      // digest is k's
      std::uint64_t dw[candidates / 8];
      v_.lane_digest_words(t, p, candidates, dw);
      const std::uint32_t qd = v_.digest_of(q);
      for (int i = 0; i < candidates; ++i) {
        const std::size_t slot = v_.lane_slot(t, p, i);
        const std::uint32_t d = view_type::digest_byte(dw, i);
        empty[i] = d == 0;
        match[i] = d == qd && v_.key_matches(slot, q);
        expired[i] = !empty[i] && v_.slot_expired(slot, now);
      }
    } else {
      for (int i = 0; i < candidates; ++i) {
        const std::size_t slot = v_.lane_slot(t, p, i);
        const std::uint64_t tag = detail::load_word(v_.key_word(slot, key_words - 1));
        bool same = tag == q[key_words - 1];
        for (int j = 0; j < key_words - 1; ++j) same = (detail::load_word(v_.key_word(slot, j)) == q[j]) && same;
        empty[i] = tag == layout::empty_tag;
        match[i] = same;  // a valid key is never the empty tag
        expired[i] = v_.slot_expired(slot, now);
      }
    }
    bool stale_at[candidates];  // expired entries of other keys
    for (int i = 0; i < candidates; ++i) {
      const std::size_t slot = v_.lane_slot(t, p, i);
      stale_at[i] = false;
      if (empty[i]) continue;
      if (hit == npos && match[i]) {
        hit = slot;
        hit_expired = expired[i];
        continue;
      }
      if (expired[i]) stale_at[i] = true;
    }
    scan_result r;
    // the hit of the lowest lane that has one, with the expiry the scan read (not loaded again)
    const std::uint32_t hits = t.ballot(hit != npos);
    if (hits != 0) {
      const unsigned owner = static_cast<unsigned>(lowest_lane(hits));
      r.hit = static_cast<std::size_t>(t.shfl(static_cast<std::uint64_t>(hit), owner));
      r.hit_expired = now != 0 && t.shfl(hit_expired ? 1u : 0u, owner) != 0;
    }
    // free and stale slots are taken in candidate order, the first bucket's before the second's,
    // so entries fill their first bucket first and reads find most of them there (probe)
    r.free = v_.first_in_order(t, p, empty);
    r.stale = v_.first_in_order(t, p, stale_at);
    if (r.hit == npos && r.free == npos && r.stale == npos) {
      // every candidate holds a live entry of another key: this lane's eviction candidate
      for (int i = 0; i < candidates; ++i) {
        const std::size_t slot = v_.lane_slot(t, p, i);
        const std::uint64_t rank = eviction_policy::rank(v_, t, i, slot, start);
        if (rank < oldest || (rank == oldest && slot < victim)) {
          oldest = rank;
          victim = slot;
        }
      }
    }
    r.victim = victim;
    r.victim_rank = oldest;
    return r;
  }
  /// The tile's victim: the butterfly minimum of the lanes' (rank, slot) candidates.
  template <class Tile>
  WARPKV_HD static void tile_victim(const Tile& t, scan_result& r) {
    for (unsigned off = 1; off < static_cast<unsigned>(TileSize); off <<= 1) {
      const unsigned other = t.thread_rank() ^ off;
      const std::uint64_t o_rank = t.shfl(r.victim_rank, other);
      const std::uint64_t o_slot = t.shfl(static_cast<std::uint64_t>(r.victim), other);
      if (o_rank < r.victim_rank || (o_rank == r.victim_rank && o_slot < r.victim)) {
        r.victim_rank = o_rank;
        r.victim = static_cast<std::size_t>(o_slot);
      }
    }
  }

  /// Writes a whole slot inside its write window. The caller holds the slot's bucket lock.
  /// `key` null leaves the key words; `value` null leaves the value words. `was_empty`: the slot
  /// held no entry, so its expiry word is 0 (every path that empties a slot, clear_slot, stores
  /// 0 there, and the table starts zeroed): an expiry of 0 is not stored again (one 8-byte store
  /// fewer per insert without a TTL; the write pass is bound by its random sectors).
  template <class Tile>
  WARPKV_HD void write_slot(const Tile& t, std::size_t slot, const std::uint64_t* key, const std::uint64_t* value,
                            std::uint64_t expires, std::uint64_t stamp, bool was_empty = false) const {
    const std::uint32_t ver = sync_policy::open(v_, t, slot);
    if (value != nullptr)
      v_.copy_value_words(t, [&](std::uint32_t j) { return value[j]; },
                          [&](std::uint32_t j, std::uint64_t w) { detail::store_word(v_.value_at(slot)[j], w); });
    if (t.thread_rank() == 0) {
      if (key != nullptr) {
        for (int j = 0; j < key_words; ++j) detail::store_word(v_.key_word(slot, j), key[j]);
        v_.set_digest(slot, key[key_words - 1] == layout::empty_tag ? 0u : v_.digest_of(key));
      }
      if (!(was_empty && expires == 0)) detail::store_word(v_.s.expires[slot], expires);
      detail::store_word(v_.s.stamps[slot], stamp);
    }
    sync_policy::close(v_, t, slot, ver);
  }

  template <class Tile>
  WARPKV_HD void clear_slot(const Tile& t, std::size_t slot) const {
    std::uint64_t empty[key_words];
    for (int j = 0; j < key_words; ++j) empty[j] = j == key_words - 1 ? layout::empty_tag : 0;
    write_slot(t, slot, empty, nullptr, 0, 0);
  }

  /// Whether cuckoo moves may run now (the make_room gate: enough buckets, kicks allowed, fewer
  /// than kick_slots slots filled). The complete pass (and every user kernel's write) sums the
  /// occupancy shards (64 loads, on the rare path that may walk); the fast pass reads the kick
  /// gate word that the batch's gate pass set from the same sum before the write phase (one
  /// load: docs/design/cache.md, "Cuckoo moves"). One lane reads, all follow: lanes reading a
  /// word that other tiles change could disagree and then part ways around the tile's
  /// collectives.
  template <cache_pass P, class Tile>
  WARPKV_HD bool kicks_allowed(const Tile& t) const {
    if constexpr (choices == 1) return false;  // one bucket: nowhere to move an entry to
    if (v_.buckets < 2 || max_kicks_ == 0) return false;
    std::uint32_t room = 0;
    if (t.thread_rank() == 0) {
      if constexpr (P == cache_pass::complete) {
        room = v_.occupied_slots() < kick_slots_;
      } else {
        const std::uint64_t gate = v_.kick_gate();
        if constexpr (P == cache_pass::fast) room = gate != kick_gate_closed_word;
        else room = gate == kick_gate_open_word || (gate == kick_gate_near_word && v_.occupied_slots() < kick_slots_);
      }
    }
    return t.shfl(room, 0) != 0;
  }

  /// Takes both buckets' locks (bucket_view::lock_pair), then the slot protocol's step after
  /// locking (optimistic: the release fence that orders the odd lock words before the stores).
  template <class Tile>
  WARPKV_HD void lock_pair(const Tile& t, const bucket_pair& p) const {
    v_.lock_pair(t, p);
    sync_policy::locked(v_, t);
  }

  WARPKV_HD bucket_pair pair_of(const Key& k) const {
    std::uint64_t q[key_words];
    layout::to_words(k, q);
    return v_.pair_of(q);
  }

  /// Held: the caller holds k's bucket's lock in a lock group (lock_groups designs only), so
  /// the write neither takes nor releases it.
  template <cache_pass P, bool Held = false, class Tile, class Operands>
  WARPKV_HD status write_op(const Tile& t, const Key& k, mode m, const Operands& ops) const {
    static_assert(!Held || (lock_groups && P == cache_pass::fast), "a held write: the fast pass of a lock-group design");
    if (!layout::valid(k)) {
      if (ops.ev_flag() != nullptr && t.thread_rank() == 0) *ops.ev_flag() = 0;
      return status::invalid_key;
    }
    const bucket_pair p = pair_of(k);
    bucket_pair held = p;  // the buckets whose locks this write holds
    scan_result r;
    bool one_lock = false;
    if constexpr (P == cache_pass::fast && key_words == 1 && sync_policy::value == cache_slot_sync::optimistic) {
      std::uint32_t on = 0;
      if (t.thread_rank() == 0) on = v_.first_bucket_writes() ? 1u : 0u;
      one_lock = p.second != p.first && t.shfl(on, 0) != 0;
    }
    if constexpr (Held) {
      r = locked_scan(t, k, p, ops.clock());
      if constexpr (choices == 2) {
        // held: k's first bucket alone ("One lock"); a write that would leave it (a hit, free or
        // expired slot only in the second bucket, or both full) is the complete pass's, with
        // nothing written (the group releases the lock)
        const std::size_t at = r.hit != npos ? r.hit : r.stale != npos ? r.stale : r.free;
        if (at == npos || at / BucketWidth != p.first) return status::full;
      }
    } else if (one_lock) {
      // One lock (docs/design/cache.md, "One lock"): k's first bucket's alone while the write
      // stays in it (a hit there, or no hit and its first expired or free slot). Every writer of
      // k holds k's first bucket, so while this tile holds it k cannot enter the second bucket;
      // it can only leave it (evicted by a writer of another key), and a one-word key is read
      // whole: the unlocked scan of the second bucket cannot miss k there.
      held = bucket_pair{p.first, p.first};
      if (t.thread_rank() == 0) detail::lock_bucket(v_.s.locks[p.first]);
      t.sync();
      sync_policy::locked(v_, t);
      r = locked_scan(t, k, p, ops.clock());
      const std::size_t at = r.hit != npos ? r.hit : r.stale != npos ? r.stale : r.free;
      if (at == npos && kicks_allowed<P>(t)) {
        // both buckets full as far as the scan saw, cuckoo moves allowed: the complete pass's
        // work (as below), without the second lock; nothing was written under the first
        if (t.thread_rank() == 0) detail::unlock_bucket_unwritten(v_.s.locks[p.first]);
        return status::full;
      }
      if (at == npos || at / BucketWidth != p.first) {
        // the write leaves the first bucket: the second's lock too (blocking only in the lock
        // order; else one attempt, and on failure both in order), then both scanned again
        std::uint32_t got = 0;
        if (t.thread_rank() == 0) {
          if (p.second > p.first) {
            detail::lock_bucket(v_.s.locks[p.second]);
            got = 1;
          } else {
            got = detail::try_lock_bucket(v_.s.locks[p.second]) ? 1u : 0u;
            if (got == 0) detail::unlock_bucket_unwritten(v_.s.locks[p.first]);
          }
        }
        if (t.shfl(got, 0) == 0) v_.lock_pair(t, p);
        held = p;
        sync_policy::locked(v_, t);
        r = locked_scan(t, k, p, ops.clock());
      }
    } else {
      lock_pair(t, p);
      r = locked_scan(t, k, p, ops.clock());
    }
    status st = status::inserted;
    bool evicted = false;  // reported once, after the unlock (one store of the flag per write)
    if (r.hit != npos && !r.hit_expired) {
      if (m == mode::set) {
        write_slot(t, r.hit, nullptr, ops.value(), ops.expires(),
                   eviction_policy::assigned_score(v_, r.hit, ops.clock(), ops.score()));
        st = status::assigned;
      } else {
        if (m == mode::get_or_set) {
          if (ops.out() != nullptr) v_.copy_value(t, r.hit, ops.out());
          if (t.thread_rank() == 0) eviction_policy::touch(v_, r.hit, ops.clock(), detail::load_word(v_.s.stamps[r.hit]));
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
      if (target == npos && kicks_allowed<P>(t)) {
        if constexpr (P == cache_pass::fast) {
          // both buckets full and cuckoo moves may make room: the complete pass's work
          if constexpr (!Held) v_.unlock_pair(t, held);
          return status::full;
        } else {
          if constexpr (choices == 2) {
            // a walk may pass through p's own buckets (we hold them) even when it fails: scan again
            make_room(t, p, ops.clock().stamp);
            r = locked_scan(t, k, p, ops.clock());
            target = r.free;
            fills_empty = target != npos;
          }
        }
      }
      if (target == npos) {
        tile_victim(t, r);
        target = r.victim;  // both buckets hold live entries: evict the policy's victim
        eviction_policy::after_choice(v_, t, p, sweep_start(ops.clock()), r.victim_rank);
        evicted = true;
        if (t.thread_rank() == 0) {
          if (ops.ev_key() != nullptr) *ops.ev_key() = slot_key(target);
          // the evicted entry's score (insert_and_evict's operands only: a compile-time path,
          // absent from the batch write phase's hot kernels)
          if constexpr (requires { ops.ev_score(); })
            if (ops.ev_score() != nullptr) *ops.ev_score() = detail::load_word(v_.s.stamps[target]);
        }
        if (ops.ev_value() != nullptr) v_.copy_value(t, target, ops.ev_value());
      }
      std::uint64_t q[key_words];
      layout::to_words(k, q);
      write_slot(t, target, q, ops.value(), ops.expires(), eviction_policy::inserted_score(ops.clock(), ops.score()), fills_empty);
      if (fills_empty) v_.count_occupied(t, target, 1);
      const std::uint64_t* value = ops.value();
      std::uint64_t* out = ops.out();
      if (m == mode::get_or_set && out != nullptr && value != nullptr)
        v_.copy_value_words(t, [&](std::uint32_t j) { return value[j]; }, [&](std::uint32_t j, std::uint64_t w) { out[j] = w; });
    }
    if constexpr (!Held) v_.unlock_pair(t, held);
    if (ops.ev_flag() != nullptr && t.thread_rank() == 0) *ops.ev_flag() = evicted ? 1 : 0;
    return st;
  }

  /// Under the locks of p, with both buckets full and kicks_allowed: cuckoo walks (at most
  /// max_kicks displacement steps in all, each walk at most max_path deep) for a path ending at
  /// an empty slot, then the moves from its end back to p. True when a slot of p has been emptied.
  template <class Tile>
  WARPKV_HD bool make_room(const Tile& t, const bucket_pair& p, std::uint64_t salt) const {
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
        if (t.thread_rank() == 0 && !v_.slot_empty(slot)) {
          std::uint64_t w[key_words];
          v_.load_key(slot, w);
          const bucket_pair xp = v_.pair_of(w);
          alt = xp.first == cur ? xp.second : xp.first;
        }
        alt = t.shfl(alt, 0);
        if (alt == npos) {  // emptied meanwhile (cannot be in p, which we hold)
          if (depth > 0) target = slot;
          break;
        }
        path_slot[depth++] = slot;
        target = v_.free_in(t, static_cast<std::size_t>(alt));
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
        ok = detail::try_lock_bucket(v_.s.locks[fb]);
        if (ok) got |= 1u;
      }
      if (ok && !own_t) {
        ok = detail::try_lock_bucket(v_.s.locks[tb]);
        if (ok) got |= 2u;
      }
      if (ok && v_.slot_empty(to) && !v_.slot_empty(from)) {
        std::uint64_t w[key_words];
        v_.load_key(from, w);
        const bucket_pair xp = v_.pair_of(w);
        if ((xp.first == fb && xp.second == tb) || (xp.first == tb && xp.second == fb)) got |= 4u;
      }
    }
    got = t.shfl(got, 0);
    t.sync();  // the locks taken by lane 0 order every lane's accesses
    const bool ok = (got & 4u) != 0;
    if (ok) {
      sync_policy::locked(v_, t);  // the buckets this move locked (p's: at lock_pair)
      std::uint64_t w[key_words];
      v_.load_key(from, w);
      const std::uint64_t expires = detail::load_word(v_.s.expires[from]);
      const std::uint64_t stamp = detail::load_word(v_.s.stamps[from]);
      // the copy first, then the clear: a reader of the key sees it in one of its buckets, and a
      // reader overlapping the move sees an odd or changed bucket version (rw_lock: a move
      // counter change) and reads again
      sync_policy::moving(v_, t, fb, tb, true);
      const std::uint32_t ver = sync_policy::open(v_, t, to);
      v_.copy_value_words(t, [&](std::uint32_t j) { return detail::load_word(v_.value_at(from)[j]); },
                          [&](std::uint32_t j, std::uint64_t w) { detail::store_word(v_.value_at(to)[j], w); });
      if (t.thread_rank() == 0) {
        for (int j = 0; j < key_words; ++j) detail::store_word(v_.key_word(to, j), w[j]);
        v_.set_digest(to, v_.digest_of(w));
        detail::store_word(v_.s.expires[to], expires);
        detail::store_word(v_.s.stamps[to], stamp);
      }
      sync_policy::close(v_, t, to, ver);
      clear_slot(t, from);
      sync_policy::moving(v_, t, fb, tb, false);
    }
    t.sync();
    if (t.thread_rank() == 0) {
      if (got & 2u) detail::unlock_bucket(v_.s.locks[tb]);
      if (got & 1u) detail::unlock_bucket(v_.s.locks[fb]);
    }
    return ok;
  }

  view_type v_{};
  std::uint32_t max_kicks_ = 0;
  std::size_t kick_slots_ = 0;
};

}  // namespace warpkv
