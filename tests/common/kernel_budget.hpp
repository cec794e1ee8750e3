#pragma once
// Register and local-memory budgets of the bulk kernels (read with cudaFuncGetAttributes on the
// GPU). Uniform batches (find-only, insert-only, erase-only) launch one operation per tile, so a
// bulk op's hot kernel is tile_kernel<T, tile_op_body<T, Op>>.
#include <gtest/gtest.h>

#include "warpkv/core/batch.hpp"

#if WARPKV_HAS_CUDA
namespace warpkv::testing {

template <int T, class Op>
cudaFuncAttributes bulk_kernel_attributes() {
  cudaFuncAttributes a{};
  EXPECT_EQ(cudaFuncGetAttributes(&a, detail::tile_kernel<T, detail::tile_op_body<T, Op>>), cudaSuccess);
  return a;
}

}  // namespace warpkv::testing
#endif
