#pragma once
// hopscotch_ref: the device-side view of a hopscotch_map, usable inside user
// kernels with a cooperative tile (one tile per operation; every lane of the
// tile calls the same method with the same arguments and gets the same result).
//
// Guarantees (argument and linearization points: docs/design/hopscotch.md):
//  - every operation is linearizable;
//  - find/contains never write and never wait for a lock: they retry only when a
//    writer changed the neighborhood they read (lock-free);
//  - insert into a free slot within reach and erase are single CASes on the hop
//    word (lock-free); assign and displacement hold one bucket's lock for a
//    bounded number of steps and never wait while holding it;
//  - status::full means no free slot within max_probe or no displacement could
//    bring one within the neighborhood: the table was not changed for this key.
//    The bulk API then grows the table and retries; a device caller decides.
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"
#include "warpkv/hopscotch/detail/hop_word.hpp"

namespace warpkv {

template <hash_key Key, map_value Value>
class hopscotch_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using key_bits = storage_bits_t<sizeof(Key)>;
  using value_bits = storage_bits_t<sizeof(Value)>;
  using slot_type = slot<key_bits, value_bits>;

  hopscotch_ref() = default;
  hopscotch_ref(slot_type* slots, std::uint64_t* hops, std::size_t capacity, unsigned neighborhood, Key empty_key,
                std::uint64_t seed, std::size_t max_probe)
      : slots_(slots),
        hops_(hops),
        mask_(capacity - 1),
        h_(neighborhood),
        empty_(to_bits(empty_key)),
        seed_(seed),
        max_probe_(max_probe < capacity ? max_probe : capacity) {}

  WARPKV_HD std::size_t capacity() const { return mask_ + 1; }
  WARPKV_HD unsigned neighborhood() const { return h_; }
  WARPKV_HD Key empty_key() const { return from_bits<Key>(empty_); }
  WARPKV_HD std::size_t home(Key k) const { return home_bits(to_bits(k)); }

  /// Inserts (k, v) if k is absent: inserted, found (k present, unchanged), full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert(const Tile& t, Key k, Value v) const {
    return upsert(t, to_bits(k), to_bits(v), false);
  }
  /// Inserts (k, v) or replaces k's value: inserted, assigned, full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert_or_assign(const Tile& t, Key k, Value v) const {
    return upsert(t, to_bits(k), to_bits(v), true);
  }
  /// found (value written to *out on every lane when out != nullptr), not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status find(const Tile& t, Key k, Value* out = nullptr) const {
    const key_bits kb = to_bits(k);
    if (kb == empty_) return status::invalid_key;
    const snapshot s = search(t, home_bits(kb), kb);
    if (s.offset < 0) return status::not_found;
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
    if (kb == empty_) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    for (;;) {
      const snapshot s = search(t, b, kb);
      if (s.offset < 0) return status::not_found;
      if (detail::hop::locked(s.hop)) continue;  // a mover or assigner owns the bucket for a few steps
      bool ok = false;
      if (t.thread_rank() == 0) {
        std::uint64_t expected = s.hop;
        const std::uint32_t bm = detail::hop::bitmap(s.hop) & ~(1u << s.offset);
        ok = hop_ref(b).compare_exchange(expected, detail::hop::next(s.hop, bm, false), memory_order::acq_rel);
        // Linearization point: the CAS above. The slot is emptied after it, with release,
        // so a reader that sees the empty key also sees the new hop version.
        if (ok) key_ref(idx(b, s.offset)).store(empty_, memory_order::release);
      }
      if (t.shfl(ok, 0)) return status::erased;
    }
  }

 private:
  struct snapshot {
    std::uint64_t hop;  // validated hop word of the home bucket
    int offset;         // offset of the key in the neighborhood, -1 if absent
    value_bits value;   // its value when present
  };

  WARPKV_HD std::size_t idx(std::size_t b, std::size_t o) const { return (b + o) & mask_; }
  WARPKV_HD std::size_t home_bits(key_bits kb) const { return static_cast<std::size_t>(hash_bits(kb, seed_)) & mask_; }
  WARPKV_HD atomic_ref<std::uint64_t> hop_ref(std::size_t b) const { return atomic_ref<std::uint64_t>(hops_[b]); }
  WARPKV_HD atomic_ref<key_bits> key_ref(std::size_t i) const { return atomic_ref<key_bits>(slots_[i].key); }
  WARPKV_HD atomic_ref<value_bits> value_ref(std::size_t i) const { return atomic_ref<value_bits>(slots_[i].value); }

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

  /// A consistent view of key kb in bucket b: the slots named by the bitmap are read between
  /// two reads of the hop word, and accepted only if every lane saw the word unchanged.
  template <class Tile>
  WARPKV_HD snapshot search(const Tile& t, std::size_t b, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    const unsigned rank = t.thread_rank();
    for (;;) {
      const std::uint64_t h = read_hop(t, b);
      const std::uint32_t bm = detail::hop::bitmap(h);
      int offset = -1;
      value_bits value = 0;
      for (unsigned base = 0; base < h_; base += T) {
        const std::uint32_t window = (bm >> base) & Tile::full_mask();
        if (window == 0) continue;  // no member of b among these T offsets (same on every lane)
        bool hit = false;
        value_bits v = 0;
        if ((window >> rank) & 1u) {
          const std::size_t i = idx(b, base + rank);
          if (key_ref(i).load(memory_order::relaxed) == kb) {
            hit = true;
            v = value_ref(i).load(memory_order::relaxed);
          }
        }
        const std::uint32_t hits = t.ballot(hit);
        if (hits != 0) {
          const int lane = lowest_lane(hits);
          offset = static_cast<int>(base) + lane;
          value = t.shfl(v, static_cast<unsigned>(lane));
          break;
        }
      }
      atomic_thread_fence(memory_order::acquire);
      const std::uint64_t again = hop_ref(b).load(memory_order::relaxed);
      if (t.all(again == h)) return snapshot{h, offset, value};
    }
  }

  /// Lane 0 claims the first empty slot at offsets [from, to) of bucket b by CAS of its key
  /// from empty to kb (the claim is invisible: no bitmap names the slot). Returns the offset or -1.
  template <class Tile>
  WARPKV_HD long claim_empty(const Tile& t, std::size_t b, std::size_t from, std::size_t to, key_bits kb) const {
    constexpr unsigned T = Tile::size();
    const unsigned rank = t.thread_rank();
    for (std::size_t base = from; base < to; base += T) {
      const std::size_t o = base + rank;
      const bool empty = o < to && key_ref(idx(b, o)).load(memory_order::relaxed) == empty_;
      std::uint32_t candidates = t.ballot(empty);
      long claimed = -1;
      if (rank == 0) {
        while (candidates != 0) {
          const int lane = lowest_lane(candidates);
          candidates &= candidates - 1;
          key_bits expected = empty_;
          if (key_ref(idx(b, base + lane)).compare_exchange(expected, kb, memory_order::relaxed)) {
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
  /// leaving that slot claimed (key = kb) instead. Returns the new claimed slot or -1 when no
  /// bucket in e's window has a member before e.
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
        if (base + rank < h_ - 1) {
          h = hop_ref(idx(e, capacity() - d)).load(memory_order::relaxed);
          candidate = !detail::hop::locked(h) && (detail::hop::bitmap(h) & ((1u << d) - 1u)) != 0;
        }
        std::uint32_t candidates = t.ballot(candidate);
        if (candidates == 0) continue;
        any_candidate = true;
        long moved_from = -1;
        while (candidates != 0 && moved_from < 0) {
          const int lane = lowest_lane(candidates);
          candidates &= candidates - 1;
          const unsigned dl = h_ - 1 - (base + static_cast<unsigned>(lane));
          const std::uint64_t hl = t.shfl(h, static_cast<unsigned>(lane));
          if (rank == 0) moved_from = move_into(idx(e, capacity() - dl), dl, hl, e, kb);
          moved_from = t.shfl(moved_from, 0);
        }
        if (moved_from >= 0) return moved_from;
      }
      if (!any_candidate) return -1;
      // Every candidate was taken or locked by someone else: look again.
    }
  }

  /// Lane 0 only: lock bucket c (observed word h), move its first member before e (distance d)
  /// into e, publish the new bitmap, and claim the vacated slot. Returns it, or -1 if the lock failed.
  WARPKV_HD long move_into(std::size_t c, unsigned d, std::uint64_t h, std::size_t e, key_bits kb) const {
    std::uint64_t expected = h;
    const std::uint64_t locked = detail::hop::next(h, detail::hop::bitmap(h), true);
    if (!hop_ref(c).compare_exchange(expected, locked, memory_order::acq_rel)) return -1;
    const std::uint32_t bm = detail::hop::bitmap(h);
    const unsigned o = static_cast<unsigned>(lowest_lane(bm & ((1u << d) - 1u)));
    const std::size_t s = idx(c, o);
    // Temporary duplication: the entry is copied into e before the bitmap names e, and s is
    // released only after the bitmap has moved, so a reader always finds it in one of the two.
    const key_bits key = key_ref(s).load(memory_order::relaxed);
    const value_bits value = value_ref(s).load(memory_order::relaxed);
    value_ref(e).store(value, memory_order::relaxed);
    key_ref(e).store(key, memory_order::relaxed);
    hop_ref(c).store(detail::hop::next(locked, (bm & ~(1u << o)) | (1u << d), false), memory_order::release);
    key_ref(s).store(kb, memory_order::release);  // s is now this insert's claim
    return static_cast<long>(s);
  }

  /// Lane 0 only: set bit `offset` of bucket b if its word is still h.
  WARPKV_HD bool commit(std::size_t b, std::uint64_t h, unsigned offset) const {
    std::uint64_t expected = h;
    return hop_ref(b).compare_exchange(expected, detail::hop::next(h, detail::hop::bitmap(h) | (1u << offset), false),
                                       memory_order::acq_rel);
  }

  /// Replaces the value of the key found in snapshot s; false if b changed since s (retry).
  template <class Tile>
  WARPKV_HD bool assign(const Tile& t, std::size_t b, const snapshot& s, value_bits vb) const {
    bool ok = false;
    if (t.thread_rank() == 0) {
      std::uint64_t expected = s.hop;
      const std::uint64_t locked = detail::hop::next(s.hop, detail::hop::bitmap(s.hop), true);
      ok = hop_ref(b).compare_exchange(expected, locked, memory_order::acq_rel);
      if (ok) {
        // Under the lock no member of b moves or leaves, so the slot still holds the key.
        // Linearization point: this store.
        value_ref(idx(b, s.offset)).store(vb, memory_order::release);
        hop_ref(b).store(detail::hop::next(locked, detail::hop::bitmap(s.hop), false), memory_order::release);
      }
    }
    return t.shfl(ok, 0);
  }

  template <class Tile>
  WARPKV_HD status upsert(const Tile& t, key_bits kb, value_bits vb, bool or_assign) const {
    if (kb == empty_) return status::invalid_key;
    const std::size_t b = home_bits(kb);
    const bool leader = t.thread_rank() == 0;
    for (;;) {
      snapshot s = search(t, b, kb);
      if (s.offset >= 0) {
        if (!or_assign) return status::found;
        if (detail::hop::locked(s.hop)) continue;
        if (assign(t, b, s, vb)) return status::assigned;
        continue;
      }
      if (detail::hop::locked(s.hop)) continue;  // writers wait for the bucket's mover/assigner
      // Fast path: a free slot inside the neighborhood, claimed and published by two CASes.
      long off = claim_empty(t, b, 0, h_, kb);
      if (off >= 0) {
        bool ok = false;
        if (leader) {
          value_ref(idx(b, off)).store(vb, memory_order::relaxed);
          ok = commit(b, s.hop, static_cast<unsigned>(off));  // linearization point
          if (!ok) key_ref(idx(b, off)).store(empty_, memory_order::release);
        }
        if (t.shfl(ok, 0)) return status::inserted;
        continue;
      }
      // Slow path: claim a free slot beyond the neighborhood and hop it back toward b.
      off = claim_empty(t, b, h_, max_probe_, kb);
      if (off < 0) return status::full;
      std::size_t e = idx(b, off);
      while (((e - b) & mask_) >= h_) {
        const long closer = displace_once(t, e, kb);
        if (closer < 0) {
          if (leader) key_ref(e).store(empty_, memory_order::release);
          return status::full;
        }
        e = static_cast<std::size_t>(closer);
      }
      const unsigned final_off = static_cast<unsigned>((e - b) & mask_);
      if (leader) value_ref(e).store(vb, memory_order::relaxed);
      for (;;) {
        bool ok = false;
        if (leader && !detail::hop::locked(s.hop)) ok = commit(b, s.hop, final_off);  // linearization point
        if (t.shfl(ok, 0)) return status::inserted;
        s = search(t, b, kb);  // b changed meanwhile: is kb there now?
        if (s.offset >= 0) {
          if (leader) key_ref(e).store(empty_, memory_order::release);
          if (!or_assign) return status::found;
          break;  // assign through the outer loop
        }
      }
    }
  }

  slot_type* slots_ = nullptr;
  std::uint64_t* hops_ = nullptr;
  std::size_t mask_ = 0;
  unsigned h_ = 32;
  key_bits empty_ = 0;
  std::uint64_t seed_ = 0;
  std::size_t max_probe_ = 0;
};

}  // namespace warpkv
