#pragma once
// Stream-ordered copies and fills on either backend (device memory on cuda, host memory on host).
#include <cstddef>
#include <cstring>

#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/execution.hpp"

namespace warpkv::detail {

template <class T>
void fill_zero(const execution& ex, T* p, std::size_t n) {
  if (n == 0) return;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    WARPKV_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(T), ex.stream));
#endif
  } else {
    std::memset(static_cast<void*>(p), 0, n * sizeof(T));
  }
}

/// Copies n elements from execution memory to host memory and waits for them.
template <class T>
void to_host(const execution& ex, T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    WARPKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, ex.stream));
    WARPKV_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
#endif
  } else {
    std::memcpy(static_cast<void*>(dst), src, n * sizeof(T));
  }
}

/// Copies n elements from host memory to execution memory (stream-ordered; `src` must stay
/// alive until the stream reaches the copy: callers synchronize before freeing it).
template <class T>
void from_host(const execution& ex, T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    WARPKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, ex.stream));
#endif
  } else {
    std::memcpy(static_cast<void*>(dst), src, n * sizeof(T));
  }
}

/// Copies n elements within execution memory.
template <class T>
void copy_within(const execution& ex, T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    WARPKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, ex.stream));
#endif
  } else {
    std::memmove(static_cast<void*>(dst), src, n * sizeof(T));
  }
}

}  // namespace warpkv::detail
