// warpkv-bench stm: throughput of warpkv::stm against lock-based and lock-free baselines.
// Compiled by nvcc when the CUDA backend is on (warpkv_target in CMakeLists.txt), by the host
// compiler otherwise; CUDA-only parts (events, CUB) sit under #if WARPKV_HAS_CUDA.
//
//   bank   random transfers between --accounts accounts: STM (opaque; once per --contention
//          entry: contention queues or serial escalation alone) vs two relaxed atomics
//          (no isolation: the ceiling), two per-account spin locks in address order with
//          back-off, one global lock. Verified: the total is conserved.
//   paper  the STM papers' bank: 100k / 1M accounts, 20% / 80% read-only transactions
//          (50 reads), update transactions of 25 transfers. Commits/s. Verified: total
//          conserved, every transaction committed, the global clock counts the update commits.
//   sort   bitonic sort: CPU std::sort, CPU bitonic, backend bitonic without STM (one
//          compare-exchange per thread per step, a launch per step), backend bitonic with each
//          compare-exchange a 2-object transaction, cub::DeviceRadixSort (GPU only).
//          Verified: output equals std::sort's.
#include <algorithm>
#include <bit>
#include <chrono>
#include <functional>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "session.hpp"
#include "stm_common.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/backoff.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/stm/stm.hpp"

#if WARPKV_HAS_CUDA
#include <cub/device/device_radix_sort.cuh>
#endif

namespace warpkv_bench {

namespace {

using namespace stm_bench;
namespace stm = warpkv::stm;

constexpr std::int64_t initial_balance = 1000;

// ---- bank bodies --------------------------------------------------------------------------------

/// atomically's queue_after for a --contention entry: after --queue-after conflicts, or never.
unsigned queue_after_of(const std::string& contention, const stm_options& so) { return contention == "queue" ? so.queue_after : 0u; }

struct bank_stm_body {
  using accumulator = counts;
  stm::heap_ref<std::int64_t, stm::mode::opaque> accounts;
  u64 seed;
  unsigned queue_after, escalate_after;
  std::size_t items, chunk;
  ull* stats;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index, accumulator& acc) const {
    WARPKV_BENCH_FOR_ITEMS(i) {
      const transfer_t x = make_transfer(seed, i, accounts.size());
      stm::transaction<std::int64_t, stm::mode::opaque, 2, 2> tx(accounts, seed ^ i);
      const stm::tx_status s = stm::atomically(tx, [&](auto& a) {
        const std::int64_t f = a.read(x.from), g = a.read(x.to);
        if (!a.ok()) return;
        a.write(x.from, f - x.amount);
        a.write(x.to, g + x.amount);
      }, 0, escalate_after, queue_after);
      acc.attempts += tx.attempts();
      acc.commits += s == stm::tx_status::committed ? 1 : 0;
    }
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    flush_counts(acc, stats);
  }
};

struct bank_atomic_body {  // two relaxed atomics: no isolation
  ull* balance;
  std::size_t n;
  u64 seed;
  std::size_t items, chunk;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    WARPKV_BENCH_FOR_ITEMS(i) {
      const transfer_t x = make_transfer(seed, i, n);
      atomic_ref<ull>(balance[x.from]).fetch_add(static_cast<ull>(-x.amount), memory_order::relaxed);
      atomic_ref<ull>(balance[x.to]).fetch_add(static_cast<ull>(x.amount), memory_order::relaxed);
    }
  }
};

struct bank_lock_body {  // per-account spin locks taken in address order, or one global lock
  ull* balance;
  unsigned* locks;
  std::size_t n;
  u64 seed;
  std::size_t items, chunk;
  bool global;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    WARPKV_BENCH_FOR_ITEMS(i) {
      const transfer_t x = make_transfer(seed, i, n);
      unsigned* first = global ? locks : locks + (x.from < x.to ? x.from : x.to);
      unsigned* second = global ? nullptr : locks + (x.from < x.to ? x.to : x.from);
      spin_lock(first);
      if (second != nullptr) spin_lock(second);
      atomic_ref<ull> f(balance[x.from]), g(balance[x.to]);  // relaxed: the locks order them
      f.store(f.load(memory_order::relaxed) - static_cast<ull>(x.amount), memory_order::relaxed);
      g.store(g.load(memory_order::relaxed) + static_cast<ull>(x.amount), memory_order::relaxed);
      if (second != nullptr) spin_unlock(second);
      spin_unlock(first);
    }
  }
};

// ---- paper bank body ----------------------------------------------------------------------------

constexpr int paper_reads = 50;
constexpr int paper_transfers = 25;

struct paper_body {
  using accumulator = counts;
  stm::heap_ref<std::int64_t, stm::mode::opaque> accounts;
  u64 seed;
  unsigned read_only_percent;
  unsigned queue_after, escalate_after;
  std::size_t items, chunk;
  ull* stats;  // attempts, commits, update commits, read-only commits
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index, accumulator& acc) const {
    const std::size_t n = accounts.size();
    WARPKV_BENCH_FOR_ITEMS(i) {
      const u64 r = mix(seed ^ (i * 0xd1b54a32d192ed03ull));
      stm::tx_status s;
      unsigned attempts = 0;
      if (r % 100 < read_only_percent) {
        stm::transaction<std::int64_t, stm::mode::opaque, paper_reads, 1> tx(accounts, r);
        std::int64_t sum = 0;
        s = stm::atomically(tx, [&](auto& a) {
          sum = 0;
          for (int k = 0; k < paper_reads; ++k) {
            std::int64_t v = 0;
            if (!a.read(static_cast<std::size_t>(mix(r + static_cast<u64>(k)) % n), v)) return;
            sum += v;
          }
        }, 0, escalate_after, queue_after);
        attempts = tx.attempts();
        acc.checksum += sum;
      } else {
        stm::transaction<std::int64_t, stm::mode::opaque, 2 * paper_transfers, 2 * paper_transfers> tx(accounts, r);
        s = stm::atomically(tx, [&](auto& a) {
          for (int k = 0; k < paper_transfers; ++k) {
            const transfer_t x = make_transfer(r, static_cast<u64>(k), n);
            const std::int64_t f = a.read(x.from), g = a.read(x.to);
            if (!a.ok()) return;
            a.write(x.from, f - x.amount);
            a.write(x.to, g + x.amount);
          }
        }, 0, escalate_after, queue_after);
        attempts = tx.attempts();
        if (s == stm::tx_status::committed) atomic_ref<ull>(stats[2]).fetch_add(1, memory_order::relaxed);
      }
      acc.attempts += attempts;
      acc.commits += s == stm::tx_status::committed ? 1 : 0;
    }
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    flush_counts(acc, stats);
  }
};

// ---- bitonic bodies -----------------------------------------------------------------------------

/// Compare-exchange i of step (k, j) of a bitonic network over n = 2 * items keys.
WARPKV_HD inline void bitonic_pair(std::size_t i, std::size_t k, std::size_t j, std::size_t& lo, std::size_t& hi,
                                   bool& ascending) {
  lo = (i / j) * 2 * j + (i % j);
  hi = lo + j;
  ascending = (lo & k) == 0;
}

struct bitonic_body {
  std::uint32_t* keys;
  std::size_t k, j, items, chunk;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index) const {
    WARPKV_BENCH_FOR_ITEMS(i) {
      std::size_t lo = 0, hi = 0;
      bool up = true;
      bitonic_pair(i, k, j, lo, hi, up);
      const std::uint32_t a = keys[lo], b = keys[hi];
      if ((a > b) == up) {
        keys[lo] = b;
        keys[hi] = a;
      }
    }
  }
};

struct bitonic_stm_body {
  using accumulator = counts;
  stm::heap_ref<std::uint32_t, stm::mode::opaque> keys;
  std::size_t k, j, items, chunk;
  ull* stats;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t tile_index, accumulator& acc) const {
    WARPKV_BENCH_FOR_ITEMS(i) {
      std::size_t lo = 0, hi = 0;
      bool up = true;
      bitonic_pair(i, k, j, lo, hi, up);
      stm::transaction<std::uint32_t, stm::mode::opaque, 2, 2> tx(keys, i);
      const stm::tx_status s = stm::atomically(tx, [&](auto& x) {
        const std::uint32_t a = x.read(lo), b = x.read(hi);
        if (!x.ok()) return;
        if ((a > b) == up) {
          x.write(lo, b);
          x.write(hi, a);
        }
      });
      acc.attempts += tx.attempts();
      acc.commits += s == stm::tx_status::committed ? 1 : 0;
    }
  }
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    flush_counts(acc, stats);
  }
};

#undef WARPKV_BENCH_FOR_ITEMS


// ---- 1. bank transfers --------------------------------------------------------------------------

int run_bank(stm_session& se, const common_options& co, const stm_options& so, std::vector<table_row>& rows) {
  int failures = 0;
  const std::vector<std::uint64_t> sizes =
      !so.accounts.empty() ? so.accounts
                           : (se.cuda() ? std::vector<std::uint64_t>{128, 1024, 16384, 1048576, 67108864}
                                        : std::vector<std::uint64_t>{16, 128, 1024});
  const std::size_t transfers = so.transfers != 0 ? so.transfers : (se.cuda() ? std::size_t{1} << 20 : std::size_t{1} << 16);
  // One global lock serializes everything: fewer transfers keep its run short.
  const std::size_t global_transfers = std::min<std::size_t>(transfers, se.cuda() ? std::size_t{1} << 16 : std::size_t{1} << 12);
  // Per-account locks collapse when many GPU threads share few accounts (0.01 M/s measured at 128):
  // fewer transfers there too, so one run stays within seconds.
  const auto lock_transfers = [&](std::size_t n) {
    return se.cuda() && n <= 1024 ? std::min<std::size_t>(transfers, std::size_t{1} << 14) : transfers;
  };
  const execution& ex = se.ex();
  buffer<ull> stats(4, ex);
  for (const std::uint64_t n64 : sizes) {
    if (n64 < 2) throw warpkv::error(warpkv::errc::invalid_argument, "warpkv-bench stm: --accounts must be >= 2");
    const std::size_t n = static_cast<std::size_t>(n64);
    const ull expected = static_cast<ull>(n) * static_cast<ull>(initial_balance);
    const auto report = [&](const std::string& variant, std::size_t ops, const timing_stats& t, bool ok,
                            const std::function<void(record&)>& extra) {
      record r = se.base("stm-bank", variant);
      r.set("accounts", n).set("transfers", ops);
      add_timing(r, t, ops);
      r.set("mtransfers_per_s", t.median_ms > 0 ? static_cast<double>(ops) / (t.median_ms * 1e3) : 0.0);
      extra(r);
      r.set("verified", ok);
      emit(r);
      rows.push_back({strf("bank n=%zu %s", n, variant.c_str()), ops, t.median_ms, ok});
      if (!ok) {
        ++failures;
        progress(strf("FAILED: bank %s with %zu accounts: total not conserved", variant.c_str(), n));
      }
    };
    for (const std::string& cm : so.contention) {  // STM, once per contention manager
      stm::heap<std::int64_t, stm::mode::opaque> h(n, ex);
      ull attempts = 0, commits = 0;
      const unsigned queue_after = queue_after_of(cm, so);
      const timing_stats t = se.measure([&](int) { h.fill(initial_balance); zero_stats(stats); },
                                        [&](int r) {
                                          se.run(transfers, bank_stm_body{h.ref(), co.seed + static_cast<u64>(r), queue_after,
                                                                          so.escalate_after, 0, 0, stats.data()});
                                        });
      const std::vector<ull> st = stats.to_vector();  // the last run's counters
      attempts = st[0];
      commits = st[1];
      const bool ok = sum_mod(h.to_vector()) == expected && commits == transfers;
      report("stm-opaque-" + cm, transfers, t, ok, [&](record& r) {
        r.set("contention", cm).set("queue_after", queue_after).set("escalate_after", so.escalate_after);
        r.set("stm_counts", "attempts and commits of the last run (transaction::attempts())");
        r.set("commits", commits).set("attempts", attempts);
        r.set("abort_ratio", attempts > 0 ? static_cast<double>(attempts - commits) / static_cast<double>(attempts) : 0.0);
        r.set("serial_escalations", h.serial_escalations()).set("queued_retries", h.queued_retries());
      });
    }
    buffer<ull> bal(n, ex);
    buffer<unsigned> locks(n, ex);
    const std::vector<ull> init(n, static_cast<ull>(initial_balance));
    const std::vector<unsigned> unlocked(n, 0);
    const auto reset = [&](int) {
      bal.copy_from_host(init.data(), n);
      locks.copy_from_host(unlocked.data(), n);
    };
    {
      const timing_stats t = se.measure(reset, [&](int r) {
        se.run_simple(transfers, bank_atomic_body{bal.data(), n, co.seed + static_cast<u64>(r), 0, 0});
      });
      report("two-atomics", transfers, t, sum_mod(bal.to_vector()) == expected,
             [](record& r) { r.set("isolation", false); });
    }
    {
      const timing_stats t = se.measure(reset, [&](int r) {
        se.run_simple(lock_transfers(n), bank_lock_body{bal.data(), locks.data(), n, co.seed + static_cast<u64>(r), 0, 0, false});
      });
      report("account-locks", lock_transfers(n), t, sum_mod(bal.to_vector()) == expected,
             [](record& r) { r.set("lock_order", "ascending address, exponential back-off"); });
    }
    {
      const timing_stats t = se.measure(reset, [&](int r) {
        se.run_simple(global_transfers, bank_lock_body{bal.data(), locks.data(), n, co.seed + static_cast<u64>(r), 0, 0, true});
      });
      report("global-lock", global_transfers, t, sum_mod(bal.to_vector()) == expected, [](record&) {});
    }
    progress(strf("bank: %zu accounts done", n));
  }
  return failures;
}

// ---- 2. the papers' bank ------------------------------------------------------------------------

int run_paper(stm_session& se, const common_options& co, const stm_options& so, std::vector<table_row>& rows) {
  int failures = 0;
  const std::vector<std::uint64_t> sizes =
      !so.paper_accounts.empty() ? so.paper_accounts : std::vector<std::uint64_t>{100000, 1000000};
  const std::size_t txs = so.paper_txs != 0 ? so.paper_txs : (se.cuda() ? std::size_t{1} << 18 : std::size_t{1} << 12);
  const execution& ex = se.ex();
  buffer<ull> stats(4, ex);
  for (const std::uint64_t n64 : sizes) {
    const std::size_t n = static_cast<std::size_t>(n64);
    if (n < 2 * paper_transfers + 2)
      throw warpkv::error(warpkv::errc::invalid_argument, "warpkv-bench stm: --paper-accounts must be >= 52");
    stm::heap<std::int64_t, stm::mode::opaque> h(n, ex);
    for (const std::string& cm : so.contention)
    for (const unsigned ro : so.read_only_percents) {
      const unsigned queue_after = queue_after_of(cm, so);
      const timing_stats t = se.measure([&](int) { h.fill(initial_balance); zero_stats(stats); },
                                        [&](int r) {
                                          se.run(txs, paper_body{h.ref(), co.seed + static_cast<u64>(r), ro, queue_after,
                                                                 so.escalate_after, 0, 0, stats.data()});
                                        });
      const std::vector<ull> st = stats.to_vector();
      const ull attempts = st[0], commits = st[1], updates = st[2];
      const bool conserved = sum_mod(h.to_vector()) == static_cast<ull>(n) * static_cast<ull>(initial_balance);
      const bool ok = conserved && commits == txs && h.clock() == updates;
      record r = se.base("stm-paper-bank", "stm-opaque-" + cm);
      r.set("contention", cm).set("queue_after", queue_after).set("escalate_after", so.escalate_after).set("accounts", n).set("transactions", txs).set("read_only_percent", ro);
      r.set("reads_per_read_only_tx", paper_reads).set("transfers_per_update_tx", paper_transfers);
      r.set("capacity", 2 * paper_transfers).set("write_capacity", 2 * paper_transfers).set("read_only_capacity", paper_reads);
      add_timing(r, t, txs);
      r.set("commits_per_s", t.median_ms > 0 ? static_cast<double>(commits) / (t.median_ms * 1e-3) : 0.0);
      r.set("commits", commits).set("update_commits", updates).set("attempts", attempts);
      r.set("abort_ratio", attempts > 0 ? static_cast<double>(attempts - commits) / static_cast<double>(attempts) : 0.0);
      r.set("serial_escalations", h.serial_escalations()).set("queued_retries", h.queued_retries());
      r.set("verified", ok);
      emit(r);
      rows.push_back({strf("paper n=%zu ro=%u%% %s", n, ro, cm.c_str()), txs, t.median_ms, ok});
      if (!ok) {
        ++failures;
        progress(strf("FAILED: paper bank n=%zu ro=%u%%: conserved=%d commits=%llu/%zu clock=%llu updates=%llu", n, ro,
                      conserved ? 1 : 0, commits, txs, static_cast<ull>(h.clock()), updates));
      }
    }
    progress(strf("paper bank: %zu accounts done", n));
  }
  return failures;
}

// ---- 3. bitonic sort ----------------------------------------------------------------------------

void cpu_bitonic(std::vector<std::uint32_t>& a) {
  const std::size_t n = a.size();
  for (std::size_t k = 2; k <= n; k *= 2)
    for (std::size_t j = k / 2; j >= 1; j /= 2)
      for (std::size_t i = 0; i < n / 2; ++i) {
        std::size_t lo = 0, hi = 0;
        bool up = true;
        bitonic_pair(i, k, j, lo, hi, up);
        if ((a[lo] > a[hi]) == up) std::swap(a[lo], a[hi]);
      }
}

int run_sort(stm_session& se, const common_options& co, const stm_options& so, std::vector<table_row>& rows) {
  int failures = 0;
  std::vector<std::uint64_t> sizes = so.sizes;
  if (sizes.empty()) {
    const int top = se.cuda() ? 20 : 14;
    for (int e = 10; e <= top; e += 2) sizes.push_back(std::uint64_t{1} << e);
  }
  const execution& ex = se.ex();
  buffer<ull> stats(4, ex);
  for (const std::uint64_t n64 : sizes) {
    if (n64 < 2 || (n64 & (n64 - 1)) != 0)
      throw warpkv::error(warpkv::errc::invalid_argument, "warpkv-bench stm: --sizes must be powers of two >= 2");
    const std::size_t n = static_cast<std::size_t>(n64);
    std::mt19937_64 gen(co.seed + n);
    std::vector<std::uint32_t> input(n);
    for (auto& x : input) x = static_cast<std::uint32_t>(gen());
    std::vector<std::uint32_t> expected = input;
    std::sort(expected.begin(), expected.end());
    std::size_t steps = 0;
    for (std::size_t k = 2; k <= n; k *= 2)
      for (std::size_t j = k / 2; j >= 1; j /= 2) ++steps;
    const auto report = [&](const std::string& variant, const timing_stats& t, bool ok, bool on_cpu, ull attempts) {
      record r = se.base("stm-sort", variant, on_cpu);
      r.set("keys", n).set("steps", steps).set("compare_exchanges", steps * (n / 2));
      add_timing(r, t, n);
      r.set("mkeys_per_s", t.median_ms > 0 ? static_cast<double>(n) / (t.median_ms * 1e3) : 0.0);
      if (attempts != 0) r.set("attempts", attempts);
      r.set("verified", ok);
      emit(r);
      rows.push_back({strf("sort 2^%d %s", static_cast<int>(std::countr_zero(n64)), variant.c_str()), n, t.median_ms, ok});
      if (!ok) {
        ++failures;
        progress(strf("FAILED: sort %s of %zu keys: output differs from std::sort", variant.c_str(), n));
      }
    };
    {
      std::vector<std::uint32_t> a;
      const timing_stats t = se.measure_cpu([&](int) {
        a = input;
        std::sort(a.begin(), a.end());
      });
      report("cpu-std-sort", t, a == expected, true, 0);
    }
    {
      std::vector<std::uint32_t> a;
      const timing_stats t = se.measure_cpu([&](int) {
        a = input;
        cpu_bitonic(a);
      });
      report("cpu-bitonic", t, a == expected, true, 0);
    }
    {
      buffer<std::uint32_t> keys(n, ex);
      const timing_stats t = se.measure([&](int) { keys.copy_from_host(input.data(), n); },
                                        [&](int) {
                                          for (std::size_t k = 2; k <= n; k *= 2)
                                            for (std::size_t j = k / 2; j >= 1; j /= 2)
                                              se.run_simple(n / 2, bitonic_body{keys.data(), k, j, 0, 0});
                                        });
      report(se.cuda() ? "gpu-bitonic" : "host-bitonic", t, keys.to_vector() == expected, false, 0);
    }
    {
      stm::heap<std::uint32_t, stm::mode::opaque> h(n, ex);
      const timing_stats t = se.measure([&](int) { h.assign(input); zero_stats(stats); },
                                        [&](int) {
                                          for (std::size_t k = 2; k <= n; k *= 2)
                                            for (std::size_t j = k / 2; j >= 1; j /= 2)
                                              se.run(n / 2, bitonic_stm_body{h.ref(), k, j, 0, 0, stats.data()});
                                        });
      const std::vector<ull> st = stats.to_vector();
      const bool ok = h.to_vector() == expected && st[1] == static_cast<ull>(steps * (n / 2));
      report(se.cuda() ? "gpu-bitonic-stm" : "host-bitonic-stm", t, ok, false, st[0]);
    }
#if WARPKV_HAS_CUDA
    if (se.cuda()) {
      buffer<std::uint32_t> in(n, ex), out(n, ex);
      std::size_t temp_bytes = 0;
      WARPKV_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, in.data(), out.data(), static_cast<int>(n), 0, 32,
                                                       ex.stream));
      buffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1), ex);
      const timing_stats t = se.measure([&](int) { in.copy_from_host(input.data(), n); },
                                        [&](int) {
                                          WARPKV_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, in.data(), out.data(),
                                                                                           static_cast<int>(n), 0, 32, ex.stream));
                                        });
      report("cub-radix-sort", t, out.to_vector() == expected, false, 0);
    }
#endif
    progress(strf("sort: 2^%d keys done", static_cast<int>(std::countr_zero(n64))));
  }
  return failures;
}

}  // namespace

int run_stm(const common_options& co, const stm_options& so) {
  stm_session se(co);
  std::vector<table_row> rows;
  int failures = 0;
  const auto wants = [&](const char* w) { return std::find(so.workloads.begin(), so.workloads.end(), w) != so.workloads.end(); };
  if (wants("bank")) failures += run_bank(se, co, so, rows);
  if (wants("paper")) failures += run_paper(se, co, so, rows);
  if (wants("sort")) failures += run_sort(se, co, so, rows);
  if (wants("map")) failures += run_stm_map(se, co, so, rows);
  std::fflush(stdout);
  print_table(se.cuda() ? "warpkv-bench stm (GPU, CUDA events; cpu-* rows: CPU wall clock)"
                        : "warpkv-bench stm (host backend: CPU wall-clock timings, NOT GPU figures)",
              rows, true);
  return failures == 0 ? 0 : 1;
}

}  // namespace warpkv_bench
