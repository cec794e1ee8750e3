#pragma once
// What a bulk op declares to the batch engine and the launcher, read in one place: its register
// budget (the kernel's launch bounds), whether its one-lane tiles run a thread per operation, and
// its launch shape. The ops of core/map_ops.hpp declare them; the wrappers of
// core/batch_partition.hpp pass them on; the bodies of core/batch.hpp hand them to the launcher.
namespace warpkv::detail {

/// How a thread-per-operation kernel (a thread_per_op ref's uniform batches at one-lane tiles) is
/// launched: threads per block and operations per thread (core/launcher.hpp, block_threads_of and
/// items_per_thread_of); 0: the launcher's default (blocks of 256, one operation a thread).
struct per_op_launch {
  int block_threads = 0;
  int ops_per_thread = 0;
};

/// The op's `register_budget`, 0 when it declares none.
template <class Op>
constexpr int register_budget_of_op() {
  if constexpr (requires { Op::register_budget; }) return Op::register_budget;
  else return 0;
}
/// The op's `thread_per_op`, false when it declares none.
template <class Op>
constexpr bool thread_per_op_of_op() {
  if constexpr (requires { Op::thread_per_op; }) return Op::thread_per_op;
  else return false;
}
/// The op's `launch`, the default shape when it declares none.
template <class Op>
constexpr per_op_launch launch_of_op() {
  if constexpr (requires { Op::launch; }) return Op::launch;
  else return per_op_launch{};
}

}  // namespace warpkv::detail
