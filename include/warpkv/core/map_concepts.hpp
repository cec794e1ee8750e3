#pragma once
// The map/ref contract of the bulk engine as C++20 concepts: what a device ref must offer for the
// bulk operations (core/map_ops.hpp) and the whole-table passes (core/table_passes.hpp), and what
// a map built on bulk_map_base (core/bulk_map.hpp) must offer. bulk_map_base checks both for every
// map it is instantiated with; a new map checks itself the same way:
//
//   static_assert(warpkv::device_map_ref<my_ref<K, V>>);      // the ops of a batch
//   static_assert(warpkv::slot_array_ref<my_ref<K, V>>);      // ... over bulk_map_base's slot array
//   static_assert(warpkv::bulk_map<my_map<K, V>>);            // the map and its hooks
//
// device_map_ref<R, Tile>: key_type, mapped_type; insert, insert_or_assign, find (value out,
//   may be null), erase and contains, each with a tile, returning status. A ref that declares
//   fast_bulk_inserts = true also offers insert_fast and insert_or_assign_fast (core/map_ops.hpp,
//   pass::fast).
// slot_array_ref<R, Tile>: a device_map_ref whose table is one slot array that bulk_map_base
//   allocates, rebuilds and reads back: slot_type, key_bits, static stored_key(slot) -> key_bits,
//   stored_value(slot), init_slot(slot, empty key), capacity().
// bulk_map<M>: the public bulk API every map shares (key_type, mapped_type, config_type,
//   ref_type, tile_size, map_name, ref(), the pointer forms of insert / find / erase / execute,
//   size, capacity, reserve, rehash, clear, retrieve_all) and the hooks bulk_map_base calls on it
//   (M::provides_bulk_hooks(): reset_table(bool); take_side/restore_side as a pair; the optional
//   prepare_inserts, on_batch, maintain, occupied_bound, check_async_room with their signatures; and, when its ref
//   is not a slot_array_ref, its own rehash_to and retrieve_all: chained_map's buckets and nodes).
// Tile: the tile type the ref's members are checked with (any tile of core/tile.hpp; the host
// tile of one lane by default: the members are templates over the tile).
#include <concepts>
#include <cstddef>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/map_ops.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/tile.hpp"

namespace warpkv {

template <class R, class Tile = host_tile<1>>
concept device_map_ref =
    std::copyable<R> &&
    requires(const R& r, const Tile& t, typename R::key_type k, typename R::mapped_type v, typename R::mapped_type* out) {
      { r.insert(t, k, v) } -> std::same_as<status>;
      { r.insert_or_assign(t, k, v) } -> std::same_as<status>;
      { r.find(t, k, out) } -> std::same_as<status>;
      { r.erase(t, k) } -> std::same_as<status>;
      { r.contains(t, k) } -> std::same_as<status>;
    } &&
    (!detail::has_fast_bulk_inserts<R> ||
     requires(const R& r, const Tile& t, typename R::key_type k, typename R::mapped_type v) {
       { r.insert_fast(t, k, v) } -> std::same_as<status>;
       { r.insert_or_assign_fast(t, k, v) } -> std::same_as<status>;
     });

template <class R, class Tile = host_tile<1>>
concept slot_array_ref =
    device_map_ref<R, Tile> &&
    requires(const R& r, typename R::slot_type& s, const typename R::slot_type& cs, typename R::key_type k) {
      typename R::key_bits;
      { R::stored_key(cs) } -> std::same_as<typename R::key_bits>;
      R::stored_value(cs);
      R::init_slot(s, k);
      { r.capacity() } -> std::convertible_to<std::size_t>;
    };

template <class M>
concept bulk_map =
    device_map_ref<typename M::ref_type> &&
    requires(M& m, const M& cm, const typename M::key_type* keys, const typename M::mapped_type* values,
             typename M::key_type* keys_out, typename M::mapped_type* values_out, const op* ops, status* out,
             std::size_t n) {
      typename M::config_type;
      { M::map_name } -> std::convertible_to<const char*>;
      { M::tile_size } -> std::convertible_to<int>;
      { cm.ref() } -> std::same_as<typename M::ref_type>;
      { m.insert(keys, values, n, out) } -> std::same_as<batch_summary>;
      { m.insert_or_assign(keys, values, n, out) } -> std::same_as<batch_summary>;
      m.find(keys, n, values_out, out);
      { m.erase(keys, n, out) } -> std::same_as<batch_summary>;
      { m.execute(ops, keys, values, n, out, values_out) } -> std::same_as<batch_summary>;
      { cm.size() } -> std::same_as<std::size_t>;
      { cm.capacity() } -> std::same_as<std::size_t>;
      m.reserve(n);
      m.rehash(n);
      m.clear();
      { cm.retrieve_all(keys_out, values_out) } -> std::convertible_to<std::size_t>;
      requires M::template provides_bulk_hooks<M>();
    };

}  // namespace warpkv
