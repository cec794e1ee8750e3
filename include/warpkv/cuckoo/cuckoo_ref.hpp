#pragma once
// cuckoo_ref: the device-side view of a cuckoo_map, usable inside user kernels with a
// cooperative tile (every lane calls the same method with the same arguments and gets the same
// result; any tile size works, the tile reads a bucket's slots together).
//
// Guarantees (argument and linearization points: docs/design/cuckoo.md):
//  - every operation is linearizable; a key is stored at most once;
//  - a key lives in one of its d (2 or 3) candidate buckets of bucket_slots (8) slots each;
//  - writers place a key first-fit: into the first free slot of the first candidate bucket that
//    has one (bucket order h_0, h_1, ...). A slot that has held a key and was emptied (erase,
//    eviction move) is a *hole* (the empty key with value 1), never again a *fresh* slot (value
//    0), so every key sits behind full slots and holes only, and a fresh slot ends a search;
//  - find/contains read the candidate buckets between two reads of the buckets' version words
//    and retry when a writer changed one meanwhile (seqlock); with 4-byte keys and values a hit
//    needs no validation; after optimistic_reads failed attempts a find reads under the
//    buckets' locks instead, so it completes under any stream of writes;
//  - insert, insert_or_assign and erase lock the key's candidate buckets (in bucket order, so
//    no deadlock); an eviction moves one key at a time between two of its buckets under both
//    buckets' locks, so a key is never out of the table while it moves;
//  - status::full means eviction_attempts random-walk eviction chains of at most max_chain
//    moves found no room: the table holds the same keys and values as before for this key
//    (moves do not change the abstract map). The bulk API then rehashes with a new seed (and
//    more room when loaded) and retries; a device caller decides.
//  - bulk fast paths (packed layout; the bulk API's uniform batches, or any user kernel in which
//    only these run concurrently): insert_fast / insert_or_assign_fast take no lock (one bucket
//    read and one 8-byte CAS in the common case) and hand an insert whose candidate buckets are
//    all full back as status::full, which the bulk API re-runs with insert_evicting() (insert()'s
//    results, the eviction chain before the locks) in a second launch; find_quiescent reads with
//    plain loads a table nobody writes meanwhile; both stop at a bucket with a fresh slot.
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"
#include "warpkv/cuckoo/detail/bucket_layout.hpp"

namespace warpkv {

template <hash_key Key, map_value Value>
class cuckoo_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using key_bits = storage_bits_t<sizeof(Key)>;
  using value_bits = storage_bits_t<sizeof(Value)>;
  using layout = detail::cuckoo_slot_layout<key_bits, value_bits>;
  using slot_type = typename layout::slot;
  /// Slots per bucket: 8 (one 64-byte line with 4-byte keys and values, as BGHT's bcht8).
  static constexpr unsigned bucket_slots = 8;
  /// Registers per thread of the bulk find / insert / erase kernels (launch bounds, issue 23's
  /// budget): without a bound ptxas put the erase kernel at 32 registers with 28 B of spills.
  static constexpr int hot_register_budget = 48;
  /// The complete insert's kernel (the second launch of an insert batch, mixed batches' writes):
  /// locks, eviction chains and their look-ahead (8 buckets' last slots at once). At 48 it kept
  /// 124-144 B of spills beside its chain in local memory (ptxas, session 17).
  static constexpr int slow_register_budget = 64;
  /// The bulk API runs uniform insert batches through insert_fast first (packed layout only).
  static constexpr bool fast_bulk_inserts = layout::packed;
  /// One-lane tiles run uniform batches a thread per operation (core/launcher.hpp), each thread
  /// reading a packed bucket 16 bytes at a time, as the bucketed hopscotch does.
  static constexpr bool thread_per_op = true;
  /// Most candidate buckets per key, and the longest eviction chain a ref may be asked for.
  static constexpr unsigned max_hash_functions = 3;
  static constexpr unsigned max_chain_limit = 64;

  cuckoo_ref() = default;
  /// `locks`: one version word per bucket (capacity / bucket_slots), even when unlocked.
  cuckoo_ref(slot_type* slots, std::uint32_t* locks, std::size_t capacity, unsigned hash_functions, Key empty_key,
             std::uint64_t seed, unsigned max_chain, unsigned eviction_attempts)
      : slots_(slots),
        locks_(locks),
        bucket_mask_(capacity / bucket_slots - 1),
        d_(hash_functions),
        empty_(to_bits(empty_key)),
        max_chain_(max_chain < max_chain_limit ? max_chain : max_chain_limit),
        attempts_(eviction_attempts) {
    for (unsigned i = 0; i < max_hash_functions; ++i)
      seeds_[i] = premix_seed<key_bits>(fmix64(seed + 0x9e3779b97f4a7c15ull * (i + 1)));
  }

  WARPKV_HD std::size_t capacity() const { return (bucket_mask_ + 1) * bucket_slots; }
  WARPKV_HD std::size_t buckets() const { return bucket_mask_ + 1; }
  WARPKV_HD unsigned hash_functions() const { return d_; }
  WARPKV_HD Key empty_key() const { return from_bits<Key>(empty_); }
  /// Candidate bucket i (< hash_functions()) of key k.
  WARPKV_HD std::size_t bucket(Key k, unsigned i) const { return bucket_bits(to_bits(k), i); }

  // Slot layout, for the whole-table passes (core/table_passes.hpp).
  WARPKV_HD static key_bits stored_key(const slot_type& s) { return layout::key_of(s); }
  WARPKV_HD static value_bits stored_value(const slot_type& s) { return layout::value_of(s); }
  WARPKV_HD static void init_slot(slot_type& s, Key empty_key) { layout::init(s, to_bits(empty_key)); }

  /// Inserts (k, v) if k is absent: inserted, found (k present, unchanged), full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert(const Tile& t, Key k, Value v) const {
    if (to_bits(k) == empty_) return status::invalid_key;
    if (find(t, k, nullptr) == status::found) return status::found;  // no lock for a present key
    return locked_write(t, to_bits(k), to_bits(v), write_kind::insert);
  }
  /// Inserts (k, v) or replaces k's value: inserted, assigned, full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert_or_assign(const Tile& t, Key k, Value v) const {
    if (to_bits(k) == empty_) return status::invalid_key;
    return locked_write(t, to_bits(k), to_bits(v), write_kind::upsert);
  }
  /// insert() for an operation that insert_fast handed back as full (the bulk API's second launch
  /// and its re-runs after growth): the same results and guarantees, in another order of work.
  /// No lock-free look first (the fast pass just saw k absent and its buckets full); the eviction
  /// chain is planned and its far moves made before k's locks are taken, and the chain's first
  /// move (out of one of k's buckets) is made under the same locks as the write.
  template <class Tile>
  WARPKV_HD status insert_evicting(const Tile& t, Key k, Value v) const {
    if (to_bits(k) == empty_) return status::invalid_key;
    return evicting_write(t, to_bits(k), to_bits(v), write_kind::insert);
  }
  /// insert_or_assign() in the order of insert_evicting.
  template <class Tile>
  WARPKV_HD status insert_or_assign_evicting(const Tile& t, Key k, Value v) const {
    if (to_bits(k) == empty_) return status::invalid_key;
    return evicting_write(t, to_bits(k), to_bits(v), write_kind::upsert);
  }
  /// erased, not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, Key k) const {
    if (to_bits(k) == empty_) return status::invalid_key;
    if (find(t, k, nullptr) == status::not_found) return status::not_found;  // a validated miss
    return locked_write(t, to_bits(k), value_bits{0}, write_kind::erase);
  }
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, Key k) const {
    return find(t, k, nullptr);
  }
  /// erase for a launch in which only erases run (the bulk API's erase batches and a mixed
  /// batch's erase phase: core's erase_op): no insert, move or assign runs beside it, so a key
  /// stays in its slot until erased and a slot only goes from a key to a hole. The tile walks k's
  /// buckets in order (relaxed loads) and lane 0 CASes k's slot from the word it read to a hole:
  /// success is the erase (linearization point); a failed CAS means another erase of k took the
  /// slot first, so k is absent from then on: not_found. No lock: erase() takes the locks of all
  /// of k's buckets, and hot keys' erases queued on them (session 21, call B: 1e5 operations on
  /// 1e4 keys took 20 ms, on 100 keys 0.3 s). Without packed slots (no one-word CAS): erase().
  template <class Tile>
  WARPKV_HD status erase_only(const Tile& t, Key k) const {
    if constexpr (!layout::packed) {
      return erase(t, k);
    } else {
      const key_bits kb = to_bits(k);
      if (kb == empty_) return status::invalid_key;
      for (unsigned i = 0; i < max_hash_functions; ++i) {
        if (i == d_) break;
        const bucket_look l = look<read_mode::relaxed>(t, kb, i);
        if (l.match != 0) {
          int erased = 0;
          if (t.thread_rank() == 0) {
            atomic_ref<std::uint64_t> slot(slot_at(bucket_bits(kb, i), static_cast<unsigned>(lowest_lane(l.match))).pair);
            std::uint64_t w = layout::pack(kb, l.value);
            erased = slot.compare_exchange(w, layout::pack(empty_, hole_value), memory_order::relaxed) ? 1 : 0;
          }
          return t.shfl(erased, 0) != 0 ? status::erased : status::not_found;
        }
        if (l.fresh != 0) return status::not_found;  // rule F: k is not behind a fresh slot
      }
      return status::not_found;
    }
  }

  // ---- bulk fast paths ------------------------------------------------------------------------

  /// insert for a batch in which only inserts and insert_or_assigns run (no erase, no eviction):
  /// inserted, found, invalid_key, or full when all of k's candidate buckets are full (then
  /// nothing changed: run insert() for it). Lock-free; one read per bucket, one CAS.
  template <class Tile>
  WARPKV_HD status insert_fast(const Tile& t, Key k, Value v) const
    requires(layout::packed)
  {
    return upsert_fast(t, to_bits(k), to_bits(v), false);
  }
  /// insert_or_assign under the same conditions: inserted, assigned, invalid_key, or full.
  template <class Tile>
  WARPKV_HD status insert_or_assign_fast(const Tile& t, Key k, Value v) const
    requires(layout::packed)
  {
    return upsert_fast(t, to_bits(k), to_bits(v), true);
  }

  /// find on a table that nothing writes while it runs (the bulk API's find-only batches): plain,
  /// L1-cached loads, no version words. Reads k's buckets in order and stops at k or at a bucket
  /// with a fresh (never used) slot: by rule F no key sits behind one.
  template <class Tile>
  WARPKV_HD status find_quiescent(const Tile& t, Key k, Value* out = nullptr) const {
    const key_bits kb = to_bits(k);
    if (kb == empty_) return status::invalid_key;
    for (unsigned i = 0; i < max_hash_functions; ++i) {
      if (i == d_) break;
      const bucket_look l = look<read_mode::quiescent>(t, kb, i);
      if (l.match != 0) return report_value(l.value, out);
      if (l.fresh != 0) return status::not_found;  // rule F: kb is not behind a fresh slot
    }
    return status::not_found;
  }

  /// found (value written to *out on every lane when out != nullptr), not_found, invalid_key.
  /// Every lane reads the d version words (acquire), then its share of the d buckets' slots, then
  /// (after an acquire fence) the version words again; a miss counts only when every lane saw
  /// every version even and unchanged. A packed hit is its own proof (the slot's one word held k).
  template <class Tile>
  WARPKV_HD status find(const Tile& t, Key k, Value* out = nullptr) const {
    constexpr unsigned T = Tile::size();
    const key_bits kb = to_bits(k);
    if (kb == empty_) return status::invalid_key;
    const unsigned rank = t.thread_rank();
    std::size_t b[max_hash_functions];
    candidates(kb, b);
    if constexpr (layout::packed) {
      // Fast path: one bucket. Inserts place keys first-fit, so most keys sit in their first
      // bucket, and a packed hit is its own proof.
      if constexpr (T == 1) {
        const bucket_look l = look<read_mode::relaxed>(t, kb, 0);  // 16 bytes at a time
        if (l.match != 0) return report_value(l.value, out);
      } else {
        bool hit = false;
        value_bits val = 0;
        for (unsigned s = rank; s < bucket_slots; s += T) {
          const auto e = layout::load(slot_at(b[0], s), memory_order::relaxed);
          if (e.key == kb) hit = true, val = e.value;
        }
        const std::uint32_t hits = t.ballot(hit);
        if (hits != 0) return report_hit(t, val, hits, out);
      }
    }
    for (int attempt = 0;; ++attempt) {
      std::uint32_t v[max_hash_functions];
      WARPKV_UNROLL
      for (unsigned i = 0; i < max_hash_functions; ++i) v[i] = i < d_ ? lock_ref(b[i]).load(memory_order::acquire) : 0u;
      bool hit = false;
      value_bits val = 0;
      WARPKV_UNROLL
      for (unsigned i = 0; i < max_hash_functions; ++i) {
        if (i >= d_) continue;
        for (unsigned s = rank; s < bucket_slots; s += T) {
          const auto e = layout::load(slot_at(b[i], s), memory_order::relaxed);
          if (e.key == kb) hit = true, val = e.value;
        }
      }
      if constexpr (layout::packed) {
        const std::uint32_t hits = t.ballot(hit);
        if (hits != 0) return report_hit(t, val, hits, out);
      }
      atomic_thread_fence(memory_order::acquire);
      bool stable = true;
      WARPKV_UNROLL
      for (unsigned i = 0; i < max_hash_functions; ++i)
        stable = stable && (i >= d_ || ((v[i] & 1u) == 0 && lock_ref(b[i]).load(memory_order::relaxed) == v[i]));
      if (t.all(stable)) {
        const std::uint32_t hits = t.ballot(hit);
        if (hits != 0) return report_hit(t, val, hits, out);
        return status::not_found;
      }
      // A writer held or changed one of the buckets. Under a stream of writes to hot buckets an
      // optimistic reader could retry for as long as the writes last (on the H100, 200000
      // operations on 4 keys took 30 s per batch): after a few attempts it reads under the locks,
      // queueing with the writers, so every find completes.
      if (attempt + 1 >= optimistic_reads) return locked_find(t, b, kb, out);
      backoff(attempt);
    }
  }

 private:
  enum class write_kind : int { insert, upsert, erase };

  /// Optimistic read attempts of a find before it reads under its buckets' locks: about 0.4 ms
  /// of back-off on the GPU. (6 attempts made hot-key batches of the typed suite 3-10x slower on
  /// the H100: finds that would have succeeded soon queued at the locks instead.)
  static constexpr int optimistic_reads = 24;

  /// The fallback of find: lane 0 reads the key's buckets under their locks (taken in bucket
  /// order, like a writer's), so the result is the table's state while it holds them.
  template <class Tile>
  WARPKV_HD status locked_find(const Tile& t, const std::size_t (&b)[max_hash_functions], key_bits kb, Value* out) const {
    int hit = 0;
    value_bits val = 0;
    if (t.thread_rank() == 0) {
      const lock_set<max_hash_functions> u = lock_order(b);
      lock_all(u);
      const long at = locate_locked(b, kb);  // linearization point of a locked find
      if (at >= 0) hit = 1, val = layout::load(slots_[at], memory_order::relaxed).value;
      unlock_all(u);
    }
    if (t.shfl(hit, 0) == 0) return status::not_found;
    return report_hit(t, val, 1u, out);
  }

  WARPKV_HD static status report_value(value_bits val, Value* out) {
    if (out != nullptr) *out = from_bits<Value>(val);
    return status::found;
  }

  /// What a tile saw in one bucket: bit s of `match` / `empty` / `fresh` says slot s held kb /
  /// was free (fresh or a hole) / was fresh (`fresh` only when match == 0: a hit needs no more
  /// collectives); `value`: the value beside kb (on every lane) when match != 0.
  struct bucket_look {
    std::uint32_t match;
    std::uint32_t empty;
    std::uint32_t fresh;
    value_bits value;
  };

  /// Reads candidate bucket i of kb with the tile: all loads first (lane r reads slots r, r+T, ...),
  /// then the collectives. Reads: quiescent, ordinary loads (a table nobody writes meanwhile), or
  /// relaxed atomic loads of whole slots. Loops run to constants so that everything stays in
  /// registers. (A 4-lane tile reading a bucket with one 16-byte load per lane measured no faster
  /// than two 8-byte loads per lane, and 8 lanes stay faster: docs/perf.md, session 11.) One lane
  /// with packed slots reads the bucket 16 bytes at a time (core's load_pair: four requests for
  /// the 64-byte line, each 8-byte slot single-copy atomic) and needs no collective.
  template <read_mode Reads, class Tile>
  WARPKV_HD bucket_look look(const Tile& t, key_bits kb, unsigned i) const {
    constexpr unsigned T = Tile::size();
    const std::size_t b = bucket_bits(kb, i);
    if constexpr (T == 1 && layout::packed) {
      std::uint64_t w[bucket_slots];
      std::uint64_t* p = &slot_at(b, 0).pair;
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; s += 2) load_pair<Reads>(p + s, w[s], w[s + 1]);
      bucket_look r{0, 0, 0, 0};
      WARPKV_UNROLL
      for (unsigned s = bucket_slots; s-- > 0;) {  // downwards: the lowest matching slot's value stays
        const auto e = layout::unpack(w[s]);
        if (e.key == kb) r.match |= 1u << s, r.value = e.value;
        if (e.key == empty_) {
          r.empty |= 1u << s;
          if (e.value == value_bits{0}) r.fresh |= 1u << s;
        }
      }
      if (r.match != 0) r.fresh = 0;  // as the tile's look: fresh only reported for a miss
      return r;
    } else {
      constexpr unsigned per_lane = T >= bucket_slots ? 1 : bucket_slots / T;
      const unsigned rank = t.thread_rank();
      typename layout::entry e[per_lane] = {};
      WARPKV_UNROLL
      for (unsigned j = 0; j < per_lane; ++j) {
        const unsigned s = j * T + rank;
        if (s >= bucket_slots) continue;
        if constexpr (Reads == read_mode::quiescent) {
          const slot_type c = slot_at(b, s);
          e[j] = {layout::key_of(c), layout::value_of(c)};
        } else {
          e[j] = layout::load(slot_at(b, s), memory_order::relaxed);
        }
      }
      std::uint32_t match = 0, empty = 0, fresh = 0;
      value_bits mine = 0;
      WARPKV_UNROLL
      for (unsigned j = 0; j < per_lane; ++j) {
        const bool valid = j * T + rank < bucket_slots;
        const bool m = valid && e[j].key == kb;
        const bool f = valid && e[j].key == empty_;
        if (m) mine = e[j].value;
        match |= (t.ballot(m) & lane_bits) << (j * T);
        empty |= (t.ballot(f) & lane_bits) << (j * T);
      }
      if (match == 0 && empty != 0) {  // only a miss needs to tell fresh slots from holes
        WARPKV_UNROLL
        for (unsigned j = 0; j < per_lane; ++j) {
          const bool valid = j * T + rank < bucket_slots;
          fresh |= (t.ballot(valid && e[j].key == empty_ && e[j].value == value_bits{0}) & lane_bits) << (j * T);
        }
      }
      return bucket_look{match, empty, fresh,
                         match != 0 ? t.shfl(mine, static_cast<unsigned>(lowest_lane(match)) % T) : value_bits{0}};
    }
  }
  /// The low bucket_slots bits of a ballot (a tile wider than a bucket has idle lanes).
  static constexpr std::uint32_t lane_bits = (1u << bucket_slots) - 1u;

  /// The fast insert / insert_or_assign (packed layout): walks kb's buckets in order until it
  /// finds kb or a bucket with a fresh slot (rule F: kb cannot sit further on), and claims the
  /// first free slot it saw (a hole or a fresh slot) with one CAS from the word it read. A lost
  /// CAS starts over. One lane (T = 1) reads each bucket weakly first (L1-cached 16-byte loads:
  /// the L1 asks L2 for the line's sectors, where relaxed 16-byte loads are four L2 requests;
  /// docs/design/cuckoo.md says why a stale word is harmless), and relaxed after a lost CAS (a
  /// stale line cannot send the op round again).
  template <class Tile>
  WARPKV_HD status upsert_fast(const Tile& t, key_bits kb, value_bits vb, bool assign) const {
    if (kb == empty_) return status::invalid_key;
    const std::uint64_t mine = layout::pack(kb, vb);
    constexpr bool weak_first = Tile::size() == 1 && layout::packed;
    bool cached = weak_first;
    for (;;) {
      long at = -1;  // kb's slot when present, else the first free slot
      bool present = false;
      value_bits seen = 0;  // kb's value when present; else the free slot's value (0 fresh, 1 hole)
      for (unsigned i = 0; i < max_hash_functions; ++i) {
        if (i == d_) break;
        const bucket_look l = cached ? look<read_mode::weak>(t, kb, i) : look<read_mode::relaxed>(t, kb, i);
        const long base = static_cast<long>(bucket_bits(kb, i) * bucket_slots);
        if (l.match != 0) {
          present = true, seen = l.value, at = base + lowest_lane(l.match);
          break;
        }
        if (at < 0 && l.empty != 0) {
          const int s = lowest_lane(l.empty);
          at = base + s;
          seen = ((l.fresh >> s) & 1u) != 0 ? 0u : hole_value;
        }
        if (l.fresh != 0) break;
      }
      if (at < 0) return status::full;  // every candidate bucket full: the complete protocol evicts
      int r = 0;  // lane 0's outcome: 1 inserted, 2 found, 3 assigned, 0 lost the slot to another key
      if (t.thread_rank() == 0) {
        atomic_ref<std::uint64_t> slot(slots_[at].pair);
        std::uint64_t w = layout::pack(present ? kb : empty_, seen);
        if (!present) {
          // Linearization point of an insert: this CAS (the slot goes from free to (k, v)).
          if (slot.compare_exchange(w, mine, memory_order::relaxed)) r = 1;
          else if (static_cast<key_bits>(w) == kb) present = true;  // k arrived here first
        }
        if (present) {
          r = 2;
          // The slot holds k for the rest of the batch (no erase or move runs beside the fast
          // path): replace its value, retrying while other assigns change it. Linearization
          // point: the successful CAS.
          if (assign) {
            while (!slot.compare_exchange(w, mine, memory_order::relaxed)) {
            }
            r = 3;
          }
        }
      }
      r = t.shfl(r, 0);
      if (r == 1) return status::inserted;
      if (r == 2) return status::found;
      if (r == 3) return status::assigned;
      // Another key took the free slot: look again (slots only fill while the fast path runs),
      // with relaxed reads.
      cached = false;
    }
  }

  template <class Tile>
  WARPKV_HD static status report_hit(const Tile& t, value_bits val, std::uint32_t hits, Value* out) {
    val = t.shfl(val, static_cast<unsigned>(lowest_lane(hits)));
    if (out != nullptr) *out = from_bits<Value>(val);
    return status::found;
  }

  WARPKV_HD std::size_t bucket_bits(key_bits kb, unsigned i) const {
    return static_cast<std::size_t>(hash_premixed(kb, seed_of(i))) & bucket_mask_;
  }
  /// seeds_[i] by selects, not by a run-time index (which would copy the kernel's parameters to
  /// local memory). seeds_ hold the seeds' premixed forms (core/hash.hpp), so a bucket costs
  /// one 32-bit finalizer for 4-byte keys, not a 64-bit one for the seed as well (session 18:
  /// an eviction walk's step hashes 8 victims up to 4 times each).
  WARPKV_HD std::uint64_t seed_of(unsigned i) const { return i == 0 ? seeds_[0] : (i == 1 ? seeds_[1] : seeds_[2]); }
  WARPKV_HD slot_type& slot_at(std::size_t b, unsigned s) const { return slots_[b * bucket_slots + s]; }
  WARPKV_HD atomic_ref<std::uint32_t> lock_ref(std::size_t b) const { return atomic_ref<std::uint32_t>(locks_[b]); }
  /// The value a free slot gets when a key leaves it (erase, eviction move): a hole. Fresh slots
  /// (never used since the table was built) hold value 0.
  static constexpr value_bits hole_value = 1;

  // ---- writers: one lane (the tile's lane 0) runs them; the others wait for the status -----

  template <class Tile>
  WARPKV_HD status locked_write(const Tile& t, key_bits kb, value_bits vb, write_kind kind) const {
    int r = 0;
    if (t.thread_rank() == 0) r = static_cast<int>(write_one(kb, vb, kind));
    return static_cast<status>(t.shfl(r, 0));
  }
  template <class Tile>
  WARPKV_HD status evicting_write(const Tile& t, key_bits kb, value_bits vb, write_kind kind) const {
    int r = 0;
    if (t.thread_rank() == 0) r = static_cast<int>(write_evicting(kb, vb, kind));
    return static_cast<status>(t.shfl(r, 0));
  }

  /// Takes bucket b's lock: one fetch_or of the low bit, which turns an even version v into
  /// v + 1 (taken) and leaves an odd one as it is (held by another: back off and try again). The
  /// RMW is relaxed: every caller issues writer_fence() after taking its locks, which is the
  /// acquire (it synchronizes with the releasing fence of the previous holder, whose relaxed add
  /// this RMW reads, directly or through later RMWs of the word).
  WARPKV_HD void lock(std::size_t b) const {
    for (int attempt = 0;; ++attempt) {
      if ((lock_ref(b).fetch_or(1u, memory_order::relaxed) & 1u) == 0) return;
      backoff(attempt);
    }
  }
  /// A set of buckets to lock, in increasing order (the lock order), held in registers: N
  /// entries, sorted by a fixed network; a repeated bucket is locked once (the later copies are
  /// skipped). Every loop over it is unrolled with constant indices: with a run-time count the
  /// arrays lived in local memory (the complete insert's remaining local loads and stores,
  /// session 20).
  template <unsigned N>
  struct lock_set {
    std::size_t u[N];
    /// Whether entry i is one to lock (not a repeat of the one before it).
    WARPKV_HD bool takes(unsigned i) const { return i == 0 || u[i] != u[i - 1]; }
  };
  /// Takes the locks of the set (increasing bucket order), then fences once.
  template <unsigned N>
  WARPKV_HD void lock_all(const lock_set<N>& s) const {
    WARPKV_UNROLL
    for (unsigned i = 0; i < N; ++i)
      if (s.takes(i)) lock(s.u[i]);
    writer_fence();
  }
  /// Releases the locks of the set: one release fence (the writer's slot stores happen before
  /// it), then a relaxed add per lock word, each making its version even again, one step past
  /// the locked value. (A release add per word compiled to a fence per word.)
  template <unsigned N>
  WARPKV_HD void unlock_all(const lock_set<N>& s) const {
    atomic_thread_fence(memory_order::release);
    WARPKV_UNROLL
    for (unsigned i = N; i-- > 0;)
      if (s.takes(i)) lock_ref(s.u[i]).fetch_add(1, memory_order::relaxed);
  }
  /// Orders a writer's slot stores after its lock words turned odd (a reader that sees one of
  /// those stores then sees the odd or a later version on its second read), and is the acquire
  /// of the locks just taken.
  WARPKV_HD static void writer_fence() { atomic_thread_fence(memory_order::acq_rel); }

  /// The buckets b[0..N) as a lock set (sorted by an unrolled exchange network; candidates past
  /// d are filled with b[0] by the callers, so they are repeats, locked once).
  template <unsigned N>
  WARPKV_HD static lock_set<N> lock_order(const std::size_t (&b)[N]) {
    lock_set<N> s;
    WARPKV_UNROLL
    for (unsigned i = 0; i < N; ++i) s.u[i] = b[i];
    WARPKV_UNROLL
    for (unsigned i = 0; i + 1 < N; ++i) {
      WARPKV_UNROLL
      for (unsigned j = 0; j + 1 < N - i; ++j) {
        const std::size_t lo = s.u[j] < s.u[j + 1] ? s.u[j] : s.u[j + 1];
        const std::size_t hi = s.u[j] < s.u[j + 1] ? s.u[j + 1] : s.u[j];
        s.u[j] = lo;
        s.u[j + 1] = hi;
      }
    }
    return s;
  }
  /// The candidate buckets of kb, b[i] for i < d and b[0] past it (constant indices only).
  WARPKV_HD void candidates(key_bits kb, std::size_t (&b)[max_hash_functions]) const {
#if WARPKV_DEVICE_PASS
    WARPKV_UNROLL
    for (unsigned i = 0; i < max_hash_functions; ++i) b[i] = i < d_ ? bucket_bits(kb, i) : b[0];
#else
    // The same buckets (d is 2 or 3, so b[0] is always one), b[0] set first: the loop above made
    // g++ -O3 warn that b[0] may be read unset, which failed the release build (scripts/demo).
    // The device pass keeps the loop until the unconditional form has a device A/B: it changes
    // the locked and fused cuckoo kernels' code (ptxas: some spill more, some less; session 25).
    b[0] = bucket_bits(kb, 0);
    for (unsigned i = 1; i < max_hash_functions; ++i) b[i] = i < d_ ? bucket_bits(kb, i) : b[0];
#endif
  }
  /// b[i % d], selected with constant indices.
  WARPKV_HD std::size_t candidate(const std::size_t (&b)[max_hash_functions], unsigned i) const {
    const unsigned at = i % d_;
    std::size_t r = b[0];
    WARPKV_UNROLL
    for (unsigned j = 1; j < max_hash_functions; ++j)
      if (at == j) r = b[j];
    return r;
  }

  /// What one lane saw in bucket b: the slot (0..bucket_slots-1) holding kb and the first free
  /// slot, -1 for none. The bucket's loads are issued together, before any is looked at (a scan
  /// that stopped at the first match made every slot a dependent round trip: at LF 0.9 the
  /// second pass spent ~20 ms on 2 % of the keys).
  struct bucket_scan {
    int match;
    int free;
  };
  /// One lane: bucket b's slots, all loads issued together (relaxed). Packed slots are read 16
  /// bytes at a time (core's load_pair, each 8-byte slot single-copy atomic, as look() reads
  /// them): 4 requests per bucket instead of 8 (session 18: a fifth fewer requests in the
  /// complete pass, whose time did not change: it is latency-bound).
  WARPKV_HD void load_bucket(std::size_t b, typename layout::entry (&e)[bucket_slots]) const {
    if constexpr (layout::packed) {
      std::uint64_t* p = &slot_at(b, 0).pair;
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; s += 2) {
        std::uint64_t w0, w1;
        load_pair<read_mode::relaxed>(p + s, w0, w1);
        e[s] = layout::unpack(w0);
        e[s + 1] = layout::unpack(w1);
      }
    } else {
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; ++s) e[s] = layout::load(slot_at(b, s), memory_order::relaxed);
    }
  }
  WARPKV_HD bucket_scan scan(std::size_t b, key_bits kb) const {
    typename layout::entry e[bucket_slots];
    load_bucket(b, e);
    bucket_scan r{-1, -1};
    WARPKV_UNROLL
    for (unsigned s = bucket_slots; s-- > 0;) {
      if (e[s].key == kb) r.match = static_cast<int>(s);
      if (e[s].key == empty_) r.free = static_cast<int>(s);
    }
    return r;
  }
  /// Under the locks of its buckets: where kb lives (slot index), or -1.
  WARPKV_HD long locate_locked(const std::size_t (&b)[max_hash_functions], key_bits kb) const {
    WARPKV_UNROLL
    for (unsigned i = 0; i < max_hash_functions; ++i) {
      if (i >= d_) break;
      if (const bucket_scan r = scan(b[i], kb); r.match >= 0) return static_cast<long>(b[i] * bucket_slots + r.match);
    }
    return -1;
  }
  /// A free slot of bucket b (its index in the table), or -1.
  WARPKV_HD long free_slot(std::size_t b) const {
    const bucket_scan r = scan(b, empty_);
    return r.free < 0 ? -1 : static_cast<long>(b * bucket_slots + r.free);
  }

  /// One lane, under the locks of all of kb's buckets b[0..d): the write itself (found,
  /// assigned, erased, not_found, inserted), or full when kb is absent and no bucket of it has a
  /// free slot (then nothing changed).
  WARPKV_HD status write_locked(const std::size_t (&b)[max_hash_functions], key_bits kb, value_bits vb,
                                 write_kind kind) const {
    // One scan of each bucket finds kb and the first free slot (first fit: the first free slot
    // of the first candidate bucket that has one, the order the fast paths rely on, rule F).
    long at = -1, best = -1;
    WARPKV_UNROLL
    for (unsigned i = 0; i < max_hash_functions; ++i) {
      if (i >= d_ || at >= 0) break;
      const bucket_scan r = scan(b[i], kb);
      if (r.match >= 0) at = static_cast<long>(b[i] * bucket_slots + r.match);
      else if (best < 0 && r.free >= 0) best = static_cast<long>(b[i] * bucket_slots + r.free);
    }
    if (at >= 0) {
      // Linearization points (all under the key's locks, so no other write of kb interleaves):
      if (kind == write_kind::erase) {
        layout::store(slots_[at], empty_, hole_value, memory_order::relaxed);  // kb leaves the table
        return status::erased;
      }
      if (kind == write_kind::upsert) {
        layout::store_value(slots_[at], kb, vb, memory_order::relaxed);  // the new value is kb's
        return status::assigned;
      }
      return status::found;  // the locks prove kb present now
    }
    if (kind == write_kind::erase) return status::not_found;
    if (best < 0) return status::full;
    layout::store(slots_[best], kb, vb, memory_order::relaxed);  // linearization point of the insert
    return status::inserted;
  }

  /// One lane: the whole write under the key's bucket locks, with eviction when its buckets are full.
  WARPKV_HD status write_one(key_bits kb, value_bits vb, write_kind kind) const {
    std::size_t b[max_hash_functions];
    candidates(kb, b);
    const lock_set<max_hash_functions> u = lock_order(b);
    for (unsigned attempt = 0;; ++attempt) {
      lock_all(u);
      const status result = write_locked(b, kb, vb, kind);
      unlock_all(u);
      if (result != status::full) return result;
      if (attempt >= attempts_) return status::full;
      // Every candidate bucket was full: evict along a chain that starts at one of them, then
      // look again (a concurrent insert may take the room first: that costs an attempt).
      make_room(candidate(b, attempt), kb, attempt);
    }
  }

  /// One lane: write_one for an insert expected to need an eviction (insert_evicting). Each
  /// attempt plans a chain from one of kb's buckets first and makes its moves but the first
  /// without kb's locks (as make_room), then takes the locks of kb's buckets and of the first
  /// move's target together (increasing order), and under them writes as write_one does, or,
  /// when kb is absent and its buckets full, makes the first move (the victim to its next
  /// bucket) and stores kb into the victim's slot. The same attempts as write_one: eviction_attempts
  /// chains, each followed by a locked look, and full after the last.
  WARPKV_HD status write_evicting(key_bits kb, value_bits vb, write_kind kind) const {
    std::size_t b[max_hash_functions];
    candidates(kb, b);
    for (unsigned attempt = 0;; ++attempt) {
      chain_step path[max_chain_limit];
      unsigned len = 0;
      const std::size_t start = candidate(b, attempt);
      std::size_t end = start;
      bool first_move = false;  // path[0] still to make, under kb's locks
      if (attempt < attempts_ && plan_chain(start, kb, attempt, path, len, end) && len > 0)
        first_move = carry_out(path, len, end, 1);
      const std::size_t dest = move_target(path, len, end, 0);
      std::size_t w[max_hash_functions + 1];
      WARPKV_UNROLL
      for (unsigned i = 0; i < max_hash_functions; ++i) w[i] = b[i];
      w[max_hash_functions] = first_move ? dest : b[0];  // b[0]: a repeat, locked once
      const lock_set<max_hash_functions + 1> u = lock_order(w);
      lock_all(u);
      status result = write_locked(b, kb, vb, kind);
      // kb is absent and every bucket of it full (start among them): the first move frees the
      // victim's slot in `start`, which is then kb's first free position (rule F), and kb takes
      // it (linearization point of the insert: that store). Both copies of the victim hold one
      // value while the locks are held (U).
      if (result == status::full && first_move && move_locked(path[0], dest, kb, vb)) result = status::inserted;
      unlock_all(u);
      if (result != status::full || attempt >= attempts_) return result;
    }
  }

  struct chain_step {
    std::size_t bucket;  // where the key sat when the chain was planned
    unsigned slot;
    key_bits key;
  };

  /// One lane, no lock held on entry: plans a chain of at most max_chain moves from bucket
  /// `start` to a bucket with a free slot, reading without locks, then carries it out from its far
  /// end, one move at a time under the two buckets' locks, each move re-checked. Returns whether
  /// `start` got a free slot. At each full bucket x of the walk it first looks one move ahead:
  /// the last slot of each key's next bucket (8 independent loads); a key whose next bucket's last
  /// slot is empty (that bucket then has room: writers fill a bucket's free slots lowest first,
  /// so its last slot is the last to fill) ends the chain there. Only when none has room does the
  /// walk move a random key on. (A pure random walk took about 2.7 moves per chain at LF 0.9 and
  /// 3.8 at 0.95, with a long tail; with the look-ahead most chains are one move: session 17.)
  WARPKV_HD bool make_room(std::size_t start, key_bits kb, unsigned attempt) const {
    chain_step path[max_chain_limit];
    unsigned len = 0;
    std::size_t x = start;
    return plan_chain(start, kb, attempt, path, len, x) && carry_out(path, len, x, 0);
  }

  /// Where move i of a planned chain path[0..len) that ends at bucket x takes its key.
  WARPKV_HD static std::size_t move_target(const chain_step (&path)[max_chain_limit], unsigned len, std::size_t x,
                                           unsigned i) {
    return i + 1 < len ? path[i + 1].bucket : x;
  }
  /// Makes the moves len-1 .. `first` of a planned chain, from its far end, each under its two
  /// locks; false at the first whose plan no longer holds (the moves made stay valid).
  WARPKV_HD bool carry_out(const chain_step (&path)[max_chain_limit], unsigned len, std::size_t x, unsigned first) const {
    for (unsigned i = len; i-- > first;)
      if (!move(path[i], move_target(path, len, x, i))) return false;
    return true;
  }

  /// make_room's plan: the walk from `start` (no lock held, reads without locks). Returns whether
  /// it reached a bucket with room; then path[0..len) are its moves and `x` that bucket (`start`
  /// itself when len == 0).
  WARPKV_HD bool plan_chain(std::size_t start, key_bits kb, unsigned attempt, chain_step (&path)[max_chain_limit],
                            unsigned& len, std::size_t& x) const {
    std::uint64_t rng = fmix64(static_cast<std::uint64_t>(kb) * 0x9e3779b97f4a7c15ull + attempt + 1);
    x = start;
    len = 0;
    bool open = false;
    for (unsigned tries = 0; tries < 2 * max_chain_; ++tries) {
      typename layout::entry e[bucket_slots];
      load_bucket(x, e);
      bool room = false;
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; ++s) room = room || e[s].key == empty_;
      if (room) {
        open = true;
        break;
      }
      if (len == max_chain_) break;
      // Each key's next candidate bucket after x, cyclically (BGHT's order): a key moves from h_j
      // to h_{j+1}, whose predecessors h_0..h_j hold no fresh slot (x was full when planned, and
      // a fresh slot never comes back), so the move keeps rule F (from h_{d-1} it wraps to h_0,
      // which has no predecessor). y[s] == x: all of that key's buckets are x (it cannot move).
      // Every e[s] holds a key here (the snapshot had no free slot).
      // Every array here is indexed by unrolled constants only (a slot picked at run time is
      // selected into registers): indexed by the run-time pick they lived in local memory, most
      // of the complete insert's local loads and stores (LDL / STL 104 / 98 -> 68 / 34; ncu
      // measured ~1.7 KB of local traffic per handed-back insert at LF 0.95, session 19).
      std::size_t y[bucket_slots];
      key_bits last[bucket_slots];
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; ++s) y[s] = next_bucket(e[s].key, x);
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; ++s)
        last[s] = y[s] == x ? kb : layout::load(slot_at(y[s], bucket_slots - 1), memory_order::relaxed).key;
      rng = fmix64(rng + 1);
      const unsigned first = static_cast<unsigned>(rng % bucket_slots);  // where the look-ahead starts
      unsigned roomy = 0;    // bit s: e[s]'s next bucket has an empty last slot
      unsigned movable = 0;  // bit s: e[s] has a bucket other than x
      WARPKV_UNROLL
      for (unsigned s = 0; s < bucket_slots; ++s) {
        if (y[s] != x) movable |= 1u << s;
        if (y[s] != x && last[s] == empty_) roomy |= 1u << s;
      }
      // The first slot at or after `first`, cyclically, whose key has room ahead.
      constexpr unsigned all = (1u << bucket_slots) - 1;
      const unsigned turned = ((roomy >> first) | (roomy << (bucket_slots - first))) & all;
      const bool ends = turned != 0;
      unsigned s = first;
      if (ends) {
        s = (static_cast<unsigned>(lowest_lane(turned)) + first) % bucket_slots;
      } else if ((movable >> first & 1u) == 0) {
        continue;  // cannot move this one: draw again
      }
      key_bits victim = 0;
      std::size_t next = x;
      WARPKV_UNROLL
      for (unsigned j = 0; j < bucket_slots; ++j)
        if (j == s) victim = e[j].key, next = y[j];
      path[len++] = chain_step{x, s, victim};
      x = next;
      if (ends) {  // the move into y[s] re-checks its room under the locks
        open = true;
        break;
      }
    }
    return open;
  }

  /// The candidate bucket of `victim` after x in its bucket order, cyclically; x when all of its
  /// buckets are x.
  WARPKV_HD std::size_t next_bucket(key_bits victim, std::size_t x) const {
    unsigned at = 0;
    while (at + 1 < d_ && bucket_bits(victim, at) != x) ++at;
    std::size_t y = x;
    for (unsigned j = 1; j < d_ && y == x; ++j) y = bucket_bits(victim, at + j < d_ ? at + j : at + j - d_);  // (at + j) mod d
    return y;
  }

  /// One lane: moves step.key from its slot in step.bucket to a free slot of bucket `to` (another
  /// of its candidate buckets) under both locks. False when the plan no longer holds.
  WARPKV_HD bool move(const chain_step& step, std::size_t to) const {
    const std::size_t from = step.bucket;
    const std::size_t pair[2] = {from, to};
    const lock_set<2> u = lock_order(pair);
    lock_all(u);
    const bool ok = move_locked(step, to, empty_, hole_value);  // the old slot becomes a hole, not a fresh slot
    unlock_all(u);
    return ok;
  }
  /// One lane holding the locks of step.bucket and `to`: when step.key still sits in its planned
  /// slot and `to` has a free slot, copies it into `to`'s first free slot, then stores (k, v)
  /// into the old slot (a hole, or the key an insert_evicting places). The moved key is in both
  /// buckets for a moment, then only in `to`; both are locked, so no write of it interleaves, and
  /// a reader that saw either bucket change retries. False (nothing written) when the plan no
  /// longer holds.
  WARPKV_HD bool move_locked(const chain_step& step, std::size_t to, key_bits k, value_bits v) const {
    slot_type& src = slot_at(step.bucket, step.slot);
    const auto e = layout::load(src, memory_order::relaxed);
    const long dst = free_slot(to);
    if (e.key != step.key || dst < 0) return false;
    layout::store(slots_[dst], e.key, e.value, memory_order::relaxed);
    layout::store(src, k, v, memory_order::relaxed);
    return true;
  }

  slot_type* slots_ = nullptr;
  std::uint32_t* locks_ = nullptr;
  std::size_t bucket_mask_ = 0;
  unsigned d_ = 3;
  key_bits empty_ = 0;
  std::uint64_t seeds_[max_hash_functions] = {};
  unsigned max_chain_ = 32;
  unsigned attempts_ = 8;
};

}  // namespace warpkv
