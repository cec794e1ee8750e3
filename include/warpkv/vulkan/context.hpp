#pragma once
// warpkv::vulkan::context: the Vulkan instance, one chosen physical device, a logical device with
// one compute queue, and what the maps need on it (command submission, descriptor sets,
// timestamps, the validation layer's messages). Built over vulkan-hpp's RAII wrappers; the
// Vulkan loader (libvulkan.so.1) is opened at run time, so a binary runs (and reports "no
// loader") on machines without one.
//
// Device choice: context_options::device, else the environment variable WARPKV_VULKAN_DEVICE,
// else the first discrete GPU, then integrated, virtual, CPU. Either names a device by its index
// in devices() or by a case-insensitive part of its name ("llvmpipe", "NVIDIA").
//
// Requirements: Vulkan 1.2 with vulkanMemoryModel and vulkanMemoryModelDeviceScope (the shaders
// use the Vulkan memory model, docs/design/vulkan.md); 64-bit keys additionally need
// shaderInt64 and shaderBufferInt64Atomics. A missing piece is a warpkv::error(unsupported)
// that names it. One context must not be used by two host threads at once.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_raii.hpp>

#include "warpkv/core/error.hpp"

namespace warpkv::vulkan {

/// One physical device as the loader reports it.
struct device_info {
  std::uint32_t index = 0;  ///< position in devices()
  std::string name;
  std::string type;  ///< discrete, integrated, virtual, cpu, other
  std::string api_version;
  std::string driver;
  bool memory_model = false;   ///< vulkanMemoryModel + vulkanMemoryModelDeviceScope (required)
  bool int64_atomics = false;  ///< shaderInt64 + shaderBufferInt64Atomics (64-bit keys)
  bool timestamps = false;     ///< compute queue with timestamps
  bool usable = false;         ///< Vulkan 1.2, memory model and a compute queue
  /// The maps run the `relaxed` shader variant (shaders/linear_map_common.glsl): Mesa's
  /// llvmpipe, whose barriers in non-uniform control flow are broken. WARPKV_VULKAN_SHADERS=
  /// relaxed|ordered overrides the choice (for experiments only).
  bool relaxed_shaders = false;
  /// VkPhysicalDeviceSubgroupProperties::subgroupSize (0 before Vulkan 1.1).
  std::uint32_t subgroup_size = 0;
  /// The subgroup-cooperative batch shader can run (linear_map_config::probing): compute
  /// subgroups with basic, ballot and shuffle operations, subgroupSize at least 8.
  bool subgroup_probing = false;
  /// VK_KHR_shader_subgroup_uniform_control_flow with shaderSubgroupUniformControlFlow: offered
  /// by the device (describe) and enabled on it (a context's info()); the subgroup batch shader
  /// then declares the execution mode that guarantees the reconvergence it relies on. Never set
  /// for a borrowed device (the context cannot tell what the application enabled), nor with the
  /// environment variable WARPKV_VULKAN_UCF=off.
  bool subgroup_uniform_control_flow = false;
};

struct context_options {
  /// Index or part of a name; empty: WARPKV_VULKAN_DEVICE, else the preferred device type.
  std::string device;
  /// Enable VK_LAYER_KHRONOS_validation and report its messages (throws unsupported when the
  /// layer is not installed: Debian's vulkan-validationlayers).
  bool validation = false;
  /// Receives each validation message (warnings and errors); default: printed to stderr.
  std::function<void(const std::string&)> on_message;
};

/// A device the application created, for a context that borrows it (never destroys it). The
/// device must have been created with Vulkan 1.2's vulkanMemoryModel and
/// vulkanMemoryModelDeviceScope enabled (and shaderInt64 + shaderBufferInt64Atomics for 64-bit
/// keys), the instance with API version 1.2 or later. The context submits to the given queue and
/// waits for its own work only; the application must not use that queue from another thread
/// while a warpkv call runs (Vulkan's external synchronization rule).
struct external_device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;  ///< must support compute
  std::uint32_t queue_index = 0;
  bool int64_atomics_enabled = false;  ///< the device was created with shaderInt64 + shaderBufferInt64Atomics
};

namespace detail {

/// Runs f, turning Vulkan failures into warpkv::error (vulkan), keeping warpkv errors.
template <class F>
decltype(auto) translate(const char* what, F&& f) {
  try {
    return f();
  } catch (const warpkv::error&) {
    throw;
  } catch (const vk::OutOfDeviceMemoryError& e) {
    throw error(errc::out_of_memory, std::string("warpkv::vulkan: ") + what + ": " + e.what());
  } catch (const vk::OutOfHostMemoryError& e) {
    throw error(errc::out_of_memory, std::string("warpkv::vulkan: ") + what + ": " + e.what());
  } catch (const vk::SystemError& e) {
    throw error(errc::vulkan, std::string("warpkv::vulkan: ") + what + ": " + e.what());
  }
}

inline std::string version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

inline std::string type_string(vk::PhysicalDeviceType t) {
  switch (t) {
    case vk::PhysicalDeviceType::eDiscreteGpu: return "discrete";
    case vk::PhysicalDeviceType::eIntegratedGpu: return "integrated";
    case vk::PhysicalDeviceType::eVirtualGpu: return "virtual";
    case vk::PhysicalDeviceType::eCpu: return "cpu";
    default: return "other";
  }
}

inline int type_rank(vk::PhysicalDeviceType t) {
  switch (t) {
    case vk::PhysicalDeviceType::eDiscreteGpu: return 0;
    case vk::PhysicalDeviceType::eIntegratedGpu: return 1;
    case vk::PhysicalDeviceType::eVirtualGpu: return 2;
    case vk::PhysicalDeviceType::eCpu: return 3;
    default: return 4;
  }
}

inline std::optional<std::uint32_t> compute_family(const vk::raii::PhysicalDevice& pd) {
  const auto families = pd.getQueueFamilyProperties();
  // A compute queue; prefer one with timestamps, then a compute-only (async) family.
  std::optional<std::uint32_t> best;
  int best_score = -1;
  for (std::uint32_t i = 0; i < families.size(); ++i) {
    if (!(families[i].queueFlags & vk::QueueFlagBits::eCompute)) continue;
    const int score = (families[i].timestampValidBits > 0 ? 2 : 0) +
                      (!(families[i].queueFlags & vk::QueueFlagBits::eGraphics) ? 1 : 0);
    if (score > best_score) best = i, best_score = score;
  }
  return best;
}

inline device_info describe(const vk::raii::PhysicalDevice& pd, std::uint32_t index) {
  device_info d;
  const auto props = pd.getProperties();
  d.index = index;
  d.name = props.deviceName.data();
  d.type = type_string(props.deviceType);
  d.api_version = version_string(props.apiVersion);
  const bool v12 = props.apiVersion >= VK_API_VERSION_1_2;
  if (v12) {
    const auto chain = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceDriverProperties,
                                         vk::PhysicalDeviceSubgroupProperties>();
    const auto& drv = chain.get<vk::PhysicalDeviceDriverProperties>();
    const auto& sub = chain.get<vk::PhysicalDeviceSubgroupProperties>();
    d.subgroup_size = sub.subgroupSize;
    using F = vk::SubgroupFeatureFlagBits;
    const vk::SubgroupFeatureFlags needed = F::eBasic | F::eBallot | F::eShuffle;
    d.subgroup_probing = (sub.supportedStages & vk::ShaderStageFlagBits::eCompute) &&
                         (sub.supportedOperations & needed) == needed && sub.subgroupSize >= 8;
    bool ucf_extension = false;
    for (const auto& e : pd.enumerateDeviceExtensionProperties())
      ucf_extension = ucf_extension ||
                      std::strcmp(e.extensionName.data(), VK_KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_EXTENSION_NAME) == 0;
    // WARPKV_VULKAN_UCF=off leaves the extension out (for experiments).
    const char* ucf_env = std::getenv("WARPKV_VULKAN_UCF");
    if (ucf_env != nullptr && std::string(ucf_env) == "off") ucf_extension = false;
    if (ucf_extension) {  // query the feature only where its extension exists
      const auto f = pd.getFeatures2<vk::PhysicalDeviceFeatures2,
                                     vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR>();
      d.subgroup_uniform_control_flow =
          f.get<vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR>().shaderSubgroupUniformControlFlow;
    }
    d.driver = std::string(drv.driverName.data()) + " " + drv.driverInfo.data();
    d.relaxed_shaders = drv.driverID == vk::DriverId::eMesaLlvmpipe;
    const auto feats = pd.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceVulkan12Features>();
    const auto& f12 = feats.get<vk::PhysicalDeviceVulkan12Features>();
    d.memory_model = f12.vulkanMemoryModel && f12.vulkanMemoryModelDeviceScope;
    d.int64_atomics = f12.shaderBufferInt64Atomics && feats.get<vk::PhysicalDeviceFeatures2>().features.shaderInt64;
  }
  const auto family = compute_family(pd);
  d.timestamps = family && pd.getQueueFamilyProperties()[*family].timestampValidBits > 0 &&
                 props.limits.timestampPeriod > 0.0f;
  d.usable = v12 && d.memory_model && family.has_value();
  if (const char* v = std::getenv("WARPKV_VULKAN_SHADERS")) {
    if (std::string(v) == "relaxed") d.relaxed_shaders = true;
    if (std::string(v) == "ordered") d.relaxed_shaders = false;
  }
  return d;
}

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

inline bool has_layer(const vk::raii::Context& ctx, const char* name) {
  for (const auto& l : ctx.enumerateInstanceLayerProperties())
    if (std::strcmp(l.layerName.data(), name) == 0) return true;
  return false;
}

inline bool has_instance_extension(const vk::raii::Context& ctx, const char* name) {
  for (const auto& e : ctx.enumerateInstanceExtensionProperties())
    if (std::strcmp(e.extensionName.data(), name) == 0) return true;
  return false;
}

inline vk::raii::Instance make_instance(const vk::raii::Context& ctx, bool validation) {
  if (ctx.enumerateInstanceVersion() < VK_API_VERSION_1_2)
    throw error(errc::unsupported, "warpkv::vulkan: the Vulkan loader is older than 1.2");
  vk::ApplicationInfo app("warpkv", 1, "warpkv", 1, VK_API_VERSION_1_2);
  std::vector<const char*> layers, extensions;
  if (validation) {
    if (!has_layer(ctx, "VK_LAYER_KHRONOS_validation"))
      throw error(errc::unsupported,
                  "warpkv::vulkan: validation requested but VK_LAYER_KHRONOS_validation is not installed "
                  "(Debian: vulkan-validationlayers)");
    if (!has_instance_extension(ctx, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
      throw error(errc::unsupported, "warpkv::vulkan: validation requested but VK_EXT_debug_utils is missing");
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  return vk::raii::Instance(ctx, vk::InstanceCreateInfo({}, &app, layers, extensions));
}

/// The Vulkan loader, opened on first use and kept for the life of the process (never closed,
/// so contexts destroyed during static destruction still have it); throws unsupported when it
/// cannot be loaded.
inline vk::raii::Context& loader() {
  static vk::raii::Context* ctx = nullptr;
  static std::string failure;
  if (ctx == nullptr && failure.empty()) {
    try {
      ctx = new vk::raii::Context();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (ctx == nullptr)
    throw error(errc::unsupported, "warpkv::vulkan: no Vulkan loader (libvulkan.so.1): " + failure +
                                       " (Debian: libvulkan1 plus a driver such as mesa-vulkan-drivers)");
  return *ctx;
}

}  // namespace detail

/// The devices the loader sees (no logical device is created). Throws unsupported without a loader.
inline std::vector<device_info> devices() {
  return detail::translate("enumerating devices", [] {
    auto& ctx = detail::loader();
    vk::raii::Instance instance = detail::make_instance(ctx, false);
    std::vector<device_info> out;
    std::uint32_t i = 0;
    for (const auto& pd : instance.enumeratePhysicalDevices()) out.push_back(detail::describe(pd, i++));
    return out;
  });
}

class context {
 public:
  explicit context(context_options opt = {}) : opt_(std::move(opt)) {
    detail::translate("creating the context", [&] { init(); });
  }
  /// A context on the application's device (see external_device); buffers of that device can
  /// then be passed to the maps as buffer_views.
  explicit context(const external_device& ext) {
    detail::translate("adopting a device", [&] { adopt(ext); });
  }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  ~context() {
    try {
      if (device_ && !borrowed_) device_->waitIdle();  // a borrowed device: ours waited in submit()
    } catch (...) {  // a lost device: destroy what we own anyway
    }
    // Everything created on the device goes first; a borrowed device and instance are released,
    // not destroyed.
    cache_.clear();
    sets_.clear();
    queries_.reset();
    pool_.reset();
    fence_.reset();
    command_ = vk::raii::CommandBuffer(nullptr);
    command_pool_.reset();
    queue_.reset();
    if (borrowed_) {
      if (device_) (void)device_->release();
      if (instance_) (void)instance_->release();
    }
  }
  /// True when the context runs on a device the application created.
  [[nodiscard]] bool borrowed() const { return borrowed_; }

  [[nodiscard]] const device_info& info() const { return info_; }
  [[nodiscard]] bool validation() const { return opt_.validation; }
  /// Validation messages (warnings and errors) received so far.
  [[nodiscard]] std::size_t validation_messages() const { return messages_.load(); }
  [[nodiscard]] const vk::raii::Device& device() const { return *device_; }
  [[nodiscard]] const vk::raii::PhysicalDevice& physical_device() const { return *physical_; }
  [[nodiscard]] const vk::PhysicalDeviceLimits& limits() const { return limits_; }
  [[nodiscard]] const vk::PhysicalDeviceMemoryProperties& memory_properties() const { return memory_; }
  [[nodiscard]] std::uint32_t queue_family() const { return family_; }

  /// Records commands with `record`, submits them to the compute queue and waits for them.
  /// With `timed`, timestamps bracket the commands and last_gpu_seconds() returns their span.
  void submit(const std::function<void(const vk::raii::CommandBuffer&)>& record, bool timed = false) {
    detail::translate("submitting commands", [&] {
      const auto& cb = command_;
      cb.reset();
      cb.begin(vk::CommandBufferBeginInfo(vk::CommandBufferUsageFlagBits::eOneTimeSubmit));
      timed = timed && info_.timestamps;
      if (timed) {
        cb.resetQueryPool(**queries_, 0, 2);
        cb.writeTimestamp(vk::PipelineStageFlagBits::eTopOfPipe, **queries_, 0);
      }
      record(cb);
      if (timed) cb.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, **queries_, 1);
      cb.end();
      device_->resetFences(**fence_);
      const vk::CommandBuffer raw = *cb;
      queue_->submit(vk::SubmitInfo({}, {}, raw), **fence_);
      if (device_->waitForFences(**fence_, VK_TRUE, UINT64_MAX) != vk::Result::eSuccess)
        throw error(errc::vulkan, "warpkv::vulkan: waiting for a submission failed");
      sets_.clear();  // the submission is done: its descriptor sets can go
      if (timed) {
        const auto [result, ticks] = queries_->getResults<std::uint64_t>(
            0, 2, 2 * sizeof(std::uint64_t), sizeof(std::uint64_t),
            vk::QueryResultFlagBits::e64 | vk::QueryResultFlagBits::eWait);
        if (result != vk::Result::eSuccess) throw error(errc::vulkan, "warpkv::vulkan: reading timestamps failed");
        const std::uint64_t mask =
            timestamp_bits_ >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << timestamp_bits_) - 1);
        const std::uint64_t span = (ticks[1] - ticks[0]) & mask;
        last_seconds_ = static_cast<double>(span) * static_cast<double>(limits_.timestampPeriod) * 1e-9;
      }
    });
  }
  /// GPU time of the last timed submission, in seconds (0 when the device has no timestamps).
  [[nodiscard]] double last_gpu_seconds() const { return last_seconds_; }

  /// A descriptor set of `layout`, valid until the end of the current submission.
  vk::DescriptorSet allocate_set(vk::DescriptorSetLayout layout) {
    vk::DescriptorSetAllocateInfo info(**pool_, layout);
    auto sets = vk::raii::DescriptorSets(*device_, info);
    sets_.push_back(std::move(sets.front()));
    return *sets_.back();
  }

  /// Cache of objects built once per context (pipelines): created by `make` on first request.
  template <class T, class Make>
  T& cached(const std::string& key, Make&& make) {
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, std::shared_ptr<void>(std::make_shared<T>(make()))).first;
    return *static_cast<T*>(it->second.get());
  }

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                 VkDebugUtilsMessageTypeFlagsEXT,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
    auto* c = static_cast<context*>(self);
    c->messages_.fetch_add(1);
    const std::string text = data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no message)";
    if (c->opt_.on_message) c->opt_.on_message(text);
    else std::cerr << "warpkv::vulkan validation: " << text << '\n';
    return VK_FALSE;
  }

  void init() {
    auto& ctx = detail::loader();
    instance_.emplace(detail::make_instance(ctx, opt_.validation));
    if (opt_.validation) {
      using S = vk::DebugUtilsMessageSeverityFlagBitsEXT;
      using T = vk::DebugUtilsMessageTypeFlagBitsEXT;
      messenger_.emplace(*instance_, vk::DebugUtilsMessengerCreateInfoEXT(
                                         {}, S::eWarning | S::eError,
                                         T::eGeneral | T::eValidation | T::ePerformance, &context::on_debug, this));
    }
    auto physical = instance_->enumeratePhysicalDevices();
    if (physical.empty())
      throw error(errc::unsupported, "warpkv::vulkan: the Vulkan loader reports no device (install a driver, "
                                     "e.g. Debian's mesa-vulkan-drivers for lavapipe)");
    std::vector<device_info> infos;
    for (std::uint32_t i = 0; i < physical.size(); ++i) infos.push_back(detail::describe(physical[i], i));

    std::string want = opt_.device;
    if (want.empty())
      if (const char* env = std::getenv("WARPKV_VULKAN_DEVICE")) want = env;
    std::optional<std::uint32_t> pick;
    if (!want.empty()) {
      const bool numeric = std::all_of(want.begin(), want.end(), [](unsigned char c) { return std::isdigit(c); });
      for (const auto& d : infos)
        if ((numeric && std::to_string(d.index) == want) ||
            (!numeric && detail::lower(d.name).find(detail::lower(want)) != std::string::npos)) {
          pick = d.index;
          break;
        }
      if (!pick) throw error(errc::invalid_argument, "warpkv::vulkan: no device matches '" + want + "'" + list(infos));
    } else {
      int best = 1 << 20;
      for (const auto& d : infos) {
        if (!d.usable) continue;
        const int rank = detail::type_rank(physical[d.index].getProperties().deviceType);
        if (rank < best) best = rank, pick = d.index;
      }
      if (!pick) throw error(errc::unsupported, "warpkv::vulkan: no usable device (Vulkan 1.2 with the Vulkan memory "
                                                "model and a compute queue)" + list(infos));
    }
    info_ = infos[*pick];
    if (!info_.usable)
      throw error(errc::unsupported, "warpkv::vulkan: device '" + info_.name +
                                         "' lacks Vulkan 1.2, vulkanMemoryModel(DeviceScope) or a compute queue");
    physical_.emplace(std::move(physical[*pick]));
    const auto props = physical_->getProperties();
    limits_ = props.limits;
    memory_ = physical_->getMemoryProperties();
    family_ = *detail::compute_family(*physical_);
    timestamp_bits_ = physical_->getQueueFamilyProperties()[family_].timestampValidBits;

    const float priority = 1.0f;
    vk::DeviceQueueCreateInfo queue_info({}, family_, 1, &priority);
    vk::StructureChain<vk::DeviceCreateInfo, vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceVulkan12Features,
                       vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR>
        chain;
    chain.get<vk::DeviceCreateInfo>().setQueueCreateInfos(queue_info);
    std::vector<const char*> extensions;
    if (info_.subgroup_uniform_control_flow) {
      extensions.push_back(VK_KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_EXTENSION_NAME);
      chain.get<vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR>().shaderSubgroupUniformControlFlow = VK_TRUE;
    } else {
      chain.unlink<vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR>();
    }
    chain.get<vk::DeviceCreateInfo>().setPEnabledExtensionNames(extensions);
    chain.get<vk::PhysicalDeviceFeatures2>().features.shaderInt64 = info_.int64_atomics;
    auto& f12 = chain.get<vk::PhysicalDeviceVulkan12Features>();
    f12.vulkanMemoryModel = VK_TRUE;
    f12.vulkanMemoryModelDeviceScope = VK_TRUE;
    f12.shaderBufferInt64Atomics = info_.int64_atomics;
    try {
      device_.emplace(*physical_, chain.get<vk::DeviceCreateInfo>());
    } catch (const vk::SystemError&) {
      if (!info_.subgroup_uniform_control_flow) throw;
      // The optional extension must never cost the device: create it again without.
      info_.subgroup_uniform_control_flow = false;
      chain.unlink<vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR>();
      extensions.clear();
      chain.get<vk::DeviceCreateInfo>().setPEnabledExtensionNames(extensions);
      device_.emplace(*physical_, chain.get<vk::DeviceCreateInfo>());
    }
    init_objects(0);
  }

  void adopt(const external_device& ext) {
    require(ext.instance != VK_NULL_HANDLE && ext.physical_device != VK_NULL_HANDLE && ext.device != VK_NULL_HANDLE,
            "external_device", "instance, physical_device and device must be set");
    auto& ctx = detail::loader();
    borrowed_ = true;
    instance_.emplace(ctx, ext.instance);
    physical_.emplace(*instance_, ext.physical_device);
    info_ = detail::describe(*physical_, 0);
    const auto families = physical_->getQueueFamilyProperties();
    require(ext.queue_family < families.size() && (families[ext.queue_family].queueFlags & vk::QueueFlagBits::eCompute),
            "external_device.queue_family", "must name a queue family with compute");
    require(ext.queue_index < families[ext.queue_family].queueCount, "external_device.queue_index",
            "exceeds the family's queue count");
    if (!info_.memory_model)
      throw error(errc::unsupported, "warpkv::vulkan: device '" + info_.name +
                                         "' lacks vulkanMemoryModel/vulkanMemoryModelDeviceScope");
    info_.int64_atomics = info_.int64_atomics && ext.int64_atomics_enabled;
    info_.subgroup_uniform_control_flow = false;  // unknown whether the application enabled it
    family_ = ext.queue_family;
    timestamp_bits_ = families[family_].timestampValidBits;
    info_.timestamps = timestamp_bits_ > 0 && physical_->getProperties().limits.timestampPeriod > 0.0f;
    limits_ = physical_->getProperties().limits;
    memory_ = physical_->getMemoryProperties();
    device_.emplace(*physical_, ext.device);
    init_objects(ext.queue_index);
  }

  void init_objects(std::uint32_t queue_index) {
    queue_.emplace(*device_, family_, queue_index);
    command_pool_.emplace(*device_,
                          vk::CommandPoolCreateInfo(vk::CommandPoolCreateFlagBits::eResetCommandBuffer, family_));
    command_ = std::move(vk::raii::CommandBuffers(
        *device_, vk::CommandBufferAllocateInfo(**command_pool_, vk::CommandBufferLevel::ePrimary, 1)).front());
    fence_.emplace(*device_, vk::FenceCreateInfo());
    const vk::DescriptorPoolSize sizes(vk::DescriptorType::eStorageBuffer, 8 * 64);
    pool_.emplace(*device_,
                  vk::DescriptorPoolCreateInfo(vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet, 64, sizes));
    if (info_.timestamps) queries_.emplace(*device_, vk::QueryPoolCreateInfo({}, vk::QueryType::eTimestamp, 2));
  }

  static std::string list(const std::vector<device_info>& infos) {
    std::string s = "; devices:";
    for (const auto& d : infos) s += " [" + std::to_string(d.index) + "] " + d.name + " (" + d.type + ")";
    return s;
  }

  context_options opt_;
  device_info info_;
  std::optional<vk::raii::Instance> instance_;
  std::optional<vk::raii::DebugUtilsMessengerEXT> messenger_;
  std::optional<vk::raii::PhysicalDevice> physical_;
  vk::PhysicalDeviceLimits limits_;
  vk::PhysicalDeviceMemoryProperties memory_;
  std::uint32_t family_ = 0;
  std::uint32_t timestamp_bits_ = 0;
  std::optional<vk::raii::Device> device_;
  std::optional<vk::raii::Queue> queue_;
  std::optional<vk::raii::CommandPool> command_pool_;
  vk::raii::CommandBuffer command_{nullptr};
  std::optional<vk::raii::Fence> fence_;
  std::optional<vk::raii::DescriptorPool> pool_;
  std::optional<vk::raii::QueryPool> queries_;
  std::vector<vk::raii::DescriptorSet> sets_;
  std::map<std::string, std::shared_ptr<void>> cache_;
  std::atomic<std::size_t> messages_{0};
  double last_seconds_ = 0.0;
  bool borrowed_ = false;
};

}  // namespace warpkv::vulkan
