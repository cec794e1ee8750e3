#pragma once
// The bucket view: how a cache's slots are addressed and matched, shared by every design.
//   value layout policies    value_slab (values in their own slot-major array; a key's stride is
//                            a compile-time constant) and inline_values (one record per slot: the
//                            key words, then the value words)
//   key match policies       plain_keys (compare the key words) and digest_keys (a byte per slot
//                            from the key's hash, compared first; docs/design/cache.md)
//   placement policies       two_buckets (a key's two cuckoo buckets, entries moved between them)
//                            and one_bucket (a key's one bucket: HierarchicalKV's placement, an
//                            insert into a full bucket evicts there; docs/design/cache.md, "One bucket")
//   bucket_view              a key's buckets, lane-local candidate slots, the tile's choice
//                            of a slot, key and value words, expiry, bucket locks and the
//                            occupancy shards, over one layout and one key match policy.
// Nothing here decides at run time what a design is: a cache type's kernels carry exactly the
// layout and key match its design names (cache_design.hpp).
#include <cstddef>
#include <cstdint>

#include "warpkv/cache/cache_keys.hpp"
#include "warpkv/cache/detail/cache_types.hpp"
#include "warpkv/cache/detail/slot_protocol.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv::detail {

// ---- value layout ------------------------------------------------------------------------------
/// Values in their own array: slot s's key words at keys + s x key_words (a constant stride),
/// its value words at values + s x value_words.
struct value_slab {
  static constexpr cache_layout value = cache_layout::value_slab;
  template <int KeyWords>
  WARPKV_HD static std::size_t key_stride(const cache_storage&) { return static_cast<std::size_t>(KeyWords); }
};
/// One record per slot: key words then value words (a hit's key and value share cache lines).
struct inline_values {
  static constexpr cache_layout value = cache_layout::inline_values;
  template <int KeyWords>
  WARPKV_HD static std::size_t key_stride(const cache_storage& s) { return s.key_stride; }
};

// ---- key match -----------------------------------------------------------------------------------
/// Keys compared word by word; no digest array.
struct plain_keys {
  static constexpr bool digests = false;
};
/// A digest byte per slot compared before the key words (cache_storage::digests).
struct digest_keys {
  static constexpr bool digests = true;
};

// ---- placement -------------------------------------------------------------------------------------
/// A key's two buckets (cuckoo hashing: an entry lives in either, cuckoo moves carry entries
/// between them to make room).
struct two_buckets {
  static constexpr int choices = 2;
};
/// A key's one bucket (HierarchicalKV's placement): a write locks one bucket and scans one, a
/// read probes one, nothing moves; an insert into a full bucket evicts there, so below full load
/// a bucket that overflows evicts while others have room (wide buckets keep that rare).
struct one_bucket {
  static constexpr int choices = 1;
};

template <class Key, int BucketWidth, int TileSize, class Layout, class Match, class Placement = two_buckets>
struct bucket_view {
  using key_layout = cache_key_layout<Key>;
  static constexpr int key_words = key_layout::words;
  static constexpr int bucket_width = BucketWidth;
  static constexpr int tile_size = TileSize;
  static constexpr int per_lane = BucketWidth / TileSize;  // slots of one bucket per lane
  static constexpr int choices = Placement::choices;       // buckets per key
  static constexpr int candidates = choices * per_lane;    // lane-local candidate slots of a key
  static constexpr int span = choices * BucketWidth;       // a key's candidate slots, tile-wide
  /// Lane-local slots in runs of 8 (lane r's slots of a bucket are r x per_lane + 0 .. per_lane-1)
  /// where digests are kept and a lane has whole digest words: one 8-byte load gives a lane the
  /// digests of 8 of its slots (with the strided order, slot i x T + r, a lane's digests lie in
  /// per_lane words). Otherwise the strided order, whose key loads coalesce across the tile.
  static constexpr bool lane_runs = Match::digests && per_lane % 8 == 0;
  static constexpr std::size_t npos = ~std::size_t{0};

  using bucket_pair = cache_bucket_pair;

  cache_storage s{};
  std::size_t buckets = 0;
  std::uint32_t value_words = 0;
  std::uint64_t seed = 0;

  WARPKV_HD std::uint64_t& key_word(std::size_t slot, int j) const {
    return s.keys[slot * Layout::template key_stride<key_words>(s) + static_cast<std::size_t>(j)];
  }
  WARPKV_HD std::uint64_t* value_at(std::size_t slot) const { return s.values + slot * s.value_stride; }

  WARPKV_HD bucket_pair pair_of(const std::uint64_t* q) const {
    const std::size_t a = static_cast<std::size_t>(mul_high(key_layout::hash(q, seed), buckets));
    if constexpr (choices == 1) return {a, a};
    std::size_t b = static_cast<std::size_t>(mul_high(key_layout::hash(q, seed ^ 0x5bd1e9955bd1e995ull), buckets));
    if (b == a && buckets > 1) b = a + 1 == buckets ? 0 : a + 1;
    return {a, b};
  }
  /// Where lane `rank`'s j-th slot (0 .. per_lane-1) of a bucket lies in it.
  WARPKV_HD static std::size_t in_bucket(unsigned rank, int j) {
    if constexpr (lane_runs) return static_cast<std::size_t>(rank) * per_lane + static_cast<std::size_t>(j);
    else return static_cast<std::size_t>(j * TileSize) + rank;
  }
  /// Lane-local slot i (0 .. candidates-1) of the pair: first bucket then second.
  template <class Tile>
  WARPKV_HD std::size_t lane_slot(const Tile& t, const bucket_pair& p, int i) const {
    const std::size_t b = i < per_lane ? p.first : p.second;
    return b * BucketWidth + in_bucket(t.thread_rank(), i % per_lane);
  }
  /// Lane-local candidate i's place in the pair's order (0 .. span-1: the first bucket's slots,
  /// then the second's): random's and clock's sweep.
  template <class Tile>
  WARPKV_HD static std::uint64_t candidate_index(const Tile& t, int i) {
    return static_cast<std::uint64_t>((i < per_lane ? 0 : BucketWidth) + in_bucket(t.thread_rank(), i % per_lane));
  }

  // ---- slots -----------------------------------------------------------------------------------
  WARPKV_HD bool slot_empty(std::size_t slot) const { return load_word(key_word(slot, key_words - 1)) == key_layout::empty_tag; }
  WARPKV_HD bool slot_expired(std::size_t slot, std::uint64_t now) const {
    if (now == 0) return false;  // no clock: nothing expires (and the expiry word need not be read)
    const std::uint64_t e = load_word(s.expires[slot]);
    return e != 0 && e <= now;
  }
  WARPKV_HD void load_key(std::size_t slot, std::uint64_t* w) const {
    for (int j = 0; j < key_words; ++j) w[j] = load_word(key_word(slot, j));
  }
  WARPKV_HD bool key_matches(std::size_t slot, const std::uint64_t* q) const {
    bool same = true;
    for (int j = key_words - 1; j >= 0 && same; --j) same = load_word(key_word(slot, j)) == q[j];
    return same;
  }
  /// Words j = 0 .. value_words-1 of a value, the tile's lanes taking j = rank, rank + T, ...:
  /// store(j, load(j)). Each lane loads up to value_chunk of its words into registers before it
  /// stores any, so a value of up to value_chunk x T words costs one round trip, not one a word
  /// (a load cannot be moved above a store to memory it may alias: the loop that stored each
  /// word as it loaded it waited for every load; docs/perf.md, session 27, calls H and I). 2, not
  /// 4: at 4 the u64 read kernel spills 8 bytes at its 64-register budget.
  static constexpr std::uint32_t value_chunk = 2;
  template <class Tile, class Load, class Store>
  WARPKV_HD void copy_value_words(const Tile& t, const Load& load, const Store& store) const {
    for (std::uint32_t base = t.thread_rank(); base < value_words; base += value_chunk * TileSize) {
      std::uint64_t w[value_chunk] = {};  // g++ cannot see that every stored word was loaded
      for (std::uint32_t c = 0; c < value_chunk; ++c)
        if (base + c * TileSize < value_words) w[c] = load(base + c * TileSize);
      for (std::uint32_t c = 0; c < value_chunk; ++c)
        if (base + c * TileSize < value_words) store(base + c * TileSize, w[c]);
    }
  }
  /// Copies a slot's value (stable: the caller holds its bucket lock, or read it inside a
  /// validated optimistic read, or holds its reader lock) to `out`.
  template <class Tile>
  WARPKV_HD void copy_value(const Tile& t, std::size_t slot, std::uint64_t* out) const {
    const std::uint64_t* v = value_at(slot);
    copy_value_words(t, [&](std::uint32_t j) { return load_word(v[j]); }, [&](std::uint32_t j, std::uint64_t w) { out[j] = w; });
  }

  // ---- key match (digests) ---------------------------------------------------------------------
  /// The digest of key words q: 1..255 (0 marks an empty slot); 0 without digests.
  WARPKV_HD std::uint32_t digest_of(const std::uint64_t* q) const {
    if constexpr (Match::digests) return 1u + static_cast<std::uint32_t>(key_layout::hash(q, seed ^ 0x94d049bb133111ebull) % 255u);
    else return 0;
  }
  /// False when the slot's digest rules key q out (qd: q's digest; no digests: never).
  WARPKV_HD bool digest_admits(std::size_t slot, std::uint32_t qd) const {
    if constexpr (Match::digests) {
      const std::uint64_t w = atomic_ref<std::uint64_t>(s.digests[slot / 8]).load(memory_order::relaxed);
      return (static_cast<std::uint32_t>(w >> (8 * (slot % 8))) & 0xffu) == qd;
    } else {
      return true;
    }
  }
  /// lane_runs: the digest words of this lane's candidates, word m holding candidates 8m .. 8m+7
  /// (relaxed loads, issued together); candidate i's digest is byte i % 8 of word i / 8.
  template <class Tile>
  WARPKV_HD void lane_digest_words(const Tile& t, const bucket_pair& p, int count, std::uint64_t* w) const {
    static_assert(lane_runs, "digest words per lane need runs of 8 slots per lane");
    for (int m = 0; m < count / 8; ++m)
      w[m] = atomic_ref<std::uint64_t>(s.digests[lane_slot(t, p, 8 * m) / 8]).load(memory_order::relaxed);
  }
  WARPKV_HD static std::uint32_t digest_byte(const std::uint64_t* w, int i) {
    return static_cast<std::uint32_t>(w[i / 8] >> (8 * (i % 8))) & 0xffu;
  }
  /// Sets a slot's digest byte (lane 0, inside the slot's write window, holding its bucket lock:
  /// no other writer changes this byte). With buckets of at least 8 slots the word's bytes are
  /// all this bucket's, so no other writer changes the word: a load and a store. With fewer its
  /// other bytes may belong to slots of another bucket whose writers change them at the same
  /// time: and/or touch this byte alone.
  WARPKV_HD void set_digest(std::size_t slot, std::uint32_t d) const {
    if constexpr (Match::digests) {
      const unsigned shift = 8 * static_cast<unsigned>(slot % 8);
      atomic_ref<std::uint64_t> w(s.digests[slot / 8]);
      if constexpr (BucketWidth % 8 == 0) {
        const std::uint64_t old = w.load(memory_order::relaxed);
        w.store((old & ~(std::uint64_t{0xff} << shift)) | (static_cast<std::uint64_t>(d) << shift), memory_order::relaxed);
      } else {
        w.fetch_and(~(std::uint64_t{0xff} << shift), memory_order::relaxed);
        if (d != 0) w.fetch_or(static_cast<std::uint64_t>(d) << shift, memory_order::relaxed);
      }
    }
  }

  // ---- the tile's choices ----------------------------------------------------------------------
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
    if constexpr (per_lane >= 2) {
      // the first flagged slot of each bucket by its place in the bucket (in_bucket: the
      // candidate order, strided or in runs), a tile minimum (log2 T shuffles) instead of a
      // ballot a candidate, whose data-dependent exits part the tiles of a warp
      for (int c = 0; c < choices; ++c) {
        std::uint32_t mine = ~0u;
        for (int j = per_lane - 1; j >= 0; --j)
          if (flag[c * per_lane + j]) mine = static_cast<std::uint32_t>(in_bucket(t.thread_rank(), j));
        for (unsigned off = 1; off < static_cast<unsigned>(TileSize); off <<= 1) {
          const std::uint32_t other = t.shfl(mine, t.thread_rank() ^ off);
          mine = other < mine ? other : mine;
        }
        if (mine != ~0u) return (c == 0 ? p.first : p.second) * BucketWidth + mine;
      }
    } else {
      for (int i = 0; i < candidates; ++i) {
        const std::uint32_t mask = t.ballot(flag[i]);
        if (mask == 0) continue;
        const std::size_t b = i < per_lane ? p.first : p.second;
        return b * BucketWidth + static_cast<std::size_t>((i % per_lane) * TileSize + lowest_lane(mask));
      }
    }
    return npos;
  }
  /// First empty slot of bucket b, tile-wide (npos = none).
  template <class Tile>
  WARPKV_HD std::size_t free_in(const Tile& t, std::size_t b) const {
    std::size_t mine = npos;
    for (int i = 0; i < per_lane && mine == npos; ++i) {
      const std::size_t slot = b * BucketWidth + in_bucket(t.thread_rank(), i);
      if (slot_empty(slot)) mine = slot;
    }
    return tile_first(t, mine);
  }

  // ---- bucket locks and the occupancy count ----------------------------------------------------
  /// Takes both buckets' locks (lane 0; docs/design/cache.md, "Writers"). First one step: a
  /// try-lock (fetch_or, acquire) of each, both issued before either result is used (one round
  /// trip where the ordered acquisition took two; an acquire atomic is the atomic and an L1
  /// invalidation on sm_90, where a standalone acquire fence would be a full MEMBAR). When the lower bucket was taken and the
  /// higher one not, it keeps the lower and waits for the higher (the ascending order); when
  /// the lower one failed, it gives back the higher one if it took it (having waited for
  /// nothing while holding it) and takes both in ascending order. So a tile waits only while
  /// holding nothing or the lower bucket of its pair: the ordered protocol's wait-for edges.
  template <class Tile>
  WARPKV_HD void lock_pair(const Tile& t, const bucket_pair& p) const {
    if (t.thread_rank() == 0) {
      const std::size_t lo = p.first < p.second ? p.first : p.second;
      const std::size_t hi = p.first < p.second ? p.second : p.first;
      if (hi == lo) {
        lock_bucket(s.locks[lo]);
      } else {
        const bool got_lo = try_lock_bucket(s.locks[lo]);
        const bool got_hi = try_lock_bucket(s.locks[hi]);
        if (!got_lo) {
          if (got_hi) unlock_bucket(s.locks[hi]);  // nothing was read or written under it
          lock_bucket(s.locks[lo]);
          lock_bucket(s.locks[hi]);
        } else if (!got_hi) {
          lock_bucket(s.locks[hi]);
        }
      }
    }
    t.sync();
  }
  /// Releases both buckets' locks: one release fence (after every lane's accesses: tile sync)
  /// orders the tile's reads and writes under the locks before both relaxed adds that move the
  /// words to their next even values (one fence where two release adds would be two).
  template <class Tile>
  WARPKV_HD void unlock_pair(const Tile& t, const bucket_pair& p) const {
    t.sync();  // every lane's writes precede the release
    if (t.thread_rank() == 0) {
      atomic_thread_fence(memory_order::release);
      atomic_ref<std::uint32_t>(s.locks[p.first]).fetch_add(1u, memory_order::relaxed);
      if (p.second != p.first) atomic_ref<std::uint32_t>(s.locks[p.second]).fetch_add(1u, memory_order::relaxed);
    }
  }
  /// Bucket b's lock word as a version (relaxed): even and unchanged between two loads = no
  /// writer held b in between (the optimistic readers' validation).
  WARPKV_HD std::uint32_t bucket_version(std::size_t b) const {
    return atomic_ref<std::uint32_t>(s.locks[b]).load(memory_order::relaxed);
  }
  /// Slots holding an entry (live or expired) by the sharded count: the shards summed
  /// (independent loads; exact between batches, an estimate while inserts run). A user kernel's
  /// cuckoo gate and the batch's gate pass read it, and the batch's complete pass when the gate
  /// word says `near`; the batch's passes otherwise read the gate word alone (kick_gate()).
  WARPKV_HD std::size_t occupied_slots() const {
    unsigned long long n = 0;
    for (std::size_t k = 0; k < occupancy_shards; ++k)
      n += atomic_ref<unsigned long long>(s.occupied[k * occupancy_stride]).load(memory_order::relaxed);
    return static_cast<std::size_t>(n);
  }
  /// The batch's cuckoo gate word (after the occupancy shards, in its own sector), as the gate
  /// pass before the batch's write phase set it (cache_gate_fn): kick_gate_open when fewer than
  /// kick_slots slots were filled with room for the whole batch below it, kick_gate_closed at or
  /// above kick_slots, kick_gate_near in between (the batch's inserts could cross the limit). One
  /// load of a word that only gate passes write.
  WARPKV_HD std::uint64_t kick_gate() const {
    return atomic_ref<unsigned long long>(s.occupied[kick_gate_index]).load(memory_order::relaxed);
  }
  WARPKV_HD void set_kick_gate(std::uint64_t w) const {
    atomic_ref<unsigned long long>(s.occupied[kick_gate_index]).store(w, memory_order::relaxed);
  }
  /// Whether the batch's fast write pass may take a key's first bucket's lock alone (the gate
  /// pass's choice by the load: cache_ref::refresh_kick_gate; docs/design/cache.md, "One lock").
  WARPKV_HD bool first_bucket_writes() const {
    return atomic_ref<unsigned long long>(s.occupied[first_bucket_gate_index]).load(memory_order::relaxed) != 0;
  }
  WARPKV_HD void set_first_bucket_writes(bool on) const {
    atomic_ref<unsigned long long>(s.occupied[first_bucket_gate_index]).store(on ? 1u : 0u, memory_order::relaxed);
  }
  /// Adds `delta` to the filled-slot count of slot's shard (lane 0).
  template <class Tile>
  WARPKV_HD void count_occupied(const Tile& t, std::size_t slot, unsigned long long delta) const {
    if (t.thread_rank() != 0) return;
    const std::size_t shard = (slot / BucketWidth) % occupancy_shards;
    atomic_ref<unsigned long long>(s.occupied[shard * occupancy_stride]).fetch_add(delta, memory_order::relaxed);
  }
};

}  // namespace warpkv::detail
