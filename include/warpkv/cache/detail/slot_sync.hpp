#pragma once
// Slot synchronization policies of kv_cache (docs/design/cache.md, "The two synchronization
// words"): how a writer opens and closes a slot's write window and how a reader reads a key's
// candidates without the bucket locks. Each is a type with static members over a bucket view:
//   value                                     its cache_slot_sync name (cache_config::sync)
//   move_counters                             whether cuckoo moves keep per-bucket move counters
//   locked(v, t)                              after the tile took bucket locks, before it writes
//   open(v, t, slot) / close(v, t, slot, w)   a write window (the caller holds the bucket lock;
//                                             w: what open returned)
//   moving(v, t, fb, tb, start)               a cuckoo move between buckets fb and tb starts / ends
//   lookup<Eviction>(v, t, q, p, c, out, refresh)
//                                             the lock-free read: the slot of a live entry of q
//                                             (its value copied to out, recency refreshed) or npos
// The words themselves (bucket locks, the seed's reader/writer lock): slot_protocol.hpp.
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/detail/cache_types.hpp"
#include "warpkv/cache/detail/slot_protocol.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"

namespace warpkv::detail {

/// Optimistic reads validated by the bucket lock words (the buckets' versions: seqlocks) and
/// written nothing (the default). A writer's slot stores need no window of their own: the held
/// bucket lock is the odd version.
struct optimistic_slots {
  static constexpr cache_slot_sync value = cache_slot_sync::optimistic;
  static constexpr bool move_counters = false;

  /// After the tile took bucket locks (lane 0, then a tile sync): every lane's release fence
  /// orders the odd lock words before each store it makes under them (the seqlock writer's
  /// fence: a reader that sees one of those stores sees the odd or a later word when it loads the
  /// version again). Every lane, not lane 0 alone: a lane's stores are ordered after its own
  /// fence, and the lock words before that fence through the tile sync.
  template <class View, class Tile>
  WARPKV_HD static void locked(const View&, const Tile&) {
    atomic_thread_fence(memory_order::release);
  }
  /// A slot's write window: nothing to do (the bucket's lock word is odd while it is held).
  template <class View, class Tile>
  WARPKV_HD static std::uint32_t open(const View&, const Tile&, std::size_t) {
    return 0;
  }
  template <class View, class Tile>
  WARPKV_HD static void close(const View&, const Tile&, std::size_t, std::uint32_t) {}
  template <class View, class Tile>
  WARPKV_HD static void moving(const View&, const Tile&, std::size_t, std::size_t, bool) {}

  /// First the key's first bucket alone (inserts fill it first, so most entries live there): a
  /// validated hit there is a hit. Otherwise, and for every miss, both buckets at once (a miss
  /// needs the snapshot of both: an entry may be in transit between them). One bucket per key:
  /// that bucket's validated probe is the answer, hit or miss.
  template <class Eviction, class View, class Tile>
  WARPKV_HD static std::size_t lookup(const View& v, const Tile& t, const std::uint64_t* q, const typename View::bucket_pair& p,
                                      cache_clock c, std::uint64_t* out, bool refresh) {
    std::size_t hit = View::npos;
    const std::uint32_t qd = v.digest_of(q);
    if constexpr (View::choices == 2)
      if (probe<Eviction>(v, t, q, qd, p, c, out, refresh, View::per_lane, hit) == probe_result::valid && hit != View::npos)
        return hit;
    for (int attempt = 0;; ++attempt) {  // one bucket: its probe, until one validates
      const probe_result r = probe<Eviction>(v, t, q, qd, p, c, out, refresh, View::candidates, hit);
      if (r == probe_result::valid) return hit;
      if (r == probe_result::busy) backoff(attempt);
    }
  }

  enum class probe_result { valid, busy, changed };
  /// One optimistic read of the lane-local candidates [0, count) (per_lane: the first bucket;
  /// 2 x per_lane: both): the buckets' versions (their lock words), keys, value, the versions
  /// again. `valid`: `hit` is the slot of a live entry of q whose value is in `out` (npos: none
  /// among the candidates), all read while no writer held a candidate bucket; `busy`: a writer
  /// held one; `changed`: one was written meanwhile. Every lane issues all its loads of one step
  /// before it uses any of them (no early exits between loads), so a step costs one round trip
  /// to memory: versions, keys, value (with the hit slot's recency word), versions again.
  template <class Eviction, class View, class Tile>
  WARPKV_HD static probe_result probe(const View& v, const Tile& t, const std::uint64_t* q, std::uint32_t qd,
                                      const typename View::bucket_pair& p, cache_clock c, std::uint64_t* out, bool refresh,
                                      int count, std::size_t& hit) {
    constexpr int n = View::candidates;
    const bool both = count > View::per_lane;
    const std::uint32_t v1 = v.bucket_version(p.first);
    const std::uint32_t v2 = both ? v.bucket_version(p.second) : 0u;
    // one fence for the version loads (as if each were an acquire load): they are ordered before
    // the key and value reads
    atomic_thread_fence(memory_order::acquire);
    if (!t.all(((v1 | v2) & 1u) == 0)) return probe_result::busy;
    bool match[n];
    std::uint64_t dw[View::lane_runs ? n / 8 : 1];  // lane_runs: this lane's digest words
    if constexpr (View::lane_runs) v.lane_digest_words(t, p, count, dw);
    for (int i = 0; i < count; ++i) {
      const std::size_t slot = v.lane_slot(t, p, i);
      // with digests, a slot's key words are read only where its digest matches (one dependent
      // load more, W x key words fewer bytes)
      bool same;
      if constexpr (View::lane_runs) same = View::digest_byte(dw, i) == qd;
      else same = v.digest_admits(slot, qd);
      if (same)
        for (int j = 0; j < View::key_words; ++j) same = (load_word(v.key_word(slot, j)) == q[j]) && same;
      match[i] = same;
    }
    std::size_t mine = View::npos;
    for (int i = 0; i < count && mine == View::npos; ++i)
      if (match[i] && !v.slot_expired(v.lane_slot(t, p, i), c.now)) mine = v.lane_slot(t, p, i);
    hit = View::tile_first(t, mine);
    std::uint64_t seen = 0;  // the hit slot's recency word, read alongside its value
    if (hit != View::npos) {
      if (out != nullptr) v.copy_value(t, hit, out);
      if (refresh && mine == hit) seen = load_word(v.s.stamps[hit]);
    }
    atomic_thread_fence(memory_order::acquire);
    t.sync();  // every lane's value reads precede the hit slot's owner's second version read
    const bool same = v.bucket_version(p.first) == v1 && (!both || v.bucket_version(p.second) == v2);
    if (!t.all(same)) return probe_result::changed;  // a writer changed a candidate bucket: read again
    if (hit != View::npos && refresh && mine == hit) Eviction::touch(v, hit, c, seen);
    return probe_result::valid;
  }
};

/// The seed's per-slot reader/writer lock (CCHT section 4.4; writer out by atomicSub(1)), with
/// per-bucket move counters so that a reader visiting slots one at a time never misses an entry
/// that a cuckoo move carries between its buckets.
struct rw_lock_slots {
  static constexpr cache_slot_sync value = cache_slot_sync::rw_lock;
  static constexpr bool move_counters = true;

  /// After the tile took bucket locks: nothing (each slot's write lock orders its own stores).
  template <class View, class Tile>
  WARPKV_HD static void locked(const View&, const Tile&) {}

  /// Lane 0 takes the slot's writer lock, waiting for the readers inside to leave.
  template <class View, class Tile>
  WARPKV_HD static std::uint32_t open(const View& v, const Tile& t, std::size_t slot) {
    if (t.thread_rank() == 0) write_lock_slot(v.s.versions[slot]);
    t.sync();
    atomic_thread_fence(memory_order::release);
    return 0;
  }
  template <class View, class Tile>
  WARPKV_HD static void close(const View& v, const Tile& t, std::size_t slot, std::uint32_t) {
    t.sync();
    if (t.thread_rank() == 0) write_unlock_slot(v.s.versions[slot]);
  }
  /// The move counters of buckets fb and tb (whose locks are held) go odd at the start of a move
  /// (ordered before its stores by a release fence) and back to even after it (release).
  template <class View, class Tile>
  WARPKV_HD static void moving(const View& v, const Tile& t, std::size_t fb, std::size_t tb, bool start) {
    t.sync();
    if (t.thread_rank() == 0) {
      const memory_order o = start ? memory_order::relaxed : memory_order::release;
      atomic_ref<std::uint32_t> mf(v.s.moves[fb]), mt(v.s.moves[tb]);
      mf.store(mf.load(memory_order::relaxed) + 1, o);
      mt.store(mt.load(memory_order::relaxed) + 1, o);
      if (start) atomic_thread_fence(memory_order::release);
    }
    t.sync();
  }

  /// Each lane takes the reader lock of one candidate slot at a time, compares, and keeps it only
  /// on a match while the tile copies the value. A miss is accepted only when no cuckoo move ran
  /// into or out of either bucket meanwhile (the buckets' move counters are even and unchanged).
  template <class Eviction, class View, class Tile>
  WARPKV_HD static std::size_t lookup(const View& v, const Tile& t, const std::uint64_t* q, const typename View::bucket_pair& p,
                                      cache_clock c, std::uint64_t* out, bool refresh) {
    const std::uint32_t qd = v.digest_of(q);
    for (int attempt = 0;; ++attempt) {
      std::uint32_t m1 = 0, m2 = 0;
      if (t.thread_rank() == 0) {
        m1 = atomic_ref<std::uint32_t>(v.s.moves[p.first]).load(memory_order::acquire);
        m2 = atomic_ref<std::uint32_t>(v.s.moves[p.second]).load(memory_order::acquire);
      }
      m1 = t.shfl(m1, 0);
      m2 = t.shfl(m2, 0);
      if (((m1 | m2) & 1u) != 0) {
        backoff(attempt);
        continue;
      }
      std::size_t mine = View::npos;  // held: the reader lock of this slot
      for (int i = 0; i < View::candidates && mine == View::npos; ++i) {
        const std::size_t slot = v.lane_slot(t, p, i);
        read_lock_slot(v.s.versions[slot]);
        if (v.digest_admits(slot, qd) && v.key_matches(slot, q) && !v.slot_expired(slot, c.now)) mine = slot;
        else read_unlock_slot(v.s.versions[slot]);
      }
      const std::size_t hit = View::tile_first(t, mine);
      if (hit != View::npos) {
        t.sync();  // the owner's lock acquisition precedes every lane's value reads
        if (out != nullptr) v.copy_value(t, hit, out);
        t.sync();  // every lane's reads precede the release
        if (mine == hit && refresh) Eviction::touch(v, hit, c, load_word(v.s.stamps[hit]));
        if (mine != View::npos) read_unlock_slot(v.s.versions[mine]);  // a second copy (entry in transit) too
        return hit;
      }
      atomic_thread_fence(memory_order::acquire);
      std::uint32_t same = 0;
      if (t.thread_rank() == 0)
        same = atomic_ref<std::uint32_t>(v.s.moves[p.first]).load(memory_order::relaxed) == m1 &&
               atomic_ref<std::uint32_t>(v.s.moves[p.second]).load(memory_order::relaxed) == m2;
      if (t.shfl(same, 0) != 0) return View::npos;
    }
  }
};

}  // namespace warpkv::detail
