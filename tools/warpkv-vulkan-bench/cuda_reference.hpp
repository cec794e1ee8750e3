#pragma once
// The CUDA linear_map on the same keys, for the Vulkan/CUDA comparison in one call. Declared
// free of warpkv headers that depend on WARPKV_HAS_CUDA: cuda_reference.cpp is compiled by nvcc
// when the CUDA backend is on, main.cpp by the host compiler.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace warpkv_vulkan_bench {

struct cuda_timings {
  bool available = false;  ///< false: no CUDA device or no CUDA backend in this build (why says which)
  std::string why;
  std::string device;
  std::vector<double> build_s, find_hit_s, find_miss_s;  ///< per timed repeat (CUDA events)
  bool verified = false;
};

/// Builds linear_map<uint32_t, uint32_t, 4> (the CUDA map's default tile) of `capacity` slots from `hit`
/// (values 0..n-1), then finds `hit` and `miss`; warmup + repeats runs of each.
cuda_timings run_cuda_linear_map(const std::vector<std::uint32_t>& hit, const std::vector<std::uint32_t>& miss,
                                 std::size_t capacity, int warmup, int repeats);

}  // namespace warpkv_vulkan_bench
