#pragma once
// A mixed batch in phases by kind (issue 23 item 3): the synchronous execute() of the bulk maps
// (core/bulk_map.hpp) first sorts its operations' indices into three lists by kind, then runs each
// list with the uniform batch's own hot kernel, one after another on the map's stream:
//
//   reads   (find, contains, and op codes outside warpkv::op, which are refused)  find kernel
//   writes  (insert, insert_or_assign)        fast insert, then the complete insert for what it left
//   erases                                    erase kernel
//
// Why it is one concurrent batch still: every operation of a batch runs concurrently with every
// other (the bulk API's guarantee), so any sequential order of them is a valid linearization, and
// "all reads, then all writes, then all erases" is one (per key: the reads of k, then its
// inserts, then its erases; the per-key linearizability checker accepts exactly such orders).
// Each phase is a uniform batch on a table nobody else writes meanwhile, so the read phase may
// use the quiescent find (find_op: plain, L1-cached loads), and each phase's kernel carries only
// its kind's code: no op-code switch, no warp split between paths, no rare path in the hot kernels.
// A side effect that matters for hot keys: inside a batch there is no insert/erase churn on a key
// (its inserts all run before its erases).
//
// The partition pass (partition_ops) reads every op code once: a tile counts its operations'
// kinds by ballot (32 lanes and 256 operations a tile on the GPU; one lane and 8 operations on the
// host backend, whose wide tiles meet at a barrier per ballot), reserves room in each list with
// one atomic per kind, and writes the indices. Reads fill list A from the front and erases from the back, writes fill list B, so
// two n-entry index arrays hold the three lists without a counting pass first. The order inside a
// list is unspecified (the phases' operations are concurrent anyway).
#include <cstddef>
#include <cstdint>

#include "warpkv/core/atomic.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/config.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/core/op_traits.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv::detail {

/// The lists of a phased mixed batch: reads, writes (inserts), erases.
enum class op_list : unsigned { reads = 0, writes = 1, erases = 2 };
inline constexpr unsigned num_op_lists = 3;

WARPKV_HD inline unsigned list_of(op o) {
  switch (o) {
    case op::insert:
    case op::insert_or_assign: return static_cast<unsigned>(op_list::writes);
    case op::erase: return static_cast<unsigned>(op_list::erases);
    default: return static_cast<unsigned>(op_list::reads);  // find, contains, and invalid codes (refused there)
  }
}

/// Sorts the indices [0, n) into Sorter::lists lists, with tiles of N lanes over
/// ceil(n / ops_per_tile) tiles: a tile classifies its Sorter::rounds x N indices
/// (Sorter::list_of(i), Sorter::lists for "in no list"), reserves room in each list with one
/// atomic per list, and hands each index its position (Sorter::put(list, position, index));
/// `counts` (Sorter::lists counters, zeroed) end as the lists' lengths. The order inside a list
/// is unspecified.
template <int N, class Sorter>
struct sort_into_lists_fn {
  static constexpr int rounds = Sorter::rounds;
  static constexpr unsigned lists = Sorter::lists;
  static constexpr std::size_t ops_per_tile = static_cast<std::size_t>(N) * rounds;
  Sorter sorter;
  std::size_t n;
  unsigned long long* counts;  ///< `lists` counters

  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    static_assert(Tile::size() == N, "a sorting tile has N lanes");
    const unsigned r = t.thread_rank();
    const std::size_t base = tile_index * ops_per_tile;
    const std::uint32_t below = r == 0 ? 0u : (0xffffffffu >> (32u - r));
    unsigned long long at[lists] = {};
    for (int round = 0; round < rounds; ++round) {
      const std::size_t i = base + static_cast<std::size_t>(round) * N + r;
      const unsigned k = i < n ? sorter.list_of(i) : lists;
      for (unsigned q = 0; q < lists; ++q) at[q] += static_cast<unsigned>(popcount32(t.ballot(k == q)));
    }
    for (unsigned q = 0; q < lists; ++q) {
      unsigned long long first = 0;
      if (r == 0 && at[q] != 0) first = atomic_ref<unsigned long long>(counts[q]).fetch_add(at[q], memory_order::relaxed);
      at[q] = t.shfl(first, 0);
    }
    for (int round = 0; round < rounds; ++round) {
      const std::size_t i = base + static_cast<std::size_t>(round) * N + r;
      const unsigned k = i < n ? sorter.list_of(i) : lists;
      for (unsigned q = 0; q < lists; ++q) {
        const std::uint32_t m = t.ballot(k == q);
        if (k == q)
          sorter.put(q, static_cast<std::size_t>(at[q]) + static_cast<unsigned>(popcount32(m & below)),
                     static_cast<std::uint32_t>(i));
        at[q] += static_cast<unsigned>(popcount32(m));
      }
    }
  }
};

/// Queues a sorting pass over [0, n) on `ex` (32-lane tiles on the GPU; one-lane tiles on the host
/// backend, whose wide tiles meet at a barrier per ballot).
template <class Sorter>
void sort_into_lists(const execution& ex, const Sorter& sorter, std::size_t n, unsigned long long* counts) {
  if (n == 0) return;
  if (ex.where == backend::cuda) {
    using fn = sort_into_lists_fn<32, Sorter>;
    launch<32>(ex, (n + fn::ops_per_tile - 1) / fn::ops_per_tile, simple_body<fn>{{sorter, n, counts}});
  } else {
    using fn = sort_into_lists_fn<1, Sorter>;
    launch<1>(ex, (n + fn::ops_per_tile - 1) / fn::ops_per_tile, simple_body<fn>{{sorter, n, counts}});
  }
}

/// The partition of a mixed batch (see the header): reads fill `reads_and_erases` from the front
/// and erases from its back, writes fill `writes`.
struct op_kind_sorter {
  static constexpr int rounds = 8;
  static constexpr unsigned lists = num_op_lists;
  const op* ops;
  std::size_t n;
  std::uint32_t* reads_and_erases;  ///< n entries: reads from the front, erases from the back
  std::uint32_t* writes;            ///< n entries
  WARPKV_HD unsigned list_of(std::size_t i) const { return warpkv::detail::list_of(ops[i]); }
  WARPKV_HD void put(unsigned q, std::size_t pos, std::uint32_t idx) const {
    if (q == static_cast<unsigned>(op_list::reads)) reads_and_erases[pos] = idx;
    else if (q == static_cast<unsigned>(op_list::writes)) writes[pos] = idx;
    else reads_and_erases[n - 1 - pos] = idx;
  }
};

/// Queues the partition pass of a mixed batch of n operations on `ex` (see the header);
/// `counts` (num_op_lists counters, zeroed) end as the lists' lengths.
inline void partition_ops(const execution& ex, const op* ops, std::size_t n, std::uint32_t* reads_and_erases,
                          std::uint32_t* writes, unsigned long long* counts) {
  sort_into_lists(ex, op_kind_sorter{ops, n, reads_and_erases, writes}, n, counts);
}

/// The operations a launch left `full` (statuses[i] == full), for the second pass that re-runs
/// only them: one list of at most `room` entries. 32 rounds a tile: one counter atomic per
/// 1024 statuses at most (the list is short, the statuses many).
struct full_sorter {
  static constexpr int rounds = 32;
  static constexpr unsigned lists = 1;
  const status* statuses;
  std::uint32_t* list;
  std::size_t room;
  WARPKV_HD unsigned list_of(std::size_t i) const { return statuses[i] == status::full ? 0u : 1u; }
  WARPKV_HD void put(unsigned, std::size_t pos, std::uint32_t idx) const {
    if (pos < room) list[pos] = idx;
  }
};

/// Runs `op` on the operations of one list: list entry j is operation index[j] (from_back:
/// index[total - 1 - j]). The status goes to out[operation] (when out is given) as well as to the
/// batch body's own status of entry j (which launch_full's second pass and growth loop read, for
/// lists on statuses).
/// MarkFull: an entry whose operation ends `full` is marked (core/batch.hpp, list_mark), so that
/// marked_op can run exactly those again over the same list (the list's indices must then be
/// below list_mark).
template <class Op, bool FromBack = false, bool MarkFull = false>
struct listed_op {
  static_assert(!(FromBack && MarkFull), "marked lists are read from the front");
  static constexpr int register_budget = register_budget_of_op<Op>();
  static constexpr bool thread_per_op = thread_per_op_of_op<Op>();
  static constexpr per_op_launch launch = launch_of_op<Op>();
  Op op;
  std::uint32_t* index;
  std::size_t total;  ///< entries of `index` (from_back lists count from its end)
  status* out;        ///< per operation, may be null
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t j) const {
    std::size_t i = 0;
    if constexpr (MarkFull) {  // lane 0 reads the entry it may write later (as in marked_op)
      std::uint32_t e = 0;
      if (t.thread_rank() == 0) e = index[j];
      i = t.shfl(e, 0);
    } else {
      i = FromBack ? index[total - 1 - j] : index[j];
    }
    const status s = op(t, i);
    if (t.thread_rank() == 0) {
      if (out != nullptr) out[i] = s;
      if constexpr (MarkFull) {
        if (s == status::full) index[j] = static_cast<std::uint32_t>(i) | list_mark;
      }
    }
    return s;
  }
};

/// A first pass that hands back what it leaves `full` (core/batch.hpp, handback_list): runs `op`
/// on operation i; tile_op_body, seeing `handback`, appends each operation that ends `full` to the
/// list (i | list_mark; lane 0 of the tile, one relaxed fetch_add per warp on the list's length).
/// A wrapper of the first pass's op alone, so that no other kernel carries the append (in every
/// kernel it cost the finds and erases registers and left a 48-register insert with 8-24 B of
/// spills, session 20).
template <class Op>
struct handing_back_op {
  static constexpr int register_budget = register_budget_of_op<Op>();
  static constexpr bool thread_per_op = thread_per_op_of_op<Op>();
  static constexpr per_op_launch launch = launch_of_op<Op>();
  Op op;
  handback_list handback;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    return op(t, i);
  }
};

/// Runs `op` on the marked entries of a list (core/batch.hpp, list_mark: the operations a first
/// pass handed back, handback_list) and skips the others (tile_op_body neither runs nor counts a
/// skipped entry). An entry whose operation ends other than `full` is unmarked, so launching the
/// same op over the same list again (after growth) re-runs exactly the operations still `full`:
/// no status array and no sorting pass. The status goes to out[operation] when out is given.
/// Lane 0 alone reads the entry for the run and passes it on (a tile collective), so its later
/// write of the entry is ordered after every lane's reads.
template <class Op>
struct marked_op {
  static constexpr int register_budget = register_budget_of_op<Op>();
  static constexpr bool thread_per_op = thread_per_op_of_op<Op>();
  static constexpr per_op_launch launch = launch_of_op<Op>();
  Op op;
  std::uint32_t* index;  ///< entries: operation | list_mark (to run) or operation (done)
  status* out;           ///< per operation, may be null
  /// The list's length in the backend's memory, for a launch queued before it is known (an
  /// async call's second pass, launched over every operation of the batch); null: the launch's
  /// count is the length.
  const unsigned long long* length = nullptr;
  WARPKV_HD bool skip(std::size_t j) const {
    if (length != nullptr && j >= *length) return true;
    return (index[j] & list_mark) == 0u;
  }
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t j) const {
    std::uint32_t e = 0;
    if (t.thread_rank() == 0) e = index[j];
    const std::uint32_t i = t.shfl(e, 0) & ~list_mark;
    const status s = op(t, i);
    if (t.thread_rank() == 0) {
      if (out != nullptr) out[i] = s;
      if (s != status::full) index[j] = i;
    }
    return s;
  }
};

/// marked_op for a launch queued before the list's length is known (an async call's second pass,
/// launched over every operation of the batch, `length` on the device): a persistent grid whose
/// tiles stride over the batch, never a tile per entry. A tile per entry (the one-lane maps'
/// launch) made n mostly empty tiles, a block per 256 of them: insert_async ran 6 % slower than
/// insert at 2^25 operations (session 21, call A).
template <class Op>
struct queued_marked_op : marked_op<Op> {
  static constexpr bool thread_per_op = false;
};

/// The read list's op: a find or contains (values_out[i] as execute_op writes it), or the refusal
/// of an op code outside warpkv::op.
template <class Ref, class Key, class Value>
struct mixed_read_op {
  static constexpr int register_budget = find_op<Ref, Key, Value>::register_budget;
  static constexpr bool thread_per_op = find_op<Ref, Key, Value>::thread_per_op;
  find_op<Ref, Key, Value> find;
  const op* ops;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    const op o = ops[i];
    if (o != op::find && o != op::contains) return status::invalid_key;  // refused, never guessed
    return find(t, i);
  }
};

/// The write list's op: insert or insert_or_assign by the op code, in pass P.
template <class Ref, class Key, class Value, pass P>
struct mixed_insert_op {
  static constexpr int register_budget = insert_op<Ref, Key, Value, P>::register_budget;
  static constexpr bool thread_per_op = insert_op<Ref, Key, Value, P>::thread_per_op;
  static constexpr per_op_launch launch = insert_op<Ref, Key, Value, P>::launch;
  Ref ref;
  const op* ops;
  const Key* keys;
  const Value* values;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    return insert_op<Ref, Key, Value, P>{ref, keys, values, ops[i] == op::insert_or_assign}(t, i);
  }
};

}  // namespace warpkv::detail
