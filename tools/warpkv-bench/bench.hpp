#pragma once
// warpkv-bench: shared declarations between the host-only translation units
// (main.cpp: command line; report.cpp: JSON lines, tables, statistics) and the one
// translation unit that holds device code (workloads.cpp: maps, inputs, timing).
//
// This header must stay free of warpkv headers whose inline functions depend on
// WARPKV_HAS_CUDA (execution.hpp and everything above it): main.cpp and report.cpp are
// compiled by the host compiler while workloads.cpp may be compiled by nvcc, and the
// two would otherwise see different definitions of the same inline functions.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace warpkv_bench {

// ---- options ---------------------------------------------------------------------------------
struct common_options {
  std::string backend = "auto";  ///< auto | cuda | host
  std::string out;               ///< JSON lines are appended here (besides stdout) when set
  int repeats = -1;              ///< timed runs; -1: the subcommand's default
  int warmup = -1;               ///< untimed runs before the timed ones; -1: the subcommand's default
  unsigned host_tiles = 0;       ///< concurrent tiles of the host backend; 0: the library default
  std::uint64_t seed = 42;       ///< seeds every std::mt19937_64 of the inputs
};

struct static_options {
  int key_bits = 32;
  int value_bits = 32;
  std::vector<int> tiles{4};
  std::uint64_t keys = 0;  ///< 0: 2^22 on cuda, 2^13 on host
  std::vector<double> load_factors{0.5, 0.8, 0.9, 0.95};
  std::vector<std::string> maps{"hopscotch"};  ///< hopscotch | cuckoo | chained-pool | chained-device
  unsigned neighborhood = 32;  ///< hopscotch: H, slots a key may sit from its home bucket
  /// Timed inserts and finds write a status per operation (off: only the batch's counts, and
  /// finds are verified by their values, as a peer's insert_async / find_async that write none).
  bool statuses = true;
  /// Timed inserts are insert_async (stream-ordered, no wait, as cuco's insert_async is timed);
  /// their counts are read and checked after each timed run, untimed.
  bool async_inserts = false;
};

struct dynamic_options {
  int key_bits = 32;
  int value_bits = 32;
  std::vector<int> tiles{4};
  std::vector<std::string> mixes{"20,20,60", "40,40,20"};  ///< insert,erase,find percents
  std::vector<double> ops{1e5};
  bool large = false;  ///< add 1e7 and 1e8 operations (GPU sizes)
  std::vector<std::uint64_t> key_ranges{100, 1000, 10000, 100000};
  std::string prefill = "half";  ///< none | half
  std::vector<std::string> maps{"hopscotch"};  ///< hopscotch | cuckoo | chained-pool | chained-device
};

struct demo_options {
  std::uint64_t keys = 0;  ///< 0: 2^20 on cuda, 2^14 on host
};

struct stm_options {
  std::vector<std::string> workloads{"bank", "paper", "sort", "map"};
  std::vector<std::uint64_t> accounts;        ///< bank; empty: 128,1024,16384,1048576 cuda / 16,128,1024 host
  std::uint64_t transfers = 0;                ///< bank transfers per run; 0: 2^20 cuda, 2^16 host
  std::vector<std::uint64_t> paper_accounts;  ///< empty: 100000,1000000
  std::vector<unsigned> read_only_percents{20, 80};
  std::uint64_t paper_txs = 0;                ///< paper bank transactions per run; 0: 2^18 cuda, 2^12 host
  std::vector<std::uint64_t> sizes;           ///< sort keys (powers of two); empty: 2^10..2^20 cuda, 2^10..2^14 host
  std::vector<std::uint64_t> map_buckets;     ///< map; empty: 1024,65536,1048576 cuda / 64,1024 host
  std::vector<unsigned> map_update_percents{20, 100};
  std::uint64_t map_ops = 0;                  ///< map operations per run; 0: 2^22 cuda, 2^14 host
  /// STM contention management, bank and paper rows once per entry (sort and map: always queue):
  /// queue = contention queues + serial escalation (the default), escalate = serial escalation alone.
  std::vector<std::string> contention{"queue", "escalate"};
  unsigned queue_after = 1;      ///< conflicts before a transaction queues (the queue entry; 0: never)
  unsigned escalate_after = 32;  ///< conflicts before serial escalation (both entries; 0: never)
};

struct bank_conflict_options {
  std::vector<std::string> kinds{"u32", "u64", "u8", "struct"};  ///< word kinds; struct = AoS vs SoA
  unsigned max_stride = 33;   ///< strides 1..max_stride (struct: members 1..8)
  unsigned iters = 8192;      ///< accesses per thread per kernel
  std::vector<std::string> ops{"load", "store"};
};

struct kmeans_options {
  std::vector<std::uint64_t> n;                                  ///< empty: 2^20,2^24 cuda; 2^14 host
  std::vector<std::string> shapes{"4x16", "32x256", "128x1024"};  ///< DxK
  unsigned iters = 10;                                           ///< Lloyd iterations per timed fit
  std::vector<std::string> layouts{"padded"};                    ///< padded (conflict-free) and/or natural
  std::vector<std::string> precisions{"fp32"};                   ///< fp32, tf32, tf32x3 (distance precision)
  std::string init = "random";                                   ///< random | kmeans++ | kmeans|| | auto
  std::vector<std::string> distances{"automatic"};  ///< fit paths automatic / fused (kernel) / gemm; cublas: the trial rows
  std::size_t cublas_chunk_rows = 0;                ///< points per GEMM-path chunk; 0: ~32 MiB of scores
  std::vector<std::string> accumulations{"automatic"};  ///< params.accumulation: automatic, atomics, segments
  // Comparison mode (bench/peers/kmeans_peers.py): raw float32 files, one size.
  std::string input;        ///< n x d float32, row-major
  std::string init_file;    ///< k x d float32 initial centroids (init = user)
  std::string labels_out;   ///< int32 labels written here
  std::string centroids_out;
  double tol = 0;           ///< 0: exactly --iters iterations
};

struct paper_options {
  std::string out_dir;                               ///< empty: bench/results/paper-<backend>
  std::uint64_t max_keys = 0;                        ///< static: largest key count; 0: 2^25 cuda, 2^12 host
  std::vector<std::string> parts{"static", "dynamic", "large"};
  std::vector<std::string> mixes{"20,20,60", "40,40,20"};
  std::vector<std::uint64_t> key_ranges{100, 1000, 10000, 100000};
  std::uint64_t ops = 0;                             ///< operations per batch of part 2; 0: 1e5 cuda, 1e4 host
  std::vector<std::uint64_t> large_ops;              ///< part 3; empty: 1e7,1e8 cuda, 5e4 host
  std::vector<std::uint64_t> large_key_ranges;       ///< part 3; empty: 1e5,1e7 cuda, 1e5 host
  unsigned cpu_threads = 0;                          ///< cpu::hopscotch_map threads; 0: hardware threads
  bool plots = true;                                 ///< draw PNGs with tools/plot_paper.py
  std::string plot_script;                           ///< empty: tools/plot_paper.py here or in the source tree
};

struct cache_options {
  bool ycsb = true;                      ///< run the YCSB traces
  std::vector<std::string> workloads{"A", "B", "C", "D", "F"};
  std::vector<std::string> distributions{"zipfian", "uniform"};  ///< D always uses latest
  std::uint64_t records = 0;             ///< 0: 3e6 cuda, 2e4 host
  std::uint64_t ops = 0;                 ///< run-phase cache operations; 0: 1e7 cuda, 2e4 host
  std::vector<double> capacity_fractions{0.1, 0.5};
  std::vector<int> bucket_widths{4, 8, 16, 32};
  std::uint64_t batch = 0;               ///< operations per batch; 0: 2^20 cuda, 4096 host
  std::uint32_t max_kicks = 5000;
  std::vector<std::string> policies{"lru"};  ///< eviction policies of the device runs: lru, random, clock
  std::vector<std::string> syncs{"optimistic"};  ///< slot synchronization of the device runs: optimistic, rw_lock
  std::vector<std::string> layouts{"slab"};  ///< device runs: slab (values in their own array) or inline (after the key)
  std::vector<std::string> op_orders{"mixed"};  ///< device runs: mixed (trace order) or grouped (each batch sorted by operation type)
  std::vector<std::string> combines{"on"};  ///< device runs: get_or_set combining on and/or off
  bool baseline = false;                 ///< also run the in-process CPU LRU baseline
  bool hkv = false;                      ///< HierarchicalKV's configuration (u64 keys, 32-byte values)
  std::uint64_t hkv_capacity = 0;        ///< 0: 2^27 cuda, 2^15 host
  bool hkv_one_bucket = false;           ///< --hkv rows also for kv_cache<u64, 32, 4, one_bucket_lru> (HKV's placement)
  std::vector<double> hkv_loads{0.5, 0.75, 1.0};
  std::string memcached;                 ///< "": no memcached run; "auto" or "HOST:PORT" (memcached_baseline.cpp)
  unsigned memcached_clients = 0;        ///< libmemcached client threads; 0: hardware threads
  unsigned memcached_threads = 0;        ///< memcached -t with auto; 0: hardware threads
  bool memcached_pipelined_sets = false; ///< buffered noreply sets (memcached_baseline.cpp)
  bool device_runs = true;               ///< false (--baselines-only): only the CPU/memcached baselines
  bool submitter = false;                ///< the host front end (cache_submitter): throughput and latency per threshold
  std::vector<std::uint64_t> submitter_thresholds;  ///< empty: 2^10,2^14,2^17,2^20 cuda; 2^6,2^8,2^10 host
  std::uint64_t submitter_deadline_us = 1000;       ///< the submitter's latency deadline
  unsigned submitter_threads = 0;        ///< client threads; 0: hardware threads
  std::uint64_t submitter_ops = 0;       ///< operations per threshold; 0: 2^22 cuda, 2^14 host
  std::vector<unsigned> submitter_buffers{2};  ///< batch buffers (1: no overlap, 2: double buffering, ...)
  std::vector<std::string> submitter_submit{"bulk"};  ///< bulk: a window per submit_bulk; single: a submit per operation
};

/// warpkv::kv_cache on YCSB traces and HierarchicalKV's configuration (cache_workloads.cpp).
int run_cache(const common_options&, const cache_options&);

/// Entry points (workloads.cpp). They return the process exit code: non-zero when a
/// verification failed. Errors of the library or the inputs are thrown.
int run_static(const common_options&, const static_options&);
int run_dynamic(const common_options&, const dynamic_options&);
int run_demo(const common_options&, const demo_options&);
/// The GLHT paper's experiments: static, dynamic and large mixes over every map (paper_workloads.cpp).
int run_paper(const common_options&, const paper_options&);
/// warpkv::stm vs locks and atomics, the papers' bank, bitonic sort (stm_workloads.cpp).
int run_stm(const common_options&, const stm_options&);

/// warpkv::kmeans: shared-memory bank-conflict microbenchmark and k-means fit (kmeans_workloads.cpp).
int run_bank_conflicts(const common_options&, const bank_conflict_options&);
int run_kmeans(const common_options&, const kmeans_options&);

// ---- one JSON record -------------------------------------------------------------------------
using field_value = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

/// An ordered set of fields; report.cpp turns it into one JSON object.
class record {
 public:
  template <class T>
  record& set(const std::string& key, T v) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::monostate> || std::is_same_v<T, field_value>)
      put(key, field_value(std::move(v)));
    else if constexpr (std::is_integral_v<T>)
      put(key, field_value(static_cast<std::int64_t>(v)));
    else if constexpr (std::is_floating_point_v<T>)
      put(key, field_value(static_cast<double>(v)));
    else
      put(key, field_value(std::string(v)));
    return *this;
  }
  /// A list of numbers (kept apart from the scalars).
  record& set_list(const std::string& key, std::vector<double> v) {
    for (auto& f : lists_)
      if (f.first == key) {
        f.second = std::move(v);
        return *this;
      }
    lists_.emplace_back(key, std::move(v));
    return *this;
  }
  record& null(const std::string& key) { return set(key, std::monostate{}); }
  [[nodiscard]] const std::vector<std::pair<std::string, field_value>>& fields() const { return fields_; }
  [[nodiscard]] const std::vector<std::pair<std::string, std::vector<double>>>& lists() const { return lists_; }

 private:
  void put(const std::string& key, field_value v) {
    for (auto& f : fields_)
      if (f.first == key) {
        f.second = std::move(v);
        return;
      }
    fields_.emplace_back(key, std::move(v));
  }
  std::vector<std::pair<std::string, field_value>> fields_;
  std::vector<std::pair<std::string, std::vector<double>>> lists_;
};

// ---- report.cpp ----------------------------------------------------------------------------
struct timing_stats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> samples_ms;
};
timing_stats summarize(std::vector<double> samples_ms);
/// Adds median/min/max/samples and the derived throughput (G ops/s at the median and at the best run).
void add_timing(record& r, const timing_stats& t, std::uint64_t ops);

/// Where JSON lines go: stdout when `to_stdout`, and appended to `path` when not empty.
void configure_output(const std::string& path, bool to_stdout);
/// Adds "commit" and "timestamp" and writes the record as one JSON line.
void emit(record r);
/// The commit this binary was built from: env WARPKV_COMMIT, else the configure-time value, else "unknown".
std::string commit();
/// One line to stderr (progress, warnings, notes).
void progress(const std::string& line);
/// Long steps print a line at least this often (session::measure between runs).
inline constexpr int heartbeat_seconds = 5;
/// Whether nothing was printed by progress() for heartbeat_seconds.
bool progress_due();
/// printf-style formatting into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

struct table_row {
  std::string operation;
  std::uint64_t ops = 0;
  double ms = 0;
  bool ok = true;
};
/// The demo's human-readable table (stdout); throughput in G ops/s, or M ops/s when `mega`.
void print_table(const std::string& title, const std::vector<table_row>& rows, bool mega);

}  // namespace warpkv_bench
