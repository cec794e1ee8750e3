#pragma once
// Block-synchronous kernels with shared memory, on the GPU or on host threads.
//
// launcher.hpp runs grids of tiles; some algorithms (k-means' assignment step) need a whole
// thread block that stages data in shared memory and meets at block barriers. Such a kernel
// is written once, as phases separated by sync(), against a `Block` context:
//
//   struct body {
//     static constexpr unsigned block_threads = 128;
//     struct thread_state { ... };   // what a thread keeps in registers between phases
//     template <class Block> WARPKV_HD void start(Block&) const;                  // once per block
//     template <class Block> WARPKV_HD void operator()(Block&, std::size_t work) const;
//     template <class Block> WARPKV_HD void finish(Block&) const;                 // once per block
//   };
//   Block: threads(), smem() (dynamic shared memory, 16-byte aligned), sync(),
//          for_each_thread(f) with f(unsigned thread, thread_state&).
//
// On the GPU each block is resident and walks work items grid-stride; for_each_thread runs f
// once on the calling thread and sync() is __syncthreads(). On the host each pool thread plays
// one block: for_each_thread runs f for every thread in turn (a phase of a block-synchronous
// program may not depend on the order of its threads, so this is one legal interleaving), and
// blocks run concurrently on the pool, racing on global memory exactly as GPU blocks do.
#include <cstddef>
#include <memory>
#include <vector>

#include "warpkv/core/config.hpp"
#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"

namespace warpkv {

/// Host block: every thread's phase runs in turn on one host thread.
template <class State>
class host_block {
 public:
  host_block(unsigned threads, unsigned char* smem, State* states) : threads_(threads), smem_(smem), states_(states) {}
  WARPKV_HD unsigned threads() const { return threads_; }
  WARPKV_HD unsigned char* smem() const { return smem_; }
  WARPKV_HD void sync() const {}
  template <class F>
  WARPKV_HD void for_each_thread(F&& f) const {
#if !WARPKV_DEVICE_PASS
    for (unsigned t = 0; t < threads_; ++t) f(t, states_[t]);
#else
    (void)f;
#endif
  }

 private:
  unsigned threads_;
  unsigned char* smem_;
  State* states_;
};

#if WARPKV_HAS_CUDA
/// GPU block: the calling thread's phase, in registers; sync() is a block barrier.
template <class State>
class cuda_block {
 public:
  __device__ cuda_block(unsigned char* smem, State* state) : smem_(smem), state_(state) {}
  __device__ unsigned threads() const { return blockDim.x; }
  __device__ unsigned char* smem() const { return smem_; }
  __device__ void sync() const { __syncthreads(); }
  template <class F>
  __device__ void for_each_thread(F&& f) const {
    f(threadIdx.x, *state_);
  }

 private:
  unsigned char* smem_;
  State* state_;
};
#endif

namespace detail {

/// Per pool thread: the shared memory and thread states of the block it plays.
template <class Body>
struct host_block_storage {
  std::unique_ptr<double[]> smem;  // double: 8-byte alignment at least (operator new gives 16)
  std::unique_ptr<typename Body::thread_state[]> states;
  bool started = false;
};

template <class Body>
struct host_block_adapter {
  using accumulator = host_block_storage<Body>;
  Body body;
  std::size_t smem_bytes;
  template <class Tile>
  void operator()(const Tile&, std::size_t work, accumulator& a) const {
    if (!a.started) {
      a.smem.reset(new double[(smem_bytes + sizeof(double) - 1) / sizeof(double) + 1]);
      a.states.reset(new typename Body::thread_state[Body::block_threads]{});
      a.started = true;
      auto b = block(a);
      body.start(b);
    }
    auto b = block(a);
    body(b, work);
  }
  template <class Tile>
  void flush(const Tile&, accumulator& a) const {
    if (!a.started) return;
    auto b = block(a);
    body.finish(b);
  }
  static host_block<typename Body::thread_state> block(accumulator& a) {
    return host_block<typename Body::thread_state>(Body::block_threads, reinterpret_cast<unsigned char*>(a.smem.get()),
                                                   a.states.get());
  }
};

#if WARPKV_HAS_CUDA
template <class Body>
__global__ void __launch_bounds__(Body::block_threads) block_kernel(Body body, std::size_t num_work) {
  extern __shared__ __align__(16) unsigned char warpkv_block_smem[];
  typename Body::thread_state state{};
  cuda_block<typename Body::thread_state> b(warpkv_block_smem, &state);
  body.start(b);
  for (std::size_t w = blockIdx.x; w < num_work; w += gridDim.x) body(b, w);
  body.finish(b);
}

/// Resident blocks of block_kernel<Body> with `smem_bytes` on the current device (SMs x blocks
/// per SM), queried once per thread for each (device, size): the attribute and occupancy calls
/// cost microseconds a launch, and k-means launches an assignment every iteration.
template <class Body>
std::size_t resident_blocks(std::size_t smem_bytes) {
  struct cached {
    int dev = -1;
    std::size_t smem = 0;
    std::size_t blocks = 0;
  };
  thread_local cached last;
  int dev = 0, sms = 0, per_sm = 0;
  WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
  if (last.dev == dev && last.smem == smem_bytes) return last.blocks;
  WARPKV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (smem_bytes > 48 * 1024)
    WARPKV_CUDA_CHECK(cudaFuncSetAttribute(block_kernel<Body>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem_bytes)));
  WARPKV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, block_kernel<Body>, Body::block_threads,
                                                                  smem_bytes));
  if (per_sm <= 0)
    throw error(errc::unsupported, "warpkv: a block of " + std::to_string(Body::block_threads) + " threads with " +
                                       std::to_string(smem_bytes) + " bytes of shared memory cannot run on this GPU");
  last = {dev, smem_bytes, static_cast<std::size_t>(sms) * static_cast<std::size_t>(per_sm)};
  return last.blocks;
}

template <class Body>
void launch_blocks_cuda(std::size_t num_work, std::size_t smem_bytes, const Body& body, cudaStream_t stream) {
  const std::size_t grid = std::min<std::size_t>(num_work, resident_blocks<Body>(smem_bytes));
  block_kernel<Body><<<static_cast<unsigned>(grid), Body::block_threads, smem_bytes, stream>>>(body, num_work);
  WARPKV_CUDA_CHECK_LAUNCH("block_kernel launch");
}
#endif

}  // namespace detail

/// Runs `body` over `num_work` work items with blocks of Body::block_threads threads and
/// `smem_bytes` of shared memory each. Stream-ordered on the GPU; synchronous on the host.
template <class Body>
void launch_blocks(const execution& ex, std::size_t num_work, std::size_t smem_bytes, const Body& body) {
  if (num_work == 0) return;
  if (ex.where == backend::cuda) {
#if WARPKV_HAS_CUDA
    detail::launch_blocks_cuda(num_work, smem_bytes, body, ex.stream);
#else
    throw error(errc::unsupported, "warpkv: this translation unit was not compiled with CUDA");
#endif
  } else {
    detail::launch_host<1>(num_work, detail::host_block_adapter<Body>{body, smem_bytes}, ex.concurrent_host_tiles());
  }
}

}  // namespace warpkv
