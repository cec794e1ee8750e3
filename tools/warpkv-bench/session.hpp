#pragma once
// The backend session every warpkv-bench workload runs in: execution (with its own CUDA
// stream), the device's description, CUDA-event or steady-clock timing, warm-up and repeats,
// and the fields every JSON record carries. Included by each workload translation unit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/execution.hpp"

namespace warpkv_bench {

using warpkv::execution;

// ---- backend, device description, timing ------------------------------------------------

/// The backend of one run: execution (with its own CUDA stream), the device's description
/// and a stopwatch. Everything that allocates on the stream must be destroyed first.
class session {
 public:
  explicit session(const common_options& co) : co_(co), warmup_(co.warmup >= 0 ? co.warmup : 2) {
    const bool want_cuda = co.backend == "cuda" || (co.backend == "auto" && warpkv::cuda_available());
    if (want_cuda) {
#if WARPKV_HAS_CUDA
      ex_ = execution::gpu();  // throws warpkv::error(unsupported) when no device is visible
      int dev = 0;
      WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
      cudaDeviceProp prop{};
      WARPKV_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
      device_ = prop.name;
      cc_ = std::to_string(prop.major) + "." + std::to_string(prop.minor);
      sms_ = prop.multiProcessorCount;
      l2_bytes_ = static_cast<std::size_t>(prop.l2CacheSize);
      WARPKV_CUDA_CHECK(cudaDriverGetVersion(&driver_));
      WARPKV_CUDA_CHECK(cudaRuntimeGetVersion(&runtime_));
      cudaStream_t s = nullptr;
      WARPKV_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      ex_.stream = s;
      WARPKV_CUDA_CHECK(cudaEventCreate(&start_));
      WARPKV_CUDA_CHECK(cudaEventCreate(&stop_));
#else
      ex_ = execution::gpu();  // throws: this build has no CUDA backend
#endif
    } else {
      ex_ = execution::host(co.host_tiles);
      const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
      device_ = "host (" + std::to_string(threads) + " threads)";
      progress(strf("NOTE: backend=host: timings are CPU wall-clock timings of host threads emulating warps "
                    "(%u concurrent tiles on %u hardware threads); they are NOT GPU figures.",
                    ex_.concurrent_host_tiles(), threads));
    }
  }
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  ~session() {
#if WARPKV_HAS_CUDA
    if (cuda()) {
      (void)cudaStreamSynchronize(ex_.stream);
      (void)cudaEventDestroy(start_);
      (void)cudaEventDestroy(stop_);
      (void)cudaStreamDestroy(ex_.stream);
    }
#endif
  }

  [[nodiscard]] bool cuda() const { return ex_.where == warpkv::backend::cuda; }
  [[nodiscard]] const execution& ex() const { return ex_; }
  [[nodiscard]] const common_options& options() const { return co_; }
  [[nodiscard]] int repeats(int fallback) const { return co_.repeats > 0 ? co_.repeats : fallback; }
  /// Warm-up runs: --warmup, else the subcommand's default for this backend.
  void default_warmup(int on_cuda, int on_host) { warmup_ = co_.warmup >= 0 ? co_.warmup : (cuda() ? on_cuda : on_host); }
  [[nodiscard]] int warmup() const { return warmup_; }
  /// Throughput for progress lines: G ops/s on the GPU, M ops/s on the host backend.
  [[nodiscard]] double rate(std::uint64_t ops, double ms) const {
    return ms > 0 ? static_cast<double>(ops) / (ms * (cuda() ? 1e6 : 1e3)) : 0.0;
  }
  [[nodiscard]] const char* rate_unit() const { return cuda() ? "G ops/s" : "M ops/s (host)"; }
  [[nodiscard]] const std::string& device() const { return device_; }

  /// Independent input sets to rotate between runs: at least 2, and on the GPU enough that
  /// the sets together are twice the L2 (capped at 16 and by free device memory).
  [[nodiscard]] int input_sets(std::uint64_t bytes_per_set, int copies_per_set = 1) const {
    if (!cuda() || bytes_per_set == 0) return 2;
    const double want = std::ceil(2.0 * static_cast<double>(l2_bytes_) / static_cast<double>(bytes_per_set));
    int sets = static_cast<int>(std::clamp(want, 2.0, 16.0));
#if !WARPKV_HAS_CUDA
    (void)copies_per_set;
#else
    std::size_t free_b = 0, total_b = 0;
    WARPKV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    while (sets > 2 && static_cast<double>(sets) * static_cast<double>(copies_per_set) * static_cast<double>(bytes_per_set) >
                           0.5 * static_cast<double>(free_b))
      --sets;
#endif
    return sets;
  }

  /// Milliseconds of f() on the backend: CUDA events around it on the map's stream,
  /// or the CPU's steady clock (the host backend is synchronous).
  template <class F>
  double time_ms(F&& f) {
#if WARPKV_HAS_CUDA
    if (cuda()) {
      WARPKV_CUDA_CHECK(cudaEventRecord(start_, ex_.stream));
      f();
      WARPKV_CUDA_CHECK(cudaEventRecord(stop_, ex_.stream));
      WARPKV_CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      WARPKV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      return static_cast<double>(ms);
    }
#endif
    const auto t0 = std::chrono::steady_clock::now();
    f();
    warpkv::synchronize(ex_);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  /// What the next measure() runs, for its progress lines (cleared by it).
  void phase(std::string what) { phase_ = std::move(what); }

  /// warmup + repeats runs of body(r); setup(r) runs before each, untimed and waited for.
  /// Returns the timings of the repeats. Between runs, a progress line whenever nothing was
  /// printed for heartbeat_seconds (the host backend's runs can take many seconds).
  template <class Setup, class Body>
  std::vector<double> measure(int repeats, Setup&& setup, Body&& body) {
    std::vector<double> out;
    const int total = warmup_ + repeats;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < total; ++r) {
      setup(r);
      warpkv::synchronize(ex_);
      const double ms = time_ms([&] { body(r); });
      if (r >= warmup_) out.push_back(ms);
      if (r + 1 < total && progress_due())
        progress(strf("  ... %s: run %d of %d done (%.0f s so far)", phase_.empty() ? "measuring" : phase_.c_str(), r + 1,
                      total, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    }
    phase_.clear();
    return out;
  }
  [[nodiscard]] int last_run(int repeats) const { return warmup_ + repeats - 1; }

  /// Fields every record carries.
  [[nodiscard]] record base(const std::string& workload) const {
    record r;
    r.set("tool", "warpkv-bench").set("schema", 1).set("workload", workload);
    r.set("backend", ex_.name()).set("device", device_);
    r.set("timing", cuda() ? "cuda-events" : "cpu-wall-clock");
    if (cuda()) {
      r.set("driver_version", driver_).set("runtime_version", runtime_).set("compute_capability", cc_);
      r.set("sm_count", sms_).set("l2_bytes", l2_bytes_);
    } else {
      r.set("host_tiles", ex_.concurrent_host_tiles()).set("hardware_threads", std::thread::hardware_concurrency());
    }
    r.set("warmup", warmup_).set("seed", co_.seed);
    return r;
  }

 private:
  common_options co_;
  int warmup_ = 2;
  std::string phase_;
  execution ex_{};
  std::string device_;
  std::string cc_;
  int driver_ = -1;
  int runtime_ = -1;
  int sms_ = 0;
  std::size_t l2_bytes_ = 0;
#if WARPKV_HAS_CUDA
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
#endif
};

}  // namespace warpkv_bench
