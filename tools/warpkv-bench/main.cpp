// warpkv-bench: command line (host code only; the workloads live in workloads.cpp and
// stm_workloads.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "bench.hpp"
#include "warpkv/version.hpp"

namespace {

using namespace warpkv_bench;

/// "4194304", "2^22", "1e5", "1.5e7" -> a positive integer count.
std::uint64_t parse_count(const std::string& text, const char* what) {
  const auto fail = [&] {
    throw CLI::ValidationError(what, "'" + text + "' is not a count in 1 .. 1e15 (examples: 65536, 2^16, 1e5)");
  };
  double v = 0;
  try {
    std::size_t used = 0;
    if (const auto caret = text.find('^'); caret != std::string::npos) {
      const double base = std::stod(text.substr(0, caret), &used);
      if (used != caret) fail();
      const std::string e = text.substr(caret + 1);
      const double exponent = std::stod(e, &used);
      if (used != e.size()) fail();
      v = std::pow(base, exponent);
    } else {
      v = std::stod(text, &used);
      if (used != text.size()) fail();
    }
  } catch (const std::logic_error&) {  // std::invalid_argument / std::out_of_range from stod
    fail();
  }
  if (!(v >= 1) || v > 1e15 || v != std::floor(v)) fail();
  return static_cast<std::uint64_t>(v);
}

/// A bad command line found after parsing: one line on stderr, exit code 2.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Host memory the process may still take: MemAvailable, else the physical memory.
double available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  return strf("%.1f %s", bytes, units[u]);
}

/// Refuses a size whose inputs alone cannot fit in host memory (the inputs are generated on
/// the host on every backend), before any work: `bytes` is a lower bound, `how` says of what.
void require_host_memory(const std::string& option, const std::string& text, double bytes, const std::string& how) {
  const double available = available_host_bytes();
  if (bytes > available)
    throw input_error(strf("%s %s needs at least %s of host memory (%s); this machine has %s available", option.c_str(),
                           text.c_str(), bytes_text(bytes).c_str(), how.c_str(), bytes_text(available).c_str()));
}

/// A count option that sizes inputs of `bytes_per_item` bytes each, `copies` times over.
void require_count_memory(const std::string& option, const std::string& text, std::uint64_t count, double copies,
                          double bytes_per_item, const char* items) {
  require_host_memory(option, text, copies * static_cast<double>(count) * bytes_per_item,
                      strf("%s%llu %s x %g bytes", copies == 1 ? "" : strf("%g x ", copies).c_str(),
                           static_cast<unsigned long long>(count), items, bytes_per_item));
}

void add_common(CLI::App& sub, common_options& c) {
  sub.add_option("--backend", c.backend, "Where the maps run: auto (cuda when available), cuda or host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}))
      ->capture_default_str();
  sub.add_option("--out", c.out, "Append JSON lines to FILE (they are always printed to stdout)");
  sub.add_option("--repeats", c.repeats, "Timed runs per measurement (default: 5 static (3 on host), 3 dynamic; demo: 3 on cuda, 1 on host; stm: 5 on cuda, 2 on host)")
      ->check(CLI::Range(1, 1000));
  sub.add_option("--warmup", c.warmup, "Untimed runs before the timed ones (default: 2 (static on host: 1); demo: 1 on cuda, 0 on host; stm: 2 on cuda, 1 on host)")
      ->check(CLI::Range(0, 1000));
  sub.add_option("--host-tiles", c.host_tiles, "Concurrent tiles of the host backend, 0 .. 4096 (0: library default)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            try {
              std::size_t used = 0;
              const long long t = std::stoll(v, &used);
              if (used == v.size() && t >= 0 && t <= 4096) return "";
            } catch (const std::logic_error&) {
            }
            return "'" + v + "' is not in 0 .. 4096 (0: the library default, 2 x hardware threads)";
          },
          "0..4096"))
      ->capture_default_str();
  sub.add_option("--seed", c.seed, "Seed of the input generators (std::mt19937_64)")->capture_default_str();
}

void add_map_type(CLI::App& sub, int& key_bits, int& value_bits, std::vector<int>& tiles) {
  sub.add_option("--key-bits", key_bits, "Key width")->check(CLI::IsMember({32, 64}))->capture_default_str();
  sub.add_option("--value-bits", value_bits, "Value width")->check(CLI::IsMember({32, 64}))->capture_default_str();
  sub.add_option("--tile", tiles, "Tile sizes (lanes per operation), comma-separated; built: u32/u32 with 1,4,8,32 and u64/u64 with 4")
      ->delimiter(',')
      ->check(CLI::IsMember({1, 4, 8, 32}))
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"warpkv-bench: throughput of warpkv maps (JSON lines on stdout, progress on stderr)"};
  app.set_version_flag("--version", "warpkv-bench " WARPKV_VERSION_STRING " (commit " + commit() + ")");
  // Every bad command line: one line on stderr (CLI11's default adds a second).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("warpkv-bench: error: ") + e.what() + " (--help lists the options)\n";
  });
  app.require_subcommand(1);

  common_options common;

  static_options st;
  std::string st_keys;
  auto* s = app.add_subcommand("static", "Bulk insert, then find hits / misses / 50-50 at exact load factors");
  add_common(*s, common);
  add_map_type(*s, st.key_bits, st.value_bits, st.tiles);
  s->add_option("--keys", st_keys, "Key count N that sets the capacity C = 2^ceil(log2(N/0.95)) (default 2^22 cuda, 2^13 host)");
  s->add_option("--load-factors", st.load_factors, "Load factors, comma-separated; each runs floor(lf*C) keys")
      ->delimiter(',')
      ->check(CLI::Range(0.001, 1.0))
      ->capture_default_str();

  s->add_flag("--statuses,!--no-statuses", st.statuses,
              "Timed inserts and finds write a status per operation (--no-statuses: only the batch's counts, finds "
              "verified by their values; what cuco's insert_async / find_async write)")
      ->capture_default_str();
  s->add_flag("--async-inserts", st.async_inserts,
              "Time the inserts as insert_async (stream-ordered, no wait: the form cuco's insert_async is timed in); "
              "their counts are read and checked after each timed run, untimed")
      ->capture_default_str();
  s->add_option("--neighborhood", st.neighborhood, "hopscotch: neighborhood H, the slots a key may sit from its home bucket")
      ->check(CLI::Range(1u, 32u))
      ->capture_default_str();
  s->add_option("--map", st.maps, "Maps, comma-separated: hopscotch (per --tile), hopscotch-buckets (u32/u32, --tile 1 and 4), cuckoo (u32: --tile 1, 4, 8; else 4), chained-pool, chained-device (tile 1)")
      ->delimiter(',')
      ->check(CLI::IsMember({"hopscotch", "hopscotch-buckets", "cuckoo", "chained-pool", "chained-device", "linear", "quadratic"}))
      ->capture_default_str();

  dynamic_options dy;
  std::vector<std::string> dy_ops, dy_ranges;
  auto* d = app.add_subcommand("dynamic", "One concurrent mixed batch (insert/erase/find) per mix and key range");
  add_common(*d, common);
  add_map_type(*d, dy.key_bits, dy.value_bits, dy.tiles);
  d->add_option("--mix", dy.mixes, "Mixes as INSERT,ERASE,FIND percents, space-separated (default: 20,20,60 40,40,20)");
  d->add_option("--ops", dy_ops, "Operations per batch, comma-separated (default 1e5)")->delimiter(',');
  d->add_flag("--large", dy.large, "Also run 1e7 and 1e8 operations per batch (GPU sizes)");
  d->add_option("--key-range", dy_ranges, "Key ranges R (keys uniform in [1, R]), comma-separated (default 100,1000,10000,100000)")
      ->delimiter(',');
  d->add_option("--prefill", dy.prefill, "Before each batch: none, or half (a random half of [1, R])")
      ->check(CLI::IsMember({"none", "half"}))
      ->capture_default_str();

  d->add_option("--map", dy.maps, "Maps, comma-separated: hopscotch (per --tile), hopscotch-buckets (u32/u32, --tile 1 and 4), cuckoo (u32: --tile 1, 4, 8; else 4), chained-pool, chained-device (tile 1)")
      ->delimiter(',')
      ->check(CLI::IsMember({"hopscotch", "hopscotch-buckets", "cuckoo", "chained-pool", "chained-device"}))
      ->capture_default_str();

  demo_options de;
  std::string de_keys;
  auto* m = app.add_subcommand("demo", "A few seconds of inserts, finds, erases and a mixed batch, with checks");
  add_common(*m, common);
  m->add_option("--keys", de_keys, "Keys (default 2^20 on cuda, 2^14 on host)");

  stm_options sm;
  std::vector<std::string> sm_accounts, sm_paper_accounts, sm_sizes, sm_map_buckets;
  std::string sm_transfers, sm_paper_txs, sm_map_ops;
  auto* x = app.add_subcommand("stm", "warpkv::stm: bank transfers vs locks/atomics, the papers' bank, bitonic sort, a transactional hash set vs bucket locks");
  add_common(*x, common);
  x->add_option("--workloads", sm.workloads, "Workloads, comma-separated: bank, paper, sort, map")
      ->delimiter(',')
      ->check(CLI::IsMember({"bank", "paper", "sort", "map"}))
      ->capture_default_str();
  x->add_option("--accounts", sm_accounts, "Bank: account counts, comma-separated (default 128,1024,16384,1048576 cuda; 16,128,1024 host)")
      ->delimiter(',');
  x->add_option("--transfers", sm_transfers, "Bank: transfers per run (default 2^20 cuda, 2^16 host; the global lock runs at most 2^16 / 2^12)");
  x->add_option("--paper-accounts", sm_paper_accounts, "Papers' bank: account counts, comma-separated (default 100000,1000000)")
      ->delimiter(',');
  x->add_option("--read-only", sm.read_only_percents, "Papers' bank: read-only transaction percents, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(0u, 100u))
      ->capture_default_str();
  x->add_option("--paper-txs", sm_paper_txs, "Papers' bank: transactions per run (default 2^18 cuda, 2^12 host)");
  x->add_option("--sizes", sm_sizes, "Sort: key counts, powers of two, comma-separated (default 2^10,2^12,..,2^20 on cuda; 2^10..2^14 on host)")
      ->delimiter(',');
  x->add_option("--map-buckets", sm_map_buckets, "Map: bucket counts (15 keys each, 7 live on average), comma-separated (default 1024,65536,1048576 cuda; 64,1024 host)")
      ->delimiter(',');
  x->add_option("--map-updates", sm.map_update_percents, "Map: percent of operations that are renames (the rest are lookups), comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(0u, 100u))
      ->capture_default_str();
  x->add_option("--map-ops", sm_map_ops, "Map: operations per run (default 2^22 cuda, 2^14 host)");
  x->add_option("--contention", sm.contention,
                "STM contention management, comma-separated; bank and paper rows run once per entry: queue (contention "
                "queues per stripe, then serial escalation; the default) or escalate (serial escalation alone)")
      ->delimiter(',')
      ->check(CLI::IsMember({"queue", "escalate"}))
      ->capture_default_str();
  x->add_option("--queue-after", sm.queue_after, "STM: conflicts before a transaction queues on its conflict object's stripe (queue rows)")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  x->add_option("--escalate-after", sm.escalate_after, "STM: conflicts before serial escalation (0: never; bank and paper rows)")
      ->capture_default_str();

  bank_conflict_options bc;
  auto* bcs = app.add_subcommand("bank-conflicts", "Shared-memory loads/stores by full warps at word strides 1..33 (GPU only)");
  add_common(*bcs, common);
  bcs->add_option("--kinds", bc.kinds, "u32, u64, u8 (strided words/elements) and struct (AoS vs SoA, 1..8 members)")
      ->delimiter(',')
      ->check(CLI::IsMember({"u32", "u64", "u8", "struct"}))
      ->capture_default_str();
  bcs->add_option("--ops", bc.ops, "load, store")->delimiter(',')->check(CLI::IsMember({"load", "store"}))->capture_default_str();
  bcs->add_option("--max-stride", bc.max_stride, "Largest stride")->check(CLI::Range(1u, 64u))->capture_default_str();
  bcs->add_option("--iters", bc.iters, "Accesses per thread per kernel")->check(CLI::Range(1u, 1u << 24))->capture_default_str();

  kmeans_options km;
  std::vector<std::string> km_n;
  auto* kms = app.add_subcommand("kmeans", "warpkv::kmeans fit: ms per Lloyd iteration, conflict-free vs conflicting layout");
  add_common(*kms, common);
  kms->add_option("--n", km_n, "Point counts, comma-separated (default 2^20,2^24 cuda; 2^14 host)")->delimiter(',');
  kms->add_option("--shapes", km.shapes, "DxK pairs, comma-separated")->delimiter(',')->capture_default_str();
  kms->add_option("--iters", km.iters, "Lloyd iterations per fit")->check(CLI::Range(2u, 100000u))->capture_default_str();
  kms->add_option("--layouts", km.layouts, "padded (conflict-free), natural (bank conflicts)")
      ->delimiter(',')
      ->check(CLI::IsMember({"padded", "natural"}))
      ->capture_default_str();
  kms->add_option("--precision", km.precisions, "fp32 (exact), tf32, tf32x3 (tensor cores); tf32 rows carry their label agreement with fp32")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "tf32", "tf32x3"}))
      ->capture_default_str();
  kms->add_option("--distance", km.distances,
                  "Assignment path of the fit rows (params.distance): automatic, fused (alias kernel), gemm (cuBLAS "
                  "SGEMM in chunks + argmin; fp32/tf32), one row set each; the JSON field distance_used says what ran. "
                  "cublas adds the labels-only trial rows (GEMM path vs fused kernel, labels checked against the fp32 "
                  "kernel; needs libcublas at run time)")
      ->delimiter(',')
      ->check(CLI::IsMember({"automatic", "fused", "gemm", "kernel", "cublas"}))
      ->capture_default_str();
  kms->add_option("--accumulation", km.accumulations,
                  "How the fit adds the per-cluster sums (params.accumulation): automatic, atomics, segments, owners (small k x d, fp32; other shapes skipped); one row set each")
      ->delimiter(',')
      ->check(CLI::IsMember({"automatic", "atomics", "segments", "owners"}))
      ->capture_default_str();
  kms->add_option("--cublas-chunk-rows", km.cublas_chunk_rows, "Points per GEMM-path chunk (0: about 32 MiB of scores)")
      ->capture_default_str();
  kms->add_option("--init", km.init, "Initialisation")->check(CLI::IsMember({"random", "kmeans++", "kmeans||", "auto"}))->capture_default_str();
  kms->add_option("--input", km.input, "Comparison mode: raw float32 n x d file (needs exactly one --n and one --shapes)");
  kms->add_option("--init-file", km.init_file, "Comparison mode: raw float32 k x d initial centroids");
  kms->add_option("--labels-out", km.labels_out, "Comparison mode: write int32 labels here");
  kms->add_option("--centroids-out", km.centroids_out, "Comparison mode: write float32 centroids here");
  kms->add_option("--tol", km.tol, "Comparison mode: relative tolerance (0: run exactly --iters)")->capture_default_str();

  paper_options pa;
  std::string pa_max_keys, pa_ops;
  std::vector<std::string> pa_ranges, pa_large_ops, pa_large_ranges;
  bool pa_no_plots = false;
  auto* p = app.add_subcommand("paper", "The GLHT paper's experiments: static build/retrieve, dynamic mixes, large mixes; "
                                        "JSON, markdown and PNG plots in --out-dir");
  add_common(*p, common);
  p->add_option("--out-dir", pa.out_dir, "Results folder (default bench/results/paper-<backend>)");
  p->add_option("--max-keys", pa_max_keys, "Static: largest key count (0.8 C for C = 2^c); default 2^25 cuda (up to 2^28 fits an H100), 2^12 host");
  p->add_option("--parts", pa.parts, "Parts, comma-separated: static, dynamic, large")
      ->delimiter(',')
      ->check(CLI::IsMember({"static", "dynamic", "large"}))
      ->capture_default_str();
  p->add_option("--mix", pa.mixes, "Mixes as INSERT,ERASE,FIND percents, space-separated (default: 20,20,60 40,40,20)");
  p->add_option("--key-range", pa_ranges, "Dynamic: key ranges, comma-separated (default 1e2,1e3,1e4,1e5)")->delimiter(',');
  p->add_option("--ops", pa_ops, "Dynamic: operations per batch (default 1e5 cuda, 1e4 host)");
  p->add_option("--large-ops", pa_large_ops, "Large: operations per batch, comma-separated (default 1e7,1e8 cuda; 5e4 host)")->delimiter(',');
  p->add_option("--large-key-range", pa_large_ranges, "Large: key ranges, comma-separated (default 1e5,1e7 cuda; 1e5 host)")->delimiter(',');
  p->add_option("--cpu-threads", pa.cpu_threads, "Threads of cpu::hopscotch_map (0: the hardware threads)")->capture_default_str();
  p->add_flag("--no-plots", pa_no_plots, "Do not run tools/plot_paper.py");
  p->add_option("--plot-script", pa.plot_script, "Path of plot_paper.py (default: found under tools/ here or in the source tree)");

  cache_options ca;
  std::string ca_records, ca_ops, ca_batch, ca_hkv_capacity;
  bool ca_no_ycsb = false;
  auto* c = app.add_subcommand("cache", "warpkv::kv_cache: YCSB A-F traces (hit ratio vs exact LRU), CPU baseline, HierarchicalKV rows");
  add_common(*c, common);
  c->add_option("--workloads", ca.workloads, "YCSB workloads, comma-separated (E, range scans, is not served)")
      ->delimiter(',')
      ->check(CLI::IsMember({"A", "B", "C", "D", "F"}))
      ->capture_default_str();
  c->add_option("--distributions", ca.distributions, "Request distributions, comma-separated (D always uses latest)")
      ->delimiter(',')
      ->check(CLI::IsMember({"zipfian", "uniform", "latest"}))
      ->capture_default_str();
  c->add_option("--records", ca_records, "Records loaded (default 3e6 cuda, 2e4 host)");
  c->add_option("--ops", ca_ops, "Run-phase operations per trace (default 1e7 cuda, 2e4 host)");
  c->add_option("--capacity", ca.capacity_fractions, "Cache capacity as fractions of the records, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(0.0001, 1.0))
      ->capture_default_str();
  c->add_option("--bucket-widths", ca.bucket_widths, "Bucket widths, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember({4, 8, 16, 32}))
      ->capture_default_str();
  c->add_option("--batch", ca_batch, "Operations per batch (default 2^20 cuda, 4096 host)");
  c->add_option("--max-kicks", ca.max_kicks, "Cuckoo displacement steps before evicting")->capture_default_str();
  c->add_option("--policies", ca.policies, "Eviction policies, comma-separated: lru, random (the seed's random CHT), clock")
      ->delimiter(',')
      ->check(CLI::IsMember({"lru", "random", "clock"}))
      ->capture_default_str();
  c->add_option("--sync", ca.syncs,
                "Slot synchronization, comma-separated: optimistic (versioned reads), rw_lock (the seed's per-slot "
                "reader/writer locks); YCSB and --hkv rows run each")
      ->delimiter(',')
      ->check(CLI::IsMember({"optimistic", "rw_lock"}))
      ->capture_default_str();
  c->add_option("--layouts", ca.layouts,
                "Value layouts, comma-separated: slab (values in a separate array), inline (after the key words, one "
                "record per slot), slab-digest / inline-digest (the same with a key digest byte per slot: "
                "cache_config::key_digests); YCSB and --hkv rows run each")
      ->delimiter(',')
      ->check(CLI::IsMember({"slab", "inline", "slab-digest", "inline-digest"}))
      ->capture_default_str();
  c->add_option("--op-order", ca.op_orders,
                "YCSB device batches, comma-separated: mixed (trace order), grouped (each batch stably sorted by "
                "operation type, so a warp serves one type: the seed's one type per warp)")
      ->delimiter(',')
      ->check(CLI::IsMember({"mixed", "grouped"}))
      ->capture_default_str();
  c->add_option("--combine", ca.combines,
                "YCSB device batches, comma-separated: on (cache_config::combine_get_or_set: a key's get_or_sets in a "
                "batch run once, the others find its value), off")
      ->delimiter(',')
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  c->add_flag("--baseline", ca.baseline, "Also run the in-process CPU baseline cpu_sharded_lru (not memcached)");
  c->add_flag("--hkv", ca.hkv, "HierarchicalKV's configuration: u64 keys, 32-byte values, 1M batches at loads 0.5/0.75/1.0");
  c->add_flag("--no-ycsb", ca_no_ycsb, "Skip the YCSB traces (with --hkv: only the HierarchicalKV rows)");
  c->add_option("--hkv-capacity", ca_hkv_capacity, "HierarchicalKV rows: cache capacity (default 2^27 cuda, 2^15 host)");
  c->add_flag("--hkv-one-bucket", ca.hkv_one_bucket,
              "HierarchicalKV rows also for one bucket per key (kv_cache<u64, 32, 4, one_bucket_lru>: HKV's placement, "
              "no cuckoo moves, a full bucket evicts)");
  c->add_option("--memcached", ca.memcached,
                "Also replay each YCSB trace against memcached through libmemcached: HOST:PORT of a running server, or auto "
                "(start memcached -l 127.0.0.1 on a free port, -m sized to the cache capacity)");
  c->add_option("--memcached-clients", ca.memcached_clients, "--memcached: client threads (0: hardware threads)")->capture_default_str();
  c->add_option("--memcached-threads", ca.memcached_threads, "--memcached auto: memcached -t (0: hardware threads)")->capture_default_str();
  c->add_flag("--memcached-pipelined-sets", ca.memcached_pipelined_sets,
              "--memcached: buffer the sets and send them with noreply (memcached's heavy batching) instead of one round trip each");
  std::vector<std::string> ca_sub_thresholds;
  std::string ca_sub_ops;
  c->add_flag("--submitter", ca.submitter,
              "The host front end (cache_submitter, u64 keys, 32-byte values, 50% get_or_set / 50% set, uniform keys): "
              "per threshold, throughput and submit-to-result latency median / p99");
  c->add_option("--submitter-thresholds", ca_sub_thresholds,
                "--submitter: batch thresholds, comma-separated (default 2^10,2^14,2^17,2^20 cuda; 2^6,2^8,2^10 host)")
      ->delimiter(',');
  c->add_option("--submitter-deadline-us", ca.submitter_deadline_us, "--submitter: latency deadline of a partial batch (us)")
      ->capture_default_str();
  c->add_option("--submitter-threads", ca.submitter_threads, "--submitter: client threads (0: hardware threads)")
      ->capture_default_str();
  c->add_option("--buffers", ca.submitter_buffers,
                "--submitter: batch buffers, comma-separated (each its pinned staging, device arrays and stream; "
                "1: no overlap, 2: double buffering)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--submit", ca.submitter_submit,
                "--submitter: how clients submit, comma-separated: bulk (each window as one submit_bulk) and/or "
                "single (one submit per operation, a future each)")
      ->delimiter(',')
      ->check(CLI::IsMember({"bulk", "single"}))
      ->capture_default_str();
  c->add_option("--submitter-ops", ca_sub_ops, "--submitter: operations per threshold, at least 16 batches (default 2^22 cuda, 2^14 host)");
  bool ca_baselines_only = false;
  c->add_flag("--baselines-only", ca_baselines_only, "YCSB: run only --baseline / --memcached, not the kv_cache runs");

  CLI11_PARSE(app, argc, argv);

  try {
    if (!st_keys.empty()) st.keys = parse_count(st_keys, "--keys");
    if (!de_keys.empty()) de.keys = parse_count(de_keys, "--keys");
    if (!dy_ops.empty()) {
      dy.ops.clear();
      for (const auto& o : dy_ops) dy.ops.push_back(static_cast<double>(parse_count(o, "--ops")));
    }
    if (dy.large) {
      for (const double big : {1e7, 1e8})
        if (std::find(dy.ops.begin(), dy.ops.end(), big) == dy.ops.end()) dy.ops.push_back(big);
    }
    for (const auto& a : sm_accounts) sm.accounts.push_back(parse_count(a, "--accounts"));
    for (const auto& a : sm_paper_accounts) sm.paper_accounts.push_back(parse_count(a, "--paper-accounts"));
    for (const auto& a : sm_sizes) sm.sizes.push_back(parse_count(a, "--sizes"));
    if (!sm_transfers.empty()) sm.transfers = parse_count(sm_transfers, "--transfers");
    if (!sm_paper_txs.empty()) sm.paper_txs = parse_count(sm_paper_txs, "--paper-txs");
    for (const auto& b : sm_map_buckets) sm.map_buckets.push_back(parse_count(b, "--map-buckets"));
    if (!sm_map_ops.empty()) sm.map_ops = parse_count(sm_map_ops, "--map-ops");
    for (const auto& v : km_n) km.n.push_back(parse_count(v, "--n"));
    if (!ca_records.empty()) ca.records = parse_count(ca_records, "--records");
    if (!ca_ops.empty()) ca.ops = parse_count(ca_ops, "--ops");
    if (!ca_batch.empty()) ca.batch = parse_count(ca_batch, "--batch");
    if (!ca_hkv_capacity.empty()) ca.hkv_capacity = parse_count(ca_hkv_capacity, "--hkv-capacity");
    for (const auto& t : ca_sub_thresholds) ca.submitter_thresholds.push_back(parse_count(t, "--submitter-thresholds"));
    if (!ca_sub_ops.empty()) ca.submitter_ops = parse_count(ca_sub_ops, "--submitter-ops");
    ca.ycsb = !ca_no_ycsb;
    if (!dy_ranges.empty()) {
      dy.key_ranges.clear();
      for (const auto& r : dy_ranges) dy.key_ranges.push_back(parse_count(r, "--key-range"));
    }
    if (!pa_max_keys.empty()) pa.max_keys = parse_count(pa_max_keys, "--max-keys");
    if (!pa_ops.empty()) pa.ops = parse_count(pa_ops, "--ops");
    if (!pa_ranges.empty()) {
      pa.key_ranges.clear();
      for (const auto& r : pa_ranges) pa.key_ranges.push_back(parse_count(r, "--key-range"));
    }
    for (const auto& o : pa_large_ops) pa.large_ops.push_back(parse_count(o, "--large-ops"));
    for (const auto& r : pa_large_ranges) pa.large_key_ranges.push_back(parse_count(r, "--large-key-range"));
    pa.plots = !pa_no_plots;

    // ---- sizes whose inputs cannot fit (lower bounds: the input arrays alone) ------------
    const auto pair_bytes = [](int key_bits, int value_bits) { return static_cast<double>(key_bits + value_bits) / 8; };
    if (s->parsed() && st.keys != 0)  // a table of C >= keys slots and 2 insert sets of keys and values
      require_count_memory("--keys", st_keys, st.keys, 3, pair_bytes(st.key_bits, st.value_bits), "keys");
    if (m->parsed() && de.keys != 0)  // keys, misses and values of u32/u32, and the table
      require_count_memory("--keys", de_keys, de.keys, 1, 4 + 4 + 4 + 8, "keys");
    if (d->parsed())  // 2 input sets of an op code, a key and a value per operation
      for (std::size_t i = 0; i < dy_ops.size(); ++i)
        require_count_memory("--ops", dy_ops[i], static_cast<std::uint64_t>(dy.ops[i]), 2,
                             1 + pair_bytes(dy.key_bits, dy.value_bits), "operations");
    if (p->parsed()) {  // u64 keys and values at most; 2 input sets
      if (pa.max_keys != 0) require_count_memory("--max-keys", pa_max_keys, pa.max_keys, 3, 16, "keys");
      if (pa.ops != 0) require_count_memory("--ops", pa_ops, pa.ops, 2, 9, "operations");
      for (std::size_t i = 0; i < pa_large_ops.size(); ++i)
        require_count_memory("--large-ops", pa_large_ops[i], pa.large_ops[i], 2, 9, "operations");
    }
    if (c->parsed()) {
      if (ca.records != 0) require_count_memory("--records", ca_records, ca.records, 1, 8, "record keys");
      if (ca.ops != 0) require_count_memory("--ops", ca_ops, ca.ops, 1, 9, "trace operations");
      if (ca.hkv_capacity != 0)  // u64 keys, 32-byte values
        require_count_memory("--hkv-capacity", ca_hkv_capacity, ca.hkv_capacity, 1, 40, "entries");
      if (ca.submitter_ops != 0) require_count_memory("--submitter-ops", ca_sub_ops, ca.submitter_ops, 1, 41, "operations");
    }

    // ---- values the workloads would refuse only after starting --------------------------
    const auto check_key_ranges = [](const char* option, const std::vector<std::string>& texts,
                                     const std::vector<std::uint64_t>& ranges) {
      for (std::size_t i = 0; i < ranges.size(); ++i)
        if (ranges[i] >= 0xffffffffull)  // keys are [1, R] of 32-bit maps
          throw CLI::ValidationError(option, "'" + texts[i] + "' is not in 1 .. 2^32-2 (keys are drawn from [1, R])");
    };
    if (d->parsed()) check_key_ranges("--key-range", dy_ranges, dy.key_ranges);
    if (p->parsed()) {
      check_key_ranges("--key-range", pa_ranges, pa.key_ranges);
      check_key_ranges("--large-key-range", pa_large_ranges, pa.large_key_ranges);
    }
    if (x->parsed())
      for (std::size_t i = 0; i < sm.sizes.size(); ++i)
        if (sm.sizes[i] < 2 || (sm.sizes[i] & (sm.sizes[i] - 1)) != 0)
          throw CLI::ValidationError("--sizes", "'" + sm_sizes[i] + "' is not a power of two >= 2 (bitonic sort)");
    if (kms->parsed())
      for (const std::string& shape : km.shapes) {
        const auto x_at = shape.find('x');
        const auto positive = [](const std::string& t) {
          return !t.empty() && t.size() < 9 && t.find_first_not_of("0123456789") == std::string::npos && std::stoul(t) > 0;
        };
        if (x_at == std::string::npos || !positive(shape.substr(0, x_at)) || !positive(shape.substr(x_at + 1)))
          throw CLI::ValidationError("--shapes", "'" + shape + "' is not DxK: dimensions x clusters, both positive (example: 32x256)");
      }
    if (s->parsed() && st.keys != 0) {  // each load factor must give a key at the capacity --keys sets
      std::uint64_t capacity = 64;
      while (static_cast<double>(capacity) < std::ceil(static_cast<double>(st.keys) / 0.95)) capacity *= 2;
      for (const double lf : st.load_factors)
        if (std::floor(lf * static_cast<double>(capacity)) < 1)
          throw CLI::ValidationError("--load-factors", strf("%g x capacity %llu (from --keys %s) gives no keys", lf,
                                                            static_cast<unsigned long long>(capacity), st_keys.c_str()));
    }

    // ---- cache: option sets that would run nothing -----------------------------------------
    if (c->parsed() && ca_no_ycsb && (ca.baseline || !ca.memcached.empty() || ca_baselines_only))
      throw input_error("cache --no-ycsb skips the YCSB traces that --baseline, --memcached and --baselines-only replay: "
                        "drop one or the other");
    if (c->parsed() && ca_no_ycsb && !ca.hkv && !ca.submitter)
      throw input_error("cache --no-ycsb skips the YCSB traces and nothing else is asked for, so it would run nothing: "
                        "add --hkv (HierarchicalKV rows) or --submitter, or drop --no-ycsb");
    if (c->parsed() && ca_baselines_only && !ca.baseline && ca.memcached.empty())
      throw input_error("cache --baselines-only runs only --baseline and --memcached, and neither is given: add one");
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const input_error& e) {
    std::cerr << "warpkv-bench: error: " << e.what() << '\n';
    return 2;
  }

  try {
    configure_output(common.out, true);
    if (s->parsed()) return run_static(common, st);
    if (d->parsed()) return run_dynamic(common, dy);
    if (x->parsed()) return run_stm(common, sm);
    if (bcs->parsed()) return run_bank_conflicts(common, bc);
    if (kms->parsed()) return run_kmeans(common, km);
    if (p->parsed()) return run_paper(common, pa);
    if (c->parsed()) {
      ca.device_runs = !ca_baselines_only;
      return run_cache(common, ca);
    }
    return run_demo(common, de);
  } catch (const std::bad_alloc&) {
    std::cerr << "warpkv-bench: error: out of host memory (std::bad_alloc): run smaller sizes (--keys, --ops, --records, "
                 "--n, ...)\n";
    return 2;
  } catch (const std::exception& e) {  // warpkv::error and the workloads' own checks
    std::string what = e.what();
    if (what.rfind("warpkv-bench: ", 0) == 0) what.erase(0, 14);  // said once, below
    std::cerr << "warpkv-bench: error: " << what << '\n';
    return 2;
  }
}
