// warpkv-bench: the workloads. This is the only translation unit with device code:
// it instantiates the maps (compiled by nvcc when the CUDA backend is on, by the host
// compiler otherwise), generates inputs, times and verifies.
//
// Instantiated map types (keep this set small, nvcc is slow):
//   hopscotch_map<uint32_t, uint32_t, T> for T in {1, 4, 8, 32}
//   hopscotch_map<uint64_t, uint64_t, 4>
//   cuckoo_map<K, K, 4>, chained_map<K, K, pool, 1>, chained_map<K, K, device, 1> for K in {uint32_t, uint64_t}
//   (--map cuckoo, chained-pool, chained-device: the issue-5 baselines, one tile size each)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench.hpp"
#include "session.hpp"
#include "workload_inputs.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/chained/chained_map.hpp"
#include "warpkv/cuckoo/cuckoo_map.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"
#include "warpkv/open_addressing/linear_map.hpp"
#include "warpkv/open_addressing/quadratic_map.hpp"

namespace warpkv_bench {

namespace {

using warpkv::buffer;
using warpkv::execution;
using warpkv::status;

// Reference ceilings (H100 SXM, measured elsewhere): random 32-byte sector reads for
// finds, random 8-byte CAS for inserts. Kept in the JSON for reference only.
constexpr double ceiling_find_gops = 28.0;
constexpr double ceiling_insert_gops = 13.0;


/// Runs f.template operator()<K, V, T>() for the instantiated map types.
template <class F>
void dispatch(int key_bits, int value_bits, int tile, F&& f) {
  using u32 = std::uint32_t;
  using u64 = std::uint64_t;
  if (key_bits == 32 && value_bits == 32) {
    switch (tile) {
      case 1: return f.template operator()<u32, u32, 1>();
      case 4: return f.template operator()<u32, u32, 4>();
      case 8: return f.template operator()<u32, u32, 8>();
      case 32: return f.template operator()<u32, u32, 32>();
      default: break;
    }
  } else if (key_bits == 64 && value_bits == 64 && tile == 4) {
    return f.template operator()<u64, u64, 4>();
  }
  throw warpkv::error(warpkv::errc::unsupported,
                      strf("warpkv-bench: map type u%d/u%d with tile %d is not built; built: u32/u32 with tile "
                           "1, 4, 8 or 32 and u64/u64 with tile 4",
                           key_bits, value_bits, tile));
}


// ---- the map selection (--map): hopscotch over the built tiles, the baselines once each ------

/// Tile sizes of the baselines (one each: nvcc is slow). The chained maps walk lists with one lane.
constexpr int cuckoo_bench_tile = 4;
constexpr int chained_bench_tile = 1;

/// Runs f.template operator()<Map>() for map `name` ("hopscotch", "cuckoo", "chained-pool",
/// "chained-device"): hopscotch once per tile in `tiles`, the others once with their tile size.
template <class F>
void dispatch_map(const std::string& name, int key_bits, int value_bits, const std::vector<int>& tiles, F&& f) {
  using u32 = std::uint32_t;
  using u64 = std::uint64_t;
  using warpkv::chained_alloc;
  if (name == "hopscotch") {
    for (const int tile : tiles)
      dispatch(key_bits, value_bits, tile, [&]<class K, class V, int T>() { f.template operator()<warpkv::hopscotch_map<K, V, T>>(); });
    return;
  }
  const bool w32 = key_bits == 32 && value_bits == 32, w64 = key_bits == 64 && value_bits == 64;
  if (w32 && name == "hopscotch-buckets") {  // issue 24's bucket layout (H64), u32/u32, tiles 1 and 4
    bool ran = false;
    for (const int tile : tiles) {
      if (tile == 1) f.template operator()<warpkv::hopscotch_map<u32, u32, 1, warpkv::hopscotch_buckets>>(), ran = true;
      else if (tile == 4) f.template operator()<warpkv::hopscotch_map<u32, u32, 4, warpkv::hopscotch_buckets>>(), ran = true;
    }
    if (!ran)
      throw warpkv::error(warpkv::errc::unsupported, "warpkv-bench: hopscotch-buckets is built for --tile 1 and 4");
    return;
  }
  if (w32 && (name == "linear" || name == "quadratic")) {  // issue 23's baselines, u32/u32, tiles 1 and 4
    for (const int tile : tiles) {
      if (tile != 1 && tile != 4) continue;
      const bool lin = name == "linear";
      if (tile == 1) lin ? f.template operator()<warpkv::linear_map<u32, u32, 1>>()
                         : f.template operator()<warpkv::quadratic_map<u32, u32, 1>>();
      else lin ? f.template operator()<warpkv::linear_map<u32, u32, 4>>()
               : f.template operator()<warpkv::quadratic_map<u32, u32, 4>>();
    }
    return;
  }
  if (w32 || w64) {
    if (name == "cuckoo") {
      if (!w32) return f.template operator()<warpkv::cuckoo_map<u64, u64, cuckoo_bench_tile>>();
      // u32/u32 (the packed fast paths): a bucket of 8 slots read by 4 lanes (two slots each), by
      // 8 (one each) or by one thread per operation (16 bytes at a time), as --tile asks; other
      // tiles fall back to 4.
      bool ran = false;
      for (const int tile : tiles) {
        if (tile == 1) f.template operator()<warpkv::cuckoo_map<u32, u32, 1>>(), ran = true;
        else if (tile == 8) f.template operator()<warpkv::cuckoo_map<u32, u32, 8>>(), ran = true;
        else if (tile == cuckoo_bench_tile) f.template operator()<warpkv::cuckoo_map<u32, u32, cuckoo_bench_tile>>(), ran = true;
      }
      if (!ran) f.template operator()<warpkv::cuckoo_map<u32, u32, cuckoo_bench_tile>>();
      return;
    }
    if (name == "chained-pool") {
      if (w32) return f.template operator()<warpkv::chained_map<u32, u32, chained_alloc::pool, chained_bench_tile>>();
      return f.template operator()<warpkv::chained_map<u64, u64, chained_alloc::pool, chained_bench_tile>>();
    }
    if (name == "chained-device") {
      if (w32) return f.template operator()<warpkv::chained_map<u32, u32, chained_alloc::device, chained_bench_tile>>();
      return f.template operator()<warpkv::chained_map<u64, u64, chained_alloc::device, chained_bench_tile>>();
    }
  }
  throw warpkv::error(warpkv::errc::unsupported,
                      strf("warpkv-bench: map %s with u%d/u%d is not built; cuckoo, chained-pool and chained-device "
                           "are built for u32/u32 and u64/u64 (tile %d, %d and %d)",
                           name.c_str(), key_bits, value_bits, cuckoo_bench_tile, chained_bench_tile, chained_bench_tile));
}

struct no_map_work {
  template <class Map>
  void operator()() const {}
};
/// Throws unless map `name` is built for these key/value widths (and, for hopscotch, tiles).
void check_map_built(const std::string& name, int key_bits, int value_bits, const std::vector<int>& tiles) {
  dispatch_map(name, key_bits, value_bits, tiles, no_map_work{});
}

/// Map-specific configuration of a benchmark run that must hold `keys` keys (or take `keys` inserts).
void prepare_config(warpkv::hopscotch_config&, std::uint64_t) {}
void prepare_config(warpkv::cuckoo_config&, std::uint64_t) {}
void prepare_config(warpkv::open_addressing_config&, std::uint64_t) {}
/// The chained pool gets a node for every insert the run may make, allocated before the timing
/// (Misra and Chaudhuri's pre-allocation, GLHT's "chained without allocation").
void prepare_config(warpkv::chained_config& c, std::uint64_t keys) { c.pool_nodes = static_cast<std::size_t>(keys); }

/// Device heap for chained-device runs: room for a node per operation of the largest batch and
/// per key of the largest range, twice over (allocator overhead), at least 1 GiB, at most 16 GiB.
/// The first such map of the process sets it (cudaLimitMallocHeapSize is fixed afterwards).
std::size_t dyo_heap_bytes(const dynamic_options& dyo, std::size_t node_bytes) {
  double most = 0;
  for (const double o : dyo.ops) most = std::max(most, o);
  std::uint64_t range = 0;
  for (const auto r : dyo.key_ranges) range = std::max(range, r);
  const double want = 2.0 * (most + static_cast<double>(range)) * static_cast<double>(node_bytes + 16);
  return static_cast<std::size_t>(std::clamp(want, 1073741824.0, 17179869184.0));
}

void describe_config(record& r, const warpkv::hopscotch_config& c) {
  r.set("neighborhood", c.neighborhood).set("hop_word_bytes", sizeof(std::uint64_t));
}
void describe_config(record& r, const warpkv::cuckoo_config& c) {
  r.set("hash_functions", c.hash_functions).set("bucket_slots", warpkv::cuckoo_ref<std::uint32_t, std::uint32_t>::bucket_slots).set("max_chain", c.max_chain);
  r.set("eviction_attempts", c.eviction_attempts);
}
void describe_config(record& r, const warpkv::chained_config& c) {
  r.set("pool_nodes_config", c.pool_nodes).set("device_heap_bytes", c.device_heap_bytes);
}
void describe_config(record& r, const warpkv::open_addressing_config& c) {
  r.set("max_probe", c.max_probe).set("tombstone_threshold", c.tombstone_threshold);
}

/// Bytes of the table's storage (for bytes-per-key figures).
template <class K, class V, int T>
std::size_t table_bytes(const warpkv::hopscotch_map<K, V, T>& m) {
  // Each slot carries its bucket's hop word; the stash follows the table.
  using map_t = warpkv::hopscotch_map<K, V, T>;
  return map_t::ref_type::storage_slots(m.capacity()) * sizeof(typename map_t::slot_type);
}
template <class K, class V, int T>
std::size_t table_bytes(const warpkv::hopscotch_map<K, V, T, warpkv::hopscotch_buckets>& m) {
  // 64-byte buckets (a header word and 7 packed pairs), 7 slots of capacity each
  using map_t = warpkv::hopscotch_map<K, V, T, warpkv::hopscotch_buckets>;
  return map_t::ref_type::storage_slots(m.capacity()) * sizeof(typename map_t::slot_type);
}
/// Keys in a hopscotch map's stash (what displacement could not place); the other maps have none.
template <class Map>
void describe_overflow(record&, const Map&) {}
template <class K, class V, int T>
void describe_overflow(record& r, const warpkv::hopscotch_map<K, V, T>& m) {
  r.set("stashed_keys", m.stashed());
}
template <class K, class V, int T>
std::size_t table_bytes(const warpkv::cuckoo_map<K, V, T>& m) {
  return m.capacity() * sizeof(typename warpkv::cuckoo_map<K, V, T>::slot_type) +
         m.capacity() / warpkv::cuckoo_map<K, V, T>::bucket_slots * sizeof(std::uint32_t);
}
template <class K, class V, class P, int T, int L>
std::size_t table_bytes(const warpkv::open_addressing_map<K, V, P, T, L>& m) {
  // Packed 4-byte pairs have no ready bitmap; wider pairs add one bit per slot.
  using map_t = warpkv::open_addressing_map<K, V, P, T, L>;
  return m.capacity() * sizeof(typename map_t::slot_type) + (map_t::ref_type::packed ? 0 : m.capacity() / 8);
}
template <class K, class V, warpkv::chained_alloc A, int T>
std::size_t table_bytes(const warpkv::chained_map<K, V, A, T>& m) {
  const std::size_t nodes = A == warpkv::chained_alloc::pool ? m.pool_nodes() : m.size();
  return m.capacity() * sizeof(std::uint64_t) + nodes * sizeof(typename warpkv::chained_map<K, V, A, T>::node_type);
}

// ---- static: bulk insert, then finds, at exact load factors --------------------------------

/// `mix` (queries with a hit flag, in a random order) regrouped into runs of `run` queries that are
/// all hits or all misses, hit runs and miss runs alternating while both last; the same queries.
template <class K>
std::vector<std::pair<K, std::uint8_t>> group_by_hit(const std::vector<std::pair<K, std::uint8_t>>& mix, std::size_t run) {
  std::vector<std::pair<K, std::uint8_t>> hits, misses, out;
  for (const auto& q : mix) (q.second != 0 ? hits : misses).push_back(q);
  out.reserve(mix.size());
  std::size_t h = 0, m = 0;
  while (h < hits.size() || m < misses.size()) {
    for (std::size_t i = 0; i < run && h < hits.size(); ++i) out.push_back(hits[h++]);
    for (std::size_t i = 0; i < run && m < misses.size(); ++i) out.push_back(misses[m++]);
  }
  return out;
}

template <class map_t>
bool run_static_config(session& ss, const static_options& so, std::uint64_t n_requested) {
  using K = typename map_t::key_type;
  using V = typename map_t::mapped_type;
  constexpr int T = map_t::tile_size;
  const execution& ex = ss.ex();
  const int repeats = ss.repeats(ss.cuda() ? 5 : 3);
  // C = a power of two of 8-byte slots (the peers' convention); the bucket layout (H64) gets the
  // same bytes: C / 8 buckets of 64 bytes, 7 slots each, and its load factors count those slots.
  constexpr bool h64 = std::is_same_v<map_t, warpkv::hopscotch_map<K, V, T, warpkv::hopscotch_buckets>>;
  const std::uint64_t pow2_capacity =
      std::max<std::uint64_t>(64, next_pow2(static_cast<std::uint64_t>(std::ceil(static_cast<double>(n_requested) / 0.95))));
  const std::uint64_t capacity = h64 ? pow2_capacity / 8 * 7 : pow2_capacity;
  bool all_ok = true;

  for (const double lf : so.load_factors) {
    const auto n = static_cast<std::uint64_t>(std::floor(lf * static_cast<double>(capacity)));
    if (n == 0) throw warpkv::error(warpkv::errc::invalid_argument, strf("warpkv-bench: load factor %g gives no keys", lf));
    const int sets = ss.input_sets(n * (sizeof(K) + sizeof(V)), 5);
    const int last = ss.last_run(repeats);
    const int p = last % sets;  // the insert set the map holds after the timed inserts
    key_generator<K> gen(ss.options().seed * 0x100000001b3ull + static_cast<std::uint64_t>(T) * 131 + sizeof(K));
    key_generator<K>::check_range(2 * static_cast<std::uint64_t>(sets) * capacity, "--keys");
    std::mt19937_64 rng(ss.options().seed + 7);
    checker check;
    const std::string cfg_name = strf("static %s %s T=%d lf=%.2f n=%llu C=%llu", map_t::map_name, type_name<K, V>().c_str(), T, lf,
                                      static_cast<unsigned long long>(n), static_cast<unsigned long long>(capacity));

    // Insert sets: distinct keys (counters [s*C, s*C+n)); keys of set p kept on the host.
    std::vector<buffer<K>> ins_keys;
    std::vector<buffer<V>> ins_values;
    std::vector<K> held;
    for (int s = 0; s < sets; ++s) {
      std::vector<K> k(n);
      std::vector<V> v(n);
      for (std::uint64_t i = 0; i < n; ++i) {
        k[i] = gen(static_cast<std::uint64_t>(s) * capacity + i);
        v[i] = value_of<V>(k[i]);
      }
      ins_keys.push_back(upload(k, ex));
      ins_values.push_back(upload(v, ex));
      if (s == p) held = std::move(k);
    }
    std::vector<buffer<status>> st;
    std::vector<buffer<V>> vout;
    for (int s = 0; s < sets; ++s) {
      st.emplace_back(n, ex);
      vout.emplace_back(n, ex);
    }

    typename map_t::config_type cfg;
    cfg.max_load_factor = 1.0;  // capacity C exactly; the load factor is then n / C
    prepare_config(cfg, n);
    if constexpr (std::is_same_v<typename map_t::config_type, warpkv::hopscotch_config>) cfg.neighborhood = so.neighborhood;
    auto map = std::make_unique<map_t>(capacity, cfg, ex);
    check.expect(map->capacity() == capacity, strf("%s: capacity() is %zu, wanted %llu", cfg_name.c_str(),
                                                   map->capacity(), static_cast<unsigned long long>(capacity)));
    bool grew = false;
    std::uint64_t wrong_inserts = 0;
    constexpr bool has_async_inserts = requires(map_t& m) { m.insert_async(nullptr, nullptr, std::size_t{}, nullptr); };
    if (so.async_inserts && !has_async_inserts)
      throw warpkv::error(warpkv::errc::invalid_argument,
                          strf("warpkv-bench: --async-inserts: %s has no insert_async", map_t::map_name));
    // An async run's counts, read after it (untimed): every key of the batch inserted.
    const auto count_async = [&] {
      if constexpr (has_async_inserts)
        if (map->synchronize()[status::inserted] != n) ++wrong_inserts;
    };

    // ---- insert into an empty map (clear / re-creation untimed)
    ss.phase(cfg_name + ": insert");
    const auto insert_ms = ss.measure(
        repeats,
        [&](int r) {
          if (so.async_inserts && r > 0) count_async();
          if (map->rehash_count() > 0 || map->capacity() != capacity) {
            grew = true;
            map = std::make_unique<map_t>(capacity, cfg, ex);
          } else {
            map->clear();
          }
        },
        [&](int r) {
          const int s = r % sets;
          status* out = so.statuses ? st[s].data() : nullptr;
          if (so.async_inserts) {
            if constexpr (has_async_inserts) map->insert_async(ins_keys[s].data(), ins_values[s].data(), n, out);
          } else if (map->insert(ins_keys[s].data(), ins_values[s].data(), n, out)[status::inserted] != n) {
            ++wrong_inserts;
          }
        });
    if (so.async_inserts) count_async();
    if (map->rehash_count() > 0 || map->capacity() != capacity) grew = true;
    check.expect(wrong_inserts == 0, strf("%s: %llu insert runs did not report %llu inserted", cfg_name.c_str(),
                                          static_cast<unsigned long long>(wrong_inserts), static_cast<unsigned long long>(n)));
    check.expect(map->size() == n, strf("%s: size() is %zu after the inserts", cfg_name.c_str(), map->size()));
    if (grew)
      progress(strf("WARNING: %s: the map grew during the inserts (rehash_count %zu, capacity %zu): the load factor "
                    "is not the requested one",
                    cfg_name.c_str(), map->rehash_count(), map->capacity()));
    ins_keys.clear();
    ins_values.clear();

    // ---- find inputs: hits (shuffles of the held keys), misses (disjoint counters), 50/50
    std::vector<buffer<K>> hit_keys, miss_keys, mixed_keys, grouped_keys;
    std::vector<K> hit_last, miss_last, mixed_last, grouped_last;
    std::vector<std::uint8_t> mixed_is_hit, grouped_is_hit;
    for (int s = 0; s < sets; ++s) {
      std::vector<K> h = held;
      std::shuffle(h.begin(), h.end(), rng);
      std::vector<K> m(n);
      for (std::uint64_t i = 0; i < n; ++i) m[i] = gen((static_cast<std::uint64_t>(sets) + s) * capacity + i);
      // 50/50: the first half of a fresh shuffle of hits and the first half of the misses, shuffled together
      std::vector<std::pair<K, std::uint8_t>> mix;
      mix.reserve(n);
      std::vector<K> h2 = held;
      std::shuffle(h2.begin(), h2.end(), rng);
      for (std::uint64_t i = 0; i < n / 2; ++i) mix.emplace_back(h2[i], 1);
      for (std::uint64_t i = 0; mix.size() < n; ++i) mix.emplace_back(m[i], 0);
      std::shuffle(mix.begin(), mix.end(), rng);
      std::vector<K> mk(n);
      for (std::uint64_t i = 0; i < n; ++i) mk[i] = mix[i].first;
      // The same 50/50 queries grouped into runs of 32 that are all hits or all misses (alternating),
      // so every warp is pure: tells whether a 50/50 find pays for hit/miss divergence in a warp.
      const auto grouped = group_by_hit(mix, 32);
      std::vector<K> gk(n);
      for (std::uint64_t i = 0; i < n; ++i) gk[i] = grouped[i].first;
      hit_keys.push_back(upload(h, ex));
      miss_keys.push_back(upload(m, ex));
      mixed_keys.push_back(upload(mk, ex));
      grouped_keys.push_back(upload(gk, ex));
      if (s == last % sets) {
        hit_last = std::move(h);
        miss_last = std::move(m);
        mixed_last = std::move(mk);
        mixed_is_hit.resize(n);
        for (std::uint64_t i = 0; i < n; ++i) mixed_is_hit[i] = mix[i].second;
        grouped_last = std::move(gk);
        grouped_is_hit.resize(n);
        for (std::uint64_t i = 0; i < n; ++i) grouped_is_hit[i] = grouped[i].second;
      }
    }
    const auto no_setup = [](int) {};
    const int q = last % sets;

    const auto time_find = [&](std::vector<buffer<K>>& keys, const char* what) {
      ss.phase(cfg_name + ": " + what);
      return ss.measure(repeats, no_setup, [&](int r) {
        const int s = r % sets;
        map->find(keys[s].data(), n, vout[s].data(), so.statuses ? st[s].data() : nullptr);
      });
    };
    // Verifies the last timed run's outputs: expect_hit(i) says whether keys[i] is present.
    const auto verify_find = [&](const char* what, const std::vector<K>& keys, auto&& expect_hit) {
      // Without statuses the values alone decide: value_of is never V{}, a miss's value.
      const auto s = so.statuses ? statuses_of(st[q], n) : std::vector<status>{};
      std::vector<V> v(n);
      vout[q].copy_to_host(v.data(), n);
      std::uint64_t bad = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        const bool hit = expect_hit(i);
        const bool status_ok = !so.statuses || s[i] == (hit ? status::found : status::not_found);
        if (!status_ok || v[i] != (hit ? value_of<V>(keys[i]) : V{})) ++bad;
      }
      check.expect(bad == 0, strf("%s: %s: %llu of %llu results wrong", cfg_name.c_str(), what,
                                  static_cast<unsigned long long>(bad), static_cast<unsigned long long>(n)));
    };

    const auto hit_ms = time_find(hit_keys, "find_hit");
    verify_find("find_hit", hit_last, [](std::uint64_t) { return true; });
    const auto miss_ms = time_find(miss_keys, "find_miss");
    verify_find("find_miss", miss_last, [](std::uint64_t) { return false; });
    const auto mixed_ms = time_find(mixed_keys, "find_mixed");
    verify_find("find_mixed", mixed_last, [&](std::uint64_t i) { return mixed_is_hit[i] != 0; });
    const auto grouped_ms = time_find(grouped_keys, "find_mixed_grouped");
    verify_find("find_mixed_grouped", grouped_last, [&](std::uint64_t i) { return grouped_is_hit[i] != 0; });
    check.expect(map->size() == n, strf("%s: size() is %zu after the finds", cfg_name.c_str(), map->size()));

    // ---- records
    const std::size_t slot_bytes = sizeof(typename map_t::slot_type);
    std::string line = cfg_name + ":";
    const auto report = [&](const char* operation, const std::vector<double>& ms, double ceiling) {
      record r = ss.base("static");
      r.set("operation", operation).set("map", map_t::map_name).set("key_bits", 8 * sizeof(K));
      r.set("value_bits", 8 * sizeof(V)).set("tile", T).set("config", type_name<K, V>() + " T=" + std::to_string(T));
      r.set("keys_requested", n_requested).set("keys", n).set("capacity", capacity).set("load_factor", lf);
      r.set("actual_load_factor", static_cast<double>(n) / static_cast<double>(capacity));
      r.set("final_capacity", map->capacity()).set("grew", grew).set("rehash_count", map->rehash_count());
      describe_config(r, cfg);
      r.set("max_load_factor_config", cfg.max_load_factor);
      r.set("repeats", repeats).set("input_sets", sets);
      r.set("slot_bytes", slot_bytes);
      r.set("table_bytes", table_bytes(*map)).set("per_op_statuses", so.statuses);
      r.set("insert_api", so.async_inserts ? "insert_async" : "insert");
      if constexpr (requires { map_t::ref_type::lane_slots; }) r.set("lane_slots", map_t::ref_type::lane_slots);
      describe_overflow(r, *map);
      const timing_stats t = summarize(ms);
      add_timing(r, t, n);
      r.set("ceiling_gops", ceiling).set("ceiling_note", "H100 reference: random 32-byte reads (find), 8-byte CAS (insert)");
      if (ss.cuda() && t.median_ms > 0)
        r.set("fraction_of_ceiling", static_cast<double>(n) / (t.median_ms * 1e6) / ceiling);
      else
        r.null("fraction_of_ceiling");
      r.set("verified", check.ok());
      emit(r);
      line += strf(" %s %.3f", operation, ss.rate(n, t.median_ms));
    };
    report("insert", insert_ms, ceiling_insert_gops);
    report("find_hit", hit_ms, ceiling_find_gops);
    report("find_miss", miss_ms, ceiling_find_gops);
    report("find_mixed", mixed_ms, ceiling_find_gops);
    report("find_mixed_grouped", grouped_ms, ceiling_find_gops);
    progress(line + " " + ss.rate_unit() + (grew ? " [GREW]" : "") + (check.ok() ? " [ok]" : " [FAILED]"));
    all_ok = all_ok && check.ok();
  }
  return all_ok;
}

// ---- dynamic: one concurrent mixed batch --------------------------------------------------

template <class map_t>
bool run_dynamic_config(session& ss, const dynamic_options& dyo) {
  using K = typename map_t::key_type;
  using V = typename map_t::mapped_type;
  constexpr int T = map_t::tile_size;
  const execution& ex = ss.ex();
  const int repeats = ss.repeats(3);
  const int last = ss.last_run(repeats);
  bool all_ok = true;

  for (const auto& mix_text : dyo.mixes) {
    const mix_spec mix = parse_mix(mix_text);
    for (const std::uint64_t range : dyo.key_ranges) {
      if (range < 1 || range >= 0xffffffffull)
        throw warpkv::error(warpkv::errc::invalid_argument, "warpkv-bench: --key-range must be in [1, 2^32-2]");
      // Prefill: a random half of [1, R] (or nothing), the same for every repeat.
      std::vector<K> pre;
      if (dyo.prefill == "half") {
        std::vector<K> all(range);
        for (std::uint64_t i = 0; i < range; ++i) all[i] = static_cast<K>(i + 1);
        std::mt19937_64 rng(ss.options().seed ^ (range * 0x9e3779b97f4a7c15ull));
        std::shuffle(all.begin(), all.end(), rng);
        pre.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(range / 2));
      }
      std::vector<V> pre_values(pre.size());
      for (std::size_t i = 0; i < pre.size(); ++i) pre_values[i] = value_of<V>(pre[i]);
      const auto pre_k = upload(pre, ex);
      const auto pre_v = upload(pre_values, ex);

      for (const double ops_d : dyo.ops) {
        const auto n = static_cast<std::size_t>(ops_d);
        const std::string cfg_name = strf("dynamic %s %s T=%d mix=%s R=%llu ops=%zu", map_t::map_name, type_name<K, V>().c_str(), T,
                                          mix.name().c_str(), static_cast<unsigned long long>(range), n);
        if (n >= 10000000) progress(cfg_name + ": generating and running...");
        const int sets = ss.input_sets(n * (1 + sizeof(K) + sizeof(V)), 2);
        const int q = last % sets;
        std::vector<buffer<warpkv::op>> ops_b;
        std::vector<buffer<K>> keys_b;
        std::vector<buffer<V>> values_b;
        std::vector<warpkv::op> ops_last;
        std::vector<K> keys_last;
        for (int s = 0; s < sets; ++s) {
          std::vector<warpkv::op> o(n);
          std::vector<K> k(n);
          std::vector<V> v(n);
          make_batch<K, V>(ss.options().seed + range * 1000003ull + static_cast<std::uint64_t>(mix.insert) * 101 +
                               static_cast<std::uint64_t>(mix.erase),
                           s, mix, range, o, k, v);
          ops_b.push_back(upload(o, ex));
          keys_b.push_back(upload(k, ex));
          values_b.push_back(upload(v, ex));
          if (s == q) {
            ops_last = std::move(o);
            keys_last = std::move(k);
          }
        }
        std::vector<buffer<status>> st;
        std::vector<buffer<V>> vout;
        for (int s = 0; s < sets; ++s) {
          st.emplace_back(n, ex);
          vout.emplace_back(n, ex);
        }

        typename map_t::config_type cfg;  // defaults: R keys always fit
        prepare_config(cfg, pre.size() + n);  // chained pool: a node for every possible insert
        if constexpr (std::is_same_v<typename map_t::config_type, warpkv::chained_config>)
          cfg.device_heap_bytes = dyo_heap_bytes(dyo, sizeof(typename map_t::node_type));
        std::unique_ptr<map_t> map;
        warpkv::batch_summary last_sum;
        const auto ms = ss.measure(
            repeats,
            [&](int) {
              map.reset();
              map = std::make_unique<map_t>(range, cfg, ex);
              if (!pre.empty()) map->insert(pre_k.data(), pre_v.data(), pre.size());
            },
            [&](int r) {
              const int s = r % sets;
              last_sum = map->execute(ops_b[s].data(), keys_b[s].data(), values_b[s].data(), n, st[s].data(),
                                      vout[s].data());
            });

        // ---- verify the last timed batch
        checker check;
        const auto s = statuses_of(st[q], n);
        std::vector<V> v(n);
        vout[q].copy_to_host(v.data(), n);
        const auto count = verify_mixed<K, V>(ops_last, keys_last, s, v, last_sum, check, cfg_name);
        const std::size_t expected_size = pre.size() + count[static_cast<int>(status::inserted)] -
                                          count[static_cast<int>(status::erased)];
        const auto entries = map->retrieve_all();
        check.expect(map->size() == expected_size && entries.first.size() == expected_size && expected_size <= range,
                     strf("%s: size() %zu, retrieve_all %zu, expected %zu", cfg_name.c_str(), map->size(),
                          entries.first.size(), expected_size));
        const bool grew = map->rehash_count() > 0;

        record r = ss.base("dynamic");
        r.set("operation", "mixed").set("map", map_t::map_name).set("key_bits", 8 * sizeof(K));
        r.set("value_bits", 8 * sizeof(V)).set("tile", T).set("config", type_name<K, V>() + " T=" + std::to_string(T));
        r.set("mix", mix.name()).set("insert_pct", mix.insert).set("erase_pct", mix.erase).set("find_pct", mix.find);
        if constexpr (requires { map_t::ref_type::lane_slots; }) r.set("lane_slots", map_t::ref_type::lane_slots);
        r.set("key_range", range).set("ops", n).set("prefill", dyo.prefill).set("prefill_keys", pre.size());
        r.set("capacity", map->capacity()).set("grew", grew).set("rehash_count", map->rehash_count());
        r.set("repeats", repeats).set("input_sets", sets).set("fresh_map_per_repeat", true);
        describe_config(r, cfg);
        for (int k = 0; k < warpkv::num_status_kinds; ++k)
          r.set(std::string("status_") + std::string(warpkv::to_string(static_cast<status>(k))), count[k]);
        const timing_stats t = summarize(ms);
        add_timing(r, t, n);
        r.set("verified", check.ok());
        emit(r);
        progress(strf("%s: %.3f %s%s%s", cfg_name.c_str(), ss.rate(n, t.median_ms), ss.rate_unit(),
                      grew ? " [GREW]" : "", check.ok() ? " [ok]" : " [FAILED]"));
        all_ok = all_ok && check.ok();
      }
    }
  }
  return all_ok;
}

}  // namespace

// ---- entry points -------------------------------------------------------------------------

int run_static(const common_options& co, const static_options& so) {
  for (const auto& m : so.maps) check_map_built(m, so.key_bits, so.value_bits, so.tiles);
  session ss(co);
  ss.default_warmup(2, 1);  // the host backend: fewer, smaller runs (about a minute on 2 cores)
  const std::uint64_t n = so.keys != 0 ? so.keys : (ss.cuda() ? (std::uint64_t{1} << 22) : (std::uint64_t{1} << 13));
  bool ok = true;
  for (const auto& m : so.maps)
    dispatch_map(m, so.key_bits, so.value_bits, so.tiles, [&]<class Map>() { ok = run_static_config<Map>(ss, so, n) && ok; });
  if (!ok) progress("warpkv-bench static: some checks FAILED");
  return ok ? 0 : 1;
}

int run_dynamic(const common_options& co, const dynamic_options& dyo) {
  for (const auto& m : dyo.mixes) (void)parse_mix(m);  // reject bad arguments before any work
  for (const auto& m : dyo.maps) check_map_built(m, dyo.key_bits, dyo.value_bits, dyo.tiles);
  session ss(co);
  bool ok = true;
  for (const auto& m : dyo.maps)
    dispatch_map(m, dyo.key_bits, dyo.value_bits, dyo.tiles, [&]<class Map>() { ok = run_dynamic_config<Map>(ss, dyo) && ok; });
  if (!ok) progress("warpkv-bench dynamic: some checks FAILED");
  return ok ? 0 : 1;
}

int run_demo(const common_options& co, const demo_options& dmo) {
  configure_output(co.out, false);  // the demo prints a table; JSON lines only with --out
  session ss(co);
  ss.default_warmup(1, 0);
  using K = std::uint32_t;
  using V = std::uint32_t;
  constexpr int T = 4;
  using map_t = warpkv::hopscotch_map<K, V, T>;
  const execution& ex = ss.ex();
  const std::uint64_t n = dmo.keys != 0 ? dmo.keys : (ss.cuda() ? (std::uint64_t{1} << 20) : (std::uint64_t{1} << 14));
  const int repeats = ss.repeats(ss.cuda() ? 3 : 1);
  key_generator<K> gen(co.seed);
  key_generator<K>::check_range(2 * n, "--keys");
  checker check;
  std::vector<table_row> rows;

  std::vector<K> keys(n), misses(n);
  std::vector<V> values(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    keys[i] = gen(i);
    values[i] = value_of<V>(keys[i]);
    misses[i] = gen(n + i);
  }
  auto keys_b = upload(keys, ex);
  auto values_b = upload(values, ex);
  auto misses_b = upload(misses, ex);
  buffer<status> st(n, ex);
  buffer<V> vout(n, ex);

  std::unique_ptr<map_t> map;
  const auto row = [&](const std::string& name, std::uint64_t ops, const std::vector<double>& ms, bool ok) {
    const timing_stats t = summarize(ms);
    rows.push_back({name, ops, t.median_ms, ok});
    if (!co.out.empty()) {
      record r = ss.base("demo");
      r.set("operation", name).set("map", "hopscotch_map").set("config", "u32/u32 T=4").set("tile", T);
      r.set("keys", n).set("ops", ops).set("repeats", ms.size()).set("verified", ok);
      add_timing(r, t, ops);
      emit(r);
    }
  };
  const auto find_check = [&](const std::vector<K>& k, auto&& expect_hit) {
    const auto s = statuses_of(st, k.size());
    std::vector<V> v(k.size());
    vout.copy_to_host(v.data(), k.size());
    for (std::size_t i = 0; i < k.size(); ++i) {
      const bool hit = expect_hit(i);
      if (hit ? (s[i] != status::found || v[i] != value_of<V>(k[i])) : s[i] != status::not_found) return false;
    }
    return true;
  };

  // 1. bulk insert into a fresh map (creation untimed)
  warpkv::batch_summary sum;
  const auto ins_ms = ss.measure(
      repeats, [&](int) { map.reset(); map = std::make_unique<map_t>(n, warpkv::hopscotch_config{}, ex); },
      [&](int) { sum = map->insert(keys_b.data(), values_b.data(), n, st.data()); });
  bool ok = sum[status::inserted] == n && map->size() == n;
  check.expect(ok, strf("insert: %llu inserted, size() %zu, expected %llu",
                        static_cast<unsigned long long>(sum[status::inserted]), map->size(), static_cast<unsigned long long>(n)));
  row("insert", n, ins_ms, ok);

  // 2. find: all hits, then all misses
  const auto none = [](int) {};
  auto ms = ss.measure(repeats, none, [&](int) { map->find(keys_b.data(), n, vout.data(), st.data()); });
  ok = find_check(keys, [](std::size_t) { return true; });
  check.expect(ok, "find (hits): a key was missing or had a wrong value");
  row("find (hits)", n, ms, ok);
  ms = ss.measure(repeats, none, [&](int) { map->find(misses_b.data(), n, vout.data(), st.data()); });
  ok = find_check(misses, [](std::size_t) { return false; });
  check.expect(ok, "find (misses): an absent key was found");
  row("find (misses)", n, ms, ok);

  // 3. erase the first half (timed once), then look everything up again
  const std::uint64_t half = n / 2;
  ms = {ss.time_ms([&] { sum = map->erase(keys_b.data(), half, st.data()); })};
  ok = sum[status::erased] == half && map->size() == n - half;
  check.expect(ok, strf("erase: %llu erased, size() %zu", static_cast<unsigned long long>(sum[status::erased]), map->size()));
  row("erase (half)", half, ms, ok);
  ms = {ss.time_ms([&] { map->find(keys_b.data(), n, vout.data(), st.data()); })};
  ok = find_check(keys, [&](std::size_t i) { return i >= half; });
  check.expect(ok, "find after erase: an erased key was found or a kept key was missing");
  row("find after erase", n, ms, ok);

  // 4. one mixed batch (20% insert, 20% erase, 60% find) over keys [1, n], on a fresh map
  {
    const mix_spec mix{20, 20, 60};
    std::vector<warpkv::op> o(n);
    std::vector<K> k(n);
    std::vector<V> v(n);
    make_batch<K, V>(co.seed, 0, mix, n, o, k, v);
    const auto o_b = upload(o, ex);
    const auto k_b = upload(k, ex);
    const auto v_b = upload(v, ex);
    const auto mixed_ms = ss.measure(
        repeats, [&](int) { map.reset(); map = std::make_unique<map_t>(n, warpkv::hopscotch_config{}, ex); },
        [&](int) { sum = map->execute(o_b.data(), k_b.data(), v_b.data(), n, st.data(), vout.data()); });
    const auto entries = map->retrieve_all();
    ok = sum[status::full] == 0 && sum[status::invalid_key] == 0 &&
         map->size() == sum[status::inserted] - sum[status::erased] && entries.first.size() == map->size();
    for (std::size_t i = 0; ok && i < entries.first.size(); ++i) ok = entries.second[i] == value_of<V>(entries.first[i]);
    check.expect(ok, strf("mixed batch: full %llu, invalid %llu, size() %zu, retrieve_all %zu",
                          static_cast<unsigned long long>(sum[status::full]),
                          static_cast<unsigned long long>(sum[status::invalid_key]), map->size(), entries.first.size()));
    row("mixed 20/20/60 (fresh map)", n, mixed_ms, ok);
  }

  map.reset();
  const std::string title =
      strf("warpkv demo: hopscotch_map<u32,u32,4> on %s [%s], %llu keys, median of %d runs after %d warm-up", ss.device().c_str(),
           ss.cuda() ? "GPU, CUDA events" : "host threads emulating warps, CPU wall clock, NOT GPU figures",
           static_cast<unsigned long long>(n), repeats, ss.warmup());
  print_table(title, rows, !ss.cuda());
  if (check.ok()) {
    std::printf("check: OK (inserts, finds of hits and misses, erases and a mixed batch all verified)\n");
    return 0;
  }
  std::printf("check: FAILED (%zu checks failed; see stderr)\n", check.failures.size());
  return 1;
}

}  // namespace warpkv_bench
