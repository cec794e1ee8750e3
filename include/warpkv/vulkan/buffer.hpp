#pragma once
// Storage buffers of a warpkv::vulkan::context, and buffer_view: (VkBuffer, offset, size), the
// form in which every device-side call of the maps takes its inputs and outputs, so buffers the
// caller already owns (on the same VkDevice) can be passed directly.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "warpkv/vulkan/context.hpp"

namespace warpkv::vulkan {

/// A range of a storage buffer: usage must include STORAGE_BUFFER (and TRANSFER_SRC/DST where
/// the map copies or fills it); offset a multiple of minStorageBufferOffsetAlignment.
struct buffer_view {
  vk::Buffer buffer{};
  vk::DeviceSize offset = 0;
  vk::DeviceSize size = 0;  ///< bytes
};

/// Where a buffer lives: device-local memory (copies go through a staging buffer unless the
/// memory is also host-visible, as on unified-memory and CPU devices), or host-visible memory
/// mapped for the buffer's lifetime.
enum class memory { device, host };

class buffer {
 public:
  buffer() = default;
  buffer(context& ctx, std::size_t bytes, memory where = memory::device) : ctx_(&ctx), bytes_(bytes) {
    detail::translate("allocating a buffer", [&] { allocate(where); });
  }
  buffer(buffer&& o) noexcept { *this = std::move(o); }
  buffer& operator=(buffer&& o) noexcept {
    if (this != &o) {
      buffer_.reset();  // the buffer before the memory bound to it
      memory_.reset();
      ctx_ = o.ctx_;
      bytes_ = std::exchange(o.bytes_, 0);
      allocated_ = std::exchange(o.allocated_, 0);
      memory_ = std::move(o.memory_);
      buffer_ = std::move(o.buffer_);
      mapped_ = std::exchange(o.mapped_, nullptr);
      o.memory_.reset();
      o.buffer_.reset();
    }
    return *this;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  ~buffer() {
    buffer_.reset();
    memory_.reset();
  }

  template <class T>
  static buffer from_host(context& ctx, std::span<const T> data, memory where = memory::device) {
    buffer b(ctx, data.size_bytes(), where);
    b.upload(data.data(), data.size_bytes());
    return b;
  }

  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] vk::Buffer handle() const { return **buffer_; }
  [[nodiscard]] buffer_view view() const { return {**buffer_, 0, allocated_}; }
  /// The host pointer of a host-visible buffer, else nullptr.
  [[nodiscard]] void* mapped() const { return mapped_; }

  /// Copies `n` bytes from host memory to byte `offset` of the buffer (waits).
  void upload(const void* src, std::size_t n, std::size_t offset = 0) {
    check_range(n, offset);
    if (n == 0) return;
    if (mapped_ != nullptr) {
      std::memcpy(static_cast<char*>(mapped_) + offset, src, n);
      return;
    }
    buffer staging(*ctx_, n, memory::host);
    std::memcpy(staging.mapped_, src, n);
    ctx_->submit([&](const vk::raii::CommandBuffer& cb) {
      cb.copyBuffer(staging.handle(), handle(), vk::BufferCopy(0, offset, n));
    });
  }
  /// Copies `n` bytes at byte `offset` of the buffer to host memory (waits).
  void download(void* dst, std::size_t n, std::size_t offset = 0) const {
    check_range(n, offset);
    if (n == 0) return;
    if (mapped_ != nullptr) {
      std::memcpy(dst, static_cast<const char*>(mapped_) + offset, n);
      return;
    }
    buffer staging(*ctx_, n, memory::host);
    ctx_->submit([&](const vk::raii::CommandBuffer& cb) {
      cb.copyBuffer(handle(), staging.handle(), vk::BufferCopy(offset, 0, n));
      const vk::MemoryBarrier to_host(vk::AccessFlagBits::eTransferWrite, vk::AccessFlagBits::eHostRead);
      cb.pipelineBarrier(vk::PipelineStageFlagBits::eTransfer, vk::PipelineStageFlagBits::eHost, {}, to_host, {}, {});
    });
    std::memcpy(dst, staging.mapped_, n);
  }
  template <class T>
  std::vector<T> to_vector(std::size_t n) const {
    std::vector<T> out(n);
    download(out.data(), n * sizeof(T));
    return out;
  }

 private:
  void check_range(std::size_t n, std::size_t offset) const {
    if (offset > bytes_ || n > bytes_ - offset)
      throw error(errc::invalid_argument, "warpkv::vulkan: copy of " + std::to_string(n) + " bytes at offset " +
                                              std::to_string(offset) + " exceeds a buffer of " +
                                              std::to_string(bytes_) + " bytes");
  }

  void allocate(memory where) {
    const auto& dev = ctx_->device();
    // Vulkan has no empty buffers: allocate at least one 16-byte word, report bytes() as asked.
    allocated_ = std::max<std::size_t>(16, (bytes_ + 15) / 16 * 16);
    using U = vk::BufferUsageFlagBits;
    buffer_.emplace(dev, vk::BufferCreateInfo({}, allocated_, U::eStorageBuffer | U::eTransferSrc | U::eTransferDst));
    const auto req = buffer_->getMemoryRequirements();
    using M = vk::MemoryPropertyFlagBits;
    const vk::MemoryPropertyFlags need =
        where == memory::host ? (M::eHostVisible | M::eHostCoherent) : vk::MemoryPropertyFlags(M::eDeviceLocal);
    const vk::MemoryPropertyFlags prefer = where == memory::host ? vk::MemoryPropertyFlags(M::eHostCached) : need;
    const auto& mp = ctx_->memory_properties();
    int type = -1;
    for (int pass = 0; pass < 3 && type < 0; ++pass) {
      for (std::uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
        if (!(req.memoryTypeBits & (1u << i))) continue;
        const auto flags = mp.memoryTypes[i].propertyFlags;
        const bool ok = pass == 0 ? (flags & (need | prefer)) == (need | prefer)
                        : pass == 1 ? (flags & need) == need
                                    : where == memory::device;  // any type for device data
        if (ok) {
          type = static_cast<int>(i);
          break;
        }
      }
    }
    if (type < 0)
      throw error(errc::unsupported, "warpkv::vulkan: no memory type for a " +
                                         std::string(where == memory::host ? "host-visible" : "device") + " buffer");
    memory_.emplace(dev, vk::MemoryAllocateInfo(req.size, static_cast<std::uint32_t>(type)));
    buffer_->bindMemory(**memory_, 0);
    const auto flags = mp.memoryTypes[type].propertyFlags;
    if ((flags & M::eHostVisible) && (flags & M::eHostCoherent)) mapped_ = memory_->mapMemory(0, VK_WHOLE_SIZE);
  }

  context* ctx_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t allocated_ = 0;
  std::optional<vk::raii::DeviceMemory> memory_;  // declared first: outlives the buffer bound to it
  std::optional<vk::raii::Buffer> buffer_;
  void* mapped_ = nullptr;
};

}  // namespace warpkv::vulkan
