#pragma once
// warpkv::vulkan::linear_map: the linear-probing map of warpkv on any Vulkan 1.2 device, as GLSL
// compute shaders (shaders/linear_map_*.comp, embedded as SPIR-V) driven from the host.
//
// What it guarantees (argument, memory model and linearization points: docs/design/vulkan.md;
// the protocol is the CUDA open_addressing_map's, docs/design/open_addressing.md):
//  - Every operation of a batch runs concurrently with the others (one invocation each, or the
//    invocations of a subgroup in turn with config.probing = subgroup) and is linearizable; a key
//    is never stored twice, also when many invocations insert it at once.
//  - Keys: std::uint32_t, or std::uint64_t where the device has shaderBufferInt64Atomics (else
//    the constructor throws errc::unsupported); values: std::uint32_t.
//  - Murmur3 into a power-of-two table, linear probing; insert claims a free slot by CAS of its
//    key, publishes its value with a ready bit; erase leaves a tombstone (max key - 1) that is
//    never reused while a batch runs; cleanup() rebuilds without tombstones and runs by itself
//    after a batch leaving more than tombstone_threshold x capacity of them (or tombstones and
//    keys together above the maximum load factor).
//  - No insert is lost: an insert that finds no free slot within max_probe slots gets `full`; the
//    map then rebuilds the table on the host's command (new seed, more room when loaded) and
//    re-runs exactly the full operations; 64 rounds without success throw errc::capacity.
//  - The sentinels (max key = empty, max key - 1 = erased) get status::invalid_key and never
//    touch the table; with config.throw_on_invalid_key the call throws after the batch ran.
//  - Every call waits for its GPU work. One map must not be used by two host threads at once.
// Device-side calls take buffer_views (uint32 op codes, keys, uint32 values, uint32 statuses);
// the std::span overloads take host data.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "warpkv/core/batch.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/growth.hpp"
#include "warpkv/core/hash.hpp"
#include "warpkv/core/status.hpp"
#include "warpkv/vulkan/buffer.hpp"
#include "warpkv/vulkan/context.hpp"
#include "warpkv/vulkan/detail/pipeline.hpp"
#include "warpkv/vulkan/detail/spirv.hpp"

namespace warpkv::vulkan {

/// How a batch shader probes (linear_map_config::probing; docs/design/vulkan.md).
enum class probing_mode {
  /// per_invocation, by measurement on NVIDIA; see detail::automatic_prefers_subgroup.
  automatic,
  /// One invocation per operation walks its key's probe sequence alone (shaders/linear_map_common.glsl).
  per_invocation,
  /// The invocations of a subgroup serve their operations in turn, reading a window of slots, one
  /// per lane (shaders/linear_map_subgroup.glsl). Needs compute subgroups with ballot and
  /// shuffle operations of at least 8 lanes (device_info::subgroup_probing), else errc::unsupported.
  subgroup,
};

inline const char* to_string(probing_mode p) {
  switch (p) {
    case probing_mode::automatic: return "automatic";
    case probing_mode::per_invocation: return "per_invocation";
    case probing_mode::subgroup: return "subgroup";
  }
  return "?";
}

struct linear_map_config {
  double max_load_factor = 0.9;       ///< the table grows before size/capacity would pass this
  double tombstone_threshold = 0.25;  ///< cleanup after a batch leaving more tombstones than this x capacity, (0, 1]
  std::size_t max_probe = 4096;       ///< slots an operation may probe; 0 = the whole table
  std::uint64_t seed = 0;             ///< hash seed; rebuilds pick new ones
  bool throw_on_invalid_key = false;  ///< throw warpkv::error(invalid_key) after a batch that held a sentinel
  /// Rounds an insert re-reads a slot where another insert of its key has claimed but not yet
  /// published; then it is re-run in a later dispatch of the same batch (0: always re-run).
  std::uint32_t pending_waits = 64;
  /// Per-invocation or subgroup-cooperative probing; both give the same results on the same table.
  /// automatic = per_invocation (fastest for bulk build and lookup); subgroup is up to 18x faster
  /// for hot-key mixed batches and faster for misses at high load (detail::automatic_prefers_subgroup).
  probing_mode probing = probing_mode::automatic;
};

namespace detail {
/// Whether `automatic` picks subgroup probing on a device that supports it, chosen by
/// measurement (docs/perf.md, "Session 4: Vulkan probing modes"; H100, NVIDIA 580.159, 3b6698d):
/// one invocation per key builds 1.4-1.7x and finds hits 2.5-3.3x faster at load factors 0.5-0.9
/// (2^27 slots) and runs cold mixed batches (1e5 keys) 1.3-2.4x faster; subgroup probing wins
/// all-miss finds at high load (1.7x at 0.8, 3.9x at 0.9) and hot-key mixed batches of 1e7
/// operations on 1e2-1e4 keys (3.6-18x), where invocations of one key otherwise contend and
/// re-run. Bulk build and lookup are the common case, so automatic stays per_invocation; pick
/// probing_mode::subgroup for hot-key update streams or miss-heavy lookups at high load.
inline constexpr bool automatic_prefers_subgroup = false;

/// The probing a map on device `d` uses for `requested`; an explicit subgroup request on a device
/// without the subgroup operations it needs is an error naming the option.
inline probing_mode resolve_probing(probing_mode requested, const device_info& d) {
  switch (requested) {
    case probing_mode::per_invocation: return probing_mode::per_invocation;
    case probing_mode::subgroup:
      if (!d.subgroup_probing)
        throw error(errc::unsupported,
                    "warpkv::vulkan::linear_map: linear_map_config::probing = subgroup, but device '" + d.name +
                        "' lacks compute subgroups with basic, ballot and shuffle operations of at least 8 lanes "
                        "(subgroupSize " + std::to_string(d.subgroup_size) +
                        "); use probing_mode::per_invocation or automatic");
      return probing_mode::subgroup;
    case probing_mode::automatic:
      return automatic_prefers_subgroup && d.subgroup_probing ? probing_mode::subgroup : probing_mode::per_invocation;
  }
  throw error(errc::invalid_argument, "warpkv::vulkan::linear_map: linear_map_config::probing is not a probing_mode");
}

template <class Key>
struct slot;
template <>
struct slot<std::uint32_t> {
  std::uint32_t key;
  std::uint32_t value;
};
template <>
struct slot<std::uint64_t> {
  std::uint64_t key;
  std::uint32_t value;
  std::uint32_t pad;
};
}  // namespace detail

template <class Key = std::uint32_t>
class linear_map {
  static_assert(std::is_same_v<Key, std::uint32_t> || std::is_same_v<Key, std::uint64_t>,
                "warpkv::vulkan::linear_map keys are std::uint32_t or std::uint64_t");
  static constexpr bool wide = sizeof(Key) == 8;

 public:
  using key_type = Key;
  using mapped_type = std::uint32_t;
  using config_type = linear_map_config;
  using slot_type = detail::slot<Key>;
  static constexpr Key empty_key_value = ~Key{0};
  static constexpr Key erased_key_value = ~Key{0} - 1;

  /// A map on `ctx`'s device with room for at least `capacity_hint` keys. The context must
  /// outlive the map.
  linear_map(context& ctx, std::size_t capacity_hint, config_type cfg = {})
      : ctx_(&ctx), cfg_(cfg), seed_(cfg.seed), probing_(detail::resolve_probing(cfg.probing, ctx.info())) {
    require(cfg.max_load_factor > 0.0 && cfg.max_load_factor <= 1.0, "max_load_factor", "must be in (0, 1]");
    require(cfg.tombstone_threshold > 0.0 && cfg.tombstone_threshold <= 1.0, "tombstone_threshold",
            "must be in (0, 1]");
    if (wide && !ctx.info().int64_atomics)
      throw error(errc::unsupported, "warpkv::vulkan::linear_map<uint64_t>: device '" + ctx.info().name +
                                         "' lacks shaderInt64/shaderBufferInt64Atomics (64-bit buffer atomics); "
                                         "use 32-bit keys");
    detail::translate("creating a linear_map", [&] {
      const bool relaxed = ctx.info().relaxed_shaders;
      const auto load = [&](const char* shader) {
        const std::string name = std::string("linear_map_") + shader + (wide ? "_k64" : "_k32") +
                                 (relaxed ? "_relaxed" : "");
        return &detail::pipeline(ctx, name, detail::spirv::code(shader, wide, relaxed));
      };
      // The subgroup shader with the SubgroupUniformControlFlowKHR mode where the context enabled
      // it (never on llvmpipe, which lacks the extension and runs the relaxed variant).
      const bool ucf = ctx.info().subgroup_uniform_control_flow && !relaxed;
      batch_ = load(probing_ != probing_mode::subgroup ? "batch" : ucf ? "batch_subgroup_ucf" : "batch_subgroup");
      reinsert_ = load("reinsert");
      collect_ = load("collect");
      counts_ = buffer(ctx, 8 * sizeof(std::uint32_t), memory::host);
      dummy_ = buffer(ctx, 16, memory::device);
      allocate(capacity_for(capacity_hint), cfg.seed);
    });
  }

  // ---- bulk API over device buffers (uint32 op codes and statuses; a null statuses view: the
  // ---- map uses scratch memory) ------------------------------------------------------------
  batch_summary insert(buffer_view keys, buffer_view values, std::size_t n, buffer_view statuses = {}) {
    return insert_batch(keys, values, n, statuses, false);
  }
  batch_summary insert_or_assign(buffer_view keys, buffer_view values, std::size_t n, buffer_view statuses = {}) {
    return insert_batch(keys, values, n, statuses, true);
  }
  /// values_out[i] = value of keys[i], or 0 when absent (values_out may be null: contains).
  batch_summary find(buffer_view keys, std::size_t n, buffer_view values_out, buffer_view statuses = {}) {
    return guarded("find", [&] {
      check(keys, n, sizeof(Key), "keys");
      check(values_out, n, 4, "values_out", true);
      check(statuses, n, 4, "statuses", true);
      gpu_seconds_ = 0.0;
      if (n == 0) return batch_summary{};
      buffer scratch;
      if (!statuses.buffer) statuses = (scratch = buffer(*ctx_, n * 4)).view();
      const auto s = launch(op::find, {}, keys, {}, n, statuses, values_out, false);
      throw_if_invalid(s);
      return s;
    });
  }
  batch_summary erase(buffer_view keys, std::size_t n, buffer_view statuses = {}) {
    return guarded("erase", [&] {
      check(keys, n, sizeof(Key), "keys");
      check(statuses, n, 4, "statuses", true);
      return run(static_cast<std::uint32_t>(op::erase), {}, keys, {}, n, statuses, {});
    });
  }
  /// A mixed batch: op i is ops[i] (uint32 warpkv::op codes; others get invalid_key).
  batch_summary execute(buffer_view ops, buffer_view keys, buffer_view values, std::size_t n, buffer_view statuses = {},
                        buffer_view values_out = {}) {
    return guarded("execute", [&] {
      check(ops, n, 4, "ops");
      check(keys, n, sizeof(Key), "keys");
      check(values, n, 4, "values");
      check(statuses, n, 4, "statuses", true);
      check(values_out, n, 4, "values_out", true);
      return run(per_element, ops, keys, values, n, statuses, values_out);
    });
  }

  // ---- convenience overloads over host data --------------------------------------------------
  std::vector<status> insert(std::span<const Key> keys, std::span<const mapped_type> values) {
    return insert_host(keys, values, false);
  }
  std::vector<status> insert_or_assign(std::span<const Key> keys, std::span<const mapped_type> values) {
    return insert_host(keys, values, true);
  }
  /// Each key's status (found / not_found / invalid_key); values[i] = its value, 0 if absent.
  std::vector<status> find(std::span<const Key> keys, std::vector<mapped_type>& values) {
    return guarded("find", [&] {
      auto k = host_input(keys);
      buffer v(*ctx_, keys.size_bytes() / sizeof(Key) * 4);
      auto st = with_statuses(keys.size(), [&](buffer_view s) { find(k.view(), keys.size(), v.view(), s); });
      values = v.to_vector<mapped_type>(keys.size());
      return st;
    });
  }
  std::vector<bool> contains(std::span<const Key> keys) {
    std::vector<mapped_type> unused;
    const auto st = find(keys, unused);
    std::vector<bool> out(st.size());
    for (std::size_t i = 0; i < st.size(); ++i) out[i] = st[i] == status::found;
    return out;
  }
  std::vector<status> erase(std::span<const Key> keys) {
    return guarded("erase", [&] {
      auto k = host_input(keys);
      return with_statuses(keys.size(), [&](buffer_view s) { erase(k.view(), keys.size(), s); });
    });
  }
  std::vector<status> execute(std::span<const op> ops, std::span<const Key> keys, std::span<const mapped_type> values,
                              std::vector<mapped_type>& values_out) {
    require(ops.size() == keys.size(), "keys", "must have as many elements as ops");
    require(values.size() == keys.size(), "values", "must have as many elements as ops");
    return guarded("execute", [&] {
      std::vector<std::uint32_t> codes(ops.size());
      for (std::size_t i = 0; i < ops.size(); ++i) codes[i] = static_cast<std::uint32_t>(ops[i]);
      auto o = host_input(std::span<const std::uint32_t>(codes));
      auto k = host_input(keys);
      auto v = host_input(values);
      buffer r(*ctx_, keys.size() * 4);
      auto st = with_statuses(keys.size(), [&](buffer_view s) {
        execute(o.view(), k.view(), v.view(), keys.size(), s, r.view());
      });
      values_out = r.to_vector<mapped_type>(keys.size());
      return st;
    });
  }

  // ---- whole-table operations ------------------------------------------------------------------
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] double load_factor() const { return static_cast<double>(size_) / static_cast<double>(capacity_); }
  [[nodiscard]] std::size_t tombstones() const { return tombstones_; }
  [[nodiscard]] const config_type& config() const { return cfg_; }
  /// The probing the batches use (config().probing resolved for this device: never automatic).
  [[nodiscard]] probing_mode probing() const { return probing_; }
  [[nodiscard]] Key empty_key() const { return empty_key_value; }
  [[nodiscard]] Key erased_key() const { return erased_key_value; }
  [[nodiscard]] std::uint64_t seed() const { return seed_; }
  [[nodiscard]] std::size_t rehash_count() const { return rehashes_; }
  [[nodiscard]] std::size_t cleanup_count() const { return cleanups_; }
  [[nodiscard]] context& ctx() const { return *ctx_; }
  /// The table's buffers, for user shaders that follow shaders/linear_map_common.glsl.
  [[nodiscard]] buffer_view slots_view() const { return slots_.view(); }
  [[nodiscard]] buffer_view ready_view() const { return ready_.view(); }

  /// The first slot of k's probe sequence in the current table.
  [[nodiscard]] std::size_t home(Key k) const { return static_cast<std::size_t>(hash_bits(k, seed_)) & (capacity_ - 1); }

  /// Time every batch launch with GPU timestamps; last_gpu_seconds() sums those of the last call.
  void set_timing(bool on) { timing_ = on; }
  [[nodiscard]] double last_gpu_seconds() const { return gpu_seconds_; }
  /// Inserts re-run in a later dispatch because they met a pending claim of their key (see
  /// linear_map_config::pending_waits), since construction.
  [[nodiscard]] std::uint64_t retried_inserts() const { return retried_; }

  void clear() {
    guarded("clear", [&] {
      ctx_->submit([&](const vk::raii::CommandBuffer& cb) { record_reset(cb); });
      size_ = 0;
      tombstones_ = 0;
      return 0;
    });
  }
  /// Makes room for n keys without passing the maximum load factor.
  void reserve(std::size_t n) {
    const std::size_t need = capacity_for(n);
    if (need > capacity_) guarded("reserve", [&] { return rehash_to(need); });
  }
  /// Rebuilds the table with at least `capacity` slots (never fewer than the keys need).
  void rehash(std::size_t capacity) {
    guarded("rehash", [&] { return rehash_to(std::max(capacity_for(size_), round_capacity(capacity))); });
  }
  /// Rebuilds the table without tombstones, at the same capacity (more if the keys need it).
  void cleanup() {
    if (tombstones_ == 0) return;
    guarded("cleanup", [&] { return rehash_to(std::max(capacity_, capacity_for(size_))); });
    ++cleanups_;
  }

  /// Every live entry (order unspecified).
  std::pair<std::vector<Key>, std::vector<mapped_type>> retrieve_all() const {
    return guarded("retrieve_all", [&] {
      buffer k(*ctx_, std::max<std::size_t>(size_, 1) * sizeof(Key));
      buffer v(*ctx_, std::max<std::size_t>(size_, 1) * 4);
      detail::bindings b{};
      b[3] = k.view();
      b[6] = v.view();
      counted_pass(*collect_, b, params(static_cast<std::uint32_t>(capacity_)));
      const std::size_t n = read_counts()[0];
      if (n != size_)
        throw error(errc::capacity, "warpkv::vulkan::linear_map: table holds " + std::to_string(n) +
                                        " keys but size() is " + std::to_string(size_));
      return std::make_pair(k.to_vector<Key>(n), v.to_vector<mapped_type>(n));
    });
  }

  /// Debug aid: a copy of the slot array (between batches).
  [[nodiscard]] std::vector<slot_type> slots() const { return slots_.to_vector<slot_type>(capacity_); }

  /// Debug aid (copies the table to the host): checks the invariants of docs/design/vulkan.md
  /// (uniqueness, probe prefix, ready bit iff non-empty, counts) and returns the first violation,
  /// or an empty string. Call between batches only.
  [[nodiscard]] std::string validate() const {
    const auto slots = this->slots();
    const auto ready = ready_.to_vector<std::uint32_t>(capacity_ / 32);
    const std::size_t limit = max_probe();
    std::unordered_set<Key> seen;
    std::size_t live = 0, dead = 0;
    for (std::size_t i = 0; i < capacity_; ++i) {
      const Key k = slots[i].key;
      const bool r = (ready[i / 32] >> (i % 32)) & 1u;
      if ((k != empty_key_value) != r) return "slot " + std::to_string(i) + ": ready bit disagrees with its key";
      if (k == erased_key_value) ++dead;
      if (k == empty_key_value || k == erased_key_value) continue;
      ++live;
      if (!seen.insert(k).second) return "key " + std::to_string(k) + " is stored twice";
      std::size_t s = home(k), d = 0;
      for (; s != i; s = (s + 1) & (capacity_ - 1), ++d)
        if (slots[s].key == empty_key_value) return "key " + std::to_string(k) + ": an empty slot precedes it";
      if (d >= limit) return "key " + std::to_string(k) + " lies beyond max_probe";
    }
    if (live != size_) return "size() is " + std::to_string(size_) + " but the table holds " + std::to_string(live);
    if (dead != tombstones_)
      return "tombstones() is " + std::to_string(tombstones_) + " but the table holds " + std::to_string(dead);
    return {};
  }

 private:
  static constexpr std::uint32_t per_element = 0xFFu;

  template <class F>
  decltype(auto) guarded(const char* what, F&& f) const {
    return detail::translate(what, std::forward<F>(f));
  }

  /// The sizing rule of core/growth.hpp, with the Vulkan limit (a 32-bit index per slot).
  warpkv::detail::growth_policy growth() const {
    return warpkv::detail::growth_policy{cfg_.max_load_factor, std::size_t{1} << 31, "warpkv::vulkan"};
  }
  std::size_t round_capacity(std::size_t n) const { return growth().round(n); }
  std::size_t capacity_for(std::size_t keys) const { return growth().capacity_for(keys); }
  std::size_t max_probe() const {
    return cfg_.max_probe == 0 || cfg_.max_probe >= capacity_ ? capacity_ : cfg_.max_probe;
  }
  std::uint64_t seed_mix() const {
    return wide ? fmix64(seed_ * 0x9e3779b97f4a7c15ull) : static_cast<std::uint32_t>(fmix64(seed_));
  }

  detail::push_constants params(std::uint32_t n, std::uint32_t uniform_op = 0, bool only_full = false,
                                bool write_values = false) const {
    detail::push_constants pc;
    pc.n = n;
    pc.capacity_mask = static_cast<std::uint32_t>(capacity_ - 1);
    pc.max_probe = static_cast<std::uint32_t>(max_probe());
    pc.seed_lo = static_cast<std::uint32_t>(seed_mix());
    pc.seed_hi = static_cast<std::uint32_t>(seed_mix() >> 32);
    pc.uniform_op = uniform_op;
    pc.flags = (only_full ? detail::flag_only_full : 0u) | (write_values ? detail::flag_write_values : 0u);
    pc.pending_waits = cfg_.pending_waits;
    return pc;
  }

  void check(const buffer_view& v, std::size_t n, std::size_t elem, const char* name, bool optional = false) const {
    require(n < (std::size_t{1} << 32) - detail::workgroup_size, "n", "must be below 2^32 - 256");
    if (optional && !v.buffer) return;
    detail::check_view(*ctx_, v, n, elem, name);
  }

  template <class T>
  buffer host_input(std::span<const T> data) const {
    return buffer::from_host<T>(*ctx_, data);
  }
  template <class F>
  std::vector<status> with_statuses(std::size_t n, F&& f) {
    buffer s(*ctx_, n * 4);
    f(s.view());
    const auto raw = s.to_vector<std::uint32_t>(n);
    std::vector<status> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<status>(raw[i]);
    return out;
  }

  std::vector<status> insert_host(std::span<const Key> keys, std::span<const mapped_type> values, bool or_assign) {
    require(keys.size() == values.size(), "values", "must have as many elements as keys");
    return guarded("insert", [&] {
      auto k = host_input(keys);
      auto v = host_input(values);
      return with_statuses(keys.size(), [&](buffer_view s) { insert_batch(k.view(), v.view(), keys.size(), s, or_assign); });
    });
  }

  batch_summary insert_batch(buffer_view keys, buffer_view values, std::size_t n, buffer_view statuses, bool or_assign) {
    return guarded("insert", [&] {
      check(keys, n, sizeof(Key), "keys");
      check(values, n, 4, "values");
      check(statuses, n, 4, "statuses", true);
      // Before n inserts: room for the keys, and room beside the tombstones, else drop them first.
      reserve(size_ + n);
      if (over_load(size_ + tombstones_ + n)) cleanup();
      const op o = or_assign ? op::insert_or_assign : op::insert;
      return run(static_cast<std::uint32_t>(o), {}, keys, values, n, statuses, {});
    });
  }

  std::array<std::uint32_t, 8> read_counts() const {
    std::array<std::uint32_t, 8> c{};
    std::memcpy(c.data(), counts_.mapped(), sizeof(c));
    return c;
  }

  /// Zeroes the counters, then runs `pipe` once with the table bound: bindings 0, 1 and 7 are the
  /// slots, ready bits and counters (set here), the caller sets the pass's others.
  void counted_pass(const vk::raii::Pipeline& pipe, detail::bindings b, const detail::push_constants& pc,
                    bool timed = false) const {
    b[0] = slots_.view();
    b[1] = ready_.view();
    b[7] = counts_.view();
    ctx_->submit(
        [&](const vk::raii::CommandBuffer& cb) {
          cb.fillBuffer(counts_.handle(), 0, VK_WHOLE_SIZE, 0);
          detail::full_barrier(cb);
          detail::record_dispatch(*ctx_, cb, pipe, b, dummy_.view(), pc);
          detail::full_barrier(cb);
        },
        timed);
  }

  /// One launch of the batch shader; returns its per-status counts.
  batch_summary launch(std::uint32_t uniform_op, buffer_view ops, buffer_view keys, buffer_view values, std::size_t n,
                       buffer_view statuses, buffer_view values_out, bool only_full) {
    detail::bindings b{};
    b[2] = ops;
    b[3] = keys;
    b[4] = values;
    b[5] = statuses;
    b[6] = values_out;
    counted_pass(*batch_, b,
                 params(static_cast<std::uint32_t>(n), uniform_op, only_full, static_cast<bool>(values_out.buffer)),
                 timing_);
    if (timing_) gpu_seconds_ += ctx_->last_gpu_seconds();
    const auto c = read_counts();
    batch_summary s;
    for (int i = 0; i < num_status_kinds; ++i) s.count[i] = c[i];
    last_retries_ = c[detail::status_retry];
    retried_ += last_retries_;
    return s;
  }
  batch_summary launch(op o, buffer_view ops, buffer_view keys, buffer_view values, std::size_t n,
                       buffer_view statuses, buffer_view values_out, bool only_full) {
    return launch(static_cast<std::uint32_t>(o), ops, keys, values, n, statuses, values_out, only_full);
  }

  /// A mutating batch: launch, then grow and re-run exactly the `full` operations until none is.
  batch_summary run(std::uint32_t uniform_op, buffer_view ops, buffer_view keys, buffer_view values, std::size_t n,
                    buffer_view statuses, buffer_view values_out) {
    gpu_seconds_ = 0.0;
    if (n == 0) return {};
    buffer scratch;
    if (!statuses.buffer) {
      scratch = buffer(*ctx_, n * 4);
      statuses = scratch.view();
    }
    batch_summary part = launch(uniform_op, ops, keys, values, n, statuses, values_out, false);
    account(part);
    // Re-run the full operations after growth and the retried ones (ST_RETRY: an insert that met
    // a pending claim of its key; counted in no status) until every operation has its status.
    int retries = 0;
    const batch_summary total = warpkv::detail::rerun_until_placed(
        part, part, warpkv::detail::map_label{"", "warpkv::vulkan::linear_map"},
        [&](std::uint64_t) { return launch(uniform_op, ops, keys, values, n, statuses, values_out, true); },
        [&](std::uint64_t pending) { grow(pending); }, [&](const batch_summary& s) { account(s); },
        [&] {
          if (last_retries_ == 0) return false;
          if (retries++ >= 4096)  // each re-run completes every claim the last one left pending
            throw error(errc::vulkan, "warpkv::vulkan::linear_map: inserts still met pending claims after 4096 re-runs");
          return true;
        });
    maintain();
    throw_if_invalid(total);
    return total;
  }

  void throw_if_invalid(const batch_summary& s) const {
    if (cfg_.throw_on_invalid_key && s[status::invalid_key] > 0)
      throw error(errc::invalid_key, "warpkv: " + std::to_string(s[status::invalid_key]) +
                                         " keys equal a sentinel key (or op codes were invalid)");
  }
  void account(const batch_summary& s) {
    size_ += s[status::inserted];
    size_ -= s[status::erased];
    tombstones_ += s[status::erased];
  }
  bool over_load(std::size_t occupied) const { return growth().over_load(occupied, capacity_); }
  void maintain() {
    if (over_load(size_)) reserve(size_);
    const double threshold = cfg_.tombstone_threshold * static_cast<double>(capacity_);
    if (tombstones_ > 0 && (static_cast<double>(tombstones_) > threshold || over_load(size_ + tombstones_))) cleanup();
  }
  /// `pending` inserts found no room: the growth policy's new capacity (core/growth.hpp).
  void grow(std::uint64_t pending) { rehash_to(growth().grow_to(capacity_, size_, pending)); }

  void record_reset(const vk::raii::CommandBuffer& cb) const {
    cb.fillBuffer(slots_.handle(), 0, VK_WHOLE_SIZE, 0xFFFFFFFFu);  // every key (and value) = empty
    cb.fillBuffer(ready_.handle(), 0, VK_WHOLE_SIZE, 0u);
    detail::full_barrier(cb);
  }

  void allocate(std::size_t capacity, std::uint64_t seed) {
    const std::size_t bytes = capacity * sizeof(slot_type);
    if (bytes > ctx_->limits().maxStorageBufferRange)
      throw error(errc::out_of_memory, "warpkv::vulkan::linear_map: a table of " + std::to_string(capacity) +
                                           " slots (" + std::to_string(bytes) +
                                           " bytes) exceeds the device's maxStorageBufferRange of " +
                                           std::to_string(ctx_->limits().maxStorageBufferRange) + " bytes");
    slots_ = buffer(*ctx_, bytes);
    ready_ = buffer(*ctx_, capacity / 32 * 4);
    capacity_ = capacity;
    seed_ = seed;
    tombstones_ = 0;
    ctx_->submit([&](const vk::raii::CommandBuffer& cb) { record_reset(cb); });
  }

  /// Re-inserts every live entry into a new table of `capacity` slots with a new seed
  /// (alternately a new seed, then a new seed with twice the room, until every entry fits).
  int rehash_to(std::size_t capacity) {
    // Strong guarantee: the old table waits aside and comes back when anything fails.
    buffer old_slots = std::move(slots_);
    buffer old_ready = std::move(ready_);
    const std::size_t old_capacity = capacity_;
    const std::uint64_t old_seed = seed_;
    const std::size_t old_tombstones = tombstones_;
    try {
      warpkv::detail::rebuild_until_placed(capacity, seed_, "warpkv::vulkan: rehash could not place every key",
                                   [&](std::size_t slots, std::uint64_t seed) {
        allocate(slots, seed);
        detail::bindings b{};
        b[2] = old_slots.view();
        counted_pass(*reinsert_, b, params(static_cast<std::uint32_t>(old_capacity)));
        return read_counts()[static_cast<int>(status::full)] == 0;
      });
    } catch (...) {
      slots_ = std::move(old_slots);
      ready_ = std::move(old_ready);
      capacity_ = old_capacity;
      seed_ = old_seed;
      tombstones_ = old_tombstones;
      throw;
    }
    ++rehashes_;
    return 0;
  }

  context* ctx_;
  config_type cfg_;
  std::uint64_t seed_;
  probing_mode probing_;
  const vk::raii::Pipeline* batch_ = nullptr;
  const vk::raii::Pipeline* reinsert_ = nullptr;
  const vk::raii::Pipeline* collect_ = nullptr;
  buffer counts_;  // host-visible: per-status counts of the last launch
  buffer dummy_;   // bound where a shader's buffer is unused
  buffer slots_;
  buffer ready_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
  std::size_t tombstones_ = 0;
  std::size_t rehashes_ = 0;
  std::size_t cleanups_ = 0;
  bool timing_ = false;
  double gpu_seconds_ = 0.0;
  std::uint64_t last_retries_ = 0;  // ST_RETRY operations of the last launch
  std::uint64_t retried_ = 0;       // all re-runs of inserts that met a pending claim, ever
};

}  // namespace warpkv::vulkan
