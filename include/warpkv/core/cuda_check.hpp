#pragma once
// Every CUDA runtime call and kernel launch goes through WARPKV_CUDA_CHECK /
// WARPKV_CUDA_CHECK_LAUNCH, which throw warpkv::error(errc::cuda) with file and line.
#include <string>

#include "warpkv/core/config.hpp"
#include "warpkv/core/error.hpp"

#if WARPKV_HAS_CUDA
#include <cuda_runtime.h>

namespace warpkv::detail {
inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) {
    throw error(errc::cuda, std::string("warpkv: CUDA error '") + cudaGetErrorString(e) + "' from " + call + " at " +
                                file + ":" + std::to_string(line));
  }
}
}  // namespace warpkv::detail

#define WARPKV_CUDA_CHECK(call) ::warpkv::detail::cuda_check((call), #call, __FILE__, __LINE__)
#define WARPKV_CUDA_CHECK_LAUNCH(what) ::warpkv::detail::cuda_check(cudaGetLastError(), what, __FILE__, __LINE__)
#endif
