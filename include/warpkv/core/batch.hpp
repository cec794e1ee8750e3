#pragma once
// The batch: one launch runs n operations concurrently and records a status per
// operation plus counts of each status. Every structure's bulk API is a thin
// layer over launch_batch.
//
// Work sharing (GLHT, core/work_sharing.hpp): a tile of T lanes owns T consecutive
// operations and serves the lanes that hold one in turn, each with all T lanes.
// With T = 1 each thread serves its own operation.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "warpkv/core/aggregate.hpp"
#include "warpkv/core/atomic.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/cuda_check.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/core/op_traits.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/core/work_sharing.hpp"

namespace warpkv {

inline constexpr int num_status_kinds = 7;

/// Counts of each status over one batch.
struct batch_summary {
  std::array<std::uint64_t, num_status_kinds> count{};
  [[nodiscard]] std::uint64_t operator[](status s) const { return count[static_cast<int>(s)]; }
  batch_summary& operator+=(const batch_summary& o) {
    for (int i = 0; i < num_status_kinds; ++i) count[i] += o.count[i];
    return *this;
  }
};

/// The shapes of a batch launch: the serve loop (GLHT's work sharing: a tile of T lanes owns T
/// consecutive operations and serves them in turn; mixed batches) or one operation per tile
/// (cuco's mapping; uniform batches: every tile runs the same path, no serve loop, no op switch).
enum class batch_shape { serve_loop, op_per_tile };

/// An index list's mark: an entry `i | list_mark` is operation i, still to run (it came back
/// `full`); `i` alone is operation i, done. Lists of marked entries need n < list_mark.
inline constexpr std::uint32_t list_mark = 0x80000000u;

/// Where a first pass hands back the operations it leaves `full` (core/batch_partition.hpp,
/// handing_back_op): their indices, marked, appended to `list` (room for every operation of the
/// launch) at positions taken from `count` (zeroed before the launch; it ends as the list's
/// length, which equals the launch's `full` count). Nothing is written for an operation that ends
/// otherwise, so a batch whose caller asked for no statuses writes no per-operation array at all
/// (issue 23, item 2).
struct handback_list {
  std::uint32_t* list = nullptr;
  unsigned long long* count = nullptr;
};

namespace detail {

/// Per-lane status counts held in registers. add() indexes by constants only: a run-time index
/// (`++c[int(s)]`) put the counters in local memory.
template <class Count>
struct status_counts {
  Count c[num_status_kinds] = {};
  WARPKV_HD void add(status s) {
#if WARPKV_DEVICE_PASS
#pragma unroll
#endif
    for (int k = 0; k < num_status_kinds; ++k) c[k] += static_cast<int>(s) == k ? Count{1} : Count{0};
  }
};

/// Op: copyable, `template <class Tile> WARPKV_HD status operator()(const Tile&, std::size_t i) const`,
/// called by every lane of the tile for operation i; returns the same status on every lane.
template <int T, class Op>
struct batch_body {
  /// The op's register budget when it declares one (a rebuild's reinsert_op), else 0.
  static constexpr int register_budget = register_budget_of_op<Op>();
  Op op;
  std::size_t n;
  status* statuses;
  unsigned long long* counters;  // num_status_kinds counters in the backend's memory, or null
  bool only_full;                // re-run only operations whose previous status was `full`

  using accumulator = status_counts<unsigned long long>;

  template <class Tile>
  WARPKV_HD void operator()(const Tile& tile, std::size_t tile_index, accumulator& acc) const {
    const unsigned rank = tile.thread_rank();
    const std::size_t i = tile_index * T + rank;
    const bool mine = i < n && (!only_full || statuses[i] == status::full);
    serve_each(tile, mine, [&](unsigned lane) {
      const std::size_t j = tile_index * T + lane;
      const status s = op(tile, j);
      if (rank == lane) {
        statuses[j] = s;
        acc.add(s);
      }
    });
  }

  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    if (counters == nullptr) return;  // read-only batches do not count
    for (int k = 0; k < num_status_kinds; ++k)
      if (acc.c[k] != 0) atomic_ref<unsigned long long>(counters[k]).fetch_add(acc.c[k], memory_order::relaxed);
  }
};

/// One operation per tile: tile i runs operation i. Statuses are stored only when the caller
/// asked for them (statuses != null); lane 0 of each tile counts in registers (a constant-index
/// accumulator, so no local memory), and the counts are summed per warp and then per block at the
/// end (flush: one atomic per block and status kind that occurred); nothing is counted when
/// counters is null.
template <int T, class Op>
struct tile_op_body {
  /// The op's register budget (its ref's hot_register_budget), 0 when it declares none: the
  /// launcher sizes the kernel's launch bounds by it.
  static constexpr int register_budget = register_budget_of_op<Op>();
  /// One-lane tiles of an op whose ref asks for it launch a tile per operation instead of a
  /// persistent grid (core/launcher.hpp, persistent_grid).
  static constexpr bool thread_per_item = T == 1 && thread_per_op_of_op<Op>();
  /// The launch shape of a tile-per-item kernel (an op's `launch`, core/op_traits.hpp's
  /// per_op_launch): threads per block and operations per thread; 0: the launcher's defaults.
  static constexpr int block_threads = launch_of_op<Op>().block_threads;
  static constexpr int items_per_thread = launch_of_op<Op>().ops_per_thread;
  Op op;
  std::size_t n;
  status* statuses;              // may be null (then only_full must be false)
  unsigned long long* counters;  // num_status_kinds counters, or null
  bool only_full;                // re-run only operations whose previous status was `full`

  using accumulator = status_counts<unsigned>;

  template <class Tile>
  WARPKV_HD void operator()(const Tile& tile, std::size_t i, accumulator& acc) const {
    // An op over a marked list (marked_op) skips the entries that are done: neither run nor counted.
    if constexpr (requires { op.skip(i); }) {
      if (op.skip(i)) return;
    }
    if (only_full && statuses[i] != status::full) return;  // the same on every lane of the tile
    const status s = op(tile, i);
    if (tile.thread_rank() == 0) {
      if (statuses != nullptr) statuses[i] = s;
      acc.add(s);
      // A first pass that hands back what it leaves `full` (handing_back_op, core/batch_partition.hpp):
      // append i, marked, to its list; the lanes of the warp that hand one back at once share one
      // atomic. Only that kernel carries this code (in every kernel it cost the finds and erases
      // registers and a 48-register insert 8 B of spills, session 20). Here rather than inside the
      // op: there the open-addressing fast inserts took 2 registers more and ran 2-4 % slower
      // (session 21, calls A and C).
      if constexpr (requires { op.handback; }) {
        if (s == status::full) {  // rare
          const active_lanes g;
          const unsigned long long at = aggregated_fetch_add(g, atomic_ref<unsigned long long>(*op.handback.count), 1ull,
                                                             true, memory_order::relaxed);
          op.handback.list[at] = static_cast<std::uint32_t>(i) | list_mark;
        }
      }
    }
  }

#if WARPKV_DEVICE_PASS
  /// The block's status sums and the count of its warps that have added theirs (shared memory).
  struct block_counts {
    unsigned sum[num_status_kinds];
    unsigned warps_done;
  };
  __device__ static block_counts& block_shared() {
    __shared__ block_counts b;
    return b;
  }
  /// tile_kernel calls it on every thread before the block's first operation: zeroes the sums.
  /// Branch-free (also when nothing is counted): a branch here, before the kernel's parameters
  /// are loaded into uniform registers, made scripts/sass_lint.py flag every read of them after a
  /// YIELD (its rule: uniform registers written after the function's first branch).
  __device__ void block_begin() const {
    block_counts& b = block_shared();
    if (threadIdx.x < num_status_kinds) b.sum[threadIdx.x] = 0;
    if (threadIdx.x == 0) b.warps_done = 0;
    __syncthreads();  // at the block's start, where every warp is anyway
  }
#endif
  /// Every thread calls it once, after its last operation (tile_kernel). On the device a warp's
  /// counts are summed (__reduce_add_sync) into the block's sums in shared memory, and the last
  /// warp of the block to finish adds the block's sums to the batch's counters: one atomic a
  /// block and kind, and no warp waits for another (a barrier here held every block until its
  /// slowest operation was done: H64 inserts -5 % / -18 % at LF 0.8 / 0.9, session 15, call C).
  /// Per warp, a grid of a block per 256 operations (thread_per_item) sent one atomic a warp to
  /// the same few words (call A: 734 K, 12 % of the H64 insert kernel's stall samples waiting for
  /// them to drain). Ordering, block scope: a warp's adds, __threadfence_block, its increment of
  /// warps_done; the warp whose increment returns the last count fences and then reads every sum.
  template <class Tile>
  WARPKV_HD void flush(const Tile&, accumulator& acc) const {
    if (counters == nullptr) return;
#if WARPKV_DEVICE_PASS
    block_counts& b = block_shared();
    const bool leader = (threadIdx.x & 31u) == 0;
#pragma unroll
    for (int k = 0; k < num_status_kinds; ++k) {
      const unsigned sum = __reduce_add_sync(0xffffffffu, acc.c[k]);  // every lane of the warp flushes
      if (leader && sum != 0) atomicAdd_block(&b.sum[k], sum);
    }
    unsigned last = 0;
    if (leader) {
      __threadfence_block();
      last = atomicAdd_block(&b.warps_done, 1u) == blockDim.x / 32u - 1u;
    }
    last = __shfl_sync(0xffffffffu, last, 0);
    if (last) {
      __threadfence_block();
      const unsigned lane = threadIdx.x & 31u;
      if (lane < num_status_kinds) {
        const unsigned total = atomicAdd_block(&b.sum[lane], 0u);
        if (total != 0) atomic_ref<unsigned long long>(counters[lane]).fetch_add(total, memory_order::relaxed);
      }
    }
#else
    for (int k = 0; k < num_status_kinds; ++k)
      if (acc.c[k] != 0) atomic_ref<unsigned long long>(counters[k]).fetch_add(acc.c[k], memory_order::relaxed);
#endif
  }
};

}  // namespace detail

/// The per-status counters of a batch: num_status_kinds counters in the backend's memory and
/// their host copy (page-locked on cuda, so the copy back is one small DMA). A structure keeps
/// one and reuses it, so a batch costs a memset, the launch and that copy, with no allocation.
class batch_counters {
 public:
  batch_counters() = default;
  /// `groups` sets of counters (group 0 is the one launch_batch uses; a phased batch counts each
  /// phase in a group of its own and reads them all with one copy and one wait).
  explicit batch_counters(const execution& ex, std::size_t groups = 1)
      : dev_(num_status_kinds * groups, ex), groups_(groups) {
#if WARPKV_HAS_CUDA
    if (ex.where == backend::cuda) {
      void* p = nullptr;
      WARPKV_CUDA_CHECK(cudaMallocHost(&p, sizeof(host_t) * groups));
      pinned_.reset(static_cast<host_t*>(p));
    }
#endif
  }
  [[nodiscard]] bool ready() const { return dev_.size() == num_status_kinds * groups_ && groups_ > 0; }
  [[nodiscard]] std::size_t groups() const { return groups_; }
  [[nodiscard]] unsigned long long* data(std::size_t group = 0) const { return dev_.data() + group * num_status_kinds; }
  /// Sets every group's counters to zero, stream-ordered.
  void zero() {
    if (dev_.exec().where == backend::cuda) {
#if WARPKV_HAS_CUDA
      WARPKV_CUDA_CHECK(cudaMemsetAsync(dev_.data(), 0, sizeof(host_t) * groups_, dev_.exec().stream));
#endif
    } else {
      std::memset(dev_.data(), 0, sizeof(host_t) * groups_);
    }
  }
  /// Waits for the stream and returns group 0's counts.
  [[nodiscard]] batch_summary read() const { return read_groups(1)[0]; }
  /// Waits for the stream and returns the counts of groups [0, n) (one copy, one wait).
  [[nodiscard]] std::vector<batch_summary> read_groups(std::size_t n) const {
    std::vector<batch_summary> out(n);
    const unsigned long long* src = dev_.data();
#if WARPKV_HAS_CUDA
    if (dev_.exec().where == backend::cuda) {
      WARPKV_CUDA_CHECK(cudaMemcpyAsync(pinned_.get(), dev_.data(), sizeof(host_t) * n, cudaMemcpyDeviceToHost,
                                        dev_.exec().stream));
      synchronize(dev_.exec());
      src = pinned_->data();
    }
#endif
    for (std::size_t g = 0; g < n; ++g)
      for (int k = 0; k < num_status_kinds; ++k) out[g].count[k] = src[g * num_status_kinds + static_cast<std::size_t>(k)];
    return out;
  }

 private:
  using host_t = std::array<unsigned long long, num_status_kinds>;
  struct free_pinned {
    void operator()(host_t* p) const noexcept {
#if WARPKV_HAS_CUDA
      (void)cudaFreeHost(p);  // destructors must not throw
#else
      (void)p;
#endif
    }
  };
  buffer<unsigned long long> dev_;
  std::size_t groups_ = 0;
  std::unique_ptr<host_t, free_pinned> pinned_;
};

/// Launches operations [0, n) in the given shape without waiting; `counters` may be null (then
/// nothing is counted) and `statuses` may be null for op_per_tile (then none is stored).
template <int T, class Op, batch_shape Shape = batch_shape::serve_loop>
void launch_uncounted(const execution& ex, std::size_t n, const Op& op, status* statuses,
                      unsigned long long* counters = nullptr, bool only_full = false) {
  if (n == 0) return;
  if constexpr (Shape == batch_shape::op_per_tile)
    launch<T>(ex, n, detail::tile_op_body<T, Op>{op, n, statuses, counters, only_full});
  else
    launch<T>(ex, (n + T - 1) / T, detail::batch_body<T, Op>{op, n, statuses, counters, only_full});
}

/// Runs operations [0, n) of `op` as one concurrent batch on `ex`; `statuses` (n entries in the
/// backend's memory) receives each operation's status. Waits for the batch and returns its counts
/// (gathered in `counters`, which must belong to the same backend and stream).
template <int T, class Op, batch_shape Shape = batch_shape::serve_loop>
batch_summary launch_batch(const execution& ex, std::size_t n, const Op& op, status* statuses, batch_counters& counters,
                           bool only_full = false) {
  if (n == 0) return {};
  counters.zero();
  launch_uncounted<T, Op, Shape>(ex, n, op, statuses, counters.data(), only_full);
  return counters.read();
}

/// The same with counters of its own (one allocation per call).
template <int T, class Op>
batch_summary launch_batch(const execution& ex, std::size_t n, const Op& op, status* statuses,
                           bool only_full = false) {
  if (n == 0) return {};
  batch_counters counters(ex);
  return launch_batch<T>(ex, n, op, statuses, counters, only_full);
}

}  // namespace warpkv
