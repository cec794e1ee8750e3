// warpkv-bench cache: warpkv::kv_cache on YCSB-style traces, and the HierarchicalKV configuration.
// Compiled by nvcc when the CUDA backend is on, by the host compiler otherwise.
//
//   ycsb  load N records ("user" + FNV-64 digits: 24-byte keys, 100-byte values), then a run
//         phase of YCSB core workloads A (50% read / 50% update), B (95/5), C (100% read),
//         D (95% read / 5% insert, latest distribution) and F (50% read / 50% read-modify-write);
//         E (range scans) is not served by a hash cache. Reads are get_or_set (insert on a read
//         miss, the seed's setting); the caches absorb sets (cache_config::absorb_sets: of a key's
//         updates in one batch only the last writes) and, with --combine on (default), combine
//         get_or_sets (cache_config::combine_get_or_set: a key's reads in one batch run once). Request distributions: zipfian 0.99 scrambled as
//         YCSB scrambles it (a rank over 10^10 items, FNV-64 onto the records), uniform; D always
//         uses latest (a Zipf over the records inserted so far, newest first). Cache capacity = a fraction of N;
//         bucket widths 4/8/16/32. Reported: throughput of the device batches (uploads untimed),
//         hit ratio, and the hit ratio of an exact LRU of the same capacity on the same trace.
//         Each row is the median of --repeats passes (default 3, after --warmup passes), each the
//         emptied cache (clear()), the load and the whole trace: contended batches vary run to run.
//   --baseline: the same traces on an in-process CPU baseline, cpu_sharded_lru (a chained hash
//         table with an LRU list per shard, a mutex per shard, threads = hardware threads).
//         It is NOT memcached: memcached is not installed on the GPU machine (no registry there),
//         so the seed's CPU comparison is this in-process table; see docs/perf.md.
//   --memcached auto|HOST:PORT: the same traces against a real memcached through libmemcached
//         (memcached_baseline.cpp: multi-get batches, client threads = hardware threads, -m sized
//         to hold the cache's capacity), verified values; built only with libmemcached.
//   --hkv: HierarchicalKV's configuration: uint64 keys, 32-byte values, 1M-key batches at loads
//         0.5 / 0.75 / 1.0 of the capacity: get (find) of present keys, set of new keys (at
//         load 1.0 every one evicts: insert_and_evict), get_or_set of a half-present batch.
//         --hkv-one-bucket adds the same rows for kv_cache<u64, 32, 4, one_bucket_lru> (one bucket
//         per key, HierarchicalKV's placement; `placement` names it in each row).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "bench.hpp"
#include "memcached_baseline.hpp"
#include "session.hpp"
#include "warpkv/cache/kv_cache.hpp"
#include "warpkv/cache/submitter.hpp"
#include "warpkv/core/buffer.hpp"

namespace warpkv_bench {
namespace {

using warpkv::buffer;
using warpkv::byte_key;
using warpkv::cache_op;
using warpkv::status;
using u64 = std::uint64_t;
using ycsb_key = byte_key<32>;

// ---- YCSB generators ---------------------------------------------------------------------------
u64 fnv64(u64 v) {  // YCSB's fnvhash64 over the 8 bytes of v
  u64 h = 0xCBF29CE484222325ull;
  for (int i = 0; i < 8; ++i) {
    h ^= v & 0xff;
    h *= 1099511628211ull;
    v >>= 8;
  }
  return h;
}

/// YCSB's ZipfianGenerator (Gray et al.): values in [0, n), 0 the most popular.
class zipfian {
 public:
  zipfian(u64 n, double theta) : theta_(theta) { grow(n); }
  /// Over n items with zeta(n) given: YCSB's scrambled generator draws its ranks over 10^10
  /// items with zeta precomputed (ScrambledZipfianGenerator.ZETAN), far more than any record count.
  zipfian(u64 n, double theta, double zetan) : n_(n), theta_(theta), zetan_(zetan) { set_eta(); }
  /// Widens the range to [0, n) by adding zeta's new terms, as YCSB's ZipfianGenerator does when
  /// the item count it is asked for grows (the latest distribution over the records so far).
  void grow(u64 n) {
    if (n <= n_) return;
    for (u64 i = n_ + 1; i <= n; ++i) zetan_ += 1.0 / std::pow(static_cast<double>(i), theta_);
    n_ = n;
    set_eta();
  }
  template <class Rng>
  u64 next(Rng& rng) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (uz < 1.0 + std::pow(0.5, theta_)) return 1;
    const auto v = static_cast<u64>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_));
    return std::min(v, n_ - 1);
  }

 private:
  void set_eta() {
    const double zeta2 = 1.0 + 1.0 / std::pow(2.0, theta_);
    alpha_ = 1.0 / (1.0 - theta_);
    eta_ = (1.0 - std::pow(2.0 / static_cast<double>(n_), 1.0 - theta_)) / (1.0 - zeta2 / zetan_);
  }
  u64 n_ = 0;
  double theta_, zetan_ = 0, alpha_ = 0, eta_ = 0;
};

/// YCSB's ScrambledZipfianGenerator: a Zipf(0.99) rank over 10^10 items, FNV-64 hashed onto the
/// record range (so the popular records are scattered, and the head is the 10^10-item one).
constexpr u64 ycsb_scrambled_items = 10'000'000'000ull;
constexpr double ycsb_scrambled_zetan = 26.46902820178302;

ycsb_key make_record_key(u64 record) { return ycsb_key::from("user" + std::to_string(fnv64(record))); }

/// Keys of records [0, n), formatted once per benchmark run (formatting dominated the host side).
std::vector<ycsb_key>& key_table() {
  static std::vector<ycsb_key> table;
  return table;
}
ycsb_key record_key(u64 record) {
  const auto& t = key_table();
  return record < t.size() ? t[record] : make_record_key(record);
}
void prepare_keys(u64 n) {
  auto& t = key_table();
  t.resize(n);
  for (u64 r = 0; r < n; ++r) t[r] = make_record_key(r);
}

struct trace {
  std::vector<cache_op> ops;
  std::vector<u64> records;  // record number of each operation
  u64 reads = 0;
};

/// The run phase of one workload: ops operations (a read-modify-write is two cache operations).
trace make_trace(char workload, const std::string& dist, u64 records, u64 ops, u64 seed) {
  std::mt19937_64 rng(seed);
  zipfian scrambled(ycsb_scrambled_items, 0.99, ycsb_scrambled_zetan);
  double read = 0.5, insert = 0.0, rmw = 0.0;  // the rest are updates
  switch (workload) {
    case 'A': break;
    case 'B': read = 0.95; break;
    case 'C': read = 1.0; break;
    case 'D': read = 0.95, insert = 0.05; break;
    case 'F': read = 0.5, rmw = 0.5; break;
    default: throw warpkv::error(warpkv::errc::invalid_argument, std::string("unknown YCSB workload ") + workload);
  }
  const bool latest = workload == 'D' || dist == "latest";
  // YCSB SkewedLatest: a Zipf over the records inserted so far. Built only for the traces that
  // draw from it (its zeta sums one term per record: 3x10^6 pow() calls).
  std::optional<zipfian> recent;
  if (latest) recent.emplace(records, 0.99);
  u64 inserted = records;
  trace t;
  t.ops.reserve(ops);
  t.records.reserve(ops);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  auto pick = [&]() -> u64 {
    if (latest) {
      recent->grow(inserted);  // D's inserts widen the range, as YCSB's counter-based basis does
      return inserted - 1 - recent->next(rng);
    }
    if (dist == "uniform") return rng() % records;
    return fnv64(scrambled.next(rng)) % records;
  };
  while (t.ops.size() < ops) {
    const double c = coin(rng);
    if (c < read) {
      t.ops.push_back(cache_op::get_or_set);
      t.records.push_back(pick());
      ++t.reads;
    } else if (c < read + insert) {
      t.ops.push_back(cache_op::set);
      t.records.push_back(inserted++);
    } else if (rmw > 0) {
      const u64 r = pick();
      t.ops.push_back(cache_op::get_or_set);
      t.records.push_back(r);
      ++t.reads;
      t.ops.push_back(cache_op::set);
      t.records.push_back(r);
    } else {
      t.ops.push_back(cache_op::set);
      t.records.push_back(pick());
    }
  }
  t.ops.resize(ops);
  t.records.resize(ops);
  return t;
}

/// Exact LRU of `capacity` entries on the trace (after loading records 0..records-1): read hits.
u64 exact_lru_hits(const trace& t, u64 records, std::size_t capacity) {
  std::list<u64> order;  // front = most recent
  std::unordered_map<u64, std::list<u64>::iterator> where;
  where.reserve(capacity * 2);
  auto touch_or_insert = [&](u64 r) {
    if (auto it = where.find(r); it != where.end()) {
      order.splice(order.begin(), order, it->second);
      return true;
    }
    if (order.size() == capacity) {
      where.erase(order.back());
      order.pop_back();
    }
    order.push_front(r);
    where[r] = order.begin();
    return false;
  };
  for (u64 r = 0; r < records; ++r) touch_or_insert(r);
  u64 hits = 0;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const bool hit = touch_or_insert(t.records[i]);
    if (t.ops[i] == cache_op::get_or_set && hit) ++hits;
  }
  return hits;
}

void fill_value(u64 record, u64 version, u64* w, std::size_t words) {
  for (std::size_t j = 0; j < words; ++j) w[j] = warpkv::fmix64(record * 0x9e3779b97f4a7c15ull + version + j);
}

// ---- the device runs --------------------------------------------------------------------------
warpkv::cache_eviction_policy policy_of(const std::string& name) {
  if (name == "random") return warpkv::cache_eviction_policy::random;
  if (name == "clock") return warpkv::cache_eviction_policy::clock;
  return warpkv::cache_eviction_policy::lru;
}
warpkv::cache_slot_sync sync_of(const std::string& name) {
  return name == "rw_lock" ? warpkv::cache_slot_sync::rw_lock : warpkv::cache_slot_sync::optimistic;
}
/// --layouts names: slab, inline, and either with "-digest" (cache_config::key_digests).
warpkv::cache_layout layout_of(const std::string& name) {
  return name.rfind("inline", 0) == 0 ? warpkv::cache_layout::inline_values : warpkv::cache_layout::value_slab;
}
bool digests_of(const std::string& layout_name) { return layout_name.ends_with("-digest"); }
/// One device configuration of the YCSB rows.
struct cache_mode {
  std::string policy, sync, layout, op_order;
  bool combine = true;  ///< cache_config::combine_get_or_set
};

template <int W>
void ycsb_on_device(session& s, const cache_options& o, const trace& t, char workload, const std::string& dist,
                    u64 records, double fraction, u64 lru_hits, const cache_mode& mode) {
  const std::string &policy = mode.policy, &sync = mode.sync, &op_order = mode.op_order;
  // the design from --policies, --syncs and --layouts at run time (each compiled: cache_design.hpp)
  using cache_t = warpkv::kv_cache<ycsb_key, W, (W < 8 ? W : 8), warpkv::cache_designs::by_config>;
  warpkv::cache_config cfg;
  cfg.capacity = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * static_cast<double>(records)));
  cfg.value_bytes = 100;
  cfg.max_kicks = o.max_kicks;
  cfg.eviction = policy_of(policy);
  cfg.sync = sync_of(sync);
  cfg.layout = layout_of(mode.layout);
  cfg.key_digests = digests_of(mode.layout);
  cfg.absorb_sets = true;  // YCSB's zipfian head: a hot key's updates in a batch write once (design/cache.md)
  cfg.combine_get_or_set = mode.combine;  // and its reads (get_or_set) run once per batch
  cache_t cache(cfg, s.ex());
  const std::size_t vw = cache.value_stride() / 8;
  const std::size_t batch = o.batch != 0 ? o.batch : (s.cuda() ? (1u << 20) : 4096u);
  buffer<cache_op> d_ops(batch, s.ex());
  buffer<ycsb_key> d_keys(batch, s.ex());
  buffer<u64> d_in(batch * vw, s.ex()), d_out(batch * vw, s.ex());
  buffer<status> d_st(batch, s.ex());
  std::vector<cache_op> h_ops(batch);
  std::vector<ycsb_key> h_keys(batch);
  std::vector<u64> h_in(batch * vw);

  auto upload = [&](std::size_t n, auto op_at, auto rec_at) {
    for (std::size_t i = 0; i < n; ++i) {
      h_ops[i] = op_at(i);
      h_keys[i] = record_key(rec_at(i));
      fill_value(rec_at(i), i, &h_in[i * vw], vw);
    }
    d_ops.copy_from_host(h_ops.data(), n);
    d_keys.copy_from_host(h_keys.data(), n);
    d_in.copy_from_host(h_in.data(), n * vw);
  };
  std::vector<std::size_t> order(batch);  // trace index of each operation of the batch
  // One pass: the cache emptied, the load phase (untimed), then the run phase's batches (timed,
  // summed). Contended batches vary run to run (a zipfian head's lock convoys depend on timing),
  // so the row is the median of several passes, each from the empty cache and the same trace.
  auto pass = [&](u64& found) {
    cache.clear();
    for (u64 first = 0; first < records; first += batch) {
      const std::size_t n = static_cast<std::size_t>(std::min<u64>(batch, records - first));
      upload(n, [](std::size_t) { return cache_op::set; }, [&](std::size_t i) { return first + i; });
      cache.execute_resident(n, d_ops.data(), cache_op::set, d_keys.data(), d_in.data(), d_out.data(), d_st.data());
    }
    double ms = 0;
    found = 0;
    for (std::size_t first = 0; first < t.ops.size(); first += batch) {
      const std::size_t n = std::min(batch, t.ops.size() - first);
      std::iota(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), first);
      if (op_order == "grouped")  // a batch's operations are concurrent: any order within it is a valid run
        std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n),
                         [&](std::size_t a, std::size_t b) { return t.ops[a] < t.ops[b]; });
      upload(n, [&](std::size_t i) { return t.ops[order[i]]; }, [&](std::size_t i) { return t.records[order[i]]; });
      warpkv::synchronize(s.ex());
      warpkv::batch_summary sum;
      ms += s.time_ms([&] {
        sum = cache.execute_resident(n, d_ops.data(), cache_op::get, d_keys.data(), d_in.data(), d_out.data(), d_st.data());
      });
      found += sum[status::found];
    }
    return ms;
  };
  std::vector<double> samples, hits;
  const int reps = s.repeats(3);
  for (int rep = 0; rep < s.warmup() + reps; ++rep) {
    u64 f = 0;
    const double ms = pass(f);
    if (rep < s.warmup()) continue;
    samples.push_back(ms);
    hits.push_back(t.reads ? static_cast<double>(f) / static_cast<double>(t.reads) : 0.0);
  }
  const timing_stats ts = summarize(samples);
  const double ms = ts.median_ms;
  std::vector<double> sorted_hits = hits;
  std::sort(sorted_hits.begin(), sorted_hits.end());
  const double hit = sorted_hits[sorted_hits.size() / 2];  // the median (passes differ by timing only)
  const double lru = t.reads ? static_cast<double>(lru_hits) / static_cast<double>(t.reads) : 0.0;
  record r = s.base("cache-ycsb");
  r.set("structure", "kv_cache").set("bucket_width", W).set("tile", cache_t::tile_size).set("ycsb_workload", std::string(1, workload));
  r.set("distribution", workload == 'D' ? std::string("latest") : dist).set("records", records);
  r.set("capacity", cache.capacity()).set("capacity_fraction", fraction).set("batch", batch).set("ops", t.ops.size());
  r.set("key_bytes", 24).set("value_bytes", 100).set("max_kicks", o.max_kicks).set("eviction", policy).set("sync", sync);
  r.set("op_order", op_order).set("layout", mode.layout).set("absorb_sets", cfg.absorb_sets);
  r.set("combine_get_or_set", cfg.combine_get_or_set);
  add_timing(r, ts, t.ops.size());
  r.set("ms", ms).set("passes", static_cast<u64>(samples.size())).set_list("hit_ratio_samples", hits);
  r.set("hit_ratio", hit).set("exact_lru_hit_ratio", lru).set("hit_ratio_gap_pp", 100.0 * (lru - hit));
  emit(r);
  progress(strf("ycsb %c %-8s W=%-2d %-6s %-10s %-6s %-7s %-10s cap=%.0f%% : %.3f %s, hit %.4f (exact LRU %.4f)", workload,
                (workload == 'D' ? "latest" : dist.c_str()), W, policy.c_str(), sync.c_str(), mode.layout.c_str(),
                op_order.c_str(), mode.combine ? "combined" : "uncombined", 100 * fraction,
                s.rate(t.ops.size(), ms),
                s.rate_unit(), hit, lru));
}

// ---- CPU baseline: a sharded chained hash table with an LRU list per shard -------------------
class cpu_sharded_lru {
 public:
  cpu_sharded_lru(std::size_t capacity, std::size_t shards) : shards_(shards) {
    for (auto& s : shards_) s.capacity = std::max<std::size_t>(1, capacity / shards);
  }
  /// Read with insert on a miss; true on a hit.
  bool get_or_set(const std::string& key, const char* value) {
    shard& s = shards_[std::hash<std::string>{}(key) % shards_.size()];
    std::lock_guard<std::mutex> g(s.m);
    if (auto it = s.map.find(key); it != s.map.end()) {
      s.order.splice(s.order.begin(), s.order, it->second);
      return true;
    }
    put(s, key, value);
    return false;
  }
  void set(const std::string& key, const char* value) {
    shard& s = shards_[std::hash<std::string>{}(key) % shards_.size()];
    std::lock_guard<std::mutex> g(s.m);
    if (auto it = s.map.find(key); it != s.map.end()) {
      std::memcpy(it->second->value, value, 100);
      s.order.splice(s.order.begin(), s.order, it->second);
      return;
    }
    put(s, key, value);
  }

 private:
  struct entry {
    std::string key;
    char value[100];
  };
  struct shard {
    std::mutex m;
    std::list<entry> order;
    std::unordered_map<std::string, std::list<entry>::iterator> map;
    std::size_t capacity = 1;
  };
  static void put(shard& s, const std::string& key, const char* value) {
    if (s.order.size() == s.capacity) {
      s.map.erase(s.order.back().key);
      s.order.pop_back();
    }
    s.order.push_front(entry{key, {}});
    std::memcpy(s.order.front().value, value, 100);
    s.map[key] = s.order.begin();
  }
  std::vector<shard> shards_;
};

void ycsb_cpu_baseline(const cache_options& o, const trace& t, char workload, const std::string& dist, u64 records,
                       double fraction, u64 seed) {
  const std::size_t capacity = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * static_cast<double>(records)));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  cpu_sharded_lru table(capacity, std::clamp<std::size_t>(capacity / 256, 1, 256));  // shards of >= 256 entries
  char value[100] = {};
  std::vector<std::string> keys(t.ops.size());
  for (std::size_t i = 0; i < t.ops.size(); ++i) keys[i] = record_key(t.records[i]).str();
  for (u64 r = 0; r < records; ++r) table.set(record_key(r).str(), value);
  std::atomic<u64> hits{0};
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 0; w < threads; ++w)
      pool.emplace_back([&, w] {
        char v[100] = {};
        u64 h = 0;
        for (std::size_t i = w; i < t.ops.size(); i += threads) {
          if (t.ops[i] == cache_op::get_or_set) h += table.get_or_set(keys[i], v) ? 1 : 0;
          else table.set(keys[i], v);
        }
        hits += h;
      });
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  record r;
  r.set("tool", "warpkv-bench").set("schema", 1).set("workload", "cache-ycsb").set("backend", "cpu");
  r.set("structure", "cpu_sharded_lru (in-process baseline, not memcached)").set("threads", threads);
  r.set("ycsb_workload", std::string(1, workload)).set("distribution", workload == 'D' ? std::string("latest") : dist);
  r.set("records", records).set("capacity", capacity).set("capacity_fraction", fraction).set("ops", t.ops.size());
  r.set("seed", seed).set("ms", ms).set("mops", ms > 0 ? static_cast<double>(t.ops.size()) / (ms * 1e3) : 0.0);
  r.set("hit_ratio", t.reads ? static_cast<double>(hits.load()) / static_cast<double>(t.reads) : 0.0);
  (void)o;
  emit(r);
  progress(strf("ycsb %c cpu_sharded_lru (%u threads) cap=%.0f%% : %.2f M ops/s, hit %.4f", workload, threads, 100 * fraction,
                ms > 0 ? static_cast<double>(t.ops.size()) / (ms * 1e3) : 0.0,
                t.reads ? static_cast<double>(hits.load()) / static_cast<double>(t.reads) : 0.0));
}

// ---- memcached (memcached_baseline.cpp): the same trace through libmemcached ------------------
/// false when memcached returned a wrong or torn value (or libmemcached failed).
bool ycsb_memcached(const cache_options& o, const trace& t, char workload, const std::string& dist, u64 records,
                    double fraction, std::size_t capacity, std::size_t gpu_batch, u64 seed) {
  memcached_run_config cfg;
  cfg.target = o.memcached;
  cfg.client_threads = o.memcached_clients;
  cfg.server_threads = o.memcached_threads;
  cfg.pipelined_sets = o.memcached_pipelined_sets;
  cfg.capacity = capacity;
  cfg.key_bytes = 24;
  cfg.value_bytes = 100;
  // the GPU batch size, unless that leaves a client thread fewer than 4 batches of the trace
  const unsigned clients = o.memcached_clients ? o.memcached_clients : std::max(1u, std::thread::hardware_concurrency());
  cfg.batch = std::max<std::size_t>(1, std::min<std::size_t>(gpu_batch, (t.ops.size() + 4 * clients - 1) / (4 * clients)));
  u64 max_record = records;
  for (const u64 r : t.records) max_record = std::max(max_record, r + 1);
  std::vector<std::string> keys(max_record);
  for (u64 r = 0; r < max_record; ++r) keys[r] = record_key(r).str();
  std::vector<std::uint8_t> is_read(t.ops.size());
  for (std::size_t i = 0; i < t.ops.size(); ++i) is_read[i] = t.ops[i] == cache_op::get_or_set ? 1 : 0;
  memcached_trace_view view{&keys, &is_read, &t.records, records};
  const memcached_run_result m = run_memcached_ycsb(cfg, view);
  const double mops = m.ms > 0 ? static_cast<double>(m.ops) / (m.ms * 1e3) : 0.0;
  const double hit = m.reads ? static_cast<double>(m.read_hits) / static_cast<double>(m.reads) : 0.0;
  record r;
  r.set("tool", "warpkv-bench").set("schema", 1).set("workload", "cache-ycsb").set("backend", "cpu");
  r.set("structure", "memcached").set("baseline", "memcached").set("threads", m.client_threads);
  r.set("memcached_version", m.version).set("memcached_memory_mb", m.memory_mb).set("memcached_threads", m.server_threads);
  r.set("memcached_target", o.memcached).set("memcached_item_bytes", m.item_bytes);
  r.set("memcached_pipelined_sets", o.memcached_pipelined_sets);
  r.set("memcached_items_after_load", m.items_after_load).set("memcached_evictions", m.evictions);
  r.set("memcached_load_sets_refused", m.load_sets_refused).set("memcached_run_sets_refused", m.run_sets_refused);
  r.set("memcached_set_retries", m.set_retries).set("memcached_server_store_no_memory", m.server_store_no_memory);
  r.set("memcached_server_args", m.server_extra_args);
  r.set("ycsb_workload", std::string(1, workload)).set("distribution", workload == 'D' ? std::string("latest") : dist);
  r.set("records", records).set("capacity", capacity).set("capacity_fraction", fraction).set("ops", m.ops);
  r.set("batch", m.batch).set("key_bytes", 24).set("value_bytes", 100);
  r.set("seed", seed).set("ms", m.ms).set("mops", mops).set("hit_ratio", hit);
  r.set("failures", m.failures).set("verified", m.failures == 0);
  emit(r);
  progress(strf("ycsb %c memcached %s (-m %zu -t %u, %u clients, batch %zu%s) cap=%.0f%% : %.3f M ops/s, hit %.4f, "
                "items after load %llu", workload, m.version.c_str(), m.memory_mb, m.server_threads, m.client_threads, m.batch,
                o.memcached_pipelined_sets ? ", pipelined sets" : "",
                100 * fraction, mops, hit, static_cast<unsigned long long>(m.items_after_load)));
  if (m.failures != 0) {
    progress(strf("memcached run FAILED verification: %llu failures; first: %s", static_cast<unsigned long long>(m.failures),
                  m.first_failure.c_str()));
    return false;
  }
  return true;
}

// ---- HierarchicalKV's configuration -----------------------------------------------------------
/// Whether cache type C places a key in one bucket (a fixed one_bucket design; by_config: two).
template <class C>
constexpr bool one_bucket_cache() {
  if constexpr (std::is_void_v<typename C::ref_type>) return false;
  else return C::ref_type::choices == 1;
}
/// cache_t: kv_cache<u64, 8, 8, by_config> (sync and layout as named) or a fixed design (which
/// takes its own design fields: `sync` and `layout` then only label the rows).
template <class cache_t>
void hkv_rows(session& s, const cache_options& o, const std::string& sync, const std::string& layout) {
  constexpr bool by_config = std::is_same_v<typename cache_t::design, warpkv::cache_designs::by_config>;
  warpkv::cache_config cfg;
  cfg.capacity = o.hkv_capacity != 0 ? o.hkv_capacity : (s.cuda() ? (std::size_t{1} << 27) : (std::size_t{1} << 15));
  cfg.value_bytes = 32;
  cfg.max_kicks = o.max_kicks;
  if constexpr (by_config) {
    cfg.sync = sync_of(sync);
    cfg.layout = layout_of(layout);
    cfg.key_digests = digests_of(layout);
  }
  cache_t cache(cfg, s.ex());
  const std::size_t batch = o.batch != 0 ? o.batch : (s.cuda() ? (std::size_t{1} << 20) : 4096u);
  const std::size_t vw = 4;
  buffer<u64> d_keys(batch, s.ex()), d_in(batch * vw, s.ex()), d_out(batch * vw, s.ex());
  buffer<status> d_st(batch, s.ex());
  std::vector<u64> h_keys(batch), h_in(batch * vw);
  u64 next_key = 1;
  auto upload = [&](std::size_t n, u64 first_key, u64 stride) {
    for (std::size_t i = 0; i < n; ++i) {
      h_keys[i] = warpkv::fmix64(first_key + i * stride) | 1;  // spread, never the sentinel (max is even... odd: fine)
      if (h_keys[i] == ~0ull) h_keys[i] = 3;
      fill_value(h_keys[i], 0, &h_in[i * vw], vw);
    }
    d_keys.copy_from_host(h_keys.data(), n);
    d_in.copy_from_host(h_in.data(), n * vw);
  };
  for (const double load : o.hkv_loads) {
    const u64 want = static_cast<u64>(load * static_cast<double>(cache.capacity()));
    while (next_key - 1 < want) {  // fill to the load (untimed)
      const std::size_t n = static_cast<std::size_t>(std::min<u64>(batch, want - (next_key - 1)));
      upload(n, next_key, 1);
      cache.execute_resident(n, nullptr, cache_op::set, d_keys.data(), d_in.data(), nullptr, d_st.data());
      next_key += n;
    }
    const std::size_t n = batch;
    const int reps = s.repeats(5);
    auto row = [&](const char* op, const std::vector<double>& ms, u64 evictions_or_hits) {
      record r = s.base("cache-hkv");
      r.set("structure", "kv_cache").set("bucket_width", cache_t::bucket_width).set("tile", cache_t::tile_size);
      r.set("placement", one_bucket_cache<cache_t>() ? "one_bucket" : "two_buckets").set("operation", op).set("load", load);
      r.set("capacity", cache.capacity()).set("batch", n).set("key_bytes", 8).set("value_bytes", 32);
      r.set("eviction", "lru").set("sync", sync).set("layout", layout);
      r.set("size", cache.size()).set("count", evictions_or_hits);
      add_timing(r, summarize(ms), n);
      emit(r);
      progress(strf("hkv %-16s %-10s %-6s %s load %.2f: %.3f %s", op, sync.c_str(), layout.c_str(),
                    one_bucket_cache<cache_t>() ? "one bucket" : "two buckets", load,
                    s.rate(n, summarize(ms).median_ms), s.rate_unit()));
    };
    // find: present keys (random sample of those inserted)
    std::vector<double> ms;
    u64 found = 0;
    for (int rep = 0; rep < s.warmup() + reps; ++rep) {
      upload(n, 1 + (static_cast<u64>(rep) * 7919) % std::max<u64>(1, next_key - 1), 1);
      warpkv::batch_summary sum;
      const double t = s.time_ms([&] {
        sum = cache.execute_resident(n, nullptr, cache_op::get, d_keys.data(), nullptr, d_out.data(), d_st.data());
      });
      if (rep >= s.warmup()) {
        ms.push_back(t);
        found += sum[status::found];
      }
    }
    row("find", ms, found);
    // get_or_set: half present, half new
    ms.clear();
    u64 hits = 0;
    for (int rep = 0; rep < s.warmup() + reps; ++rep) {
      upload(n, next_key - n / 2, 1);
      next_key += n / 2;
      warpkv::batch_summary sum;
      const double t = s.time_ms([&] {
        sum = cache.execute_resident(n, nullptr, cache_op::get_or_set, d_keys.data(), d_in.data(), d_out.data(), d_st.data());
      });
      if (rep >= s.warmup()) {
        ms.push_back(t);
        hits += sum[status::found];
      }
    }
    row("get_or_set", ms, hits);
    // set of new keys: insert_or_assign; at load 1.0 each one evicts (insert_and_evict)
    ms.clear();
    u64 inserted = 0;
    for (int rep = 0; rep < s.warmup() + reps; ++rep) {
      upload(n, next_key, 1);
      next_key += n;
      warpkv::batch_summary sum;
      const double t = s.time_ms([&] {
        sum = cache.execute_resident(n, nullptr, cache_op::set, d_keys.data(), d_in.data(), nullptr, d_st.data());
      });
      if (rep >= s.warmup()) {
        ms.push_back(t);
        inserted += sum[status::inserted];
      }
    }
    row(load >= 1.0 ? "insert_and_evict" : "insert_or_assign", ms, inserted);
    // the sets above raised the load: the next (higher) load continues from here
  }
}

// ---- the host front end: cache_submitter ------------------------------------------------------
/// The pinned host <-> device copy bandwidth of this machine (GB/s each way): the best of a few
/// stream-ordered copies of 64 MiB (1 MiB on the host backend, where it is memcpy) between a
/// pinned_buffer and a device buffer, the kind of copy the submitter queues.
std::pair<double, double> pinned_copy_gbs(session& s) {
  const std::size_t words = (s.cuda() ? (std::size_t{64} << 20) : (std::size_t{1} << 20)) / 8;
  warpkv::pinned_buffer<u64> host(words, s.ex());
  std::memset(host.data(), 1, words * 8);
  buffer<u64> dev(words, s.ex());
  double h2d = 0, d2h = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    dev.copy_from_host(host.data(), words);
    warpkv::synchronize(s.ex());
    const double in_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    dev.copy_to_host(host.data(), words);
    const double out_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    h2d = std::max(h2d, static_cast<double>(words * 8) / in_s / 1e9);
    d2h = std::max(d2h, static_cast<double>(words * 8) / out_s / 1e9);
  }
  return {h2d, d2h};
}

// Client threads each submit a window of operations (max(2, buffers) x threshold / threads, so
// that every buffer can fill by its threshold while the others are in flight), then wait for the
// window's results, then the next window. --submit
// single: one submit() per operation, then the window's futures in order; an operation's latency
// is from just before its submit() to the moment its client holds the result (an upper bound:
// futures are collected in order). --submit bulk: the window is one submit_bulk() and its
// latency is the bulk's, from the call to its future being ready. Throughput counts every
// operation over the wall time from the first submit to the last result (the submitter's
// construction, which allocates its buffers' pinned staging and device arrays, and its
// destruction are outside it: a front end is built once); the bytes the submitter copied each
// way over that time are compared with the pinned copy bandwidth measured at the start of the
// same run. Each row runs at least 16 batches (max(--submitter-ops, 16 x threshold) operations).
/// false when a result was wrong.
bool submitter_rows(session& s, const cache_options& o, u64 seed) {
  using cache_t = warpkv::kv_cache<u64, 8>;
  warpkv::cache_config cfg;
  cfg.capacity = s.cuda() ? (std::size_t{1} << 24) : (std::size_t{1} << 14);
  cfg.value_bytes = 32;
  cache_t cache(cfg, s.ex());
  const unsigned threads = o.submitter_threads != 0 ? o.submitter_threads : std::max(1u, std::thread::hardware_concurrency());
  const u64 ops = o.submitter_ops != 0 ? o.submitter_ops : (s.cuda() ? (u64{1} << 22) : (u64{1} << 14));
  std::vector<u64> thresholds = o.submitter_thresholds;
  if (thresholds.empty())
    thresholds = s.cuda() ? std::vector<u64>{1u << 10, 1u << 14, 1u << 17, 1u << 20} : std::vector<u64>{1u << 6, 1u << 8, 1u << 10};
  const u64 key_range = cache.capacity();  // get_or_set hits once the range is in
  const auto [pinned_h2d, pinned_d2h] = pinned_copy_gbs(s);
  progress(strf("pinned copies: %.2f GB/s host->device, %.2f GB/s device->host", pinned_h2d, pinned_d2h));
  bool verified = true;
  for (const std::string& submit : o.submitter_submit)
    if (submit != "bulk" && submit != "single")
      throw warpkv::error(warpkv::errc::invalid_argument, "--submit: bulk or single, not '" + submit + "'");
  for (const std::string& submit : o.submitter_submit)  // a row per submit mode, buffer count and threshold
  for (const unsigned buffers : o.submitter_buffers) {
    if (buffers == 0) throw warpkv::error(warpkv::errc::invalid_argument, "--buffers: at least 1");
    for (const u64 threshold : thresholds) {
      const bool bulk = submit == "bulk";
      using clock = std::chrono::steady_clock;
      const u64 row_ops = std::max<u64>(ops, 16 * threshold);
      const u64 per = (row_ops + threads - 1) / threads;
      const u64 outstanding = std::max(2u, buffers) * threshold;  // what all clients hold at once
      const std::size_t window = static_cast<std::size_t>(std::clamp<u64>(outstanding / threads, 1, per));
      std::vector<std::vector<double>> lat(threads);
      std::atomic<u64> failures{0};
      std::size_t batches = 0, peak = 0;
      u64 bytes_in = 0, bytes_out = 0;
      clock::time_point t0, t1;
      {
        warpkv::cache_submitter<cache_t> sub(cache, static_cast<std::size_t>(threshold),
                                             std::chrono::microseconds(o.submitter_deadline_us), buffers);
        t0 = clock::now();
        std::vector<std::jthread> pool;
        for (unsigned w = 0; w < threads; ++w)
          pool.emplace_back([&, w] {
            std::mt19937_64 rng(seed + w * 7919 + threshold);
            std::vector<std::future<warpkv::cache_submitter<cache_t>::result>> fs;
            std::vector<clock::time_point> at;
            std::vector<u64> ks;
            std::vector<std::byte> value(32);
            lat[w].reserve(per);
            // Operation i of a window: even i a get_or_set that must return a value of its key
            // (every value of key k starts with k), odd i a set that must insert or assign.
            auto result_ok = [](std::size_t i, status st, const std::byte* value, u64 key) {
              if (i % 2 != 0) return st == status::inserted || st == status::assigned;
              return (st == status::found || st == status::inserted) && std::memcmp(value, &key, 8) == 0;
            };
            if (bulk) {  // the window as one submit_bulk (32-byte values: the stride), statuses and values out
              std::vector<cache_op> bops(window);
              std::vector<u64> bkeys(window);
              std::vector<std::byte> in(window * 32), out(window * 32);
              std::vector<status> st(window);
              for (u64 done = 0; done < per;) {
                const std::size_t m = static_cast<std::size_t>(std::min<u64>(window, per - done));
                for (std::size_t i = 0; i < m; ++i) {
                  const u64 k = 1 + rng() % key_range;
                  bops[i] = i % 2 == 0 ? cache_op::get_or_set : cache_op::set;
                  bkeys[i] = k;
                  std::memcpy(in.data() + i * 32, &k, 8);  // every value of key k starts with k
                }
                const auto at0 = clock::now();
                sub.submit_bulk(std::span(bops).first(m), std::span(bkeys).first(m), std::span(in).first(m * 32),
                                std::span(out).first(m * 32), std::span(st).first(m))
                    .get();
                lat[w].push_back(std::chrono::duration<double, std::micro>(clock::now() - at0).count());
                for (std::size_t i = 0; i < m; ++i)
                  if (!result_ok(i, st[i], out.data() + i * 32, bkeys[i])) ++failures;
                done += m;
              }
              return;
            }
            for (u64 done = 0; done < per;) {
              const std::size_t m = static_cast<std::size_t>(std::min<u64>(window, per - done));
              fs.clear();
              at.clear();
              ks.clear();
              for (std::size_t i = 0; i < m; ++i) {
                const u64 k = 1 + rng() % key_range;
                std::memcpy(value.data(), &k, 8);  // every value of key k starts with k
                ks.push_back(k);
                at.push_back(clock::now());
                fs.push_back(sub.submit(i % 2 == 0 ? cache_op::get_or_set : cache_op::set, k, value));
              }
              for (std::size_t i = 0; i < m; ++i) {
                const auto r = fs[i].get();
                lat[w].push_back(std::chrono::duration<double, std::micro>(clock::now() - at[i]).count());
                if ((i % 2 == 0 && r.value.size() != 32) || !result_ok(i, r.st, r.value.data(), ks[i])) ++failures;
              }
              done += m;
            }
          });
        pool.clear();  // joins: every client holds its last result
        t1 = clock::now();
        batches = sub.batches();
        peak = sub.peak_in_flight();
        bytes_in = sub.bytes_to_device();
        bytes_out = sub.bytes_from_device();
      }
      const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      std::vector<double> all;  // latencies: one per operation (single) or per bulk
      for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
      const u64 done_ops = per * threads;
      std::sort(all.begin(), all.end());
      auto pct = [&](double p) { return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<std::size_t>(p * static_cast<double>(all.size())))]; };
      const double h2d = ms > 0 ? static_cast<double>(bytes_in) / (ms * 1e6) : 0.0;  // GB/s
      const double d2h = ms > 0 ? static_cast<double>(bytes_out) / (ms * 1e6) : 0.0;
      record r = s.base("cache-submitter");
      r.set("structure", "kv_cache").set("bucket_width", 8).set("front_end", "cache_submitter");
      r.set("buffers", buffers).set("threshold", threshold).set("deadline_us", o.submitter_deadline_us);
      r.set("threads", threads).set("window", window);
      r.set("capacity", cache.capacity()).set("key_bytes", 8).set("value_bytes", 32).set("ops", done_ops);
      r.set("submit", submit).set("latency_per", bulk ? "bulk" : "operation").set("ops_per_submit", bulk ? window : 1);
      r.set("batches", batches).set("mean_batch", batches ? static_cast<double>(done_ops) / static_cast<double>(batches) : 0.0);
      r.set("peak_in_flight", peak);
      r.set("ms", ms).set("mops", ms > 0 ? static_cast<double>(done_ops) / (ms * 1e3) : 0.0);
      r.set("latency_us_p50", pct(0.5)).set("latency_us_p99", pct(0.99)).set("latency_us_max", all.empty() ? 0.0 : all.back());
      r.set("bytes_to_device", bytes_in).set("bytes_from_device", bytes_out);
      r.set("h2d_gbs", h2d).set("d2h_gbs", d2h).set("pinned_h2d_gbs", pinned_h2d).set("pinned_d2h_gbs", pinned_d2h);
      r.set("h2d_fraction_of_pinned", pinned_h2d > 0 ? h2d / pinned_h2d : 0.0);
      r.set("d2h_fraction_of_pinned", pinned_d2h > 0 ? d2h / pinned_d2h : 0.0);
      r.set("failures", failures.load()).set("verified", failures.load() == 0);
      r.set("transfers", "pinned staging per buffer, each buffer's copies and kernel on its own stream");
      emit(r);
      if (failures.load() != 0) verified = false;
      if (failures.load() != 0) progress(strf("submitter run FAILED verification: %llu operations", static_cast<unsigned long long>(failures.load())));
      progress(strf("submitter %s, %u buffers, threshold %-8llu (%u threads, window %zu): %.3f M ops/s, %zu batches (peak %zu "
                    "in flight), latency per %s p50 %.1f us, p99 %.1f us, copies %.2f / %.2f GB/s (%.0f%% / %.0f%% of pinned)",
                    submit.c_str(), buffers, static_cast<unsigned long long>(threshold), threads, window,
                    ms > 0 ? static_cast<double>(done_ops) / (ms * 1e3) : 0.0, batches, peak, bulk ? "bulk" : "operation",
                    pct(0.5), pct(0.99), h2d,
                    d2h, pinned_h2d > 0 ? 100 * h2d / pinned_h2d : 0.0, pinned_d2h > 0 ? 100 * d2h / pinned_d2h : 0.0));
    }
  }
  return verified;
}

}  // namespace

int run_cache(const common_options& co, const cache_options& o) {
  session s(co);
  s.default_warmup(1, 0);
  if (o.hkv) {
    for (const std::string& sync : o.syncs)
      for (const std::string& layout : o.layouts) hkv_rows<warpkv::kv_cache<u64, 8, 8, warpkv::cache_designs::by_config>>(s, o, sync, layout);
    if (o.hkv_one_bucket)
      hkv_rows<warpkv::kv_cache<u64, 32, 4, warpkv::cache_designs::one_bucket_lru>>(s, o, "optimistic", "slab");
  }
  bool verified = !o.submitter || submitter_rows(s, o, co.seed);
  if (!o.ycsb) return verified ? 0 : 1;
  const u64 records = o.records != 0 ? o.records : (s.cuda() ? 3000000u : 20000u);
  const u64 ops = o.ops != 0 ? o.ops : (s.cuda() ? 10000000u : 20000u);
  prepare_keys(records + ops / 10);  // D inserts about 5% of ops new records
  if (!o.memcached.empty() && !memcached_baseline_available())
    throw warpkv::error(warpkv::errc::invalid_argument,
                        "--memcached: this warpkv-bench was built without libmemcached (Debian: libmemcached-dev; re-run cmake)");
  const std::size_t batch = o.batch != 0 ? o.batch : (s.cuda() ? (std::size_t{1} << 20) : 4096u);  // the device runs' batch
  for (const std::string& w : o.workloads) {
    for (const std::string& dist : o.distributions) {
      if (w == "D" && dist != o.distributions.front()) continue;  // D is always "latest"
      const trace t = make_trace(w[0], dist, records, ops, co.seed);
      for (const double f : o.capacity_fractions) {
        const std::size_t cap = std::max<std::size_t>(1, static_cast<std::size_t>(f * static_cast<double>(records)));
        for (const int W : o.bucket_widths) {
          if (!o.device_runs) break;
          // exact LRU at the cache's own capacity (whole buckets)
          const std::size_t slots = (cap + W - 1) / W * W;
          const u64 lru = exact_lru_hits(t, records, slots);
          std::vector<cache_mode> modes;
          for (const std::string& pol : o.policies)
            for (const std::string& sy : o.syncs)
              for (const std::string& lay : o.layouts)
                for (const std::string& ord : o.op_orders)
                  for (const std::string& comb : o.combines) modes.push_back({pol, sy, lay, ord, comb == "on"});
          for (const cache_mode& m : modes) {
            switch (W) {
              case 4: ycsb_on_device<4>(s, o, t, w[0], dist, records, f, lru, m); break;
              case 8: ycsb_on_device<8>(s, o, t, w[0], dist, records, f, lru, m); break;
              case 16: ycsb_on_device<16>(s, o, t, w[0], dist, records, f, lru, m); break;
              case 32: ycsb_on_device<32>(s, o, t, w[0], dist, records, f, lru, m); break;
              default: throw warpkv::error(warpkv::errc::invalid_argument, "bucket width must be 4, 8, 16 or 32");
            }
          }
        }
        if (o.baseline) ycsb_cpu_baseline(o, t, w[0], dist, records, f, co.seed);
        if (!o.memcached.empty() && !ycsb_memcached(o, t, w[0], dist, records, f, cap, batch, co.seed)) verified = false;
      }
    }
  }
  return verified ? 0 : 1;
}

}  // namespace warpkv_bench
