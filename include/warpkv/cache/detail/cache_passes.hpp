#pragma once
// The cache's batch: its phases' operations (the read phase, the write phase's fast and complete
// passes), the batch body that runs them with the tile's status counts and the ops' register
// budgets, and the whole-table passes (initialise, count live entries, export).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "warpkv/cache/cache_ref.hpp"
#include "warpkv/cache/cache_op.hpp"
#include "warpkv/cache/detail/op_groups.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/work_sharing.hpp"

namespace warpkv {
namespace detail {

/// A batch's arrays (in the backend's memory, null where the batch has none), its clock and its
/// operation groups: what every phase of the batch sees, whatever ref (tile) it runs with.
template <class Key>
struct cache_batch_fields {
  const cache_op* ops = nullptr;  ///< per-operation codes, or null: every operation is `uniform`
  cache_op uniform = cache_op::get;
  const Key* keys = nullptr;
  const std::uint64_t* values_in = nullptr;  ///< n x value words (set, add, get_or_set)
  std::uint64_t* values_out = nullptr;       ///< n x value words (get, get_or_set)
  const std::uint64_t* expires = nullptr;    ///< n expiry times, or null: `expires_all`
  std::uint64_t expires_all = 0;
  std::uint64_t stamp_base = 0;  ///< operation i's recency stamp is stamp_base + i
  std::uint64_t now = 0;
  std::uint64_t epoch = 0;  ///< the cache's global epoch when the batch was queued (epoch policies)
  /// n caller scores for the inserts and assignments, or null (read only by designs whose
  /// eviction policy takes scores: lfu, epoch_lfu, custom)
  const std::uint64_t* scores = nullptr;
  Key* evicted_keys = nullptr;
  std::uint64_t* evicted_values = nullptr;
  std::uint8_t* evicted_flags = nullptr;
  std::uint64_t* evicted_scores = nullptr;  ///< insert_and_evict only (batch_scored_operands)
  op_groups<Key> groups{};  ///< set absorption and get_or_set combining (slots 0: off)
  /// Operation i's clock.
  WARPKV_HD cache_clock clock(std::size_t i) const { return cache_clock{stamp_base + i, now, stamp_base, epoch}; }
};

/// A batch as one of its phases sees it: its fields and the cache's ref the phase runs with
/// (initialized as {fields, ref}).
template <class Ref>
struct cache_batch_args : cache_batch_fields<typename Ref::key_type> {
  using Key = typename Ref::key_type;
  Ref ref;
};

/// The same batch's arguments over another ref of the same storage (kv_cache's read phase runs
/// at its own tile, kv_cache::read_tile_size): the fields copied whole, so a field added to the
/// batch reaches every phase.
template <class To, class From>
cache_batch_args<To> with_ref(const cache_batch_args<From>& a, const To& ref) {
  static_assert(std::is_same_v<typename To::key_type, typename From::key_type>, "the same key type");
  return cache_batch_args<To>{static_cast<const cache_batch_fields<typename From::key_type>&>(a), ref};
}

/// A write's operands loaded from the batch's arrays where the write uses them (operation i):
/// nothing of them is held in registers across the lock wait and the scan.
template <class Ref>
struct batch_write_operands {
  using Key = typename Ref::key_type;
  const cache_batch_args<Ref>& a;
  std::size_t i;
  WARPKV_HD std::size_t vw() const { return a.ref.value_words(); }
  WARPKV_HD const std::uint64_t* value() const { return a.values_in != nullptr ? a.values_in + i * vw() : nullptr; }
  WARPKV_HD std::uint64_t expires() const { return a.expires != nullptr ? a.expires[i] : a.expires_all; }
  WARPKV_HD std::uint64_t* out() const { return a.values_out != nullptr ? a.values_out + i * vw() : nullptr; }
  WARPKV_HD cache_clock clock() const { return a.clock(i); }
  /// The caller's score of operation i: only for a design whose policy takes scores (otherwise
  /// null at compile time: the hot kernels of the other designs carry no load of it).
  WARPKV_HD const std::uint64_t* score() const {
    if constexpr (Ref::takes_scores) return a.scores != nullptr ? a.scores + i : nullptr;
    else return nullptr;
  }
  WARPKV_HD std::uint8_t* ev_flag() const { return a.evicted_flags != nullptr ? a.evicted_flags + i : nullptr; }
  WARPKV_HD Key* ev_key() const { return a.evicted_flags != nullptr ? a.evicted_keys + i : nullptr; }
  WARPKV_HD std::uint64_t* ev_value() const {
    return a.evicted_flags != nullptr && a.evicted_values != nullptr ? a.evicted_values + i * vw() : nullptr;
  }
};

/// batch_write_operands with the evicted entry's score reported too (insert_and_evict): the
/// write path stores it only for operands that have ev_score(), so the batch write phase's hot
/// kernels (batch_write_operands) carry none of it.
template <class Ref>
struct batch_scored_operands : batch_write_operands<Ref> {
  WARPKV_HD std::uint64_t* ev_score() const {
    return this->a.evicted_flags != nullptr && this->a.evicted_scores != nullptr ? this->a.evicted_scores + this->i : nullptr;
  }
};

/// A batch's write phase, in two passes (the second phase of the batch and a third, both over
/// the operations still `full`): operation i, any kind (the read phase, cache_read_op, has done
/// the reads). The fast pass (P = fast, the hot kernel) runs every write but an insert that
/// finds both buckets full while cuckoo moves may run, and the gets and contains a batch without
/// a read phase would bring (none: every batch with them has one); those it leaves `full` for
/// the complete pass (P = complete: cuckoo walks, the rest), which runs only them. A get_or_set
/// here missed in the read phase and goes straight to the locked path (one probe per miss).
template <class Ref, cache_pass P, bool ScoresOut = false>
struct cache_write_op : cache_batch_args<Ref> {
  using operands = std::conditional_t<ScoresOut, batch_scored_operands<Ref>, batch_write_operands<Ref>>;
  using Key = typename Ref::key_type;
  static constexpr int register_budget = P == cache_pass::fast ? Ref::hot_register_budget : 0;
  static constexpr bool defers = P == cache_pass::fast;  ///< leaves operations `full` for the complete pass
  /// Operation i settled by its own lane, without the tile (cache_phase_body): an absorbed set is
  /// `assigned`, a combined get_or_set `found`, as operator() reports them.
  WARPKV_HD bool settle(std::size_t i, status& s) const {
    const cache_batch_args<Ref>& a = *this;
    const cache_op o = a.ops != nullptr ? a.ops[i] : a.uniform;
    if ((o != cache_op::set && o != cache_op::get_or_set) || !a.groups.absorbed(i)) return false;
    if (a.evicted_flags != nullptr) a.evicted_flags[i] = 0;
    s = o == cache_op::set ? status::assigned : status::found;
    return true;
  }
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const cache_batch_args<Ref>& a = *this;
    const Ref& ref = a.ref;
    const cache_op o = a.ops != nullptr ? a.ops[i] : a.uniform;
    const Key& k = a.keys[i];
    // operations that cannot evict report none (the write path stores its own flag, once)
    const auto none = [&](status s) {
      if (a.evicted_flags != nullptr && t.thread_rank() == 0) a.evicted_flags[i] = 0;
      return s;
    };
    const cache_clock c = a.clock(i);
    switch (o) {
      case cache_op::erase: return none(ref.erase(t, k, c));
      case cache_op::get:
        if constexpr (P == cache_pass::fast) return status::full;
        else return none(ref.get(t, k, batch_write_operands<Ref>{a, i}.out(), c));
      case cache_op::contains:
        if constexpr (P == cache_pass::fast) return status::full;
        else return none(ref.contains(t, k, c));
      case cache_op::set:
        // an absorbed set is linearized just before its key's winning set: it writes nothing
        if (a.groups.absorbed(i)) return none(status::assigned);
        break;
      case cache_op::get_or_set:
        // a combined get_or_set is linearized just after its group's winner, which leaves the
        // key present: it finds the winner's value (copied to `out` by the fix-up pass)
        if (a.groups.absorbed(i)) return none(status::found);
        break;
      case cache_op::add: break;
      default: return none(status::invalid_key);
    }
    // set, add and get_or_set share one copy of the write path (get_or_set: the locked path
    // alone, its read phase having missed)
    const cache_write_mode m = o == cache_op::set   ? cache_write_mode::set
                               : o == cache_op::add ? cache_write_mode::add
                                                    : cache_write_mode::get_or_set;
    if constexpr (ScoresOut) return ref.template write<P>(t, k, m, operands{{a, i}});
    else return ref.template write<P>(t, k, m, operands{a, i});
  }

  /// Lock groups (the fast pass of a design with Ref::lock_groups; docs/design/cache.md, "Lock
  /// groups"): the batch body takes the locks of a tile's writes together (group_bucket, then
  /// Ref::try_hold per lane) and runs each write it holds by held().
  static constexpr bool lock_groups = P == cache_pass::fast && Ref::lock_groups;
  /// The bucket whose lock operation i takes in a lock group, or npos: not a write that stores
  /// (an absorbed or combined one, erase, get, contains, an invalid key), which runs alone.
  WARPKV_HD std::size_t group_bucket(std::size_t i) const {
    const cache_batch_args<Ref>& a = *this;
    const cache_op o = a.ops != nullptr ? a.ops[i] : a.uniform;
    if (o != cache_op::set && o != cache_op::add && o != cache_op::get_or_set) return Ref::npos;
    if (a.groups.absorbed(i)) return Ref::npos;
    return a.ref.write_bucket(a.keys[i]);
  }
  /// Operation i (one group_bucket named) while the tile holds its bucket's lock.
  template <class Tile>
  WARPKV_HD status held(const Tile& t, std::size_t i) const {
    const cache_batch_args<Ref>& a = *this;
    const cache_op o = a.ops != nullptr ? a.ops[i] : a.uniform;
    const cache_write_mode m = o == cache_op::set   ? cache_write_mode::set
                               : o == cache_op::add ? cache_write_mode::add
                                                    : cache_write_mode::get_or_set;
    if constexpr (ScoresOut) return a.ref.template write_held<P>(t, a.keys[i], m, operands{{a, i}});
    else return a.ref.template write_held<P>(t, a.keys[i], m, operands{a, i});
  }
};

/// The operation groups' passes over a batch (operation i): join the groups before the batch;
/// after it, fix the set winners' statuses up and copy combined get_or_sets' values.
template <class Key>
struct op_groups_pass_fn {
  op_groups<Key> g;
  const Key* keys = nullptr;
  status* statuses = nullptr;  ///< null: the join pass; else the fix-up pass
  std::uint64_t* values_out = nullptr;
  std::size_t value_words = 0;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if (statuses == nullptr) return g.join(keys, i);  // every operation: its entry word
    if (g.find(i) != op_groups<Key>::npos) g.fix_up(i, statuses, values_out, value_words);
  }
};

/// A batch's read phase: operation i's lock-free read alone, so that this kernel does not carry
/// the writers' code and registers (the mixed kernel needs ~250 registers a thread for 24-byte
/// keys: one block of 256 threads per SM). gets and contains are done here; a get_or_set that
/// hits is done here (its value copied out, recency refreshed), and so is a combined one (it
/// finds its winner's value, copied by the fix-up pass); every other operation (a get_or_set
/// that missed, set, add, erase) reports `full`, the marker of the operations the write phase
/// (cache_write_op) runs. A batch of only gets or contains is this phase alone. The phases are one batch: its operations are concurrent, so running its reads before
/// its writes is one of its valid executions.
template <class Ref>
struct cache_read_op : cache_batch_args<Ref> {
  static constexpr int register_budget = Ref::find_register_budget;
  static constexpr bool defers = false;  ///< its `full` marks the write phase's operations, not a deferral
  /// Operation i settled by its own lane, without the tile (cache_phase_body): a combined
  /// get_or_set is `found` (its group's winner runs; the fix-up pass copies the value).
  WARPKV_HD bool settle(std::size_t i, status& s) const {
    const cache_batch_args<Ref>& a = *this;
    if ((a.ops != nullptr ? a.ops[i] : a.uniform) != cache_op::get_or_set || !a.groups.absorbed(i)) return false;
    if (a.evicted_flags != nullptr) a.evicted_flags[i] = 0;
    s = status::found;
    return true;
  }
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const cache_batch_args<Ref>& a = *this;
    const cache_clock c = a.clock(i);
    std::uint64_t* out = a.values_out != nullptr ? a.values_out + i * a.ref.value_words() : nullptr;
    // only the write phase's operations evict: the others report none (those the write phase
    // runs, `full` here, get their flag there: one store per operation)
    const auto none = [&](status s) {
      if (a.evicted_flags != nullptr && t.thread_rank() == 0) a.evicted_flags[i] = 0;
      return s;
    };
    switch (a.ops != nullptr ? a.ops[i] : a.uniform) {
      case cache_op::get: return none(a.ref.get(t, a.keys[i], out, c));
      case cache_op::contains: return none(a.ref.contains(t, a.keys[i], c));
      case cache_op::get_or_set: {
        if (a.groups.absorbed(i)) return none(status::found);  // as in cache_batch_op
        const status s = a.ref.get(t, a.keys[i], out, c);
        return s == status::not_found ? status::full : none(s);  // found, invalid_key: final
      }
      default: return status::full;
    }
  }
};

/// Whether a phase's op settles some operations lane by lane (cache_read_op / cache_write_op::settle).
template <class Op>
WARPKV_HD constexpr bool settles_of() {
  return requires(const Op& o, std::size_t i, status& s) { o.settle(i, s); };
}

/// Whether a phase's op takes its writes' locks as groups (cache_write_op::lock_groups).
template <class Op>
WARPKV_HD constexpr bool lock_groups_of() {
  if constexpr (requires { Op::lock_groups; }) return Op::lock_groups;
  return false;
}

/// The serve-loop body of a cache phase: the tile serves its lanes' operations one at a time
/// (core/work_sharing.hpp), each with all lanes; `only_full` runs only the operations whose
/// status is `full`. Status counts by the tile's uniform result: every lane sees the status of
/// every operation the tile serves, so lane r counts only the kinds r, r + T, r + 2T, ... (one
/// register a lane for T >= 7 where a per-lane array of every kind took 14) and adds them at the
/// end, one atomic per lane and kind that occurred (the tile-summed flush's count of atomics,
/// without its shuffles). The op's register_budget sizes the kernel's launch bounds
/// (core/launcher.hpp). `in_order` (a batch run by a single tile: the host backend with one
/// tile): once the tile's op leaves an operation `full` for a later pass, the tile leaves every
/// later operation it serves `full` too, so the passes together run the batch's writes in index
/// order (the sequential order CacheModel replays). With concurrent tiles the order of a batch's
/// operations is free, and nothing is deferred that need not be.
template <int T, class Op>
struct cache_phase_body {
  static constexpr int register_budget = Op::register_budget;
  static constexpr int kinds_per_lane = (num_status_kinds + T - 1) / T;
  Op op;
  std::size_t n;
  status* statuses;              // may be null when only_full is false
  unsigned long long* counters;  // num_status_kinds counters in the backend's memory, or null
  bool only_full;
  bool in_order = false;

  struct accumulator {
    unsigned long long c[kinds_per_lane] = {};
    bool deferred = false;  // in_order: this tile has left an operation `full`
  };

  template <class Tile>
  WARPKV_HD void operator()(const Tile& tile, std::size_t tile_index, accumulator& acc) const {
    const unsigned rank = tile.thread_rank();
    const std::size_t i = tile_index * T + rank;
    bool mine = i < n && (!only_full || statuses[i] == status::full);
    const auto record = [&](unsigned lane, status s) {  // s: the same on every lane
      const std::size_t j = tile_index * T + lane;
      acc.deferred = in_order && s == status::full;
      if (rank == lane && statuses != nullptr) statuses[j] = s;
      for (int m = 0; m < kinds_per_lane; ++m) acc.c[m] += static_cast<unsigned>(s) == rank + static_cast<unsigned>(m * T) ? 1u : 0u;
    };
    // Operations an op settles lane by lane (Op::settle: those of a group that leave the table to
    // their group's winner): each lane settles its own at once, and only the rest take turns in
    // the serve loops below, so a warp's tiles do not idle while one serves such an operation.
    // Not with in_order (one host tile keeps the serve loop's index order).
    if constexpr (settles_of<Op>()) {
      if (!in_order) {
        status own = status::full;
        const bool settled = mine && op.settle(i, own);
        serve_each(tile, settled, [&](unsigned lane) { record(lane, tile.shfl(own, lane)); });
        mine = mine && !settled;
      }
    }
    if constexpr (lock_groups_of<Op>()) {
      // Lock groups (docs/design/cache.md, "Lock groups"): each lane one try-lock of its write's
      // bucket, all at once; the tile runs the writes it got under one fence, releases them
      // together, then serves the rest (not stores, lost try-locks) one by one as below.
      if (!acc.deferred) {
        constexpr std::size_t no_bucket = ~std::size_t{0};
        std::size_t b = mine ? op.group_bucket(i) : no_bucket;
        // two of the tile's writes on one bucket: one try-lock wins, the other write runs after
        // the group's release (one tile never waits for itself). With in_order (one host tile,
        // the sequential order) the lowest lane's write takes the bucket and only a prefix of the
        // tile's operations is grouped, so the writes of a bucket and the deferrals keep index
        // order (T - 1 shuffles: on the host backend each is a barrier, so only there)
        bool in = b != no_bucket;
        if (in_order) {
          const std::uint32_t alone = tile.ballot(mine && b == no_bucket);
          in = in && (alone & ((1u << rank) - 1u)) == 0;
          for (unsigned l = 0; l + 1 < static_cast<unsigned>(T); ++l) {
            const std::size_t other = tile.shfl(b, l);
            in = in && !(l < rank && other == b);
          }
        }
        const bool hold = in && op.ref.try_hold(b);
        if (tile.ballot(hold) != 0) {
          op.ref.group_locked(tile);
          serve_each(tile, hold, [&](unsigned lane) {
            record(lane, acc.deferred ? status::full : op.held(tile, tile_index * T + lane));
          });
          op.ref.group_release(tile, hold ? b : no_bucket);
        }
        mine = mine && !hold;
      }
    }
    serve_each(tile, mine, [&](unsigned lane) {
      const std::size_t j = tile_index * T + lane;
      record(lane, acc.deferred ? status::full : op(tile, j));
    });
  }

  template <class Tile>
  WARPKV_HD void flush(const Tile& tile, accumulator& acc) const {
    if (counters == nullptr) return;
    for (int m = 0; m < kinds_per_lane; ++m) {
      const unsigned kind = tile.thread_rank() + static_cast<unsigned>(m * T);
      if (kind < static_cast<unsigned>(num_status_kinds) && acc.c[m] != 0)
        atomic_ref<unsigned long long>(counters[kind]).fetch_add(acc.c[m], memory_order::relaxed);
    }
  }
};

/// Queues one phase of a cache batch over operations [0, n) without waiting.
template <int T, class Op>
void launch_cache_phase(const execution& ex, std::size_t n, const Op& op, status* statuses, unsigned long long* counters,
                        bool only_full) {
  if (n == 0) return;
  // only a write pass defers: the read phase's `full` marks are the write phase's operations
  const bool in_order = Op::defers && ex.where == backend::host && ex.concurrent_host_tiles() == 1;
  launch<T>(ex, (n + T - 1) / T, cache_phase_body<T, Op>{op, n, statuses, counters, only_full, in_order});
}

/// The batch's gate pass (one operation, before the write phase of a batch of n operations):
/// sums the occupancy shards once and sets the kick gate word that the write phase's passes read
/// instead of summing them per write (docs/design/cache.md, "Cuckoo moves": the gate is a
/// placement heuristic).
template <class Ref>
struct cache_gate_fn {
  Ref ref;
  std::size_t n = 0;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t) const { ref.refresh_kick_gate(n); }
};

/// Slot i becomes empty and unlocked (a free reader/writer lock where the design has them); bucket locks and
/// move counters cleared alongside. The same for every design (the storage's strides say where).
template <class Key>
struct cache_init_fn {
  using layout = cache_key_layout<Key>;
  cache_storage s;
  std::uint32_t bucket_width;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    for (int j = 0; j < layout::words; ++j)
      s.keys[i * s.key_stride + static_cast<std::size_t>(j)] = j == layout::words - 1 ? layout::empty_tag : 0;
    if (s.versions != nullptr) s.versions[i] = 0;  // rw_lock's per-slot words only
    s.stamps[i] = 0;
    if (s.digests != nullptr && i % 8 == 0) s.digests[i / 8] = 0;  // every slot empty: digest 0
    s.expires[i] = 0;
    if (i % bucket_width == 0) {
      s.locks[i / bucket_width] = 0;
      if (s.moves != nullptr) s.moves[i / bucket_width] = 0;
    }
    if (i == 0)
      for (std::size_t k = 0; k < occupancy_words; ++k) s.occupied[k] = 0;  // the kick gate open
  }
};

/// Counts live (non-empty, unexpired) slots; with outputs, also copies them out.
template <class Ref>
struct cache_collect_fn {
  using Key = typename Ref::key_type;
  Ref ref;
  std::uint64_t now;
  unsigned long long* count;
  Key* keys_out = nullptr;
  std::uint64_t* values_out = nullptr;
  std::uint64_t* expires_out = nullptr;
  std::uint64_t* scores_out = nullptr;  ///< may be null (save: the slots' recency words)
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    if (ref.slot_empty(i) || ref.slot_expired(i, now)) return;
    const auto at = atomic_ref<unsigned long long>(*count).fetch_add(1, memory_order::relaxed);
    if (keys_out == nullptr) return;
    keys_out[at] = ref.slot_key(i);
    const std::size_t vw = ref.value_words();
    const std::uint64_t* v = ref.slot_value(i);
    for (std::size_t j = 0; j < vw; ++j) values_out[at * vw + j] = v[j];
    expires_out[at] = ref.storage().expires[i];
    if (scores_out != nullptr) scores_out[at] = ref.slot_score(i);
  }
};

}  // namespace detail
}  // namespace warpkv
