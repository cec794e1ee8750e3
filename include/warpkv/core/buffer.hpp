#pragma once
// RAII storage on either backend: stream-ordered cudaMallocAsync on the GPU,
// plain heap memory on the host backend.
#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"

namespace warpkv {

template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T>, "buffers hold trivially copyable elements");

 public:
  buffer() = default;
  buffer(std::size_t n, const execution& ex) : n_(n), ex_(ex) {
    if (n == 0) return;
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw error(errc::out_of_memory, "warpkv: buffer of " + std::to_string(n) + " elements overflows size_t");
    if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
      void* p = nullptr;
      const cudaError_t e = cudaMallocAsync(&p, n * sizeof(T), ex.stream);
      if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throw error(errc::out_of_memory,
                    "warpkv: cannot allocate " + std::to_string(n * sizeof(T)) + " bytes of device memory");
      }
      WARPKV_CUDA_CHECK(e);
      p_ = static_cast<T*>(p);
#endif
    } else {
      p_ = static_cast<T*>(::operator new(n * sizeof(T), std::nothrow));
      if (p_ == nullptr)
        throw error(errc::out_of_memory, "warpkv: cannot allocate " + std::to_string(n * sizeof(T)) + " host bytes");
    }
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& o) noexcept { swap(o); }
  buffer& operator=(buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  ~buffer() { release(); }

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  const execution& exec() const { return ex_; }

  /// Copies `src` (host memory) into the buffer, stream-ordered.
  void copy_from_host(const T* src, std::size_t n) {
    require(n <= n_, "n", "copy larger than the buffer");
    copy(p_, src, n, true);
  }
  /// Copies the first n elements to host memory and waits for them.
  void copy_to_host(T* dst, std::size_t n) const {
    require(n <= n_, "n", "copy larger than the buffer");
    copy(dst, p_, n, false);
    synchronize(ex_);
  }
  std::vector<T> to_vector() const {
    std::vector<T> v(n_);
    copy_to_host(v.data(), n_);
    return v;
  }
  static buffer from_host(std::span<const T> src, const execution& ex) {
    buffer b(src.size(), ex);
    b.copy_from_host(src.data(), src.size());
    return b;
  }

 private:
  void copy(T* dst, const T* src, std::size_t n, bool to_buffer) const {
    if (n == 0) return;
    if (ex_.where == backend::cuda) {
#if WARPKV_HAS_CUDA
      WARPKV_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T),
                                        to_buffer ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, ex_.stream));
#endif
    } else {
      (void)to_buffer;  // host memory both ways
      std::memcpy(dst, src, n * sizeof(T));
    }
  }
  void release() noexcept {
    if (p_ == nullptr) return;
    if (ex_.where == backend::cuda) {
#if WARPKV_HAS_CUDA
      (void)cudaFreeAsync(p_, ex_.stream);  // destructors must not throw; a failure here surfaces at the next call
#endif
    } else {
      ::operator delete(p_);
    }
    p_ = nullptr;
    n_ = 0;
  }
  void swap(buffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(ex_, o.ex_);
  }

  T* p_ = nullptr;
  std::size_t n_ = 0;
  execution ex_{};
};

}  // namespace warpkv
