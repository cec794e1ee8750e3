#pragma once
// hopscotch_ref: the device-side view of a hopscotch_map, usable inside user
// kernels with a cooperative tile (one tile per operation; every lane of the
// tile calls the same method with the same arguments and gets the same result).
//
// Guarantees (argument and linearization points: docs/design/hopscotch.md):
//  - every operation is linearizable;
//  - find/contains never write and never wait for a lock: they retry only when a
//    writer changed the neighborhood they read (lock-free); with 4-byte keys and
//    values a hit costs two reads (hop word, then the slot's key-value word);
//  - insert into a free slot within reach is two CASes (claim, publish in the hop
//    word; lock-free); erase, assign and displacement hold one bucket's lock for a
//    bounded number of steps and never wait while holding it;
//  - two key values are reserved: the empty key and its neighbour empty_key ^ 1
//    (a claimed slot); both get status::invalid_key;
//  - a key that no free slot within max_probe can be hopped back for goes to the
//    stash (a small side table after the slot array; detail/stash.hpp), flagged in
//    its home bucket's hop word so that only lookups of that bucket look there;
//  - status::full means the key could be placed neither in its neighborhood nor in
//    its stash window: the table was not changed for this key. The bulk API then
//    grows the table and retries; a device caller decides.
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"
#include "warpkv/hopscotch/detail/hop_word.hpp"
#include "warpkv/hopscotch/detail/slot_layout.hpp"
#include "warpkv/hopscotch/detail/stash.hpp"

namespace warpkv {

template <hash_key Key, map_value Value>
class hopscotch_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using key_bits = storage_bits_t<sizeof(Key)>;
  using value_bits = storage_bits_t<sizeof(Value)>;
  using layout = detail::slot_layout<key_bits, value_bits>;
  using slot_type = typename layout::slot;  // hop word of bucket i beside slot i

  /// Slots the map allocates for a table of `capacity` buckets: the table, then its stash.
  WARPKV_HD static constexpr std::size_t storage_slots(std::size_t capacity) {
    return capacity + detail::stash_slots(capacity);
  }

  hopscotch_ref() = default;
  /// `slots` holds storage_slots(capacity) slots.
  hopscotch_ref(slot_type* slots, std::size_t capacity, unsigned neighborhood, Key empty_key, std::uint64_t seed,
                std::size_t max_probe)
      : slots_(slots),
        stash_(slots + capacity),
        mask_(capacity - 1),
        stash_mask_(detail::stash_slots(capacity) - 1),
        h_(neighborhood),
        empty_(to_bits(empty_key)),
        claimed_(to_bits(empty_key) ^ key_bits{1}),
        seed_(seed),
        max_probe_(max_probe < capacity ? max_probe : capacity) {}

  WARPKV_HD std::size_t capacity() const { return mask_ + 1; }
  WARPKV_HD unsigned neighborhood() const { return h_; }
  WARPKV_HD Key empty_key() const { return from_bits<Key>(empty_); }
  /// The second reserved key: marks slots claimed by an insert, a move or an erase in progress.
  WARPKV_HD Key claimed_key() const { return from_bits<Key>(claimed_); }
  WARPKV_HD bool is_reserved(Key k) const { return to_bits(k) == empty_ || to_bits(k) == claimed_; }
  WARPKV_HD std::size_t home(Key k) const { return home_bits(to_bits(k)); }
  /// First slot of k's stash window, as an index into the stash (slot capacity() + i of storage).
  WARPKV_HD std::size_t stash_home(Key k) const { return stash_home_bits(to_bits(k)); }

  /// The bulk API runs uniform insert batches through insert_fast first (issue 23's hot kernel and
  /// slow pass): it carries no displacement and no stash insert, and hands an insert that found no
  /// free slot within the neighborhood back as status::full; the bulk API re-runs exactly those
  /// with insert() in a second launch of the same batch (core/bulk_map.hpp `run`).
  static constexpr bool fast_bulk_inserts = true;
  /// Registers per thread of the bulk find / erase / fast insert kernels (launch bounds,
  /// core/launcher.hpp). The complete insert (displacement, stash) runs only in the second
  /// launch and keeps the compiler's choice (slow_register_budget 0).
  static constexpr int hot_register_budget = 48;
  static constexpr int slow_register_budget = 0;

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
  /// insert / insert_or_assign without the rare paths: status::full also when the neighborhood has
  /// no free slot now (displacement or the stash might place k); the table is then unchanged for
  /// k. Linearizable like insert() when it answers anything else.
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
    const key_bits kb = to_bits(k);
    if (kb == empty_ || kb == claimed_) return status::invalid_key;
    const snapshot s = search<stash_scan::all_at_once>(t, home_bits(kb), kb);
    if (!s.found()) return status::not_found;
    if (out != nullptr) *out = from_bits<Value>(s.value);
    return status::found;
  }
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, Key k) const {
    return find(t, k, nullptr);
  }
  /// erased, not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, Key k) const {
    const key_bits kb = to_bits(k);
    if (kb == empty_ || kb == claimed_) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    for (;;) {
      const snapshot s = search(t, b, kb);
      if (!s.found()) return status::not_found;
      if (detail::hop::locked(s.hop)) continue;  // a mover, assigner or eraser owns the bucket for a few steps
      bool ok = false;
      if (t.thread_rank() == 0) {
        const std::uint64_t locked = lock(b, s.hop);
        ok = locked != 0;
        if (ok && s.stash >= 0) {
          // Stash slots are named by no bitmap: emptying it is the linearization point.
          layout::mark(stash_[s.stash], empty_, 0, memory_order::release);
          hop_ref(b).store(detail::hop::next(locked, detail::hop::bitmap(locked), false), memory_order::release);
        } else if (ok) {
          // Under the lock the snapshot is current, so the slot holds kb. Marking it claimed is
          // the linearization point: from here no slot holds kb.
          slot_type& slot = slots_[idx(b, s.offset)];
          layout::mark(slot, claimed_, 0, memory_order::release);
          hop_ref(b).store(detail::hop::next(locked, detail::hop::bitmap(locked) & ~(1u << s.offset), false),
                           memory_order::release);
          layout::mark(slot, empty_, 0, memory_order::release);
        }
      }
      if (t.shfl(ok, 0)) return status::erased;
    }
  }

  /// Quiescent access for whole-table passes (rehash, retrieve_all, validate).
  WARPKV_HD static key_bits stored_key(const slot_type& s) { return layout::key_of(s); }
  WARPKV_HD static value_bits stored_value(const slot_type& s) { return layout::value_of(s); }
  WARPKV_HD static void init_slot(slot_type& s, Key empty_key) { layout::init(s, to_bits(empty_key)); }

 private:
  /// How search reads a stash window (see search_stash).
  enum class stash_scan { all_at_once, one_window_at_a_time };
  struct snapshot {
    std::uint64_t hop;  // hop word of the home bucket the reads were made under
    int offset;         // offset of the key in the neighborhood, -1 if not there
    long stash;         // index of the key's stash slot, -1 if not there
    value_bits value;   // its value when present
    bool pending;       // a named slot is claimed: an insert publishing or an erase under way
    WARPKV_HD bool found() const { return offset >= 0 || stash >= 0; }
  };

  WARPKV_HD std::size_t idx(std::size_t b, std::size_t o) const { return (b + o) & mask_; }
  WARPKV_HD std::size_t home_bits(key_bits kb) const { return static_cast<std::size_t>(hash_bits(kb, seed_)) & mask_; }
  WARPKV_HD std::size_t stash_home_bits(key_bits kb) const {
    return static_cast<std::size_t>(hash_bits(kb, seed_ ^ stash_salt)) & stash_mask_;
  }
  WARPKV_HD std::size_t stash_idx(std::size_t first, unsigned j) const { return (first + j) & stash_mask_; }
  WARPKV_HD atomic_ref<std::uint64_t> hop_ref(std::size_t b) const { return atomic_ref<std::uint64_t>(slots_[b].meta); }

  /// Lane 0 only: CAS bucket b's word from h (unlocked) to locked; returns the locked word or 0.
  WARPKV_HD std::uint64_t lock(std::size_t b, std::uint64_t h) const {
    std::uint64_t expected = h;
    const std::uint64_t locked = detail::hop::next(h, detail::hop::bitmap(h), true);
    return hop_ref(b).compare_exchange(expected, locked, memory_order::acq_rel) ? locked : 0;
  }

  /// Every lane acquires the hop word itself (so its own slot reads are ordered after the
  /// writes the word publishes); the tile retries until all lanes read the same word.
  template <class Tile>
  WARPKV_HD std::uint64_t read_hop(const Tile& t, std::size_t b) const {
    for (;;) {
      const std::uint64_t mine = hop_ref(b).load(memory_order::acquire);
      const std::uint64_t lane0 = t.shfl(mine, 0);
      if (t.all(mine == lane0)) return lane0;
    }
  }

  /// Looks for kb among the slots bucket b names, then, if b's overflow flag is set, in kb's
  /// stash window. A slot holding kb proves kb present (no slot holds a key that is not in the
  /// map), so a packed hit needs no second look. A miss is accepted when b names no slot and has
  /// no overflow, or when every lane re-reads the same hop word after its slot reads (no member
  /// moved, left or entered the stash meanwhile); otherwise the search starts over.
  template <stash_scan Scan = stash_scan::one_window_at_a_time, class Tile>
  WARPKV_HD snapshot search(const Tile& t, std::size_t b, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    const unsigned rank = t.thread_rank();
    for (;;) {
      const std::uint64_t h = read_hop(t, b);
      const std::uint32_t bm = detail::hop::bitmap(h);
      snapshot s{h, -1, -1, 0, false};
      for (unsigned base = 0; base < h_; base += T) {
        const std::uint32_t window = (bm >> base) & Tile::full_mask();
        if (window == 0) continue;  // no member of b among these T offsets (same on every lane)
        bool hit = false, claimed = false;
        value_bits v = 0;
        if ((window >> rank) & 1u) {
          const auto e = layout::load(slots_[idx(b, base + rank)], memory_order::relaxed);
          hit = e.key == kb;
          claimed = e.key == claimed_;
          v = e.value;
        }
        s.pending = t.any(claimed) || s.pending;
        const std::uint32_t hits = t.ballot(hit);
        if (hits != 0) {
          const int lane = lowest_lane(hits);
          s.offset = static_cast<int>(base) + lane;
          s.value = t.shfl(v, static_cast<unsigned>(lane));
          break;
        }
      }
      const bool overflow = detail::hop::overflowed(h);
      if (s.offset < 0 && overflow) {
        const stash_hit hit = search_stash<Scan>(t, kb);
        s.stash = hit.slot;
        if (hit.slot >= 0) s.value = hit.value;
      }
      if ((bm == 0 && !overflow) || (layout::packed && s.found())) return s;
      atomic_thread_fence(memory_order::acquire);
      const std::uint64_t again = hop_ref(b).load(memory_order::relaxed);
      if (t.all(again == h)) return s;
    }
  }

  /// A key's place in the stash: its slot's index (-1: not there) and value.
  struct stash_hit {
    long slot;
    value_bits value;
  };

  /// The tile reads kb's stash window (lane r takes slots r, r+T, ...), all of it at once (loads
  /// issued together: the find kernels, measured faster on misses at load 0.9 and within their
  /// register budget) or one tile-wide window per round trip (the insert and erase kernels: the
  /// unrolled loop spilled in the fast insert kernel, 56-484 B).
  template <stash_scan Scan, class Tile>
  WARPKV_HD stash_hit search_stash(const Tile& t, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    const std::size_t first = stash_home_bits(kb);
    stash_hit hit{-1, value_bits{}};
    const auto look = [&](unsigned base) {
      const auto e = layout::load(stash_[stash_idx(first, base + t.thread_rank())], memory_order::relaxed);
      const std::uint32_t hits = t.ballot(e.key == kb);
      if (hits == 0) return false;
      const int lane = lowest_lane(hits);
      hit = {static_cast<long>(stash_idx(first, base + static_cast<unsigned>(lane))),
             t.shfl(e.value, static_cast<unsigned>(lane))};
      return true;
    };
    if constexpr (Scan == stash_scan::all_at_once) {
      for (unsigned base = 0; base < detail::stash_window; base += T)
        if (look(base)) break;
    } else {
#if WARPKV_DEVICE_PASS
#pragma unroll 1
#endif
      for (unsigned base = 0; base < detail::stash_window; base += T)
        if (look(base)) break;
    }
    return hit;
  }

  /// Places kb in the stash: lane 0 locks b from the search's word h (unlocked, kb absent, no
  /// publication pending), setting b's overflow flag in the same CAS, claims a free slot of kb's
  /// stash window, publishes (kb, vb) there and unlocks. Under b's lock no other insert of kb
  /// (homed at b too) can commit, so kb stays unique. Returns stash_placed, stash_full (window
  /// full; the map is unchanged, b keeps its flag) or stash_retry (b changed since h).
  template <class Tile>
  WARPKV_HD int stash_insert(const Tile& t, std::size_t b, std::uint64_t h, key_bits kb, value_bits vb) const {
    int r = stash_retry;
    if (t.thread_rank() == 0) {
      std::uint64_t expected = h;
      const std::uint64_t locked = detail::hop::next(h, detail::hop::bitmap(h), true) | detail::hop::overflow_bit;
      if (hop_ref(b).compare_exchange(expected, locked, memory_order::acq_rel)) {
        r = stash_full;
        const std::size_t first = stash_home_bits(kb);
        for (unsigned j = 0; j < detail::stash_window; ++j) {
          slot_type& slot = stash_[stash_idx(first, j)];
          if (layout::load(slot, memory_order::relaxed).key != empty_) continue;
          if (!layout::claim(slot, empty_, claimed_, kb)) continue;  // another bucket's insert took it
          // Linearization point of a stash insert: from this store a slot holds kb.
          layout::store(slot, kb, vb, memory_order::release);
          r = stash_placed;
          break;
        }
        hop_ref(b).store(detail::hop::next(locked, detail::hop::bitmap(locked), false), memory_order::release);
      }
    }
    return t.shfl(r, 0);
  }

  /// Lane 0 claims the first empty slot at offsets [from, to) of bucket b by CAS from empty to
  /// claimed (invisible to lookups: no slot holds kb yet). Returns the offset, -1 if there is
  /// none, or `busy` if another insert of kb holds a claim in this range: then waiting beats
  /// claiming a second slot, which under hot-key contention would flood the neighborhood.
  /// *crowded is set when the range held slots claimed by other operations (room may free up).
  template <class Tile>
  WARPKV_HD long claim_empty(const Tile& t, std::size_t b, std::size_t from, std::size_t to, key_bits kb,
                             bool* crowded) const {
    constexpr unsigned T = Tile::size();
    const unsigned rank = t.thread_rank();
    for (std::size_t base = from; base < to; base += T) {
      const std::size_t o = base + rank;
      bool empty = false, theirs = false, taken = false;
      if (o < to) {
        const auto e = layout::load(slots_[idx(b, o)], memory_order::relaxed);
        empty = e.key == empty_;
        taken = e.key == claimed_;
        theirs = layout::holds_claim_of(e, claimed_, kb);
      }
      if (t.any(theirs)) return busy;
      if (t.any(taken)) *crowded = true;
      std::uint32_t candidates = t.ballot(empty);
      long claimed = -1;
      if (rank == 0) {
        while (candidates != 0) {
          const int lane = lowest_lane(candidates);
          candidates &= candidates - 1;
          if (layout::claim(slots_[idx(b, base + lane)], empty_, claimed_, kb)) {
            claimed = static_cast<long>(base + lane);
            break;
          }
        }
      }
      claimed = t.shfl(claimed, 0);
      if (claimed >= 0) return claimed;
    }
    return -1;
  }

  /// Moves one entry into the claimed slot e from a slot closer to e's bucket window start,
  /// leaving that slot claimed instead. Returns the new claimed slot or -1 when no bucket in
  /// e's window has a movable member before e.
  template <class Tile>
  WARPKV_HD long displace_once(const Tile& t, std::size_t e, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    const unsigned rank = t.thread_rank();
    for (;;) {
      bool any_candidate = false;
      // d = distance from candidate bucket c to e, scanned from the farthest (H-1) down.
      for (unsigned base = 0; base + 1 < h_; base += T) {
        const unsigned d = h_ - 1 - (base + rank);  // wraps to a huge value past the window
        std::uint64_t h = 0;
        bool candidate = false;
        bool owned = false;
        if (base + rank < h_ - 1) {
          h = hop_ref(idx(e, capacity() - d)).load(memory_order::relaxed);
          const bool has_member = (detail::hop::bitmap(h) & ((1u << d) - 1u)) != 0;
          owned = has_member && detail::hop::locked(h);  // its owner finishes in a few steps
          candidate = has_member && !owned;
        }
        if (t.any(owned)) any_candidate = true;
        std::uint32_t candidates = t.ballot(candidate);
        if (candidates == 0) continue;
        long moved_from = -1;
        while (candidates != 0 && moved_from < 0) {
          const int lane = lowest_lane(candidates);
          candidates &= candidates - 1;
          const unsigned dl = h_ - 1 - (base + static_cast<unsigned>(lane));
          const std::uint64_t hl = t.shfl(h, static_cast<unsigned>(lane));
          if (rank == 0) moved_from = move_into(idx(e, capacity() - dl), dl, hl, e, kb);
          moved_from = t.shfl(moved_from, 0);
          if (moved_from == retry) any_candidate = true;
        }
        if (moved_from >= 0) return moved_from;
      }
      if (!any_candidate) return -1;
      // Every candidate was locked or busy: look again.
    }
  }

  /// Lane 0 only: lock bucket c (observed word h), move its first settled member before e
  /// (distance d) into e, and claim the vacated slot. Returns it; `retry` if the lock failed
  /// or the members before e are still being published; -1 if none is left to move.
  WARPKV_HD long move_into(std::size_t c, unsigned d, std::uint64_t h, std::size_t e, key_bits kb) const {
    const std::uint64_t locked = lock(c, h);
    if (locked == 0) return retry;
    std::uint32_t before = detail::hop::bitmap(h) & ((1u << d) - 1u);
    while (before != 0) {
      const unsigned o = static_cast<unsigned>(lowest_lane(before));
      before &= before - 1;
      slot_type& from = slots_[idx(c, o)];
      const auto entry = layout::load(from, memory_order::acquire);
      if (entry.key == claimed_) continue;  // its insert is still publishing: leave it
      // Temporary duplication: the entry is copied into e before the bitmap names e, and the
      // old slot is claimed only after the bitmap has moved, both under c's lock (so no assign
      // or erase sees two copies): a reader always finds the entry in one of the two.
      layout::store(slots_[e], entry.key, entry.value, memory_order::relaxed);
      const std::uint32_t moved = (detail::hop::bitmap(h) & ~(1u << o)) | (1u << d);
      const std::uint64_t published = detail::hop::next(locked, moved, true);
      hop_ref(c).store(published, memory_order::release);
      layout::mark(from, claimed_, kb, memory_order::release);  // the vacated slot is this insert's claim
      hop_ref(c).store(detail::hop::next(published, moved, false), memory_order::release);
      return static_cast<long>(idx(c, o));
    }
    hop_ref(c).store(detail::hop::next(locked, detail::hop::bitmap(h), false), memory_order::release);
    return retry;
  }

  /// Lane 0 only: set bit `offset` of bucket b if its word is still h, then publish (kb, vb)
  /// into the claimed slot. Returns false if b changed since h.
  WARPKV_HD bool commit(std::size_t b, std::uint64_t h, unsigned offset, key_bits kb, value_bits vb) const {
    std::uint64_t expected = h;
    if (!hop_ref(b).compare_exchange(expected, detail::hop::next(h, detail::hop::bitmap(h) | (1u << offset), false),
                                     memory_order::acq_rel))
      return false;
    // Linearization point of the insert: from this store a slot holds kb. Until then the slot is
    // named but claimed, and other inserts of any key homed at b wait for it (uniqueness).
    layout::store(slots_[idx(b, offset)], kb, vb, memory_order::release);
    return true;
  }

  /// Replaces the value of the key found in snapshot s; false if b changed since s (retry).
  template <class Tile>
  WARPKV_HD bool assign(const Tile& t, std::size_t b, const snapshot& s, key_bits kb, value_bits vb) const {
    bool ok = false;
    if (t.thread_rank() == 0) {
      const std::uint64_t locked = lock(b, s.hop);
      ok = locked != 0;
      if (ok) {
        // Under the lock no member of b moves or leaves (nor enters or leaves the stash), so the
        // slot still holds the key. Linearization point: this store.
        slot_type& slot = s.stash >= 0 ? stash_[s.stash] : slots_[idx(b, s.offset)];
        layout::store(slot, kb, vb, memory_order::release);
        hop_ref(b).store(detail::hop::next(locked, detail::hop::bitmap(locked), false), memory_order::release);
      }
    }
    return t.shfl(ok, 0);
  }

  template <class Tile>
  WARPKV_HD void release(const Tile& t, std::size_t slot) const {
    if (t.thread_rank() == 0) layout::mark(slots_[slot], empty_, 0, memory_order::release);
  }

  /// Complete: displacement and the stash when the neighborhood is full; otherwise the fast
  /// path alone, which answers full where the complete insert would start displacing.
  template <bool Complete, class Tile>
  WARPKV_HD status upsert(const Tile& t, key_bits kb, value_bits vb, bool or_assign) const {
    if (kb == empty_ || kb == claimed_) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    const bool leader = t.thread_rank() == 0;
    int full_attempts = 0, crowded_attempts = 0, waits = 0;
    bool stuck = false;  // displacement failed once: later rounds go from the neighborhood straight to the stash
    for (;;) {
      snapshot s = search(t, b, kb);
      if (s.found()) {
        if (!or_assign) return status::found;
        if (detail::hop::locked(s.hop)) continue;
        if (assign(t, b, s, kb, vb)) return status::assigned;
        continue;
      }
      // Writers wait for the bucket's lock holder, and for named slots still being published
      // or erased: one of them may be kb.
      if (detail::hop::locked(s.hop) || s.pending) continue;
      // Fast path: a free slot inside the neighborhood, claimed and published by two CASes.
      bool crowded = false;
      long off = claim_empty(t, b, 0, h_, kb, &crowded);
      if (off == busy) {  // another insert of kb is under way: its outcome decides ours
        backoff(++waits);
        continue;
      }
      if (off >= 0) {
        bool ok = false;
        if (leader) ok = commit(b, s.hop, static_cast<unsigned>(off), kb, vb);
        if (t.shfl(ok, 0)) return status::inserted;
        release(t, idx(b, off));
        backoff(++waits);  // b changed under us: another writer won this round
        continue;
      }
      if constexpr (!Complete) {
        // No free slot within reach: nothing of this round is held (no claim, no lock), so
        // handing kb to the complete insert leaves the table as it was for kb.
        return status::full;
      } else {
      // Slow path: claim a free slot beyond the neighborhood and hop it back toward b. When
      // the hole gets stuck (no bucket in its window has a member before it), try the next free
      // slot further out: its window may be open. Once that failed, retries (a stash CAS lost to
      // another writer of b) skip it: re-running the whole walk per retry made inserts of many
      // colliding keys quadratic, and the stash is always a valid place for kb.
      long e_off = -1;
      int holes = stuck ? max_holes : 0;
      for (std::size_t from = h_; from < max_probe_ && holes < max_holes; ++holes) {
        off = claim_empty(t, b, from, max_probe_, kb, &crowded);
        if (off < 0) break;
        std::size_t e = idx(b, static_cast<std::size_t>(off));
        while (((e - b) & mask_) >= h_) {
          const long closer = displace_once(t, e, kb);
          if (closer < 0) break;
          e = static_cast<std::size_t>(closer);
        }
        if (((e - b) & mask_) < h_) {
          e_off = static_cast<long>((e - b) & mask_);
          break;
        }
        release(t, e);  // give the stuck hole back
        from = static_cast<std::size_t>(off) + 1;
      }
      if (off == busy) {
        backoff(++waits);
        continue;
      }
      if (e_off < 0) {
        // Claims of concurrent operations are transient and can hide free slots (on a GPU a herd
        // of inserts can claim a small table's every free slot at once): while others' claims
        // are in sight, back off and look again; report full only after fresh looks without them.
        if (!stuck && crowded && ++crowded_attempts < max_crowded_attempts) {
          backoff(crowded_attempts);
          continue;
        }
        // Stuck for good: the stash takes kb. The loop's top check saw b unlocked and nothing
        // pending in s.hop; stash_insert's CAS fails if b changed since (the moves above may
        // have changed it), and the next round searches afresh.
        stuck = true;
        const int r = stash_insert(t, b, s.hop, kb, vb);
        if (r == stash_placed) return status::inserted;
        if (r == stash_retry) {
          backoff(++waits);
          continue;
        }
        if (++full_attempts < max_full_attempts) continue;
        return status::full;
      }
      const std::size_t e = idx(b, static_cast<std::size_t>(e_off));
      for (;;) {
        bool ok = false;
        if (leader && !detail::hop::locked(s.hop) && !s.pending) ok = commit(b, s.hop, static_cast<unsigned>(e_off), kb, vb);
        if (t.shfl(ok, 0)) return status::inserted;
        s = search(t, b, kb);  // b changed meanwhile: is kb there now?
        if (s.found()) {
          release(t, e);
          if (!or_assign) return status::found;
          break;  // assign through the outer loop
        }
      }
      }  // Complete
    }
  }

  static constexpr long busy = -2;
  static constexpr long retry = -3;
  static constexpr int max_full_attempts = 3;  // fresh looks before reporting full
  static constexpr int max_crowded_attempts = 64;  // looks while other operations' claims are in sight
  static constexpr int max_holes = 4;          // free slots tried per look when holes get stuck
  static constexpr int stash_placed = 0, stash_full = 1, stash_retry = 2;
  static constexpr std::uint64_t stash_salt = 0x5bd1e9955bd1e995ull;  // the stash hash's seed differs from the home hash's

  slot_type* slots_ = nullptr;
  slot_type* stash_ = nullptr;  // storage_slots(capacity) - capacity slots after the table
  std::size_t mask_ = 0;
  std::size_t stash_mask_ = 0;
  unsigned h_ = 32;
  key_bits empty_ = 0;
  key_bits claimed_ = 1;
  std::uint64_t seed_ = 0;
  std::size_t max_probe_ = 0;
};

}  // namespace warpkv
