#pragma once
// Compute pipelines of the vulkan backend: one descriptor-set layout (8 storage buffers) and one
// push-constant block shared by every shader, pipelines built once per context from embedded
// SPIR-V, and the recording of a dispatch over n invocations (several dispatches when n needs
// more workgroups than maxComputeWorkGroupCount[0]).
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "warpkv/vulkan/buffer.hpp"
#include "warpkv/vulkan/context.hpp"

namespace warpkv::vulkan::detail {

/// Mirrors `params_t` of shaders/linear_map_common.glsl.
struct push_constants {
  std::uint32_t n = 0;
  std::uint32_t base = 0;
  std::uint32_t capacity_mask = 0;
  std::uint32_t max_probe = 0;
  std::uint32_t seed_lo = 0;
  std::uint32_t seed_hi = 0;
  std::uint32_t uniform_op = 0;
  std::uint32_t flags = 0;
  std::uint32_t pending_waits = 0;
};
inline constexpr std::uint32_t flag_only_full = 1;     // run only elements whose status is full or retry
inline constexpr std::uint32_t status_retry = 7;       // internal: an insert gave up waiting for a pending claim
inline constexpr std::uint32_t flag_write_values = 2;  // finds write values_out

inline constexpr std::uint32_t num_bindings = 8;
inline constexpr std::uint32_t workgroup_size = 256;  // local_size_x of every shader
using bindings = std::array<buffer_view, num_bindings>;

struct shared_layout {
  vk::raii::DescriptorSetLayout set_layout;
  vk::raii::PipelineLayout pipeline_layout;
};

inline shared_layout& layout(context& ctx) {
  return ctx.cached<shared_layout>("warpkv.layout", [&] {
    std::array<vk::DescriptorSetLayoutBinding, num_bindings> b;
    for (std::uint32_t i = 0; i < num_bindings; ++i)
      b[i] = vk::DescriptorSetLayoutBinding(i, vk::DescriptorType::eStorageBuffer, 1, vk::ShaderStageFlagBits::eCompute);
    vk::raii::DescriptorSetLayout set(ctx.device(), vk::DescriptorSetLayoutCreateInfo({}, b));
    const vk::PushConstantRange range(vk::ShaderStageFlagBits::eCompute, 0, sizeof(push_constants));
    const vk::DescriptorSetLayout raw = *set;
    vk::raii::PipelineLayout pl(ctx.device(), vk::PipelineLayoutCreateInfo({}, raw, range));
    return shared_layout{std::move(set), std::move(pl)};
  });
}

inline const vk::raii::Pipeline& pipeline(context& ctx, const std::string& name, std::span<const std::uint32_t> code) {
  auto& l = layout(ctx);
  return ctx.cached<vk::raii::Pipeline>("warpkv.pipeline." + name, [&] {
    vk::raii::ShaderModule module(ctx.device(), vk::ShaderModuleCreateInfo({}, code.size_bytes(), code.data()));
    const vk::PipelineShaderStageCreateInfo stage({}, vk::ShaderStageFlagBits::eCompute, *module, "main");
    return vk::raii::Pipeline(ctx.device(), nullptr, vk::ComputePipelineCreateInfo({}, stage, *l.pipeline_layout));
  });
}

/// Makes the writes of earlier commands (shaders, transfers) visible to later ones and the host.
inline void full_barrier(const vk::raii::CommandBuffer& cb) {
  using A = vk::AccessFlagBits;
  using P = vk::PipelineStageFlagBits;
  const vk::MemoryBarrier mb(A::eShaderWrite | A::eTransferWrite,
                             A::eShaderRead | A::eShaderWrite | A::eTransferRead | A::eTransferWrite | A::eHostRead);
  cb.pipelineBarrier(P::eComputeShader | P::eTransfer, P::eComputeShader | P::eTransfer | P::eHost, {}, mb, {}, {});
}

/// Records `pipe` over pc.n invocations with the given buffers bound (null views get `dummy`).
inline void record_dispatch(context& ctx, const vk::raii::CommandBuffer& cb, const vk::raii::Pipeline& pipe,
                            const bindings& views, const buffer_view& dummy, push_constants pc) {
  auto& l = layout(ctx);
  const vk::DescriptorSet set = ctx.allocate_set(*l.set_layout);
  std::array<vk::DescriptorBufferInfo, num_bindings> infos;
  std::array<vk::WriteDescriptorSet, num_bindings> writes;
  for (std::uint32_t i = 0; i < num_bindings; ++i) {
    const buffer_view& v = views[i].buffer ? views[i] : dummy;
    const vk::DeviceSize range = std::min<vk::DeviceSize>(v.size, ctx.limits().maxStorageBufferRange);
    infos[i] = vk::DescriptorBufferInfo(v.buffer, v.offset, range);
    writes[i] = vk::WriteDescriptorSet(set, i, 0, 1, vk::DescriptorType::eStorageBuffer, nullptr, &infos[i]);
  }
  ctx.device().updateDescriptorSets(writes, {});
  cb.bindPipeline(vk::PipelineBindPoint::eCompute, *pipe);
  cb.bindDescriptorSets(vk::PipelineBindPoint::eCompute, *l.pipeline_layout, 0, set, {});
  const std::uint64_t max_groups = std::max<std::uint32_t>(1, ctx.limits().maxComputeWorkGroupCount[0]);
  const std::uint64_t groups = (std::uint64_t{pc.n} + workgroup_size - 1) / workgroup_size;
  for (std::uint64_t g = 0; g < groups; g += max_groups) {
    pc.base = static_cast<std::uint32_t>(g * workgroup_size);
    cb.pushConstants<push_constants>(*l.pipeline_layout, vk::ShaderStageFlagBits::eCompute, 0, pc);
    cb.dispatch(static_cast<std::uint32_t>(std::min(max_groups, groups - g)), 1, 1);
  }
}

/// Checks a caller's view: present when n > 0, large enough for n elements, aligned, in range.
inline void check_view(const context& ctx, const buffer_view& v, std::size_t n, std::size_t elem, const char* name) {
  if (n == 0) return;
  require(static_cast<bool>(v.buffer), name, "is a null buffer but n > 0");
  require(v.size >= n * elem, name,
          "holds " + std::to_string(v.size) + " bytes, fewer than " + std::to_string(n) + " elements need");
  require(v.offset % std::max<vk::DeviceSize>(1, ctx.limits().minStorageBufferOffsetAlignment) == 0, name,
          "offset is not a multiple of minStorageBufferOffsetAlignment");
  require(n * elem <= ctx.limits().maxStorageBufferRange, name,
          "needs more than the device's maxStorageBufferRange (" +
              std::to_string(ctx.limits().maxStorageBufferRange) + " bytes)");
}

}  // namespace warpkv::vulkan::detail
