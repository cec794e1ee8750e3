#pragma once
// warpkv::vector_cache: a kv_cache whose values are vectors of `dim` elements of V (float or
// warpkv::half), HierarchicalKV's value type (HKV's V with its `dim`), for its HKV-named calls:
// value arrays are n x dim elements of V, densely packed, in the backend's memory (device
// pointers on the GPU, host pointers on the host backend), and accum_or_assign adds element-wise
// in V (half: through float, rounded once per addition; detail::accumulate in core/half.hpp).
//
// A thin layer: it is the kv_cache (value_bytes = dim x sizeof(V)) with typed signatures; every
// call is kv_cache's (docs/design/cache.md, "HierarchicalKV's API": semantics, statuses, scores,
// stream ordering, consistency). The cache stores a value in value_stride() bytes (value_bytes
// rounded up to 8); a typed array whose rows are that stride and that is 8-byte aligned (dim x
// sizeof(V) a multiple of 8: float dims even, half dims multiples of 4) is used in place, any
// other is staged: copied into rows of the stride (the padding zeroed) before the call and the
// outputs copied back after it, on the cache's stream (one pass each; an output array's rows are
// copied in first too, so the rows a call leaves as they were, find's misses, stay so).
// words() is the same cache under kv_cache's word API (span batches, execute, ref(), ...).
//
// Arguments: dim 0, a dim whose vectors exceed max_value_bytes, or cfg.value_bytes set to
// another size than dim x sizeof(V) throw errc::invalid_argument naming `dim`; null arrays that a
// call needs with n > 0 throw it naming the array (nothing is copied or changed).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "warpkv/cache/kv_cache.hpp"
#include "warpkv/core/half.hpp"

namespace warpkv {
namespace detail {

/// Row i: `bytes` bytes from `from` (rows from_stride bytes apart) to `to` (rows to_stride
/// apart), the rest of the `to` row zeroed.
struct copy_value_rows_fn {
  const std::byte* from;
  std::size_t from_stride;
  std::byte* to;
  std::size_t to_stride;
  std::size_t bytes;
  template <class Tile>
  WARPKV_HD void operator()(const Tile&, std::size_t i) const {
    memcpy(to + i * to_stride, from + i * from_stride, bytes);
    if (to_stride > bytes) memset(to + i * to_stride + bytes, 0, to_stride - bytes);
  }
};

}  // namespace detail

template <class V, class Key = std::uint64_t, int BucketWidth = 4, int TileSize = (BucketWidth < 8 ? BucketWidth : 8),
          class Design = default_cache_design>
class vector_cache : private kv_cache<Key, BucketWidth, TileSize, Design> {
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, half>, "vector_cache: V is float or warpkv::half");
  using base = kv_cache<Key, BucketWidth, TileSize, Design>;
  using base::need;  // a null array with n > 0 throws naming it

 public:
  using value_type = V;
  using key_type = Key;
  using words_type = base;

  /// A cache of cfg.capacity vectors of `dim` elements: cfg.value_bytes left at its default or
  /// equal to dim x sizeof(V) (it becomes that); the rest of cfg as kv_cache takes it.
  vector_cache(std::size_t dim, cache_config cfg, execution ex = execution::automatic())
      : base(with_dim(dim, cfg), ex), dim_(dim) {}

  /// Elements per value.
  [[nodiscard]] std::size_t dim() const { return dim_; }
  /// The same cache under kv_cache's word API (values as value_stride() bytes).
  [[nodiscard]] base& words() { return *this; }
  [[nodiscard]] const base& words() const { return *this; }

  // the calls without values, as kv_cache's
  using base::capacity;
  using base::clear;
  using base::config;
  using base::contains;
  using base::erase;
  using base::erase_if;
  using base::exec;
  using base::global_epoch;
  using base::load;
  using base::save;
  using base::set_global_epoch;
  using base::set_time;
  using base::size;
  using base::time;
  using base::value_bytes;

  // ---- HierarchicalKV's calls with typed values (n x dim elements of V per array) ---------
  batch_summary insert_or_assign(std::size_t n, const Key* keys, const V* values, const std::uint64_t* scores = nullptr,
                                 status* statuses = nullptr, stream_arg stream = {}) {
    need(values, n, "values");
    detail::stream_join join(exec(), stream);
    const rows in = stage(values, n, true);
    return base::insert_or_assign(n, keys, in.words, scores, statuses);
  }
  batch_summary find(std::size_t n, const Key* keys, V* values_out, bool* founds = nullptr, status* statuses = nullptr,
                     stream_arg stream = {}) {
    need(values_out, n, "values_out");
    detail::stream_join join(exec(), stream);
    const rows out = stage(values_out, n, true);  // misses leave their rows as they were
    const batch_summary sum = base::find(n, keys, out.words, founds, statuses);
    unstage(out, values_out, n);
    return sum;
  }
  batch_summary find_or_insert(std::size_t n, const Key* keys, V* values, const std::uint64_t* scores = nullptr,
                               bool* founds = nullptr, status* statuses = nullptr, stream_arg stream = {}) {
    need(values, n, "values");
    detail::stream_join join(exec(), stream);
    const rows io = stage(values, n, true);
    const batch_summary sum = base::find_or_insert(n, keys, io.words, scores, founds, statuses);
    unstage(io, values, n);
    return sum;
  }
  /// values may be null (scores only), as kv_cache::assign.
  batch_summary assign(std::size_t n, const Key* keys, const V* values, const std::uint64_t* scores = nullptr,
                       status* statuses = nullptr, stream_arg stream = {}) {
    detail::stream_join join(exec(), stream);
    const rows in = stage(values, n, true);
    return base::assign(n, keys, in.words, scores, statuses);
  }
  /// A live entry of keys[i] gets deltas[i] added element-wise in V (half: through float,
  /// rounded once per addition): assigned; an absent key is inserted with deltas[i]: inserted.
  batch_summary accum_or_assign(std::size_t n, const Key* keys, const V* deltas, status* statuses = nullptr,
                                stream_arg stream = {}) {
    need(deltas, n, "deltas");
    detail::stream_join join(exec(), stream);
    const rows in = stage(deltas, n, true);
    return base::template accum_or_assign<V>(n, keys, in.words, statuses);
  }
  /// HKV's form with accum_or_assigns flags (kv_cache::accum_or_assign with flags).
  batch_summary accum_or_assign(std::size_t n, const Key* keys, const V* value_or_deltas, const bool* accum_or_assigns,
                                status* statuses = nullptr, stream_arg stream = {}) {
    need(value_or_deltas, n, "value_or_deltas");
    detail::stream_join join(exec(), stream);
    const rows in = stage(value_or_deltas, n, true);
    return base::template accum_or_assign<V>(n, keys, in.words, accum_or_assigns, statuses);
  }
  /// evicted_values may be null; returns how many entries were evicted (rows at the front).
  std::size_t insert_and_evict(std::size_t n, const Key* keys, const V* values, Key* evicted_keys, V* evicted_values = nullptr,
                               std::uint64_t* evicted_scores = nullptr, const std::uint64_t* scores = nullptr,
                               status* statuses = nullptr, stream_arg stream = {}) {
    need(values, n, "values");
    detail::stream_join join(exec(), stream);
    const rows in = stage(values, n, true);
    const rows ev = stage(evicted_values, n, false);
    const std::size_t count = base::insert_and_evict(n, keys, in.words, evicted_keys, ev.words, evicted_scores, scores, statuses);
    unstage(ev, evicted_values, count);
    return count;
  }
  std::size_t export_batch(std::size_t n, std::size_t offset, Key* keys_out, V* values_out = nullptr,
                           std::uint64_t* scores_out = nullptr, stream_arg stream = {}) const {
    return export_batch_if(cache_all_entries{}, n, offset, keys_out, values_out, scores_out, stream);
  }
  template <class Pred>
  std::size_t export_batch_if(const Pred& pred, std::size_t n, std::size_t offset, Key* keys_out, V* values_out = nullptr,
                              std::uint64_t* scores_out = nullptr, stream_arg stream = {}) const {
    detail::stream_join join(exec(), stream);
    // at most the slots of [offset, offset + n) (kv_cache refuses an offset past them)
    const rows out = stage(values_out, offset <= capacity() ? std::min(n, capacity() - offset) : 0, false);
    const std::size_t count = base::export_batch_if(pred, n, offset, keys_out, out.words, scores_out);
    unstage(out, values_out, count);
    return count;
  }

 private:
  static cache_config with_dim(std::size_t dim, cache_config cfg) {
    require(dim > 0, "dim", "a value is a vector of at least one element");
    require(dim <= max_value_bytes / sizeof(V), "dim",
            std::to_string(dim) + " elements of " + std::to_string(sizeof(V)) + " bytes exceed max_value_bytes (" +
                std::to_string(max_value_bytes) + ")");
    const std::size_t bytes = dim * sizeof(V);
    require(cfg.value_bytes == cache_config{}.value_bytes || cfg.value_bytes == bytes, "dim",
            "dim " + std::to_string(dim) + " x " + std::to_string(sizeof(V)) + "-byte elements = " + std::to_string(bytes) +
                " bytes, but cfg.value_bytes is " + std::to_string(cfg.value_bytes) + " (leave it at its default)");
    cfg.value_bytes = bytes;
    return cfg;
  }

  /// A typed array as the cache's value words: in place (staged empty), or staged rows.
  struct rows {
    buffer<std::uint64_t> staged;
    std::uint64_t* words = nullptr;
  };
  /// Rows [0, n) of p as value words: p itself when its rows have the cache's stride and it is
  /// 8-byte aligned, else a staging array (with p's rows copied in when copy_in); null: null.
  rows stage(const V* p, std::size_t n, bool copy_in) const {
    rows r;
    if (p == nullptr || n == 0) return r;
    const std::size_t stride = base::value_stride(), bytes = value_bytes();
    if (bytes == stride && reinterpret_cast<std::uintptr_t>(p) % alignof(std::uint64_t) == 0) {
      r.words = const_cast<std::uint64_t*>(reinterpret_cast<const std::uint64_t*>(p));
      return r;
    }
    r.staged = buffer<std::uint64_t>(n * (stride / 8), exec());
    r.words = r.staged.data();
    if (copy_in)
      detail::for_each_index(exec(), n, detail::copy_value_rows_fn{reinterpret_cast<const std::byte*>(p), bytes,
                                                                   reinterpret_cast<std::byte*>(r.words), stride, bytes});
    return r;
  }
  /// Rows [0, n) of a staged output back into p (nothing when it was used in place); waits.
  void unstage(const rows& r, V* p, std::size_t n) const {
    if (r.staged.size() == 0 || n == 0) return;
    const std::size_t bytes = value_bytes();
    detail::for_each_index(exec(), n, detail::copy_value_rows_fn{reinterpret_cast<const std::byte*>(r.words),
                                                                 base::value_stride(), reinterpret_cast<std::byte*>(p), bytes,
                                                                 bytes});
    synchronize(exec());
  }

  std::size_t dim_;
};

}  // namespace warpkv
