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
//  - the slow path (no empty home slot; an external member's assign or erase) holds the home's
//    lock and never waits unboundedly while holding it: it reuses a home tomb, else claims an
//    empty slot in h+1..h+15, names it in the header (hop bit and digest), then stores the pair;
//  - displacement (complete insert only, never in the fast kernels): when h+1..h+15 has no empty
//    slot either, it claims the first empty slot up to 256 buckets on and moves external members
//    of other homes into it, farthest first, each move under that home's lock (taken by try-lock;
//    copy, name, vacate, un-name), until the hole lies within h+1..h+15; home residents never
//    move. When that fails (no movable member, or the candidates stay locked), insert answers
//    status::full (the bulk API then grows the table); the stuck hole becomes a tomb (a slot never
//    returns to empty in a batch) and the rebuild clears it. No stash: the overflow bit stays clear;
//  - 4-byte keys and values only (wider pairs: 128-byte buckets, later);
//  - three key values are reserved, the empty key, tomb = empty ^ 1 and claimed = empty ^ 2: all
//    get status::invalid_key;
//  - erased slots stay tombs (invariant M: a slot never returns to empty while operations run);
//    the slow path reuses the home's tombs, and a rebuild of the table (growth, rehash, or the
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
  /// core/launcher.hpp), and of the complete insert's second launch.
  static constexpr int hot_register_budget = 40;
  static constexpr int find_register_budget = 44;
  static constexpr int slow_register_budget = 48;

  /// Buckets of a table of `capacity` slots (7 per bucket).
  WARPKV_HD static constexpr std::size_t storage_slots(std::size_t capacity) { return capacity / detail::h64::slots; }

  hopscotch_bucket_ref() = default;
  /// `buckets` holds `num_buckets` buckets (a power of two, at least 16).
  hopscotch_bucket_ref(slot_type* buckets, std::size_t num_buckets, Key empty_key, std::uint64_t seed)
      : b_(buckets),
        mask_(num_buckets - 1),
        empty_(to_bits(empty_key)),
        seed_(seed) {}

  /// Slots of the table (7 per bucket).
  WARPKV_HD std::size_t capacity() const { return detail::h64::slots * (mask_ + 1); }
  WARPKV_HD std::size_t buckets() const { return mask_ + 1; }
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
  /// The fast path alone (no lock code): status::full also when the home bucket has no empty
  /// slot, and (insert_or_assign_fast) when k is an external member, whose assignment needs the
  /// home's lock. The table is then unchanged for k. Linearizable like insert() otherwise.
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
      if (!names_digest(l.header, kb)) return status::not_found;
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
  static constexpr unsigned moving_busy = ~0u;       // move_into: the candidate home was locked
  static constexpr unsigned displace_buckets = 256;  // displacement looks for an empty slot this far (buckets)
  static constexpr int max_holes = 2;                // empty slots displacement tries (a stuck one becomes a tomb)
  static constexpr int max_busy_rounds = 256;        // scans of a hole's window whose candidates were all locked
  static constexpr std::uint64_t digest_salt = 0x2545f4914f6cdd1dull;  // the digest hash's seed differs from the home's

  /// What a tile's read of one bucket found: the header, the word index (1-7) holding the key and
  /// its value, and the lowest empty word index (-1: none).
  struct look {
    std::uint64_t header;
    int hit;
    value_bits value;
    int empty;
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
  WARPKV_HD bool names_digest(std::uint64_t header, key_bits kb) const {
    const std::uint32_t d = detail::h64::digest(header);
    return d != 0 && ((d >> digest_bits(kb)) & 1u) != 0;
  }
  WARPKV_HD std::size_t idx(std::size_t b, unsigned j) const { return (b + j) & mask_; }
  WARPKV_HD atomic_ref<std::uint64_t> word(std::size_t b, unsigned w) const {
    return atomic_ref<std::uint64_t>(b_[b].word[w]);
  }
  WARPKV_HD bool cas(std::size_t b, unsigned w, std::uint64_t expected, std::uint64_t desired,
                     memory_order o = memory_order::relaxed) const {
    return word(b, w).compare_exchange(expected, desired, o);
  }

  /// The tile reads bucket b (each lane its words) and looks for kb (and, when Empties, the lowest
  /// empty slot). Lane 0's first word is the header; every lane gets the result.
  template <read_mode Reads, bool Empties, class Tile>
  WARPKV_HD look read_bucket(const Tile& t, std::size_t b, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    constexpr unsigned W = detail::h64::words_per_lane<T>;
    const unsigned rank = t.thread_rank();
    std::uint64_t w[W];
    detail::h64::load_lane_words<Reads, T>(b_[b], rank, tomb_word(), w);
    bool hit = false, empty = false;
    unsigned hit_at = 0, empty_at = 0;
    value_bits v = 0;
    WARPKV_UNROLL
    for (unsigned i = 0; i < W; ++i) {
      const unsigned at = rank * W + i;
      if (at == 0) continue;  // the header
      const auto e = detail::h64::pair::unpack(w[i]);
      if (!hit && e.key == kb) hit = true, hit_at = at, v = e.value;
      if (Empties && !empty && w[i] == empty_word()) empty = true, empty_at = at;
    }
    look l{t.shfl(w[0], 0), -1, 0, -1};
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
    std::uint32_t hop = detail::h64::hop_bits(h);
    while (hop != 0) {
      const unsigned j = static_cast<unsigned>(lowest_lane(hop));
      hop &= hop - 1;
      const look l = read_bucket<Reads, false>(t, idx(b, j), kb);
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
        if (!names_digest(l.header, kb)) return status::not_found;
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
    for (int round = 0;; ++round) {
      const look l = read_bucket<read_mode::relaxed, true>(t, b, kb);
      if (l.hit >= 0) {
        if (!or_assign) return status::found;
        // A home resident (R): the CAS on its pair is the linearization point.
        bool ok = false;
        if (leader) ok = cas(b, static_cast<unsigned>(l.hit), pack(kb, l.value), pack(kb, vb));
        if (t.shfl(ok, 0)) return status::assigned;
        continue;
      }
      bool external = false;
      if (names_digest(l.header, kb)) {
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
      if constexpr (!Complete) {
        return status::full;  // nothing held, nothing changed for kb: the complete pass takes it
      } else {
        int r = retry;
        if (leader) r = slow_upsert(b, kb, vb, or_assign);
        r = t.shfl(r, 0);
        if (r == slow_inserted) return status::inserted;
        if (r == slow_found) return status::found;
        if (r == slow_assigned) return status::assigned;
        if (r == slow_full) return status::full;
        backoff(round);
      }
    }
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

  /// Lane 0, under b's lock: where kb sits among b's external members (bucket offset j, word w),
  /// or j = 0 when it is not one.
  struct place {
    unsigned j, w;
    value_bits value;
  };
  WARPKV_HD place find_external(std::size_t b, std::uint32_t hop, key_bits kb) const {
    while (hop != 0) {
      const unsigned j = static_cast<unsigned>(lowest_lane(hop));
      hop &= hop - 1;
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const auto e = detail::h64::pair::unpack(word(idx(b, j), w).load(memory_order::relaxed));
        if (e.key == kb) return {j, w, e.value};
      }
    }
    return {0, 0, 0};
  }

  /// Lane 0: the slow path of insert / insert_or_assign under b's lock (design doc, "insert, slow
  /// path"). Returns slow_* or retry (b locked or changed; or an empty home slot appeared to be
  /// there after all: the fast path takes it).
  WARPKV_HD int slow_upsert(std::size_t b, key_bits kb, value_bits vb, bool or_assign) const {
    std::uint64_t locked = lock(b);
    if (locked == 0) return retry;
    std::uint32_t hop = detail::h64::hop_bits(locked), dig = detail::h64::digest(locked);
    int r = retry;
    for (;;) {
      // Re-read the home under the lock: kb, an empty slot, a tomb.
      int hit = -1, empty = -1, tomb_at = -1;
      value_bits old = 0;
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const std::uint64_t x = word(b, w).load(memory_order::relaxed);
        const auto e = detail::h64::pair::unpack(x);
        if (e.key == kb && hit < 0) hit = static_cast<int>(w), old = e.value;
        if (x == empty_word() && empty < 0) empty = static_cast<int>(w);
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
      const place p = find_external(b, hop, kb);
      if (p.j != 0) {
        if (or_assign) {
          // External members change only under b's lock: the store is the linearization point.
          word(idx(b, p.j), p.w).store(pack(kb, vb), memory_order::release);
          r = slow_assigned;
        } else {
          r = slow_found;
        }
        break;
      }
      if (empty >= 0) break;  // r = retry: the fast path's CAS takes it
      if (tomb_at >= 0) {
        // Only b's slow path (under this lock) writes a home tomb: the CAS cannot fail but for a
        // bug; it is the linearization point.
        if (cas(b, static_cast<unsigned>(tomb_at), tomb_word(), pack(kb, vb), memory_order::release)) {
          r = slow_inserted;
          break;
        }
        continue;
      }
      // An empty slot in b+1 .. b+reach, else one that displacement brings there. Claimed
      // slots are unnamed and invisible to lookups; naming it in the header (N: named before
      // stored), then the store: the store is the linearization point.
      place hole = claim_empty(b, 1, detail::h64::reach + 1, kb);
      if (hole.j == 0) hole = displace(b, kb);
      if (hole.j == 0) {
        r = slow_full;  // nothing changed for kb (a stuck hole became a tomb: see displace)
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

  /// Lane 0: claims the first empty slot of buckets b+from .. b+to-1 (words 1-7 in order) by a
  /// CAS empty -> (claimed, kb). Returns its bucket offset from b and word, or j = 0 for none.
  WARPKV_HD place claim_empty(std::size_t b, unsigned from, unsigned to, key_bits kb) const {
    for (unsigned j = from; j < to; ++j) {
      const std::size_t e = idx(b, j);
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        if (word(e, w).load(memory_order::relaxed) != empty_word()) continue;
        if (cas(e, w, empty_word(), pack(claimed(), kb))) return {j, w, 0};  // else e's own insert took it
      }
    }
    return {0, 0, 0};
  }

  /// Lane 0, under b's lock, when b+1 .. b+reach has no empty slot (design doc, "Displacement"):
  /// claims the first empty slot beyond reach (less than displace_buckets buckets from b, never b
  /// itself) and hops it back, one move of an external member at a time, until it lies within
  /// b+1 .. b+reach; returns it (claimed by kb) or j = 0. A hole that gets stuck cannot go back to
  /// empty (M): it becomes a tomb (the insert answers full, and the bulk API's growth rebuilds the
  /// table, which clears it); the next empty slot further on is tried, max_holes in all.
  WARPKV_HD place displace(std::size_t b, key_bits kb) const {
    const unsigned limit = mask_ + 1 < displace_buckets ? static_cast<unsigned>(mask_ + 1) : displace_buckets;
    unsigned from = detail::h64::reach + 1;
    for (int holes = 0; holes < max_holes; ++holes) {
      place hole = claim_empty(b, from, limit, kb);
      if (hole.j == 0) break;
      from = hole.j;  // its bucket may have another empty slot
      while (hole.j > detail::h64::reach && hop_closer(b, hole, kb)) {
      }
      if (hole.j <= detail::h64::reach) return hole;
      word(idx(b, hole.j), hole.w).store(tomb_word(), memory_order::relaxed);
    }
    return {0, 0, 0};
  }

  /// Lane 0, under b's lock: moves one external member into the hole (claimed by kb, at bucket
  /// offset hole.j > reach from b) from a bucket before it, and makes its old slot the hole.
  /// The candidates are the homes c = hole - d, d = reach .. 1 (farthest first), whose hop bits
  /// name a bucket before the hole. A locked candidate is skipped; when every candidate was
  /// locked, the scan is repeated after a back-off, at most max_busy_rounds times (b's lock is
  /// held meanwhile: the wait is bounded, and the locks it waits for lie ahead of b). Returns
  /// false when no member can be moved.
  WARPKV_HD bool hop_closer(std::size_t b, place& hole, key_bits kb) const {
    const std::size_t q = idx(b, hole.j);
    for (int round = 0; round < max_busy_rounds; ++round) {
      bool busy = false;
      for (unsigned d = detail::h64::reach; d >= 1; --d) {
        const std::size_t c = idx(b, hole.j - d);  // hole.j > reach >= d: never b
        const std::uint64_t h = word(c, 0).load(memory_order::relaxed);
        if ((detail::h64::hop_bits(h) & ((1u << d) - 1u)) == 0) continue;
        if (detail::hop::locked(h)) {  // its holder finishes in a bounded number of steps
          busy = true;
          continue;
        }
        const unsigned o = move_into(c, d, q, hole.w, kb);
        if (o == moving_busy) {
          busy = true;
        } else if (o != 0) {
          hole.j = hole.j - d + o;
          return true;
        }
      }
      if (!busy) return false;
      backoff(round);
    }
    return false;
  }

  /// Lane 0: locks c (try-lock: never waits) and moves its external member nearest to c among the
  /// buckets c+1 .. c+d-1 into slot (q, hole_w) = bucket c+d, claimed by kb, in the slot layout's
  /// order, all under c's lock: (a) copy the pair into the hole; (b) name bucket c+d (hop bit d;
  /// the key's digest bit is set already; version + 1); (c) store (claimed, kb) over the old slot,
  /// which becomes the hole (M); (d) unlock with hop bits and digest recomputed from the members
  /// that remain (the old bucket's bit clears if no member of c is left there). Returns the old
  /// bucket's offset o from c (1 .. d-1), 0 when c has nothing to move
  /// there, or moving_busy when c is locked. On a move, hole_w becomes the old slot's word.
  WARPKV_HD unsigned move_into(std::size_t c, unsigned d, std::size_t q, unsigned& hole_w, key_bits kb) const {
    const std::uint64_t locked = lock(c);
    if (locked == 0) return moving_busy;
    const std::uint32_t hop = detail::h64::hop_bits(locked), dig = detail::h64::digest(locked);
    std::uint32_t before = hop & ((1u << d) - 1u);
    while (before != 0) {
      const unsigned o = static_cast<unsigned>(lowest_lane(before));
      before &= before - 1;
      const std::size_t m = idx(c, o);
      for (unsigned w = 1; w < detail::h64::words; ++w) {
        const std::uint64_t x = word(m, w).load(memory_order::relaxed);
        const key_bits k = detail::h64::pair::unpack(x).key;
        if (reserved(k) || home_bits(k) != c) continue;  // c's own lock excludes any other change of it
        word(q, hole_w).store(x, memory_order::relaxed);                                   // (a)
        const std::uint64_t named = detail::h64::next(locked, hop | (1u << d), dig, true);  // (b)
        word(c, 0).store(named, memory_order::release);
        word(m, w).store(pack(claimed(), kb), memory_order::release);  // (c)
        unlock_recomputed(c, named);                                   // (d)
        hole_w = w;
        return o;
      }
    }
    unlock(c, locked, hop, dig);
    return 0;
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
    const std::uint32_t hop = detail::h64::hop_bits(locked);
    const place p = find_external(b, hop, kb);
    if (p.j == 0) {
      unlock(b, locked, hop, detail::h64::digest(locked));
      return retry;
    }
    // The linearization point: from this store no slot holds kb.
    word(idx(b, p.j), p.w).store(tomb_word(), memory_order::release);
    unlock_recomputed(b, locked);
    return done;
  }

  slot_type* b_ = nullptr;
  std::size_t mask_ = 0;
  key_bits empty_ = 0;
  std::uint64_t seed_ = 0;
};

}  // namespace warpkv
