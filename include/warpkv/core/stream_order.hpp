#pragma once
// Stream ordering between a caller's stream and a structure's own stream: a bulk call given a
// stream runs its kernels on the structure's stream (where its table, growth and scratch memory
// live) ordered after everything already queued on the caller's stream, and leaves the caller's
// stream ordered after its work. Both are event waits on the GPU: no host round trip. On the
// host backend, or when both streams are the same, nothing happens.
#include <optional>

#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/execution.hpp"

namespace warpkv {

/// The stream argument of a bulk call: empty = the structure's own stream (execution::stream).
using stream_arg = std::optional<stream_t>;

namespace detail {

#if WARPKV_HAS_CUDA
/// `waiter` waits (on the GPU) for the work `on` has queued so far: an event recorded on `on`.
inline void stream_wait(cudaStream_t waiter, cudaStream_t on) {
  cudaEvent_t e = nullptr;
  WARPKV_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  const cudaError_t r = cudaEventRecord(e, on);
  const cudaError_t w = r == cudaSuccess ? cudaStreamWaitEvent(waiter, e, 0) : r;
  (void)cudaEventDestroy(e);  // released by the driver once the wait is satisfied
  WARPKV_CUDA_CHECK(w);
}
#endif

class stream_join {
 public:
  /// The structure's stream (ex.stream) waits for what `caller` has queued so far.
  stream_join(const execution& ex, stream_arg caller) {
#if WARPKV_HAS_CUDA
    if (ex.where != backend::cuda || !caller || *caller == ex.stream) return;
    own_ = ex.stream;
    caller_ = *caller;
    active_ = true;
    wait(own_, caller_);
#else
    (void)ex, (void)caller;
#endif
  }
  /// The caller's stream waits for what the structure's stream has queued so far; call once the
  /// call's work is queued (also on an error path: the caller's stream then waits for whatever was
  /// queued before the error). Idempotent.
  void done() {
#if WARPKV_HAS_CUDA
    if (active_) {
      active_ = false;
      wait(caller_, own_);
    }
#endif
  }
  ~stream_join() {
    try {
      done();
    } catch (...) {  // a destructor must not throw; the call that failed reports its own error
    }
  }
  stream_join(const stream_join&) = delete;
  stream_join& operator=(const stream_join&) = delete;

 private:
#if WARPKV_HAS_CUDA
  static void wait(cudaStream_t waiter, cudaStream_t on) { stream_wait(waiter, on); }
  cudaStream_t own_ = nullptr;
  cudaStream_t caller_ = nullptr;
#endif
  bool active_ = false;
};

}  // namespace detail
}  // namespace warpkv
