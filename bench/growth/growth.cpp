// warpkv-growth: issue 22's growth measurement. One execute() of a mixed batch of fresh keys
// (40 % insert, 20 % insert_or_assign, 20 % find, 20 % erase) and one of pure inserts, each into
// a map built with capacity 64 and into a map pre-sized for the batch (capacity hint = the batch's
// inserts), on every bulk map. The target: the tiny map costs at most 2x the pre-sized one.
// Wall time of the synchronous call (median of --repeats after one warm-up), JSON lines.
//   warpkv-growth [--ops N] [--inserts N] [--repeats R] [--backend cuda|host] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "warpkv/core/buffer.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/chained/chained_map.hpp"
#include "warpkv/cuckoo/cuckoo_map.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"
#include "warpkv/open_addressing/linear_map.hpp"
#include "warpkv/open_addressing/quadratic_map.hpp"

namespace {

struct options {
  std::size_t ops = 2000000;
  std::size_t inserts = 10000000;
  int repeats = 3;
  std::string backend = "auto";
  std::string out;
};

template <class Map>
double time_execute(const warpkv::execution& ex, std::size_t capacity, const warpkv::buffer<warpkv::op>& ops,
                    const warpkv::buffer<typename Map::key_type>& keys,
                    const warpkv::buffer<typename Map::mapped_type>& values, warpkv::buffer<warpkv::status>& st,
                    std::size_t n, std::size_t* inserted) {
  Map map(capacity, {}, ex);
  warpkv::synchronize(ex);
  const auto t0 = std::chrono::steady_clock::now();
  const auto s = map.execute(ops.data(), keys.data(), values.data(), n, st.data());
  warpkv::synchronize(ex);
  const auto t1 = std::chrono::steady_clock::now();
  *inserted = s[warpkv::status::inserted];
  return std::chrono::duration<double>(t1 - t0).count();
}

template <class Map>
void run_map(const char* name, const options& o, const warpkv::execution& ex, FILE* out) {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  for (int kind = 0; kind < 2; ++kind) {
    const std::size_t n = kind == 0 ? o.ops : o.inserts;
    std::vector<warpkv::op> h_ops(n);
    std::vector<K> h_keys(n);
    std::vector<V> h_values(n);
    std::mt19937_64 rng(7);
    std::size_t want_inserts = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int r = static_cast<int>(rng() % 10);
      h_ops[i] = kind == 1 ? warpkv::op::insert
                           : (r < 4 ? warpkv::op::insert : r < 6 ? warpkv::op::insert_or_assign : r < 8 ? warpkv::op::find : warpkv::op::erase);
      want_inserts += h_ops[i] == warpkv::op::insert || h_ops[i] == warpkv::op::insert_or_assign;
      h_keys[i] = static_cast<K>(i * 2654435761ull % (sizeof(K) == 4 ? 0x7fffffffull : 0x7fffffffffffffffull) + 1);
      h_values[i] = static_cast<V>(i);
    }
    auto ops = warpkv::buffer<warpkv::op>::from_host(h_ops, ex);
    auto keys = warpkv::buffer<K>::from_host(h_keys, ex);
    auto values = warpkv::buffer<V>::from_host(h_values, ex);
    warpkv::buffer<warpkv::status> st(n, ex);
    for (const std::size_t capacity : {std::size_t{64}, want_inserts}) {
      std::vector<double> t;
      std::size_t inserted = 0;
      for (int r = 0; r <= o.repeats; ++r) {
        const double s = time_execute<Map>(ex, capacity, ops, keys, values, st, n, &inserted);
        if (r > 0) t.push_back(s);  // the first is a warm-up
        std::fprintf(stderr, "  %s %s n=%zu capacity=%zu: %.4f s\n", name, kind == 0 ? "mixed" : "inserts", n, capacity, s);
      }
      std::sort(t.begin(), t.end());
      const double med = t[t.size() / 2];
      std::fprintf(out,
                   "{\"tool\":\"warpkv-growth\",\"backend\":\"%s\",\"map\":\"%s\",\"key_bits\":%zu,\"value_bits\":%zu,"
                   "\"batch\":\"%s\",\"ops\":%zu,\"inserts\":%zu,\"inserted\":%zu,\"capacity_hint\":%zu,\"median_s\":%.6f,"
                   "\"min_s\":%.6f,\"max_s\":%.6f,\"verified\":%s}\n",
                   ex.name().c_str(), name, 8 * sizeof(K), 8 * sizeof(V), kind == 0 ? "mixed" : "inserts", n, want_inserts,
                   inserted, capacity, med, t.front(), t.back(), inserted == want_inserts ? "true" : "false");
      std::fflush(out);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "warpkv-growth: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ops") o.ops = static_cast<std::size_t>(std::atof(next()));
    else if (a == "--inserts") o.inserts = static_cast<std::size_t>(std::atof(next()));
    else if (a == "--repeats") o.repeats = std::atoi(next());
    else if (a == "--backend") o.backend = next();
    else if (a == "--out") o.out = next();
    else {
      std::fprintf(stderr, "usage: warpkv-growth [--ops N] [--inserts N] [--repeats R] [--backend auto|cuda|host] [--out FILE]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (o.ops == 0 || o.inserts == 0 || o.repeats < 1) {
    std::fprintf(stderr, "warpkv-growth: --ops, --inserts and --repeats must be positive\n");
    return 2;
  }
  try {
    const warpkv::execution ex = o.backend == "host" ? warpkv::execution::host()
                                 : o.backend == "cuda" ? warpkv::execution::gpu()
                                                       : warpkv::execution::automatic();
    FILE* out = o.out.empty() ? stdout : std::fopen(o.out.c_str(), "a");
    if (out == nullptr) {
      std::fprintf(stderr, "warpkv-growth: cannot open %s\n", o.out.c_str());
      return 2;
    }
    run_map<warpkv::linear_map<std::uint32_t, std::uint32_t, 4>>("linear_map", o, ex, out);
    run_map<warpkv::quadratic_map<std::uint32_t, std::uint32_t, 4>>("quadratic_map", o, ex, out);
    run_map<warpkv::hopscotch_map<std::uint32_t, std::uint32_t, 4>>("hopscotch_map", o, ex, out);
    run_map<warpkv::hopscotch_map<std::uint64_t, std::uint64_t, 4>>("hopscotch_map", o, ex, out);
    run_map<warpkv::cuckoo_map<std::uint32_t, std::uint32_t, 4>>("cuckoo_map", o, ex, out);
    run_map<warpkv::cuckoo_map<std::uint64_t, std::uint64_t, 4>>("cuckoo_map", o, ex, out);
    run_map<warpkv::chained_map<std::uint32_t, std::uint32_t, warpkv::chained_alloc::pool, 1>>("chained_map(pool)", o, ex, out);
    run_map<warpkv::chained_map<std::uint32_t, std::uint32_t, warpkv::chained_alloc::device, 1>>("chained_map(device)", o, ex, out);
    if (out != stdout) std::fclose(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warpkv-growth: %s\n", e.what());
    return 1;
  }
  return 0;
}
