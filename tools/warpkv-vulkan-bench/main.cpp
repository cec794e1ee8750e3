// warpkv-vulkan-bench: throughput of warpkv::vulkan::linear_map on a Vulkan device, timed with
// GPU timestamps around each batch (JSON lines on stdout, progress on stderr).
//   static:  bulk insert (build), find hit, find miss at exact load factors of one capacity;
//   dynamic: GLHT-style mixed batches (insert/erase/find percents over a key range, half prefilled).
// Each for every probing mode asked for (--probing per_invocation,subgroup; default: both where the
// device supports subgroup probing); every row says its "probing".
// It first lists every device the Vulkan loader sees and says which one it uses
// (--device / WARPKV_VULKAN_DEVICE pick one by index or part of its name).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cuda_reference.hpp"
#include "warpkv/vulkan/linear_map.hpp"

namespace {

namespace wv = warpkv::vulkan;
using map32 = wv::linear_map<std::uint32_t>;

struct options {
  std::string device;
  bool validation = false;
  bool list_only = false;
  std::string out;
  std::string workloads = "static,dynamic";
  double keys = 0;  // 0: 2^22 on a GPU, 2^16 on a CPU device
  std::vector<double> load_factors{0.5, 0.8, 0.9};
  std::vector<std::string> mixes{"20,20,60", "40,40,20"};
  std::vector<double> key_ranges{100, 1000, 10000, 100000};
  std::vector<double> ops{1e5};
  int repeats = 5;
  int warmup = 1;
  std::uint64_t seed = 42;
  bool no_cuda = false;
  std::vector<std::string> probing;  // empty: per_invocation, plus subgroup where supported
};

/// The probing modes to measure: the names given, or per_invocation and (where supported) subgroup.
std::vector<wv::probing_mode> probing_modes(const wv::context& ctx, const options& o) {
  std::vector<wv::probing_mode> modes;
  if (o.probing.empty()) {
    modes.push_back(wv::probing_mode::per_invocation);
    if (ctx.info().subgroup_probing) modes.push_back(wv::probing_mode::subgroup);
    else std::cerr << "warpkv-vulkan-bench: no subgroup probing on this device (needs compute subgroup ballot + shuffle, >= 8 lanes)\n";
    return modes;
  }
  for (const auto& name : o.probing) {
    if (name == "per_invocation") modes.push_back(wv::probing_mode::per_invocation);
    else if (name == "subgroup") modes.push_back(wv::probing_mode::subgroup);
    else if (name == "automatic") modes.push_back(wv::probing_mode::automatic);
    else throw warpkv::error(warpkv::errc::invalid_argument, "--probing '" + name + "': per_invocation, subgroup or automatic");
  }
  return modes;
}

std::ofstream out_file;

void emit(nlohmann::ordered_json j) {
  if (const char* c = std::getenv("WARPKV_COMMIT")) j["commit"] = c;
  const std::string line = j.dump();
  std::cout << line << std::endl;
  if (out_file.is_open()) out_file << line << std::endl;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/// n distinct keys, none a sentinel, in O(n): a bijection of uint32 (odd multiply, xor-shift,
/// odd multiply; independent of the map's Murmur3 finalizer) applied to consecutive counters.
std::vector<std::uint32_t> distinct_keys(std::size_t n, std::uint32_t salt) {
  std::vector<std::uint32_t> k;
  k.reserve(n);
  for (std::uint32_t i = 0; k.size() < n; ++i) {
    std::uint32_t x = (i + salt) * 0x2545f491u + 0x9e3779b9u;
    x ^= x >> 15;
    x *= 0x7feb352du;
    if (x < map32::erased_key_value) k.push_back(x);
  }
  return k;
}

nlohmann::ordered_json base_record(const wv::context& ctx, const char* operation, wv::probing_mode probing) {
  nlohmann::ordered_json j;
  j["bench"] = "vulkan";
  j["operation"] = operation;
  j["map"] = "vulkan::linear_map";
  j["device"] = ctx.info().name;
  j["device_type"] = ctx.info().type;
  j["driver"] = ctx.info().driver;
  j["shaders"] = ctx.info().relaxed_shaders ? "relaxed" : "ordered";
  j["probing"] = wv::to_string(probing);
  j["subgroup_size"] = ctx.info().subgroup_size;
  if (probing == wv::probing_mode::subgroup)
    j["subgroup_uniform_control_flow"] = ctx.info().subgroup_uniform_control_flow && !ctx.info().relaxed_shaders;
  j["key_bits"] = 32;
  j["value_bits"] = 32;
  return j;
}

/// Runs `body` warmup + repeats times; returns the GPU seconds of the timed runs.
template <class Prepare, class Body>
std::vector<double> measure(const map32& m, int warmup, int repeats, Prepare&& prepare, Body&& body) {
  std::vector<double> s;
  for (int r = 0; r < warmup + repeats; ++r) {
    prepare();
    body();
    if (r >= warmup) s.push_back(m.last_gpu_seconds());
  }
  return s;
}

/// The CUDA linear_map on the same keys and capacity, in the same process and (normally) card.
/// vulkan_s: the Vulkan medians (build, find hit, find miss) of each probing mode measured; the
/// first mode's ratio is "vulkan_over_cuda", every mode's is in "vulkan_over_cuda_by_probing".
int compare_with_cuda(const options& o, const std::vector<std::uint32_t>& hit, const std::vector<std::uint32_t>& miss,
                      std::size_t capacity, double lf,
                      const std::vector<std::pair<std::string, std::array<double, 3>>>& vulkan_s) {
  int failures = 0;
  {
    const auto c = warpkv_vulkan_bench::run_cuda_linear_map(hit, miss, capacity, o.warmup, o.repeats);
    if (!c.available) {
      std::cerr << "static: no CUDA comparison: " << c.why << '\n';
      return 0;
    }
    if (!c.verified) ++failures;
    const char* names[] = {"build", "find_hit", "find_miss"};
    const std::vector<double>* secs[] = {&c.build_s, &c.find_hit_s, &c.find_miss_s};
    for (int w = 0; w < 3; ++w) {
      nlohmann::ordered_json j;
      j["bench"] = "vulkan";
      j["operation"] = names[w];
      j["map"] = "linear_map (CUDA)";
      j["tile"] = 4;
      j["device"] = c.device;
      j["key_bits"] = 32;
      j["value_bits"] = 32;
      j["keys"] = hit.size();
      j["capacity"] = capacity;
      j["load_factor"] = lf;
      j["repeats"] = o.repeats;
      j["median_ms"] = median(*secs[w]) * 1e3;
      j["gops"] = static_cast<double>(hit.size()) / median(*secs[w]) / 1e9;
      // throughput ratio Vulkan / CUDA
      nlohmann::ordered_json by_mode;
      for (const auto& [mode, s] : vulkan_s) by_mode[mode] = median(*secs[w]) / s[w];
      if (!vulkan_s.empty()) j["vulkan_over_cuda"] = median(*secs[w]) / vulkan_s.front().second[w];
      j["vulkan_over_cuda_by_probing"] = by_mode;
      j["verified"] = c.verified;
      emit(j);
    }
  }
  return failures;
}

int run_static(wv::context& ctx, const options& o) {
  const std::size_t n_req = o.keys > 0 ? static_cast<std::size_t>(o.keys)
                                       : (ctx.info().type == "cpu" ? std::size_t{1} << 16 : std::size_t{1} << 22);
  std::size_t capacity = 64;
  while (static_cast<double>(capacity) * 0.95 < static_cast<double>(n_req)) capacity *= 2;
  const auto modes = probing_modes(ctx, o);
  int failures = 0;
  for (const double lf : o.load_factors) {
    const auto n = static_cast<std::size_t>(lf * static_cast<double>(capacity));
    std::cerr << "static: load factor " << lf << ", " << n << " keys, capacity " << capacity << '\n';
    const auto all = distinct_keys(2 * n, static_cast<std::uint32_t>(o.seed * 0x9e3779b9u + static_cast<std::uint64_t>(lf * 1000)));
    const std::vector<std::uint32_t> hit(all.begin(), all.begin() + static_cast<long>(n));
    const std::vector<std::uint32_t> miss(all.begin() + static_cast<long>(n), all.end());
    std::vector<std::uint32_t> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);
    auto kb = wv::buffer::from_host<std::uint32_t>(ctx, hit);
    auto mb = wv::buffer::from_host<std::uint32_t>(ctx, miss);
    auto vb = wv::buffer::from_host<std::uint32_t>(ctx, values);
    wv::buffer sb(ctx, n * 4), ob(ctx, n * 4);
    std::vector<std::pair<std::string, std::array<double, 3>>> medians;
    for (const auto mode : modes) {
      wv::linear_map_config cfg;
      cfg.max_load_factor = 1.0;  // the table is sized exactly: no growth inside the measurement
      cfg.tombstone_threshold = 1.0;
      cfg.probing = mode;
      map32 m(ctx, capacity, cfg);  // one table at a time: 2^27 slots take 1 GiB
      m.set_timing(true);
      std::cerr << "static:   probing " << wv::to_string(m.probing()) << '\n';
      const auto build = measure(m, o.warmup, o.repeats, [&] { m.clear(); },
                                 [&] { m.insert(kb.view(), vb.view(), n, sb.view()); });
      bool ok = m.size() == n && m.capacity() == capacity;
      const auto find_hit = measure(m, o.warmup, o.repeats, [] {}, [&] {
        const auto s = m.find(kb.view(), n, ob.view(), sb.view());
        ok = ok && s[warpkv::status::found] == n;
      });
      ok = ok && ob.to_vector<std::uint32_t>(n) == values;
      const auto find_miss = measure(m, o.warmup, o.repeats, [] {}, [&] {
        const auto s = m.find(mb.view(), n, ob.view(), sb.view());
        ok = ok && s[warpkv::status::not_found] == n;
      });
      if (!ok) ++failures;
      for (const auto& [name, secs] : {std::pair<const char*, const std::vector<double>&>{"build", build},
                                       {"find_hit", find_hit},
                                       {"find_miss", find_miss}}) {
        auto j = base_record(ctx, name, m.probing());
        j["keys"] = n;
        j["capacity"] = capacity;
        j["load_factor"] = lf;
        j["repeats"] = o.repeats;
        j["median_ms"] = median(secs) * 1e3;
        j["gops"] = static_cast<double>(n) / median(secs) / 1e9;
        j["table_bytes"] = capacity * sizeof(map32::slot_type) + capacity / 8;
        j["verified"] = ok;
        emit(j);
      }
      medians.emplace_back(wv::to_string(m.probing()),
                           std::array<double, 3>{median(build), median(find_hit), median(find_miss)});
    }
    if (!o.no_cuda) failures += compare_with_cuda(o, hit, miss, capacity, lf, medians);
  }
  return failures;
}

struct mix {
  int insert, erase, find;
};

int run_dynamic(wv::context& ctx, const options& o) {
  std::mt19937_64 rng(o.seed + 1);
  const auto modes = probing_modes(ctx, o);
  int failures = 0;
  for (const double ops_d : o.ops)
  for (const auto& text : o.mixes) {
    const auto n = static_cast<std::size_t>(ops_d);
    mix mx{};
    if (std::sscanf(text.c_str(), "%d,%d,%d", &mx.insert, &mx.erase, &mx.find) != 3 ||
        mx.insert + mx.erase + mx.find != 100)
      throw warpkv::error(warpkv::errc::invalid_argument, "--mix '" + text + "': three percents summing to 100");
    for (const double range_d : o.key_ranges) {
      const auto range = static_cast<std::uint64_t>(range_d);
      std::cerr << "dynamic: mix " << text << ", key range " << range << ", " << n << " ops\n";
      std::vector<warpkv::op> ops(n);
      std::vector<std::uint32_t> keys(n), values(n);
      for (std::size_t i = 0; i < n; ++i) {
        const int r = static_cast<int>(rng() % 100);
        ops[i] = r < mx.insert ? warpkv::op::insert : r < mx.insert + mx.erase ? warpkv::op::erase : warpkv::op::find;
        keys[i] = static_cast<std::uint32_t>(1 + rng() % range);
        values[i] = static_cast<std::uint32_t>(i);
      }
      std::vector<std::uint32_t> codes(n), pre;
      for (std::size_t i = 0; i < n; ++i) codes[i] = static_cast<std::uint32_t>(ops[i]);
      for (std::uint32_t k = 1; k <= range; k += 2) pre.push_back(k);  // half of [1, R]
      auto ob = wv::buffer::from_host<std::uint32_t>(ctx, codes);
      auto kb = wv::buffer::from_host<std::uint32_t>(ctx, keys);
      auto vb = wv::buffer::from_host<std::uint32_t>(ctx, values);
      wv::buffer sb(ctx, n * 4), rb(ctx, n * 4);
      for (const auto mode : modes) {
        wv::linear_map_config cfg;
        cfg.probing = mode;
        std::vector<double> secs;
        std::size_t capacity = 0, rehashes = 0;
        std::uint64_t retried = 0;
        bool ok = true;
        wv::probing_mode used = mode;
        for (int r = 0; r < o.warmup + o.repeats; ++r) {
          map32 m(ctx, pre.size() + n, cfg);  // a fresh map per repeat, room for every insert
          used = m.probing();
          m.insert(pre, std::vector<std::uint32_t>(pre.size(), 7));
          m.set_timing(true);
          const auto s = m.execute(ob.view(), kb.view(), vb.view(), n, sb.view(), rb.view());
          ok = ok && s[warpkv::status::full] == 0 && s[warpkv::status::invalid_key] == 0;
          if (r >= o.warmup) secs.push_back(m.last_gpu_seconds());
          capacity = m.capacity();
          rehashes = m.rehash_count();
          retried = m.retried_inserts();
        }
        if (!ok) ++failures;
        auto j = base_record(ctx, "mixed", used);
        j["mix"] = text;
        j["insert_pct"] = mx.insert;
        j["erase_pct"] = mx.erase;
        j["find_pct"] = mx.find;
        j["key_range"] = range;
        j["ops"] = n;
        j["prefill"] = "half";
        j["capacity"] = capacity;
        j["rehash_count"] = rehashes;
        j["retried_inserts"] = retried;  // of the last repeat: inserts re-run after meeting a pending claim
        j["repeats"] = o.repeats;
        j["median_ms"] = median(secs) * 1e3;
        j["gops"] = static_cast<double>(n) / median(secs) / 1e9;
        j["verified"] = ok;
        emit(j);
      }
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"warpkv-vulkan-bench: throughput of warpkv::vulkan::linear_map (JSON lines on stdout)"};
  options o;
  app.add_option("--device", o.device, "Device index or part of its name (default: WARPKV_VULKAN_DEVICE, else the first GPU)");
  app.add_flag("--list-devices", o.list_only, "Only list the devices the Vulkan loader sees");
  app.add_flag("--validation", o.validation, "Enable the Khronos validation layer (slow; for checking only)");
  app.add_option("--out", o.out, "Also append the JSON lines to FILE");
  app.add_option("--workloads", o.workloads, "static, dynamic or both (comma-separated)")->capture_default_str();
  app.add_option("--keys", o.keys, "Static: key count N, capacity 2^ceil(log2(N/0.95)) (default 2^22 on a GPU, 2^16 on a CPU device)");
  app.add_option("--load-factors", o.load_factors, "Static: load factors")->delimiter(',')->check(CLI::Range(0.001, 1.0))->capture_default_str();
  app.add_option("--mix", o.mixes, "Dynamic: INSERT,ERASE,FIND percents, space-separated")->capture_default_str();
  app.add_option("--key-range", o.key_ranges, "Dynamic: key ranges")->delimiter(',')->capture_default_str();
  app.add_option("--ops", o.ops, "Dynamic: operations per batch, comma-separated")->delimiter(',')->capture_default_str();
  app.add_option("--repeats", o.repeats, "Timed runs (median reported)")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs first")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_option("--seed", o.seed, "Input seed")->capture_default_str();
  app.add_flag("--no-cuda", o.no_cuda, "Static: skip the CUDA linear_map (tile 4) on the same keys");
  app.add_option("--probing", o.probing,
                 "Probing modes, comma-separated: per_invocation, subgroup, automatic (default: per_invocation, "
                 "plus subgroup where the device supports it)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  try {
    const auto list = wv::devices();
    std::cerr << "warpkv-vulkan-bench: the Vulkan loader sees " << list.size() << " device(s):\n";
    for (const auto& d : list)
      std::cerr << "  [" << d.index << "] " << d.name << " (" << d.type << ", Vulkan " << d.api_version << ", "
                << d.driver << ")" << (d.usable ? "" : " NOT usable: needs Vulkan 1.2 + vulkanMemoryModel")
                << (d.int64_atomics ? ", 64-bit atomics" : "") << (d.timestamps ? ", timestamps" : ", NO timestamps")
                << ", subgroupSize " << d.subgroup_size << (d.subgroup_probing ? " (subgroup probing" : " (NO subgroup probing")
                << (d.subgroup_uniform_control_flow ? ", uniform control flow)" : ")")
                << '\n';
    if (o.list_only) return 0;
    if (!o.out.empty()) out_file.open(o.out, std::ios::app);
    wv::context_options co;
    co.device = o.device;
    co.validation = o.validation;
    wv::context ctx(co);
    std::cerr << "warpkv-vulkan-bench: using [" << ctx.info().index << "] " << ctx.info().name << " ("
              << (ctx.info().relaxed_shaders ? "relaxed" : "ordered") << " shaders)\n";
    if (!ctx.info().timestamps) {
      std::cerr << "warpkv-vulkan-bench: the device has no compute timestamps; nothing to measure\n";
      return 2;
    }
    int failures = 0;
    if (o.workloads.find("static") != std::string::npos) failures += run_static(ctx, o);
    if (o.workloads.find("dynamic") != std::string::npos) failures += run_dynamic(ctx, o);
    if (o.validation && ctx.validation_messages() > 0) {
      std::cerr << "warpkv-vulkan-bench: " << ctx.validation_messages() << " validation messages\n";
      ++failures;
    }
    if (failures > 0) std::cerr << "warpkv-vulkan-bench: " << failures << " measurements failed verification\n";
    return failures > 0 ? 1 : 0;
  } catch (const warpkv::error& e) {
    std::cerr << "warpkv-vulkan-bench: error: " << e.what() << '\n';
    return 2;
  }
}
