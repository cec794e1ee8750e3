#pragma once
// Register and local-memory budgets of the bulk kernels (read with cudaFuncGetAttributes on the
// GPU). Uniform batches (find-only, insert-only, erase-only) launch one operation per tile, so a
// bulk op's hot kernel is tile_kernel<T, tile_op_body<T, Op>>.
#include <gtest/gtest.h>

#include <iostream>
#include <type_traits>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/batch_partition.hpp"
#include "warpkv/core/map_ops.hpp"

#if WARPKV_HAS_CUDA
namespace warpkv::testing {

template <int T, class Op>
cudaFuncAttributes bulk_kernel_attributes() {
  cudaFuncAttributes a{};
  EXPECT_EQ(cudaFuncGetAttributes(&a, detail::tile_kernel<T, detail::tile_op_body<T, Op>>), cudaSuccess);
  return a;
}

/// The op of an insert batch's first launch where the ref has a fast insert: the fast insert
/// wrapped to hand back what it leaves full (core/batch_partition.hpp, handing_back_op; session 20).
/// (A ref without one is checked on insert_op<pass::fast>, as before.)
template <class Ref, class K, class V>
using first_insert_op = std::conditional_t<detail::has_fast_bulk_inserts<Ref>,
                                           detail::handing_back_op<detail::insert_op<Ref, K, V, detail::pass::fast>>,
                                           detail::insert_op<Ref, K, V, detail::pass::fast>>;

/// Registers at most these bounds and no local memory for a ref's hot bulk kernels of tile T
/// (scripts/kernel_budgets.py checks the same bounds from ptxas's report without a GPU: keep the
/// two in step):
/// find, the first (fast) launch of an insert batch, erase. Prints the registers read.
struct hot_kernel_bounds {
  int find, insert, erase;
};
template <class Ref, int T>
void expect_hot_kernels_within(const char* name, hot_kernel_bounds max) {
  using K = typename Ref::key_type;
  using V = typename Ref::mapped_type;
  const auto find = bulk_kernel_attributes<T, detail::find_op<Ref, K, V>>();
  const auto insert = bulk_kernel_attributes<T, first_insert_op<Ref, K, V>>();
  const auto erase = bulk_kernel_attributes<T, detail::erase_op<Ref, K>>();
  EXPECT_LE(find.numRegs, max.find) << name;
  EXPECT_LE(insert.numRegs, max.insert) << name;
  EXPECT_LE(erase.numRegs, max.erase) << name;
  EXPECT_EQ(find.localSizeBytes, 0u) << name;
  EXPECT_EQ(insert.localSizeBytes, 0u) << name;
  EXPECT_EQ(erase.localSizeBytes, 0u) << name;
  std::cout << "[ registers ] " << name << ": find " << find.numRegs << ", insert " << insert.numRegs << ", erase "
            << erase.numRegs << "\n";
}

}  // namespace warpkv::testing
#endif
