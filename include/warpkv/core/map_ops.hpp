#pragma once
// Operation functors of the bulk map API, written once against the device-ref
// interface every warpkv map offers (insert, insert_or_assign, find, erase with
// a tile). launch_batch runs them; a structure's bulk API only picks one.
#include <cstddef>

#include "warpkv/core/config.hpp"
#include "warpkv/core/op_traits.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv::detail {

/// Which protocol a bulk op runs. A ref that declares `static constexpr bool fast_bulk_inserts =
/// true` offers insert_fast / insert_or_assign_fast for batches in which only inserts run: a hot
/// kernel without the rare paths, which hands an op it cannot finish back as status::full; the
/// bulk API then re-runs exactly those ops with the complete protocol in a second launch of the
/// same batch (and only what that one reports full makes the table grow).
enum class pass { fast, complete };

template <class Ref>
concept has_fast_bulk_inserts = requires { requires Ref::fast_bulk_inserts; };

/// A ref whose insert_evicting / insert_or_assign_evicting (the results of insert /
/// insert_or_assign) are ordered for operations a fast pass handed back as full; the complete
/// pass behind a fast one uses them (cuckoo_ref: the eviction chain before the locks).
template <class Ref, class Tile, class Key, class Value>
concept has_evicting_inserts = requires(const Ref& r, const Tile& t, Key k, Value v) {
  r.insert_evicting(t, k, v);
  r.insert_or_assign_evicting(t, k, v);
};

/// Registers per thread a ref asks its hot bulk kernels (find-only, insert-only, erase-only
/// batches) to fit: `static constexpr int hot_register_budget` on the ref, 0 (the compiler's
/// choice) when absent. The launcher turns it into launch bounds (core/launcher.hpp).
template <class Ref>
constexpr int hot_register_budget_of() {
  if constexpr (requires { Ref::hot_register_budget; }) return Ref::hot_register_budget;
  else return 0;
}

/// Whether a ref's uniform batches with one-lane tiles launch a thread per operation
/// (`static constexpr bool thread_per_op = true` on the ref) rather than a persistent grid.
template <class Ref>
constexpr bool thread_per_op_of() {
  if constexpr (requires { Ref::thread_per_op; }) return Ref::thread_per_op;
  else return false;
}

/// The find-only kernel's budget: `static constexpr int find_register_budget` on the ref, else
/// its hot_register_budget.
template <class Ref>
constexpr int find_register_budget_of() {
  if constexpr (requires { Ref::find_register_budget; }) return Ref::find_register_budget;
  else return hot_register_budget_of<Ref>();
}

/// The budget of the complete insert's kernel where it is a second launch behind a fast first
/// one (has_fast_bulk_inserts): `static constexpr int slow_register_budget` on the ref (0: the
/// compiler's choice), else the hot budget.
template <class Ref>
constexpr int slow_register_budget_of() {
  if constexpr (requires { Ref::slow_register_budget; }) return Ref::slow_register_budget;
  else return hot_register_budget_of<Ref>();
}

/// The budget of the first (fast) launch of an insert batch: `static constexpr int
/// fast_insert_register_budget` on the ref, else its hot_register_budget.
template <class Ref>
constexpr int fast_insert_register_budget_of() {
  if constexpr (requires { Ref::fast_insert_register_budget; }) return Ref::fast_insert_register_budget;
  else return hot_register_budget_of<Ref>();
}

/// The launch of the first (fast) launch of an insert batch: `static constexpr per_op_launch
/// fast_insert_launch` on the ref, else the default.
template <class Ref>
constexpr per_op_launch fast_insert_launch_of() {
  if constexpr (requires { Ref::fast_insert_launch; }) return Ref::fast_insert_launch;
  else return per_op_launch{};
}

template <class Ref, class Key, class Value, pass P = pass::complete>
struct insert_op {
  static constexpr int register_budget = !has_fast_bulk_inserts<Ref> ? hot_register_budget_of<Ref>()
                                         : P == pass::complete       ? slow_register_budget_of<Ref>()
                                                                     : fast_insert_register_budget_of<Ref>();
  static constexpr bool thread_per_op = thread_per_op_of<Ref>();
  static constexpr per_op_launch launch =
      has_fast_bulk_inserts<Ref> && P == pass::fast ? fast_insert_launch_of<Ref>() : per_op_launch{};
  Ref ref;
  const Key* keys;
  const Value* values;
  bool or_assign;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    if constexpr (P == pass::fast)
      return or_assign ? ref.insert_or_assign_fast(t, keys[i], values[i]) : ref.insert_fast(t, keys[i], values[i]);
    else if constexpr (has_fast_bulk_inserts<Ref> && has_evicting_inserts<Ref, Tile, Key, Value>)
      // Behind a fast pass the complete pass only runs what it handed back (or re-runs after
      // growth): a ref may order that work for a key whose buckets were full.
      return or_assign ? ref.insert_or_assign_evicting(t, keys[i], values[i]) : ref.insert_evicting(t, keys[i], values[i]);
    else
      return or_assign ? ref.insert_or_assign(t, keys[i], values[i]) : ref.insert(t, keys[i], values[i]);
  }
};

template <class Ref, class Key, class Value>
struct find_op {
  static constexpr int register_budget = find_register_budget_of<Ref>();
  static constexpr bool thread_per_op = thread_per_op_of<Ref>();
  Ref ref;
  const Key* keys;
  Value* values_out;  // may be null
  bool* found_out;    // may be null
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    Value v{};
    // A find-only batch is the only kernel on the map's stream: a ref that can read a table
    // nobody writes more cheaply (find_quiescent: plain, L1-cached loads) does so.
    status s;
    if constexpr (requires { ref.find_quiescent(t, keys[i], &v); }) s = ref.find_quiescent(t, keys[i], &v);
    else s = ref.find(t, keys[i], &v);
    if (t.thread_rank() == 0) {
      if (values_out != nullptr) values_out[i] = s == status::found ? v : Value{};
      if (found_out != nullptr) found_out[i] = s == status::found;
    }
    return s;
  }
};

template <class Ref, class Key>
struct erase_op {
  static constexpr int register_budget = hot_register_budget_of<Ref>();
  static constexpr bool thread_per_op = thread_per_op_of<Ref>();
  Ref ref;
  const Key* keys;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    // Every launch of erase_op runs erases only (the bulk erase batches, their async form, a
    // mixed batch's erase phase): a ref that can erase more cheaply when nothing inserts or
    // moves keys beside it (erase_only) does so.
    if constexpr (requires { ref.erase_only(t, keys[i]); }) return ref.erase_only(t, keys[i]);
    else return ref.erase(t, keys[i]);
  }
};

/// A mixed batch: operation i is ops[i] on keys[i] (with values[i] for inserts);
/// finds write values_out[i] (Value{} on a miss) when values_out is not null.
template <class Ref, class Key, class Value>
struct execute_op {
  Ref ref;
  const op* ops;
  const Key* keys;
  const Value* values;
  Value* values_out;
  template <class Tile>
  WARPKV_HD status operator()(const Tile& t, std::size_t i) const {
    switch (ops[i]) {
      case op::insert: return ref.insert(t, keys[i], values[i]);
      case op::insert_or_assign: return ref.insert_or_assign(t, keys[i], values[i]);
      case op::erase: return ref.erase(t, keys[i]);
      case op::find:
      case op::contains: {
        Value v{};
        const status s = ref.find(t, keys[i], &v);
        if (values_out != nullptr && t.thread_rank() == 0) values_out[i] = s == status::found ? v : Value{};
        return s;
      }
      default: return status::invalid_key;  // an op code outside the enum is refused, never guessed
    }
  }
};


}  // namespace warpkv::detail
