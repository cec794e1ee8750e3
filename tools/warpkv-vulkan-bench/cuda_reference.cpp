// The CUDA linear_map on the Vulkan benchmark's keys (compiled by nvcc when the CUDA backend is
// on; without it the same file reports "no CUDA backend").
#include "cuda_reference.hpp"

#include <span>

#include "warpkv/core/buffer.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/open_addressing/linear_map.hpp"

namespace warpkv_vulkan_bench {
namespace {

#if WARPKV_HAS_CUDA
class event_timer {
 public:
  explicit event_timer(cudaStream_t s) : s_(s) {
    WARPKV_CUDA_CHECK(cudaEventCreate(&a_));
    WARPKV_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~event_timer() {
    (void)cudaEventDestroy(a_);
    (void)cudaEventDestroy(b_);
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;
  template <class F>
  double seconds(F&& f) {
    WARPKV_CUDA_CHECK(cudaEventRecord(a_, s_));
    f();
    WARPKV_CUDA_CHECK(cudaEventRecord(b_, s_));
    WARPKV_CUDA_CHECK(cudaEventSynchronize(b_));
    float ms = 0;
    WARPKV_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaStream_t s_;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

template <int T>
void run(cuda_timings& r, const std::vector<std::uint32_t>& hit, const std::vector<std::uint32_t>& miss,
         std::size_t capacity, int warmup, int repeats) {
  using map_t = warpkv::linear_map<std::uint32_t, std::uint32_t, T>;
  const auto ex = warpkv::execution::gpu();
  warpkv::open_addressing_config cfg;
  cfg.max_load_factor = 1.0;  // exactly `capacity` slots, as the Vulkan map
  cfg.tombstone_threshold = 1.0;
  map_t m(capacity, cfg, ex);
  const std::size_t n = hit.size();
  std::vector<std::uint32_t> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);
  auto kb = warpkv::buffer<std::uint32_t>::from_host(std::span<const std::uint32_t>(hit), ex);
  auto mb = warpkv::buffer<std::uint32_t>::from_host(std::span<const std::uint32_t>(miss), ex);
  auto vb = warpkv::buffer<std::uint32_t>::from_host(std::span<const std::uint32_t>(values), ex);
  warpkv::buffer<std::uint32_t> ob(n, ex);
  warpkv::buffer<warpkv::status> sb(n, ex);
  event_timer t(ex.stream);
  for (int i = 0; i < warmup + repeats; ++i) {
    m.clear();
    const double s = t.seconds([&] { m.insert(kb.data(), vb.data(), n, sb.data()); });
    if (i >= warmup) r.build_s.push_back(s);
  }
  bool ok = m.size() == n && m.capacity() == capacity;
  for (int i = 0; i < warmup + repeats; ++i) {
    const double s = t.seconds([&] { m.find(kb.data(), n, ob.data(), sb.data()); });
    if (i >= warmup) r.find_hit_s.push_back(s);
  }
  ok = ok && ob.to_vector() == values;
  for (int i = 0; i < warmup + repeats; ++i) {
    const double s = t.seconds([&] { m.find(mb.data(), n, ob.data(), sb.data()); });
    if (i >= warmup) r.find_miss_s.push_back(s);
  }
  const auto st = sb.to_vector();
  for (const auto s : st) ok = ok && s == warpkv::status::not_found;
  r.verified = ok;
}
#endif

}  // namespace

cuda_timings run_cuda_linear_map(const std::vector<std::uint32_t>& hit, const std::vector<std::uint32_t>& miss,
                                 std::size_t capacity, int warmup, int repeats) {
  cuda_timings r;
#if WARPKV_HAS_CUDA
  if (!warpkv::cuda_available()) {
    r.why = "no CUDA device";
    return r;
  }
  cudaDeviceProp prop{};
  int dev = 0;
  WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
  WARPKV_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  r.device = prop.name;
  r.available = true;
  run<4>(r, hit, miss, capacity, warmup, repeats);
#else
  (void)hit, (void)miss, (void)capacity, (void)warmup, (void)repeats;
  r.why = "this build has no CUDA backend";
#endif
  return r;
}

}  // namespace warpkv_vulkan_bench
