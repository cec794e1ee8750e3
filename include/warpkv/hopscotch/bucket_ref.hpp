#pragma once
// hopscotch_bucket_ref: the device-side view of a hopscotch_map with the bucketized layout
// (hopscotch_buckets, "H64"; design, invariants M/R/N/U and linearization points:
// docs/design/hopscotch_buckets.md). Usable inside user kernels with a cooperative tile of 1, 2,
// 4, 8, 16 or 32 lanes (every lane calls the same method with the same arguments and gets the
// same result); 1 and 4 are the shapes it is measured and tested with.
//
// Layout: 64-byte buckets, a header word (hop bits for buckets h+1..h+15, a 16-bit digest of the
// external members' keys, lock, version) and 7 packed (key, value) slots (detail/bucket_layout.hpp).
//
// Guarantees (this landing):
//  - every operation is linearizable;
//  - find reads the home bucket (one 64-byte read: one 8-byte word per lane-word, each single-copy
//    atomic) and answers there unless the header's digest names k's digest bit; then it reads the
//    named buckets and validates the header's version. It never writes and never waits (lock-free);
//  - insert's fast path is one CAS of the lowest empty home slot (after the named buckets when the
//    digest says so); insert_or_assign of a home resident and erase of a home resident are one CAS;
//  - no empty home slot: the tile itself (fast kernel included) locks the home by a CAS from the
//    header it validated, stores the pair in the first of h+1..h+15 with an empty slot (each read
//    whole by the tile) and unlocks naming it (hop bit and digest; place_external);
//  - the slow path (no empty slot in reach; the home locked by another; an external member's
//    assign or erase) holds the home's lock and never waits for another lock while holding it: it
//    reuses a home tomb, else claims a free slot (empty or tomb) in h+1..h+15, names it in the
//    header (hop bit and digest), then stores the pair;
//  - displacement (complete insert only, never in the fast kernels): when h+1..h+15 has no free
//    slot either and the home's stash window is full (the stash is tried first), it plans a path
//    from a free slot at most 63 buckets on back into reach, try-locks
//    the homes of the external members on it, claims the slot and moves those members one step
//    each (copy, name, vacate; un-named at the unlock), farthest first; home residents never move,
//    and no claimed slot is given up (a failed try-lock or claim releases the path's homes before
//    anything is claimed, and the next attempt plans again);
//  - the stash: a key that does not fit in reach goes to the stash (1/32 of the table's slots
//    after it, detail/bucket_layout.hpp) under its home's lock, which first sets the home's
//    overflow bit (kept until a rebuild); lookups of keys homed there also read the home's stash
//    window (4 buckets). Only when that window is full does displacement run, and only when it
//    places nothing either does insert answer full (the table unchanged for k; the bulk API grows
//    the table);
//  - 4-byte keys and values only (wider pairs: 128-byte buckets, later);
//  - three key values are reserved, the empty key, tomb = empty ^ 1 and claimed = empty ^ 2: all
//    get status::invalid_key;
//  - erased slots stay tombs (invariant M: a bucket slot never returns to empty while operations
//    run; an erased stash slot does); slow paths reuse tombs, and a rebuild of the table (growth, rehash, or the
//    map's maintain() after a batch that leaves tombs above a quarter of the capacity) clears them.
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"
#include "warpkv/hopscotch/detail/bucket_layout.hpp"

// Test seam (as cpu/hopscotch_map.hpp's): a host test translation unit may define
// WARPKV_H64_RACE_PROBE before including this header to make displacement's moves yield between
// their steps and searches of the named buckets yield after their header read, which widens the windows that the
// order of a move's steps guards from nanoseconds to a scheduler slice. Device code never yields.
#if defined(WARPKV_H64_RACE_PROBE) && !WARPKV_DEVICE_PASS
#include <thread>
#define WARPKV_H64_PROBE() std::this_thread::yield()
#else
#define WARPKV_H64_PROBE() ((void)0)
#endif

namespace warpkv {

template <hash_key Key, map_value Value>
class hopscotch_bucket_ref {
  static_assert(sizeof(Key) == 4 && sizeof(Value) == 4,
                "hopscotch_buckets (H64) holds 4-byte keys and values in this landing (one packed 8-byte slot "
                "per pair); wider pairs need 128-byte buckets (docs/design/hopscotch_buckets.md): use the default "
                "layout, hopscotch_slots");

 public:
  using key_type = Key;
  using mapped_type = Value;
  using key_bits = std::uint32_t;
  using value_bits = std::uint32_t;
  using slot_type = detail::hop_bucket;  ///< the map's storage unit: one 64-byte bucket

  /// The bulk API runs uniform insert batches through insert_fast first (a kernel without lock
  /// code) and re-runs what it hands back as full with insert() (core/map_ops.hpp, pass::fast).
  static constexpr bool fast_bulk_inserts = true;
  /// Registers per thread of the bulk find / erase / fast insert kernels (launch bounds,
  /// core/launcher.hpp), and of the complete insert's second launch (64 since displacement: its
  /// plan and path are three 64-bit masks; at 48 it spilled 264-272 bytes, at 64 16 / 60).
  static constexpr int hot_register_budget = 40;
  /// The fast insert kernel carries the tile's neighbour placement (place_external): at 40 it kept
  /// 24 bytes of local memory (session 14, call C), so it gets 48.
  static constexpr int fast_insert_register_budget = 48;
  static constexpr int find_register_budget = 44;
  static constexpr int slow_register_budget = 64;
  /// Uniform batches of one-lane tiles launch a thread per operation rather than a persistent
  /// grid (core/launcher.hpp), as open addressing's do (session 11, call K: inserts +14-32 %).
  static constexpr bool thread_per_op = true;

  /// Buckets of a table of `capacity` slots (7 per bucket), then its stash.
  WARPKV_HD static constexpr std::size_t storage_slots(std::size_t capacity) {
    return capacity / detail::h64::slots + detail::h64::stash_buckets(capacity / detail::h64::slots);
  }

  hopscotch_bucket_ref() = default;
  /// `buckets` holds `num_buckets` buckets (a power of two, at least 16).
  hopscotch_bucket_ref(slot_type* buckets, std::size_t num_buckets, Key empty_key, std::uint64_t seed)
      : b_(buckets),
        mask_(num_buckets - 1),
        stash_mask_(detail::h64::stash_buckets(num_buckets) - 1),
        empty_(to_bits(empty_key)),
        seed_(seed) {}

  /// Slots of the table (7 per bucket).
  WARPKV_HD std::size_t capacity() const { return detail::h64::slots * (mask_ + 1); }
  WARPKV_HD std::size_t buckets() const { return mask_ + 1; }
  /// Stash buckets after the table's (storage index buckets() + i).
  WARPKV_HD std::size_t stash_buckets() const { return stash_mask_ + 1; }
  /// The first of k's stash_window stash buckets (those of its home), as an index into the stash.
  WARPKV_HD std::size_t stash_home(Key k) const { return stash_first(home(k)); }
  WARPKV_HD Key empty_key() const { return from_bits<Key>(empty_); }
  WARPKV_HD Key tomb_key() const { return from_bits<Key>(tomb()); }
  WARPKV_HD Key claimed_key() const { return from_bits<Key>(claimed()); }
  WARPKV_HD bool is_reserved(Key k) const { return reserved(to_bits(k)); }
  WARPKV_HD std::size_t home(Key k) const { return home_bits(to_bits(k)); }
  /// k's digest bit (0..15) in its home's header.
  WARPKV_HD unsigned digest_index(Key k) const { return digest_bits(to_bits(k)); }

  /// Inserts (k, v) if k is absent: inserted, found (k present, unchanged), full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert(const Tile& t, Key k, Value v) const {
    return upsert<true>(t, to_bits(k), to_bits(v), false);
  }
  /// Inserts (k, v) or replaces k's value: inserted, assigned, full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert_or_assign(const Tile& t, Key k, Value v) const {
    return upsert<true>(t, to_bits(k), to_bits(v), true);
  }
  /// The fast path alone: the home CAS, and the tile's own placement in a neighbour when the home
  /// is full (a lock that waits for nothing); status::full when the home's lock is held by another
  /// or no neighbour in reach has an empty slot (displacement and the stash are insert()'s), and
  /// (insert_or_assign_fast) when k is an external member, whose assignment needs the home's
  /// lock. The table is then unchanged for k. Linearizable like insert() otherwise, in a launch
  /// in which nothing erases (the bulk API's insert launches, a mixed batch's write pass, a
  /// rebuild's re-inserts): a one-lane tile's first read is weak and trusts a key it shows.
  template <class Tile>
  WARPKV_HD status insert_fast(const Tile& t, Key k, Value v) const {
    return upsert<false>(t, to_bits(k), to_bits(v), false);
  }
  template <class Tile>
  WARPKV_HD status insert_or_assign_fast(const Tile& t, Key k, Value v) const {
    return upsert<false>(t, to_bits(k), to_bits(v), true);
  }
  /// found (value written to *out on every lane when out != nullptr), not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status find(const Tile& t, Key k, Value* out = nullptr) const {
    return find_with<read_mode::relaxed>(t, k, out);
  }
  /// find over a table that nothing writes while it runs (the bulk API's find-only batches):
  /// plain loads, 16 bytes at a time on the GPU, and no version check.
  template <class Tile>
  WARPKV_HD status find_quiescent(const Tile& t, Key k, Value* out = nullptr) const {
    return find_with<read_mode::quiescent>(t, k, out);
  }
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, Key k) const {
    return find(t, k, nullptr);
  }
  /// erased, not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, Key k) const {
    const key_bits kb = to_bits(k);
    if (reserved(kb)) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    for (int round = 0;; ++round) {
      const look l = read_bucket<read_mode::relaxed, false>(t, b, kb);
      if (l.hit >= 0) {
        // A home resident (R: it never moves): the CAS to tomb is the linearization point.
        bool ok = false;
        if (t.thread_rank() == 0) ok = cas(b, static_cast<unsigned>(l.hit), pack(kb, l.value), tomb_word());
        if (t.shfl(ok, 0)) return status::erased;
        continue;  // assigned or erased meanwhile: look again
      }
      if (!may_be_named(l.header, kb)) return status::not_found;
      const named n = search_named<read_mode::relaxed>(t, b, kb, l.header);
      if (n.state == named::changed) continue;
      if (n.state == named::absent) return status::not_found;
      // An external member: under the home's lock.
      int r = retry;
      if (t.thread_rank() == 0) r = erase_external(b, kb);
      r = t.shfl(r, 0);
      if (r == done) return status::erased;
      backoff(round);
    }
  }

 private:
  static constexpr int retry = -1, done = 0;
  static constexpr int slow_inserted = 1, slow_found = 2, slow_assigned = 3, slow_full = 4;
  static constexpr int slow_full_no_free = 5;  ///< place_external<true>: no empty slot and no tomb read in reach
  static constexpr unsigned displace_buckets = 64;  // displacement's reach in buckets (its plan: one 64-bit mask)
  static constexpr int max_displace_attempts = 8;   // plans before displacement gives up (then full)
  static constexpr std::uint64_t digest_salt = 0x2545f4914f6cdd1dull;  // the digest hash's seed differs from the home's
  static constexpr unsigned stash_bit = 16;                           // named_set: bit 16 + i is stash bucket i
  static constexpr std::uint32_t stash_set = ((1u << detail::h64::stash_window) - 1u) << stash_bit;

  /// What a tile's read of one bucket found: the header, the word index (1-7) holding the key and
  /// its value, and the lowest empty word index (-1: none).
  struct look {
    std::uint64_t header;
    int hit;
    value_bits value;
    int empty;
    bool tomb = false;  ///< a slot holds a tomb (read_bucket's Tombs only)
  };
  /// How the named buckets' search ended: found (with the key's value); absent (the version check
  /// passed); or changed (the home's header moved on: search again).
  struct named {
    enum state_t { found, absent, changed } state;
    value_bits value;
  };

  WARPKV_HD key_bits tomb() const { return empty_ ^ key_bits{1}; }
  WARPKV_HD key_bits claimed() const { return empty_ ^ key_bits{2}; }
  WARPKV_HD bool reserved(key_bits kb) const { return kb == empty_ || kb == tomb() || kb == claimed(); }
  WARPKV_HD static std::uint64_t pack(key_bits k, value_bits v) { return detail::h64::pair::pack(k, v); }
  WARPKV_HD std::uint64_t empty_word() const { return pack(empty_, 0); }
  WARPKV_HD std::uint64_t tomb_word() const { return pack(tomb(), 0); }
  WARPKV_HD std::size_t home_bits(key_bits kb) const { return static_cast<std::size_t>(hash_bits(kb, seed_)) & mask_; }
  WARPKV_HD unsigned digest_bits(key_bits kb) const {
    return static_cast<unsigned>(hash_bits(kb, seed_ ^ digest_salt) >> 28) & 15u;
  }
  /// Whether kb may be an external member (the digest names its bit) or in the stash (overflow).
  WARPKV_HD bool may_be_named(std::uint64_t header, key_bits kb) const {
    const std::uint32_t d = detail::h64::digest(header);
    if (d == 0) return detail::hop::overflowed(header);
    return detail::hop::overflowed(header) || ((d >> digest_bits(kb)) & 1u) != 0;
  }
  /// The buckets the slow paths search for kb after its home b (header h): bit j (1-15) bucket
  /// b + j (hop bits), bit stash_bit + i (overflow) kb's stash bucket i (named_bucket).
  WARPKV_HD static std::uint32_t named_set(std::uint64_t h) {
    return detail::h64::hop_bits(h) | (detail::hop::overflowed(h) ? stash_set : 0u);
  }
  WARPKV_HD std::size_t named_bucket(std::size_t b, unsigned j) const {
    return j < stash_bit ? idx(b, j) : mask_ + 1 + ((stash_first(b) + (j - stash_bit)) & stash_mask_);
  }
  /// The first stash bucket of the window of the keys homed at b: b times an odd constant, so
  /// that neighbouring homes (whose neighbourhoods fill together) get windows far apart.
  WARPKV_HD std::size_t stash_first(std::size_t b) const {
    return (static_cast<std::uint32_t>(b) * 0x9e3779b1u) & static_cast<std::uint32_t>(stash_mask_);
  }

  WARPKV_HD std::size_t idx(std::size_t b, unsigned j) const { return (b + j) & mask_; }
  WARPKV_HD atomic_ref<std::uint64_t> word(std::size_t b, unsigned w) const {
    return atomic_ref<std::uint64_t>(b_[b].word[w]);
  }
  WARPKV_HD bool cas(std::size_t b, unsigned w, std::uint64_t expected, std::uint64_t desired,
                     memory_order o = memory_order::relaxed) const {
    return word(b, w).compare_exchange(expected, desired, o);
  }

  /// Lane 0 (the slow paths): bucket b's eight words, header first, in four 16-byte relaxed
  /// loads that are all in flight at once. The slow paths scan a bucket's slots this way and then
  /// branch on what they read: a loop that loads a word, branches on it and only then loads the
  /// next paid one dependent L2 round trip per word (each load is a compiler barrier), up to 105
  /// of them for a scan of b+1 .. b+15 (session 25, call A). Each word is still single-copy
  /// atomic and every conclusion drawn from it is a CAS from the value read, or is made under
  /// the locks that keep it (as before). unlock_recomputed keeps its word-by-word loop: it runs
  /// in the erase kernel too, whose tile-4 form got 8 bytes of local memory from the arrays.
  WARPKV_HD void load_words(std::size_t b, std::uint64_t (&x)[detail::h64::words]) const {
    detail::h64::load_lane_words<read_mode::relaxed, 1>(b_[b], 0, tomb_word(), x);
  }

  /// The tile reads bucket b (each lane its words) and looks for kb (and, when Empties, the lowest
  /// empty slot). Lane 0's first word is the header; every lane gets the result.
  template <read_mode Reads, bool Empties, class Tile, bool Tombs = false>
  WARPKV_HD look read_bucket(const Tile& t, std::size_t b, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    constexpr unsigned W = detail::h64::words_per_lane<T>;
    const unsigned rank = t.thread_rank();
    std::uint64_t w[W];
    detail::h64::load_lane_words<Reads, T>(b_[b], rank, tomb_word(), w);
    bool hit = false, empty = false, tomb = false;
    unsigned hit_at = 0, empty_at = 0;
    value_bits v = 0;
    WARPKV_UNROLL
    for (unsigned i = 0; i < W; ++i) {
      const unsigned at = rank * W + i;
      if (at == 0) continue;  // the header
      const auto e = detail::h64::pair::unpack(w[i]);
      if (!hit && e.key == kb) hit = true, hit_at = at, v = e.value;
      if (Empties && !empty && w[i] == empty_word()) empty = true, empty_at = at;
      if (Tombs && w[i] == tomb_word()) tomb = true;
    }
    look l{t.shfl(w[0], 0), -1, 0, -1};
    if constexpr (Tombs) l.tomb = t.ballot(tomb) != 0;
    const std::uint32_t hits = t.ballot(hit);
    if (hits != 0) {
      const unsigned lane = static_cast<unsigned>(lowest_lane(hits));
      l.hit = static_cast<int>(t.shfl(hit_at, lane));
      l.value = t.shfl(v, lane);
    }
    if constexpr (Empties) {
      const std::uint32_t empties = t.ballot(empty);
      if (empties != 0) l.empty = static_cast<int>(t.shfl(empty_at, static_cast<unsigned>(lowest_lane(empties))));
    }
    return l;
  }

  /// Reads the buckets that header h of bucket b names for kb. A slot holding kb is a hit
  /// (linearized at its load). A miss is accepted when every lane re-reads the same header after
  /// its reads (no external member of b entered, left or changed meanwhile; quiescent: at once).
  template <read_mode Reads, class Tile>
  WARPKV_HD named search_named(const Tile& t, std::size_t b, key_bits kb, std::uint64_t h) const {
    if constexpr (Reads == read_mode::relaxed) atomic_thread_fence(memory_order::acquire);
    WARPKV_H64_PROBE();
    std::uint32_t todo = named_set(h);
    while (todo != 0) {
      const unsigned j = static_cast<unsigned>(lowest_lane(todo));
      todo &= todo - 1;
      const look l = read_bucket<Reads, false>(t, named_bucket(b, j), kb);
      if (l.hit >= 0) return {named::found, l.value};
    }
    if constexpr (Reads == read_mode::quiescent) {
      return {named::absent, 0};
    } else {
      atomic_thread_fence(memory_order::acquire);
      const std::uint64_t again = word(b, 0).load(memory_order::relaxed);
      return {t.all(again == h) ? named::absent : named::changed, 0};
    }
  }

  template <read_mode Reads, class Tile>
  WARPKV_HD status find_with(const Tile& t, Key k, Value* out) const {
    const key_bits kb = to_bits(k);
    if (reserved(kb)) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    for (;;) {
      const look l = read_bucket<Reads, false>(t, b, kb);
      value_bits v = l.value;
      if (l.hit < 0) {
        // No home slot holds kb and the digest does not name it: a miss (linearized at the
        // header's load; docs/design/hopscotch_buckets.md).
        if (!may_be_named(l.header, kb)) return status::not_found;
        const named n = search_named<Reads>(t, b, kb, l.header);
        if (n.state == named::changed) continue;
        if (n.state == named::absent) return status::not_found;
        v = n.value;
      }
      if (out != nullptr) *out = from_bits<Value>(v);
      return status::found;
    }
  }

  /// Complete: the slow path under the home's lock when the fast path cannot finish; otherwise
  /// the fast path alone, which answers full there.
  template <bool Complete, class Tile>
  WARPKV_HD status upsert(const Tile& t, key_bits kb, value_bits vb, bool or_assign) const {
    if (reserved(kb)) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    const bool leader = t.thread_rank() == 0;
    // A one-lane fast insert reads the home weakly the first time (L1-cached 16-byte loads: one
    // L1 request for the line where relaxed loads are four L2 requests; design doc, "Weak first
    // reads"): nothing erases in a fast launch, so a stale word only shows fewer keys and names,
    // and every conclusion drawn from it is a CAS from what it read. Later rounds read relaxed.
    constexpr bool weak_first = !Complete && Tile::size() == 1;
    for (int round = 0;; ++round) {
      const look l = weak_first && round == 0 ? read_bucket<read_mode::weak, true>(t, b, kb)
                                              : read_bucket<read_mode::relaxed, true>(t, b, kb);
      if (l.hit >= 0) {
        if (!or_assign) return status::found;
        // A home resident (R): the CAS on its pair is the linearization point.
        bool ok = false;
        if (leader) ok = cas(b, static_cast<unsigned>(l.hit), pack(kb, l.value), pack(kb, vb));
        if (t.shfl(ok, 0)) return status::assigned;
        continue;
      }
      bool external = false;
      if (may_be_named(l.header, kb)) {
        // A weak header read does not order the named buckets' reads after the writes it shows
        // (only a relaxed one does, with search_named's fence): read the home again, relaxed.
        if (weak_first && round == 0) continue;
        const named n = search_named<read_mode::relaxed>(t, b, kb, l.header);
        if (n.state == named::changed) continue;
        if (n.state == named::found) {
          if (!or_assign) return status::found;
          external = true;  // its assignment needs the home's lock
        }
      }
      if (!external && l.empty >= 0) {
        // The lowest empty home slot: the CAS is the linearization point (uniqueness: the design
        // doc's argument (a)-(c)). A failed CAS means another insert took it: look again.
        bool ok = false;
        if (leader) ok = cas(b, static_cast<unsigned>(l.empty), empty_word(), pack(kb, vb));
        if (t.shfl(ok, 0)) return status::inserted;
        continue;
      }
      bool scanned = false;  // the complete insert: place_external read b+1 .. b+reach, no free slot
      if (!external && !detail::hop::locked(l.header)) {
        // The home is full: the tile places kb in b+1 .. b+reach itself, locking b from the header
        // it validated (design doc, "insert into a neighbour, the tile's path").
        const int x = place_external<Complete>(t, b, kb, vb, l.header);
        if (x == slow_inserted) return status::inserted;
        if (x == retry) {
          backoff(round);
          continue;
        }
        scanned = x == slow_full_no_free;
      }
      if constexpr (!Complete) {
        return status::full;  // nothing held, nothing changed for kb: the complete pass takes it
      } else {
        int r = retry;
        if (leader) r = slow_upsert(b, kb, vb, or_assign, scanned);
        r = t.shfl(r, 0);
        if (r == slow_inserted) return status::inserted;
        if (r == slow_found) return status::found;
        if (r == slow_assigned) return status::assigned;
        if (r == slow_full) return status::full;
        backoff(round);
      }
    }
  }

  /// The tile, when k's home b is full, k is neither there nor named by header h (read with the
  /// home and, where h names k's digest or has overflow, validated by the named search) and h is
  /// unlocked: locks b by a CAS of its header from h itself (so nothing of b changed since the
  /// validation: k is still absent), reads b+1, b+2, ... whole until one has an empty slot, CASes
  /// its lowest empty slot empty -> (kb, vb), then unlocks b with hop bit j and k's digest bit
  /// (release: the pair is seen before the name). One fence, no claim: under b's lock no other
  /// placement of b's keys runs, and a lookup that reaches the pair before the unlock does so only
  /// through names h already had (design doc, "insert into a neighbour, the tile's path", for the
  /// linearization point). Returns slow_inserted; retry (b's header moved on since h: look again);
  /// slow_full (no empty slot in reach; b unlocked, nothing changed: the locked path's
  /// displacement and stash). NoteTombs (the complete insert): slow_full_no_free instead of
  /// slow_full when no bucket it read had a tomb either, so that the locked path need not scan
  /// b+1 .. b+reach for a free slot again (design doc, "The complete insert scans once").
  template <bool NoteTombs = false, class Tile>
  WARPKV_HD int place_external(const Tile& t, std::size_t b, key_bits kb, value_bits vb, std::uint64_t h) const {
    const bool leader = t.thread_rank() == 0;
    const std::uint64_t locked = detail::h64::next(h, detail::h64::hop_bits(h), detail::h64::digest(h), true);
    bool mine = false;
    // Relaxed: nothing read under the lock needs the previous holder's writes ordered before it
    // (a neighbour slot read empty is taken only by a CAS from that word; by M a slot read full
    // stays full), and the CAS from h itself is what says b is unchanged for k (coherence).
    if (leader) mine = cas(b, 0, h, locked, memory_order::relaxed);
    if (!t.shfl(mine, 0)) return retry;
    constexpr bool weak_first = Tile::size() == 1;
    bool tombs = false;  // NoteTombs: a bucket read had a tomb
    for (unsigned j = 1; j <= detail::h64::reach; ++j) {
      const std::size_t e = idx(b, j);
      for (bool fresh = weak_first;; fresh = false) {
        // The first read of each neighbour weak (one lane), relaxed after a lost CAS: a stale
        // line shows an empty slot that has filled since, and the CAS from it fails.
        const look l = fresh ? read_bucket<read_mode::weak, true, Tile, NoteTombs>(t, e, kb)
                             : read_bucket<read_mode::relaxed, true, Tile, NoteTombs>(t, e, kb);
        if constexpr (NoteTombs) tombs = tombs || l.tomb;
        if (l.empty < 0) break;  // none here: the next bucket
        bool stored = false;
        if (leader) {
          stored = cas(e, static_cast<unsigned>(l.empty), empty_word(), pack(kb, vb));
          if (stored) {
            WARPKV_H64_PROBE();  // stored, not yet named
            unlock(b, locked, detail::h64::hop_bits(locked) | (1u << j), detail::h64::digest(locked) | (1u << digest_bits(kb)));
          }
        }
        if (t.shfl(stored, 0)) return slow_inserted;
        // taken meanwhile: read this bucket again
      }
    }
    if (leader) unlock(b, locked, detail::h64::hop_bits(locked), detail::h64::digest(locked));
    return NoteTombs && !tombs ? slow_full_no_free : slow_full;
  }

  /// Lane 0 only: locks bucket b (a header CAS that bumps the version); returns the locked header
  /// or 0 when b is locked or changed.
  WARPKV_HD std::uint64_t lock(std::size_t b) const {
    std::uint64_t h = word(b, 0).load(memory_order::relaxed);
    if (detail::hop::locked(h)) return 0;
    const std::uint64_t locked = detail::hop::next(h, detail::hop::bitmap(h), true);
    return word(b, 0).compare_exchange(h, locked, memory_order::acq_rel) ? locked : 0;
  }
  WARPKV_HD void unlock(std::size_t b, std::uint64_t locked, std::uint32_t hop, std::uint32_t dig) const {
    word(b, 0).store(detail::h64::next(locked, hop, dig, false), memory_order::release);
  }

  /// Lane 0, under b's lock (header h): where kb sits among b's external members and, when h has
  /// overflow, in its stash window: named_set's bit j (named_bucket) and word w; j = 0 when it is
  /// in neither.
  struct place {
    unsigned j, w;
    value_bits value;
  };
  WARPKV_HD place find_external(std::size_t b, std::uint64_t h, key_bits kb) const {
    std::uint32_t todo = named_set(h);
    while (todo != 0) {
      const unsigned j = static_cast<unsigned>(lowest_lane(todo));
      todo &= todo - 1;
      std::uint64_t x[detail::h64::words];
      load_words(named_bucket(b, j), x);
      WARPKV_UNROLL
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const auto e = detail::h64::pair::unpack(x[w]);
        if (e.key == kb) return {j, w, e.value};
      }
    }
    return {0, 0, 0};
  }

  /// Lane 0: the slow path of insert / insert_or_assign under b's lock (design doc, "insert, slow
  /// path"). Returns slow_* or retry (b locked or changed; or an empty home slot appeared to be
  /// there after all: the fast path takes it).
  WARPKV_HD int slow_upsert(std::size_t b, key_bits kb, value_bits vb, bool or_assign, bool scanned = false) const {
    std::uint64_t locked = lock(b);
    if (locked == 0) return retry;
    std::uint32_t hop = detail::h64::hop_bits(locked), dig = detail::h64::digest(locked);
    int r = retry;
    for (;;) {
      // Re-read the home under the lock: kb, an empty slot, a tomb.
      int hit = -1, empty = -1, tomb_at = -1;
      value_bits old = 0;
      std::uint64_t x[detail::h64::words];
      load_words(b, x);
      WARPKV_UNROLL
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const auto e = detail::h64::pair::unpack(x[w]);
        if (e.key == kb && hit < 0) hit = static_cast<int>(w), old = e.value;
        if (x[w] == empty_word() && empty < 0) empty = static_cast<int>(w);
        if (e.key == tomb() && tomb_at < 0) tomb_at = static_cast<int>(w);
      }
      if (hit >= 0) {
        if (!or_assign) {
          r = slow_found;
          break;
        }
        if (cas(b, static_cast<unsigned>(hit), pack(kb, old), pack(kb, vb))) {
          r = slow_assigned;
          break;
        }
        continue;  // erased or assigned by a lock-free CAS meanwhile: read again
      }
      const place p = find_external(b, locked, kb);
      if (p.j != 0) {
        if (or_assign) {
          // External members and b's stash keys change only under b's lock: the store is the
          // linearization point.
          word(named_bucket(b, p.j), p.w).store(pack(kb, vb), memory_order::release);
          r = slow_assigned;
        } else {
          r = slow_found;
        }
        break;
      }
      if (empty >= 0) break;  // r = retry: the fast path's CAS takes it
      if (tomb_at >= 0) {
        // The CAS is the linearization point; it fails when another home's slow path claimed the
        // tomb meanwhile (claim_empty): read again.
        if (cas(b, static_cast<unsigned>(tomb_at), tomb_word(), pack(kb, vb), memory_order::release)) {
          r = slow_inserted;
          break;
        }
        continue;
      }
      // A free slot in b+1 .. b+reach, else the stash, else one that displacement brings there.
      // Claimed slots are unnamed and invisible to lookups; naming it in the header (N: named
      // before stored), then the store: the store is the linearization point.
      // No free slot in reach: the stash window first (one CAS), displacement (a plan, a path of
      // locks, moves) only when the window is full; `full` when neither has room (design doc,
      // "The stash first").
      // `scanned`: this insert's place_external just read b+1 .. b+reach and found neither an
      // empty slot nor a tomb; the claim scan would read the same buckets again (design doc, "The
      // complete insert scans once"): a slot freed since is left to later inserts.
      place hole = scanned ? place{0, 0, 0} : claim_empty(b, 1, detail::h64::reach + 1, kb);
      if (hole.j == 0) {
        if (stash_insert(b, locked, kb, vb)) {
          r = slow_inserted;
          break;
        }
        hole = displace(b, kb);
      }
      if (hole.j == 0) {
        r = slow_full;
        break;
      }
      hop |= 1u << hole.j;
      dig |= 1u << digest_bits(kb);
      locked = detail::h64::next(locked, hop, dig, true);  // still locked; version + 1
      word(b, 0).store(locked, memory_order::release);
      word(idx(b, hole.j), hole.w).store(pack(kb, vb), memory_order::release);
      r = slow_inserted;
      break;
    }
    unlock(b, locked, hop, dig);
    return r;
  }

  /// Lane 0, under b's lock (header *locked), when the neighbourhood has no free slot for kb
  /// (before displacement, which runs only when this fails): sets b's overflow bit if clear (a header store, version + 1: flagged before
  /// stored), then CASes the first empty slot of kb's stash window empty -> (kb, vb): the
  /// linearization point. False when the window is full (the flag stays; it costs b's lookups a
  /// stash read until the next rebuild). *locked is the header to unlock from.
  WARPKV_HD bool stash_insert(std::size_t b, std::uint64_t& locked, key_bits kb, value_bits vb) const {
    if (!detail::hop::overflowed(locked)) {
      locked = detail::h64::next(locked, detail::h64::hop_bits(locked), detail::h64::digest(locked), true) |
               detail::hop::overflow_bit;
      word(b, 0).store(locked, memory_order::release);
    }
    for (unsigned i = 0; i < detail::h64::stash_window; ++i) {
      const std::size_t s = named_bucket(b, stash_bit + i);
      std::uint64_t x[detail::h64::words];
      load_words(s, x);
      WARPKV_UNROLL
      for (unsigned w = 1; w < detail::h64::words; ++w)
        if (x[w] == empty_word() && cas(s, w, empty_word(), pack(kb, vb), memory_order::release)) return true;
    }
    return false;
  }

  /// Lane 0: claims the first free slot (empty, or a tomb: erased keys' slots serve every home's
  /// slow path) of buckets b+from .. b+to-1 (words 1-7 in order) by a CAS to (claimed, kb).
  /// Returns its bucket offset from b and word, or j = 0 for none.
  WARPKV_HD place claim_empty(std::size_t b, unsigned from, unsigned to, key_bits kb) const {
    for (unsigned j = from; j < to; ++j) {
      const std::size_t e = idx(b, j);
      std::uint64_t x[detail::h64::words];
      load_words(e, x);
      WARPKV_UNROLL
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        if (!is_free(x[w])) continue;
        if (cas(e, w, x[w], pack(claimed(), kb))) return {j, w, 0};  // else another insert took it
      }
    }
    return {0, 0, 0};
  }
  WARPKV_HD bool is_free(std::uint64_t x) const { return x == empty_word() || x == tomb_word(); }

  // ---- Displacement (design doc, "Displacement"). Lane 0, under b's lock; bucket offsets from b
  // (1 .. 63) name the buckets it touches, and 64-bit masks over them hold its plan and state.

  /// The buckets c+o (bit o, o < d) in which home c (offset c_off) has external members that a
  /// hole in bucket c+d may take, by c's hop bits and the plan `good` (bit m: a hole in bucket b+m
  /// reaches b+1 .. b+reach).
  WARPKV_HD static std::uint32_t movable(std::uint32_t hop, unsigned c_off, unsigned d, std::uint64_t good) {
    return hop & static_cast<std::uint32_t>(good >> c_off) & ((1u << d) - 1u);
  }
  WARPKV_HD std::uint32_t hop_at(std::size_t b, unsigned off) const {
    return detail::h64::hop_bits(word(idx(b, off), 0).load(memory_order::relaxed));
  }
  WARPKV_HD static bool has(std::uint64_t set, unsigned off) { return ((set >> off) & 1u) != 0; }

  /// Lane 0, under b's lock, when b+1 .. b+reach has no empty slot: finds a slot in reach by
  /// moving external members of other homes, and returns it claimed by kb (j = 0: none; nothing
  /// was changed then). Each attempt
  ///  1. plans (reading headers without locks) which buckets b+p, reach < p < displace_buckets, a
  ///     hole could be hopped back from (`good`), and picks the first such bucket with an empty
  ///     slot;
  ///  2. locks the homes of a path from there back into reach (lock_path: try-locks only);
  ///  3. claims the empty slot (CAS empty -> claimed), then moves one member per step along the
  ///     path (move_member), which cannot fail: every home it takes from is locked;
  ///  4. unlocks those homes with their hop bits and digests recomputed.
  /// A failed try-lock or claim releases the homes locked so far (nothing was claimed or moved)
  /// and the next attempt plans again, max_displace_attempts in all. So no claimed slot is ever
  /// given up (M), and b's lock holder never waits for a lock.
  WARPKV_HD place displace(std::size_t b, key_bits kb) const {
    constexpr unsigned reach = detail::h64::reach;
    const unsigned limit = mask_ + 1 < displace_buckets ? static_cast<unsigned>(mask_ + 1) : displace_buckets;
    for (int attempt = 0; attempt < max_displace_attempts; ++attempt) {
      if (attempt > 0) backoff(attempt);
      // 1. The plan: bucket p is good when some home c = p - d (1 <= d <= reach) has a member in a
      // good bucket before p. The first good bucket with an empty slot is the start.
      std::uint64_t good = (std::uint64_t{1} << (reach + 1)) - 1;
      unsigned start = 0;
      // The hop bits of the homes p-1 .. p-reach a bucket p may take a member from (win[i]: home
      // p-1-i), each header read once a plan: homes 1 .. reach at once, then each bucket's header
      // with that bucket's words (where the loop read up to 15 headers a bucket, one at a time).
      std::uint32_t win[reach];
      WARPKV_UNROLL
      for (unsigned i = 0; i < reach; ++i) win[i] = hop_at(b, reach - i);  // buckets() >= 16: offsets 1 .. 15 exist
      for (unsigned p = reach + 1; p < limit && start == 0; ++p) {
        WARPKV_UNROLL
        for (unsigned d = 1; d <= reach; ++d)
          if (movable(win[d - 1], p - d, d, good) != 0) good |= std::uint64_t{1} << p;
        // Good buckets form a prefix of b+0 .. b+limit-1 (design doc, "The plan stops at the first
        // bucket that is not good"): past one that is not, none is.
        if (!has(good, p)) break;
        std::uint64_t x[detail::h64::words];
        load_words(idx(b, p), x);
        WARPKV_UNROLL
        for (unsigned w = 1; w < detail::h64::words; ++w)
          if (is_free(x[w])) start = p;
        WARPKV_UNROLL
        for (unsigned i = reach - 1; i > 0; --i) win[i] = win[i - 1];
        win[0] = detail::h64::hop_bits(x[0]);  // home p, for bucket p + 1
      }
      if (start == 0) return {0, 0, 0};  // no room within displace_buckets: full (the stash came first)
      // 2. Lock a path: `homes` (bit c: b+c locked here), `holes` (bit m: the hole passes b+m).
      std::uint64_t homes = 0, holes = 0;
      const bool path = lock_path(b, start, good, homes, holes);
      // 3. Claim the start's empty slot, then hop it back.
      place hole{0, 0, 0};
      if (path) hole = claim_empty(b, start, start + 1, kb);
      if (hole.j != 0) {
        while (hole.j > reach) {
          const unsigned m = detail::h64::highest_bit(holes & ((std::uint64_t{1} << hole.j) - 1));
          hole = move_member(b, homes, hole, m, kb);  // j = 0 only on a broken table: see there
        }
      }
      // 4. Unlock the homes (recomputed after moves; as they were otherwise, version + 1).
      while (homes != 0) {
        const unsigned c = detail::h64::lowest_bit(homes);
        homes &= homes - 1;
        unlock_recomputed(idx(b, c), word(idx(b, c), 0).load(memory_order::relaxed));
      }
      if (hole.j != 0) return hole;
    }
    return {0, 0, 0};
  }

  /// Lane 0: try-locks homes along a path from bucket b+start back into b+1 .. b+reach, one step
  /// at a time: from a hole at b+q, the farthest home c = q - d that is locked (by this path) or
  /// can be locked and, under its lock, has a member in a good bucket b+m, m < q (the nearest
  /// to c). Sets bit c of `homes` for each home locked and bit m of `holes` for each step. False
  /// when a step finds no such home (the caller unlocks `homes` and plans again).
  WARPKV_HD bool lock_path(std::size_t b, unsigned start, std::uint64_t good, std::uint64_t& homes,
                           std::uint64_t& holes) const {
    unsigned q = start;
    while (q > detail::h64::reach) {
      unsigned next = 0;
      for (unsigned d = detail::h64::reach; d >= 1 && next == 0; --d) {
        const unsigned c = q - d;  // q > reach >= d: never b
        if (movable(hop_at(b, c), c, d, good) == 0) continue;
        if (!has(homes, c)) {
          if (lock(idx(b, c)) == 0) continue;  // busy: another home may do
          homes |= std::uint64_t{1} << c;
        }
        const std::uint32_t from = movable(hop_at(b, c), c, d, good);  // under c's lock now
        if (from != 0) next = c + static_cast<unsigned>(lowest_lane(from));
      }
      if (next == 0) return false;
      holes |= std::uint64_t{1} << next;
      q = next;
    }
    return true;
  }

  /// Lane 0, holding the locks of `homes`: moves a member of one of them from bucket b+m into the
  /// hole (bucket b+hole.j, claimed by kb), in the slot layout's order: (a) copy the pair into the
  /// hole; (b) name the hole's bucket in its home's header (hop bit; the key's digest bit is set
  /// already; version + 1, still locked); (c) store (claimed, kb) over the old slot, which becomes
  /// the hole (M). The old bucket is un-named when its home is unlocked, with hop bits and digest
  /// recomputed (N). Returns the new hole (b+m). lock_path locked a home with a member there, and
  /// nothing else moves or removes members of a locked home.
  WARPKV_HD place move_member(std::size_t b, std::uint64_t homes, place hole, unsigned m, key_bits kb) const {
    const std::size_t q = idx(b, hole.j), from = idx(b, m);
    // b+m's words once: the members of the locked homes in it stay put (nothing else moves or
    // removes them), and only those are moved.
    std::uint64_t words_from[detail::h64::words];
    load_words(from, words_from);
    for (unsigned d = detail::h64::reach; d >= 1; --d) {
      const unsigned c_off = hole.j - d;
      if (c_off >= m || !has(homes, c_off)) continue;
      const std::size_t c = idx(b, c_off);
      const std::uint64_t locked = word(c, 0).load(memory_order::relaxed);  // ours
      WARPKV_UNROLL
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const std::uint64_t x = words_from[w];
        const key_bits k = detail::h64::pair::unpack(x).key;
        if (reserved(k) || home_bits(k) != c) continue;
        word(q, hole.w).store(x, memory_order::relaxed);  // (a)
        WARPKV_H64_PROBE();
        word(c, 0).store(detail::h64::next(locked, detail::h64::hop_bits(locked) | (1u << d), detail::h64::digest(locked), true),
                         memory_order::release);  // (b)
        WARPKV_H64_PROBE();
        word(from, w).store(pack(claimed(), kb), memory_order::release);  // (c)
        WARPKV_H64_PROBE();
        return {m, w, 0};
      }
    }
    // Unreachable: lock_path saw a member of a locked home in b+m. Should a broken table get
    // here, the hole stays claimed (validate() reports it) and displacement ends: no kernel hangs.
    return {0, 0, 0};
  }

  /// Lane 0, holding c's lock (header `locked`): unlocks c with hop bits and digest recomputed
  /// from the keys homed at c that remain in the buckets `locked` names (N: exact again).
  WARPKV_HD void unlock_recomputed(std::size_t c, std::uint64_t locked) const {
    std::uint32_t hop = 0, dig = 0;
    std::uint32_t left = detail::h64::hop_bits(locked);
    while (left != 0) {
      const unsigned j = static_cast<unsigned>(lowest_lane(left));
      left &= left - 1;
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const key_bits k = detail::h64::pair::unpack(word(idx(c, j), w).load(memory_order::relaxed)).key;
        if (reserved(k) || home_bits(k) != c) continue;
        hop |= 1u << j;
        dig |= 1u << digest_bits(k);
      }
    }
    unlock(c, locked, hop, dig);
  }

  /// Lane 0: erases external member kb of bucket b under b's lock, then recomputes b's hop bits
  /// and digest from the members that remain (N). done, or retry (b locked or changed, or kb no
  /// longer an external member: the caller looks again).
  WARPKV_HD int erase_external(std::size_t b, key_bits kb) const {
    const std::uint64_t locked = lock(b);
    if (locked == 0) return retry;
    const place p = find_external(b, locked, kb);
    if (p.j == 0) {
      unlock(b, locked, detail::h64::hop_bits(locked), detail::h64::digest(locked));
      return retry;
    }
    // The linearization point: from this store no slot holds kb. A bucket slot becomes a tomb
    // (M); a stash slot empty (stash slots change only under their keys' homes' locks and are
    // read whole, so an empty one misleads no insert).
    word(named_bucket(b, p.j), p.w).store(p.j < stash_bit ? tomb_word() : empty_word(), memory_order::release);
    unlock_recomputed(b, locked);
    return done;
  }

  slot_type* b_ = nullptr;
  std::size_t mask_ = 0;
  std::size_t stash_mask_ = 0;
  key_bits empty_ = 0;
  std::uint64_t seed_ = 0;
};

}  // namespace warpkv
