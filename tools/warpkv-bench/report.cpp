// warpkv-bench: statistics, JSON lines and tables (host code only).
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "bench.hpp"

#ifndef WARPKV_BENCH_COMMIT
#define WARPKV_BENCH_COMMIT "unknown"
#endif

namespace warpkv_bench {

namespace {

struct output_state {
  std::string path;
  bool to_stdout = true;
};
output_state& output() {
  static output_state s;
  return s;
}

nlohmann::ordered_json to_json(const field_value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return nullptr;
        else
          return x;
      },
      v);
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

timing_stats summarize(std::vector<double> samples) {
  timing_stats t;
  t.samples_ms = samples;
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  t.median_ms = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return t;
}

void add_timing(record& r, const timing_stats& t, std::uint64_t ops) {
  r.set("median_ms", t.median_ms).set("min_ms", t.min_ms).set("max_ms", t.max_ms).set_list("samples_ms", t.samples_ms);
  const auto gops = [ops](double ms) { return ms > 0 ? static_cast<double>(ops) / (ms * 1e6) : 0.0; };
  r.set("gops", gops(t.median_ms)).set("gops_best", gops(t.min_ms));
}

void configure_output(const std::string& path, bool to_stdout) {
  output().path = path;
  output().to_stdout = to_stdout;
  if (!path.empty()) {
    std::ofstream f(path, std::ios::app);
    if (!f) throw std::runtime_error("warpkv-bench: cannot open '" + path + "' for appending");
  }
}

std::string commit() {
  if (const char* env = std::getenv("WARPKV_COMMIT"); env != nullptr && *env != '\0') return env;
  return WARPKV_BENCH_COMMIT;
}

void emit(record r) {
  r.set("commit", commit()).set("timestamp", utc_timestamp());
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.fields()) j[k] = to_json(v);
  for (const auto& [k, v] : r.lists()) j[k] = v;
  const std::string line = j.dump();
  if (output().to_stdout) {
    std::cout << line << '\n';
    std::cout.flush();
  }
  if (!output().path.empty()) {
    std::ofstream f(output().path, std::ios::app);
    f << line << '\n';
    if (!f) throw std::runtime_error("warpkv-bench: cannot append to '" + output().path + "'");
  }
}

namespace {
std::chrono::steady_clock::time_point& last_progress() {
  static std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  return t;
}
}  // namespace

void progress(const std::string& line) {
  std::cerr << line << '\n';
  std::cerr.flush();
  last_progress() = std::chrono::steady_clock::now();
}

bool progress_due() {
  return std::chrono::steady_clock::now() - last_progress() >= std::chrono::seconds(heartbeat_seconds);
}

std::string strf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, format, ap);
  va_end(ap);
  std::string s(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, format, ap2);
  va_end(ap2);
  return s;
}

void print_table(const std::string& title, const std::vector<table_row>& rows, bool mega) {
  fmt::print("{}\n", title);
  fmt::print("  {:<26} {:>12} {:>11} {:>12}  {}\n", "operation", "ops", "time [ms]", mega ? "M ops/s" : "G ops/s", "check");
  for (const auto& r : rows) {
    const double per_ms = r.ms > 0 ? static_cast<double>(r.ops) / r.ms : 0.0;  // ops per ms = k ops/s
    const double rate = mega ? per_ms / 1e3 : per_ms / 1e6;
    fmt::print("  {:<26} {:>12} {:>11.3f} {:>12.3f}  {}\n", r.operation, r.ops, r.ms, rate, r.ok ? "ok" : "FAILED");
  }
  std::fflush(stdout);
}

}  // namespace warpkv_bench
