#pragma once
// The SPIR-V of shaders/*.comp, compiled by glslc at build time (cmake/warpkv_vulkan.cmake) and
// embedded here as uint32 words: no shader compiler at run time. The .inc files live in the
// build tree (include directory of the warpkv::vulkan target). Each shader comes for 32- and
// 64-bit keys, and in two memory-order variants: `ordered` (the acquire/release orders of
// docs/design/vulkan.md, used on every device) and `relaxed` (Mesa llvmpipe only, whose
// barriers in non-uniform control flow are broken; see shaders/linear_map_common.glsl).
// batch_subgroup is the batch shader with subgroup-cooperative probing; batch_subgroup_ucf the same
// with the SubgroupUniformControlFlowKHR execution mode (devices with that extension enabled).
#include <cstdint>
#include <span>
#include <string>

namespace warpkv::vulkan::detail::spirv {

inline constexpr std::uint32_t linear_map_batch_k32[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_k32.inc"
};

inline constexpr std::uint32_t linear_map_batch_k32_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_k32_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_batch_k64[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_k64.inc"
};

inline constexpr std::uint32_t linear_map_batch_k64_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_k64_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_k32[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_k32.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_k32_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_k32_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_k64[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_k64.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_k64_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_k64_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_ucf_k32[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_ucf_k32.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_ucf_k32_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_ucf_k32_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_ucf_k64[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_ucf_k64.inc"
};

inline constexpr std::uint32_t linear_map_batch_subgroup_ucf_k64_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_batch_subgroup_ucf_k64_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_reinsert_k32[] = {
#include "warpkv/vulkan/spirv/linear_map_reinsert_k32.inc"
};

inline constexpr std::uint32_t linear_map_reinsert_k32_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_reinsert_k32_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_reinsert_k64[] = {
#include "warpkv/vulkan/spirv/linear_map_reinsert_k64.inc"
};

inline constexpr std::uint32_t linear_map_reinsert_k64_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_reinsert_k64_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_collect_k32[] = {
#include "warpkv/vulkan/spirv/linear_map_collect_k32.inc"
};

inline constexpr std::uint32_t linear_map_collect_k32_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_collect_k32_relaxed.inc"
};

inline constexpr std::uint32_t linear_map_collect_k64[] = {
#include "warpkv/vulkan/spirv/linear_map_collect_k64.inc"
};

inline constexpr std::uint32_t linear_map_collect_k64_relaxed[] = {
#include "warpkv/vulkan/spirv/linear_map_collect_k64_relaxed.inc"
};


/// The words of shader `name` ("batch", "batch_subgroup", "batch_subgroup_ucf", "reinsert", "collect") for the key width and variant.
inline std::span<const std::uint32_t> code(const std::string& name, bool wide, bool relaxed) {
#define WARPKV_SPIRV_PICK(S)                                                                    \
  if (name == #S)                                                                               \
    return wide ? (relaxed ? std::span<const std::uint32_t>(linear_map_##S##_k64_relaxed)       \
                           : std::span<const std::uint32_t>(linear_map_##S##_k64))              \
                : (relaxed ? std::span<const std::uint32_t>(linear_map_##S##_k32_relaxed)       \
                           : std::span<const std::uint32_t>(linear_map_##S##_k32));
  WARPKV_SPIRV_PICK(batch)
  WARPKV_SPIRV_PICK(batch_subgroup)
  WARPKV_SPIRV_PICK(batch_subgroup_ucf)
  WARPKV_SPIRV_PICK(reinsert)
  WARPKV_SPIRV_PICK(collect)
#undef WARPKV_SPIRV_PICK
  return {};
}

}  // namespace warpkv::vulkan::detail::spirv
