#pragma once
// open_addressing_ref: the device-side view of an open-addressing map (linear_map,
// quadratic_map), usable inside user kernels with a cooperative tile of exactly `TileSize` lanes
// (the map's tile size). The table is read in windows of TileSize x LaneSlots slots, LaneSlots
// per lane (LaneSlots > 1: packed pairs read 16 bytes at a time); both are part of the table's
// layout. Every lane of the tile calls the same method with the same arguments and gets the same
// result.
//
// Guarantees (argument and linearization points: docs/design/open_addressing.md):
//  - every operation is linearizable; keys are unique, also under concurrent inserts of one key;
//  - find/contains/erase never wait; insert into a free slot is one CAS on the slot's key plus
//    a value store and a publish; an insert or upsert that meets its own key still being
//    published by another insert waits for that publish (a bounded number of steps, never
//    while holding anything);
//  - erase leaves a tombstone (the erased key); tombstones are never reused while operations
//    run, only the map's cleanup pass (between batches) reclaims them;
//  - status::full means the first max_probe slots of the key's probe sequence (the whole table
//    when max_probe is 0 or at least the capacity) hold neither the key nor a free slot: the
//    table was not changed for this key. The bulk API then rebuilds the table (and grows it
//    when loaded) and retries; a device caller decides.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/key_value.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/core/packed_pair.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"
#include "warpkv/open_addressing/detail/probing.hpp"

namespace warpkv {

/// Default tombstone key of the open-addressing maps: the largest key value but one.
template <class K>
constexpr K default_erased_key = static_cast<K>(std::numeric_limits<K>::max() - 1);

namespace detail {
/// Slots per word of the ready bitmap.
inline constexpr std::size_t ready_bits_per_word = 32;
}  // namespace detail

/// Slots per lane unless a map names them: 4 for packed pairs (4-byte keys and values) probed by
/// one lane, whose windows are 32 bytes read in two 16-byte loads (docs/perf.md, session 19); 1
/// otherwise.
template <class Key, class Value, int TileSize>
inline constexpr int default_lane_slots = sizeof(Key) == 4 && sizeof(Value) == 4 && TileSize == 1 ? 4 : 1;

template <hash_key Key, map_value Value, class Probing, int TileSize, int LaneSlots = default_lane_slots<Key, Value, TileSize>>
class open_addressing_ref {
  static_assert(valid_tile_size<TileSize>, "the tile size must be 1, 2, 4, 8, 16 or 32");
  static_assert(LaneSlots == 1 || LaneSlots == 2 || LaneSlots == 4, "slots per lane must be 1, 2 or 4");
  static_assert(TileSize * LaneSlots <= 64, "a window must fit the smallest table (64 slots)");

 public:
  using key_type = Key;
  using mapped_type = Value;
  using probing_type = Probing;
  using key_bits = storage_bits_t<sizeof(Key)>;
  using value_bits = storage_bits_t<sizeof(Value)>;
  /// 4-byte keys and values pack into one 8-byte word: one relaxed load reads a pair that proves
  /// itself, one CAS claims, assigns or erases it, and there is no ready bitmap (the `packed`
  /// protocol of docs/design/open_addressing.md). Wider pairs keep the key CAS + ready bit.
  static constexpr bool packed = sizeof(key_bits) == 4 && sizeof(value_bits) == 4;
  using slot_type = std::conditional_t<packed, packed_slot<key_bits, value_bits>, slot<key_bits, value_bits>>;
  static_assert(LaneSlots == 1 || packed, "several slots per lane need packed pairs (4-byte keys and values)");
  static constexpr int tile_size = TileSize;
  static constexpr int lane_slots = LaneSlots;
  /// Slots per window.
  static constexpr int window = TileSize * LaneSlots;
  using sequence_type = detail::probe_sequence<Probing, window, LaneSlots>;

  open_addressing_ref() = default;
  /// `ready`: one bit per slot (capacity / ready_bits_per_word words), set once the slot's first
  /// value is stored.
  /// `max_probe`: slots an operation may examine (rounded up to whole windows); 0 = the whole table.
  open_addressing_ref(slot_type* slots, std::uint32_t* ready, std::size_t capacity, Key empty_key, Key erased_key,
                      std::uint64_t seed, std::size_t max_probe)
      : slots_(slots),
        ready_(ready),
        mask_(capacity - 1),
        empty_(to_bits(empty_key)),
        erased_(to_bits(erased_key)),
        seed_(seed),
        windows_(max_probe == 0 || max_probe >= capacity ? capacity / window : (max_probe + window - 1) / window) {}

  WARPKV_HD std::size_t capacity() const { return mask_ + 1; }
  /// How many windows of its probe sequence an operation examines at most.
  WARPKV_HD std::size_t max_windows() const { return windows_; }
  WARPKV_HD Key empty_key() const { return from_bits<Key>(empty_); }
  WARPKV_HD Key erased_key() const { return from_bits<Key>(erased_); }
  /// The probe sequence of key k (its first window is k's home).
  WARPKV_HD sequence_type sequence(Key k) const { return sequence_bits(to_bits(k)); }
  /// First slot of k's home window.
  WARPKV_HD std::size_t home(Key k) const { return sequence(k).window(); }

  // Slot layout, for the whole-table passes (core/table_passes.hpp).
  WARPKV_HD static key_bits stored_key(const slot_type& s) { return s.key; }
  WARPKV_HD static value_bits stored_value(const slot_type& s) { return s.value; }
  WARPKV_HD static void init_slot(slot_type& s, Key empty_key) {
    s.key = to_bits(empty_key);
    s.value = 0;
  }

  /// Inserts (k, v) if k is absent: inserted, found (k present, unchanged), full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert(const Tile& t, Key k, Value v) const {
    if constexpr (packed) return upsert_packed(t, to_bits(k), to_bits(v), false);
    else return upsert(t, to_bits(k), to_bits(v), false);
  }
  /// Inserts (k, v) or replaces k's value: inserted, assigned, full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert_or_assign(const Tile& t, Key k, Value v) const {
    if constexpr (packed) return upsert_packed(t, to_bits(k), to_bits(v), true);
    else return upsert(t, to_bits(k), to_bits(v), true);
  }
  /// Registers per thread of the bulk find / insert / erase kernels (issue 23's budget): without
  /// a bound ptxas spilled 8-60 B in the inserts to reach its own occupancy target.
  static constexpr int hot_register_budget = 48;
  /// The find-only kernel's (23 registers at T = 1 since it reads one window at a time): 6 blocks
  /// of 256 per SM measured faster than 5 (the 48 above) and than 8 (session 11, call G).
  static constexpr int find_register_budget = 40;
  /// Uniform batches with one-lane windows launch a thread per operation (session 11, call J:
  /// inserts +14-32 %, finds -6 % to +13 % against a persistent grid; wider windows lost).
  static constexpr bool thread_per_op = true;
  /// The bulk API runs uniform insert batches through insert_fast first: packed pairs with
  /// one-lane windows (a thread per operation, whose next slots share the L1 line a weak read
  /// brought; session 16: +11-27 % at LF 0.8). Wider windows keep the relaxed walk (session 11
  /// measured weak reads 3-8 % slower there).
  static constexpr bool fast_bulk_inserts = packed && TileSize == 1;
  /// The fast insert's thread-per-operation launch: blocks of 256, two operations a thread. With
  /// the one-thread insert below (upsert_solo, 30 registers) it ran +5 % at LF 0.5 and +9 % at 0.8
  /// against the generic code at 256 x 1 (session 23, call G, H200); the generic code's best shape
  /// was 128 x 2 (+2.2-2.8 % at LF 0.5, calls B-D). The finds' kernel keeps the default, which it
  /// ran fastest with.
  static constexpr detail::per_op_launch fast_insert_launch{256, 2};
  /// insert for a batch in which only inserts and insert_or_assigns run (no erase): the same
  /// one-CAS protocol with weak (L1-cached) probe reads, each decision taken on a read validated
  /// by the CAS that acts on it (docs/design/open_addressing.md, "fast inserts"), in probe groups
  /// of at most 2 windows (session 16, H100: groups of 2 beat 1 and 4 on every row). inserted, found, full,
  /// invalid_key; full (the probe limit) hands the op to insert() in the bulk API's second launch.
  template <class Tile>
  WARPKV_HD status insert_fast(const Tile& t, Key k, Value v) const
    requires(packed)
  {
    if constexpr (solo_fast) return upsert_solo(to_bits(k), to_bits(v), false);
    else return upsert_packed<read_mode::weak>(t, to_bits(k), to_bits(v), false);
  }
  /// insert_or_assign under the same conditions: inserted, assigned, full, invalid_key.
  template <class Tile>
  WARPKV_HD status insert_or_assign_fast(const Tile& t, Key k, Value v) const
    requires(packed)
  {
    if constexpr (solo_fast) return upsert_solo(to_bits(k), to_bits(v), true);
    else return upsert_packed<read_mode::weak>(t, to_bits(k), to_bits(v), true);
  }
  /// found (value written to *out on every lane when out != nullptr), not_found, invalid_key.
  template <class Tile>
  WARPKV_HD status find(const Tile& t, Key k, Value* out = nullptr) const {
    if constexpr (packed) return find_packed(t, k, out);
    else return find_ready(t, k, out);
  }
  /// find on a table that no operation writes while this one runs (the bulk API's find-only
  /// batches: they are the only kernel on the map's stream): the same walk with plain loads,
  /// which L1 caches, so a probe that stays in one sector pays one round trip to memory. With
  /// writers about, use find (its loads are relaxed atomics, which skip L1).
  template <class Tile>
  WARPKV_HD status find_quiescent(const Tile& t, Key k, Value* out = nullptr) const {
    if constexpr (packed) return find_packed<read_mode::quiescent>(t, k, out);
    else return find_ready(t, k, out);
  }
  template <class Tile>
  WARPKV_HD status contains(const Tile& t, Key k) const {
    return find(t, k, nullptr);
  }
  /// erased, not_found, invalid_key. The slot keeps a tombstone.
  template <class Tile>
  WARPKV_HD status erase(const Tile& t, Key k) const {
    if constexpr (packed) return erase_packed(t, k);
    else return erase_ready(t, k);
  }

 private:
  // ---- the packed protocol (4-byte keys and values) ---------------------------------------
  using pair = detail::packed_pair<key_bits, value_bits>;
  WARPKV_HD atomic_ref<std::uint64_t> pair_ref(std::size_t i) const {
    return atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(&slots_[i]));
  }
  WARPKV_HD static key_bits key_of(std::uint64_t w) { return static_cast<key_bits>(w); }

  /// Walks kb's probe sequence over packed words: decide(w, lane_word, i) is called on every lane
  /// for each window that holds kb or an empty slot, with this lane's word and slot index.
  template <read_mode Reads = read_mode::relaxed, class Tile>
  WARPKV_HD status find_packed(const Tile& t, Key k, Value* out) const {
    const key_bits kb = to_bits(k);
    if (is_sentinel(kb)) return status::invalid_key;
    auto decide = [&](std::uint32_t, std::uint64_t w, std::size_t) -> int {
      // A lane that read kb proves k present at that read (the value came in the same word);
      // otherwise the window's first empty slot proves it absent.
      const std::uint32_t hit = t.ballot(key_of(w) == kb);
      if (hit == 0) return static_cast<int>(status::not_found);
      const std::uint64_t got = t.shfl(w, static_cast<unsigned>(lowest_lane(hit)));
      if (out != nullptr) *out = from_bits<Value>(pair::unpack(got).value);
      return static_cast<int>(status::found);
    };
    // A find-only batch reads one window at a time: its plain loads find a linear probe's next
    // slots in L1, and the kernel without the group's registers ran its finds 0-39 % faster than
    // with groups of 4 (docs/perf.md, session 11, call G), at one row -4 % (misses at LF 0.5).
    constexpr unsigned group = Reads == read_mode::quiescent ? 1u : max_group;
    const int r = walk_impl<std::uint64_t, Reads, group>(t, kb, decide);
    return r < 0 ? status::not_found : static_cast<status>(r);
  }

  template <class Tile>
  WARPKV_HD status erase_packed(const Tile& t, Key k) const {
    const key_bits kb = to_bits(k);
    if (is_sentinel(kb)) return status::invalid_key;
    const unsigned rank = t.thread_rank();
    const int r = walk_words(t, kb, [&](std::uint32_t, std::uint64_t w, std::size_t i) -> int {
      const std::uint32_t hit = t.ballot(key_of(w) == kb);
      if (hit == 0) return static_cast<int>(status::not_found);
      const unsigned lane = static_cast<unsigned>(lowest_lane(hit));
      bool erased = false;
      if (rank == lane) {
        // Linearization point: the CAS that turns (k, v) into (tombstone, v). It fails only
        // when an assign changed v (retry) or another erase tombstoned the slot first (then k
        // was absent right after that erase, inside this operation's interval).
        std::uint64_t expected = w;
        while (!erased && key_of(expected) == kb)
          erased = pair_ref(i).compare_exchange(expected, pair::pack(erased_, pair::unpack(expected).value),
                                                memory_order::relaxed);
      }
      return t.shfl(erased, lane) ? static_cast<int>(status::erased) : static_cast<int>(status::not_found);
    });
    return r < 0 ? status::not_found : static_cast<status>(r);
  }

  /// Insert or upsert with one CAS: the first slot in probe order that holds k or is empty
  /// decides. A CAS from the empty word read there to (k, v) inserts (linearization point); a
  /// failed one returns what is there now: k (then found, or assign by CAS on the pair) or another
  /// key (then the next candidate). Slots only go empty -> key -> tombstone while operations run,
  /// so two inserts of k stop at the same first slot and one CAS wins.
  /// Reads: relaxed for insert/insert_or_assign, weak (groups of at most 2 windows) for the fast
  /// forms, in which only inserts run.
  template <read_mode Reads = read_mode::relaxed, class Tile>
  WARPKV_HD status upsert_packed(const Tile& t, key_bits kb, value_bits vb, bool or_assign) const {
    if (is_sentinel(kb)) return status::invalid_key;
    const unsigned rank = t.thread_rank();
    const std::uint64_t mine = pair::pack(kb, vb);
    auto decide = [&](std::uint32_t candidates, std::uint64_t w, std::size_t i) -> int {
      // k itself comes first (act on it, no claim); then the empty slots in probe order. An
      // assign that finds k tombstoned under it falls through to this window's empty slots:
      // skipping them would let this upsert insert k beyond a slot where another insert of k
      // may land (the test that caught it: ConcurrentMixedBatchesAreLinearizable).
      const std::uint32_t hit = t.ballot(key_of(w) == kb);
      std::uint32_t empties = candidates & ~hit;
      candidates = hit;
      while (candidates != 0 || empties != 0) {
        if (candidates == 0) {
          candidates = empties;
          empties = 0;
        }
        const unsigned lane = static_cast<unsigned>(lowest_lane(candidates));
        candidates &= candidates - 1;
        int result = go_on;
        if (rank == lane) {
          std::uint64_t cur = w;
          if (key_of(cur) == empty_) {
            if (pair_ref(i).compare_exchange(cur, mine, memory_order::relaxed)) result = did_insert;
          }
          if (result == go_on && key_of(cur) == kb) {
            result = did_find;
            if (or_assign) {
              // Linearization point of the assign: the CAS that writes v beside k. A tombstone
              // appearing first means k was erased meanwhile: walk on (the upsert then inserts).
              result = go_on;
              while (key_of(cur) == kb) {
                if (pair_ref(i).compare_exchange(cur, mine, memory_order::relaxed)) {
                  result = did_assign;
                  break;
                }
              }
            }
          }
        }
        result = t.shfl(result, lane);
        if (result != go_on) return outcome_status(result);
      }
      return -1;
    };
    constexpr unsigned group = Reads == read_mode::weak ? 2u : max_group;
    const int r = walk_impl<std::uint64_t, Reads, group>(t, kb, decide);
    return r < 0 ? status::full : static_cast<status>(r);
  }

  /// The fast insert of a one-lane tile (packed pairs at T = 1; windows of 1, 2 or 4 slots, 4 by
  /// default: 32 bytes): upsert_packed<weak>'s walk and decisions
  /// written for one thread, with no ballot, candidate loop or lane broadcast. The same probe
  /// order (the window's slots in order, read 16 bytes at a time (8 for one-slot windows), the
  /// second 16 only when the first held no stop or every stop there was passed), the same protocol: each slot that holds
  /// kb or is empty is decided on the word read, every action a CAS from that word (an empty slot:
  /// claim it with (kb, vb); kb: found, or for an assign the CAS that writes vb beside kb, walking
  /// on if a tombstone appears first), a failed CAS deciding again on the word it returns.
  /// (upsert_packed's T = 1 code keeps the ballot and lowest-lane loop: 34 registers. Launched a
  /// thread per operation in blocks of 256 this one ran 3-4 % slower than it on the H100 at LF 0.5
  /// (session 22, call A); with two operations a thread (fast_insert_launch) 3-9 % faster on the
  /// H200 (session 23, call G).)
  static constexpr bool solo_fast = packed && TileSize == 1;
  WARPKV_HD status upsert_solo(key_bits kb, value_bits vb, bool or_assign) const {
    if (is_sentinel(kb)) return status::invalid_key;
    const std::uint64_t mine = pair::pack(kb, vb);
    sequence_type seq = sequence_bits(kb);
    for (std::size_t done = 0; done < windows_; ++done, seq.next()) {
      const std::size_t first = seq.slot(0);
      std::uint64_t* p = reinterpret_cast<std::uint64_t*>(&slots_[first]);
      constexpr unsigned step = LaneSlots == 1 ? 1 : 2;  // 8 or 16 bytes a load
      WARPKV_UNROLL
      for (unsigned s = 0; s < LaneSlots; s += step) {
        std::uint64_t w[2];
        if constexpr (step == 2) load_pair<read_mode::weak>(p + s, w[0], w[1]);
        else w[0] = pair_ref(first).load_weak();
        WARPKV_UNROLL
        for (unsigned j = 0; j < step; ++j) {
          std::uint64_t cur = w[j];
          const std::size_t i = first + s + j;
          if (key_of(cur) == empty_ && pair_ref(i).compare_exchange(cur, mine, memory_order::relaxed))
            return status::inserted;
          if (key_of(cur) == kb) {
            if (!or_assign) return status::found;
            // Linearization point of the assign: the CAS that writes vb beside kb.
            while (key_of(cur) == kb)
              if (pair_ref(i).compare_exchange(cur, mine, memory_order::relaxed)) return status::assigned;
          }
        }
      }
    }
    return status::full;
  }

  /// walk() over packed words: the same probe schedule, one 8-byte relaxed load per lane and
  /// window; decide(stops, word, i) as walk's decide, with this lane's word for its key.
  template <class Tile, class Decide>
  WARPKV_HD int walk_words(const Tile& t, key_bits kb, Decide&& decide) const {
    return walk_impl<std::uint64_t>(t, kb, decide);
  }

  // ---- the ready-bit protocol (wider keys or values) --------------------------------------
  template <class Tile>
  WARPKV_HD status find_ready(const Tile& t, Key k, Value* out) const {
    return at_first_stop(t, k, [&](unsigned lane, bool live, std::size_t i) {
      bool hit = live;
      value_bits vb = live ? value_ref(i).load(memory_order::acquire) : value_bits{0};
      if constexpr (sizeof(value_bits) == 4) {  // one broadcast carries both
        const std::uint64_t both = t.shfl((static_cast<std::uint64_t>(hit) << 32) | vb, lane);
        hit = (both >> 32) != 0;
        vb = static_cast<value_bits>(both);
      } else {
        hit = t.shfl(hit, lane);
        vb = t.shfl(vb, lane);
      }
      if (!hit) return status::not_found;  // empty, or k not yet published: absent
      if (out != nullptr) *out = from_bits<Value>(vb);
      return status::found;
    });
  }
  template <class Tile>
  WARPKV_HD status erase_ready(const Tile& t, Key k) const {
    return at_first_stop(t, k, [&](unsigned lane, bool live, std::size_t i) {
      bool erased = false;
      if (live) {
        key_bits expected = to_bits(k);
        // Linearization point. A failure means a concurrent erase tombstoned the slot first:
        // k was absent right after that erase, inside this operation's interval.
        erased = key_ref(i).compare_exchange(expected, erased_, memory_order::acq_rel);
      }
      return t.shfl(erased, lane) ? status::erased : status::not_found;
    });
  }

  enum outcome : int { go_on = 0, did_insert = 1, did_find = 2, did_assign = 3 };
  /// The status (as int) an upsert reports for a candidate's outcome other than go_on.
  WARPKV_HD static int outcome_status(int o) {
    return static_cast<int>(o == did_insert ? status::inserted : o == did_find ? status::found : status::assigned);
  }
  /// Windows read at once by a long probe.
  static constexpr unsigned max_group = 4;

  WARPKV_HD bool is_sentinel(key_bits kb) const { return kb == empty_ || kb == erased_; }
  WARPKV_HD sequence_type sequence_bits(key_bits kb) const { return sequence_type(hash_bits(kb, seed_), mask_); }
  WARPKV_HD atomic_ref<key_bits> key_ref(std::size_t i) const { return atomic_ref<key_bits>(slots_[i].key); }
  WARPKV_HD atomic_ref<value_bits> value_ref(std::size_t i) const { return atomic_ref<value_bits>(slots_[i].value); }
  WARPKV_HD atomic_ref<std::uint32_t> ready_ref(std::size_t i) const {
    return atomic_ref<std::uint32_t>(ready_[i / detail::ready_bits_per_word]);
  }
  WARPKV_HD static std::uint32_t ready_bit(std::size_t i) { return 1u << (i % detail::ready_bits_per_word); }

  /// Whether slot i's first value has been published (acquire: its value store is visible).
  WARPKV_HD bool is_ready(std::size_t i) const { return (ready_ref(i).load(memory_order::acquire) & ready_bit(i)) != 0; }

  /// One lane: slot i holds k, claimed by some insert; wait until that insert has published it.
  WARPKV_HD void wait_ready(std::size_t i) const {
    for (int attempt = 0; !is_ready(i); ++attempt) backoff(attempt);
  }

  /// Walks kb's probe sequence (at most windows_ windows). Every window that holds kb or an
  /// empty slot is handed, in probe order, to decide(stops, cur, i), called on every lane with
  /// stops = ballot of the lanes whose slot holds kb or is empty, and this lane's key and slot
  /// there; decide returns a status (as int) to end the walk or -1 to go on. Returns -1 when the
  /// probe limit is reached. Windows holding only other keys and tombstones are passed.
  ///
  /// The first two windows are read one at a time; after them, groups of 2 then max_group windows
  /// are loaded together and passed with a single ballot when none of their slots stops the walk:
  /// a short probe reads no more than it needs, a long one (high load, many tombstones) overlaps
  /// its loads and needs fewer collectives. The argument does not depend on when a slot is read.
  template <class Tile, class Decide>
  WARPKV_HD int walk(const Tile& t, key_bits kb, Decide&& decide) const {
    return walk_impl<key_bits>(t, kb, decide);
  }
  /// Word: key_bits (the key alone) or std::uint64_t (a packed pair, key in the low half).
  /// Group: slots per lane read at once after the first two windows (windows of LaneSlots per
  /// lane each: Group / LaneSlots of them, at least 1; 1: one window at a time).
  /// A window's LaneSlots slots of one lane come in one or two 16-byte loads; each of them is
  /// handed to decide as a window of its own (slot s of every lane, s = 0 .. LaneSlots-1: the
  /// probe order of detail::probe_sequence), so decide sees one word per lane as with one slot.
  template <class Word, read_mode Reads = read_mode::relaxed, unsigned Group = max_group, class Tile, class Decide>
  WARPKV_HD int walk_impl(const Tile& t, key_bits kb, Decide& decide) const {
    static_assert(Tile::size() == TileSize, "an open-addressing ref is driven by a tile of exactly its tile size");
    static_assert(LaneSlots == 1 || sizeof(Word) == 8, "several slots per lane are read as packed words");
    constexpr unsigned L = LaneSlots;
    constexpr unsigned G = Group / L > 0 ? Group / L : 1;  // windows per group
    const unsigned rank = t.thread_rank();
    sequence_type seq = sequence_bits(kb);
    if constexpr (L == 4 && Reads != read_mode::relaxed && sizeof(Word) == 8) {
      // Cached reads (weak, quiescent): a window's second 16 bytes are read only when its first
      // 16 bytes hold no stop (or decide went on past them); they then come from the L1 sector
      // the first load brought. Session 19, call B: inserts +2.5-5 %, misses +1-9 %, hits -1 to
      // +1.5 % against reading both halves at once (relaxed reads, which skip L1, keep that).
      for (std::size_t done = 0; done < windows_; ++done, seq.next()) {
        std::uint64_t* p = reinterpret_cast<std::uint64_t*>(&slots_[seq.slot(rank)]);
        WARPKV_UNROLL
        for (unsigned half = 0; half < 2; ++half) {
          std::uint64_t w[2];
          load_pair<Reads>(p + 2 * half, w[0], w[1]);
          const bool s0 = static_cast<key_bits>(w[0]) == kb || static_cast<key_bits>(w[0]) == empty_;
          const bool s1 = static_cast<key_bits>(w[1]) == kb || static_cast<key_bits>(w[1]) == empty_;
          if (!t.any(s0 || s1)) continue;
          std::uint32_t stops = t.ballot(s0);
          if (stops != 0) {
            const int r = decide(stops, w[0], seq.slot(rank) + 2 * half);
            if (r >= 0) return r;
          }
          stops = t.ballot(s1);
          if (stops != 0) {
            const int r = decide(stops, w[1], seq.slot(rank) + 2 * half + 1);
            if (r >= 0) return r;
          }
        }
      }
      return -1;
    } else {
      for (std::size_t done = 0; done < windows_;) {
        std::size_t n = done < 2 ? 1 : (done < G ? done : G);
        if (n > windows_ - done) n = windows_ - done;
        Word cur[G * L];
        sequence_type at = seq;  // the group's first window: slot indices are re-derived, not kept
        unsigned stops_here = 0;  // bit m*L+s: this lane's slot s in window m of the group holds kb or is empty
        WARPKV_UNROLL
        for (unsigned m = 0; m < G; ++m) {
          if (m == n) break;
          const std::size_t i = seq.slot(rank);
          if constexpr (sizeof(Word) == sizeof(key_bits)) {
            cur[m] = key_ref(i).load(memory_order::relaxed);
          } else if constexpr (L == 1) {
            if constexpr (Reads == read_mode::quiescent) cur[m] = *reinterpret_cast<const std::uint64_t*>(&slots_[i]);
            else if constexpr (Reads == read_mode::weak) cur[m] = pair_ref(i).load_weak();
            else cur[m] = pair_ref(i).load(memory_order::relaxed);
          } else {
            std::uint64_t* p = reinterpret_cast<std::uint64_t*>(&slots_[i]);
            WARPKV_UNROLL
            for (unsigned s = 0; s < L; s += 2) load_pair<Reads>(p + s, cur[m * L + s], cur[m * L + s + 1]);
          }
          WARPKV_UNROLL
          for (unsigned s = 0; s < L; ++s) {
            const key_bits key = static_cast<key_bits>(cur[m * L + s]);
            if (key == kb || key == empty_) stops_here |= 1u << (m * L + s);
          }
          seq.next();
        }
        done += n;
        if ((n > 1 || L > 1) && !t.any(stops_here != 0)) continue;
        // Word m*L+s of the group is always handed over from cur[0], the array shifting down one
        // place per word (register renames once unrolled): indexing it by m let the compiler
        // merge the decide calls behind a run-time index, which put cur[] in local memory. The
        // slot index comes from a second copy of the sequence, stepped alongside (fewer registers
        // than keeping Group indices).
        WARPKV_UNROLL
        for (unsigned m = 0; m < G; ++m) {
          if (m == n) break;
          WARPKV_UNROLL
          for (unsigned s = 0; s < L; ++s) {
            const std::uint32_t stops = t.ballot((stops_here & 1u) != 0);
            if (stops != 0) {
              const int r = decide(stops, cur[0], at.slot(rank) + s);
              if (r >= 0) return r;
            }
            stops_here >>= 1;
            WARPKV_UNROLL
            for (unsigned j = 0; j + 1 < G * L; ++j) cur[j] = cur[j + 1];
          }
          at.next();
        }
      }
      return -1;
    }
  }

  /// find and erase: the first slot in probe order that holds k or is empty decides.
  /// act(lane, live, i) runs on every lane: `lane` read that slot (index i on that lane), and
  /// `live` is true on it alone when the slot holds k published; act returns the status.
  template <class Tile, class Act>
  WARPKV_HD status at_first_stop(const Tile& t, Key k, Act&& act) const {
    const key_bits kb = to_bits(k);
    if (is_sentinel(kb)) return status::invalid_key;
    const unsigned rank = t.thread_rank();
    const int r = walk(t, kb, [&](std::uint32_t stops, key_bits cur, std::size_t i) {
      const unsigned lane = static_cast<unsigned>(lowest_lane(stops));
      return static_cast<int>(act(lane, rank == lane && cur == kb && is_ready(i), i));
    });
    return r < 0 ? status::not_found : static_cast<status>(r);
  }

  /// One lane, for the slot at index i that the window read as `cur` (k or empty): claim it if
  /// empty, else act on k found there. Returns go_on when the slot turned out to hold another key.
  WARPKV_HD outcome act_on(std::size_t i, key_bits cur, key_bits kb, value_bits vb, bool or_assign) const {
    if (cur == empty_) {
      key_bits expected = empty_;
      if (key_ref(i).compare_exchange(expected, kb, memory_order::acq_rel)) {
        // The claim is invisible until published: readers that see k here before the ready bit
        // treat k as absent, inserts of k wait. No collective runs between claim and publish.
        value_ref(i).store(vb, memory_order::relaxed);
        ready_ref(i).fetch_or(ready_bit(i), memory_order::release);  // linearization point
        return did_insert;
      }
      cur = expected;  // someone claimed it first: with k (then act on k) or another key (go on)
    }
    if (cur != kb) return go_on;
    wait_ready(i);
    if (!or_assign) return did_find;
    value_ref(i).store(vb, memory_order::release);  // linearization point of the assign
    return did_assign;
  }

  template <class Tile>
  WARPKV_HD status upsert(const Tile& t, key_bits kb, value_bits vb, bool or_assign) const {
    if (is_sentinel(kb)) return status::invalid_key;
    const unsigned rank = t.thread_rank();
    const int r = walk(t, kb, [&](std::uint32_t candidates, key_bits cur, std::size_t i) -> int {
      // Order every lane's probe reads (of this and earlier windows) before the claim, so an
      // insert that happens-after this one sees at least the slots this one saw filled.
      atomic_thread_fence(memory_order::acquire);
      t.sync();
      // Candidates in probe order; a slot that was claimed under us by another key is passed:
      // its key never changes again until the cleanup pass.
      while (candidates != 0) {
        const unsigned lane = static_cast<unsigned>(lowest_lane(candidates));
        candidates &= candidates - 1;
        int result = go_on;
        if (rank == lane) result = act_on(i, cur, kb, vb, or_assign);
        result = t.shfl(result, lane);
        if (result != go_on) return outcome_status(result);
      }
      return -1;
    });
    return r < 0 ? status::full : static_cast<status>(r);
  }

  slot_type* slots_ = nullptr;
  std::uint32_t* ready_ = nullptr;
  std::size_t mask_ = 0;
  key_bits empty_ = 0;
  key_bits erased_ = 0;
  std::uint64_t seed_ = 0;
  std::size_t windows_ = 0;
};

}  // namespace warpkv
