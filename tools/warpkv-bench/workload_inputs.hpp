#pragma once
// warpkv-bench: the inputs and checks shared by the workload translation units (workloads.cpp,
// paper_workloads.cpp): distinct-key generators, values, uploads, mixed batches and their
// verification. Only translation units with device code include it (it uses warpkv::buffer).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "warpkv/core/batch.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/status.hpp"

namespace warpkv_bench {

using warpkv::buffer;
using warpkv::execution;
using warpkv::status;

// ---- inputs -------------------------------------------------------------------------------------

/// Distinct keys by construction: key(c) = mix(c + offset), where mix is a bijection of the
/// key's bit width, so distinct counters (below the reserved one) give distinct keys. The one
/// counter that maps to the empty-key sentinel (the maximum) is redirected to the reserved
/// counter's key, which no range uses. `offset` comes from a seeded std::mt19937_64.
template <class K>
class key_generator {
 public:
  static constexpr std::uint64_t reserved = std::numeric_limits<K>::max();  // counters stay below it

  explicit key_generator(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    offset_ = rng();
  }
  K operator()(std::uint64_t counter) const {
    const K k = mix(counter + offset_);
    return k == std::numeric_limits<K>::max() ? mix(reserved + offset_) : k;
  }
  /// Throws unless counters [0, end) stay below the reserved one.
  static void check_range(std::uint64_t end, const char* what) {
    if (end >= reserved)
      throw warpkv::error(warpkv::errc::invalid_argument,
                          std::string("warpkv-bench: ") + what + " needs more distinct keys than the key type has");
  }

 private:
  static K mix(std::uint64_t x) {
    if constexpr (sizeof(K) == 4) {  // 32-bit xorshift-multiply finalizer: a bijection of uint32
      std::uint32_t h = static_cast<std::uint32_t>(x);
      h ^= h >> 16;
      h *= 0x7feb352du;
      h ^= h >> 15;
      h *= 0x846ca68bu;
      h ^= h >> 16;
      return static_cast<K>(h);
    } else {  // splitmix64 finalizer: a bijection of uint64
      x ^= x >> 30;
      x *= 0xbf58476d1ce4e5b9ull;
      x ^= x >> 27;
      x *= 0x94d049bb133111ebull;
      x ^= x >> 31;
      return static_cast<K>(x);
    }
  }
  std::uint64_t offset_ = 0;
};

/// The value stored with a key (never 0, so a miss's Value{} never looks like a hit).
template <class V, class K>
V value_of(K k) {
  std::uint64_t x = static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  return static_cast<V>(x | 1u);
}

template <class T>
buffer<T> upload(const std::vector<T>& v, const execution& ex) {
  return buffer<T>::from_host(std::span<const T>(v.data(), v.size()), ex);
}

inline std::uint64_t next_pow2(std::uint64_t n) {
  std::uint64_t c = 1;
  while (c < n) c <<= 1;
  return c;
}

template <class K, class V>
std::string type_name() {
  return "u" + std::to_string(8 * sizeof(K)) + "/u" + std::to_string(8 * sizeof(V));
}

/// Records the failure of one check and reports it at once.
struct checker {
  std::vector<std::string> failures;
  void expect(bool ok, const std::string& what) {
    if (!ok) {
      failures.push_back(what);
      progress("CHECK FAILED: " + what);
    }
  }
  [[nodiscard]] bool ok() const { return failures.empty(); }
};

/// Host copy of a status buffer's first n entries.
inline std::vector<status> statuses_of(const buffer<status>& b, std::size_t n) {
  std::vector<status> v(n);
  b.copy_to_host(v.data(), n);
  return v;
}

// ---- mixed batches ------------------------------------------------------------------------

struct mix_spec {
  int insert = 0, erase = 0, find = 0;
  [[nodiscard]] std::string name() const { return strf("%d/%d/%d", insert, erase, find); }
};

inline mix_spec parse_mix(const std::string& text) {
  mix_spec m;
  char sep1 = 0, sep2 = 0;
  int used = 0;
  const int got = std::sscanf(text.c_str(), "%d%c%d%c%d%n", &m.insert, &sep1, &m.erase, &sep2, &m.find, &used);
  const bool seps_ok = (sep1 == ',' || sep1 == '/') && sep2 == sep1;
  if (got != 5 || !seps_ok || static_cast<std::size_t>(used) != text.size() || m.insert < 0 || m.erase < 0 ||
      m.find < 0 || m.insert + m.erase + m.find != 100)
    throw warpkv::error(warpkv::errc::invalid_argument,
                        "warpkv-bench: --mix '" + text + "' must be INSERT,ERASE,FIND percents summing to 100");
  return m;
}

/// One mixed batch on the host: op i and key i (uniform in [1, R]), drawn in parallel chunks,
/// each from its own std::mt19937_64 seeded by (seed, set, chunk): the same for any thread count.
template <class K, class V>
void make_batch(std::uint64_t seed, int set, const mix_spec& mix, std::uint64_t range, std::vector<warpkv::op>& ops,
                std::vector<K>& keys, std::vector<V>& values) {
  const std::size_t n = ops.size();
  constexpr std::size_t chunk = std::size_t{1} << 20;
  const std::size_t chunks = (n + chunk - 1) / chunk;
  const unsigned workers = static_cast<unsigned>(
      std::min<std::size_t>(chunks, std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (std::size_t c = w; c < chunks; c += workers) {
        std::seed_seq sq{seed, static_cast<std::uint64_t>(set), static_cast<std::uint64_t>(c)};
        std::mt19937_64 rng(sq);
        const std::size_t end = std::min(n, (c + 1) * chunk);
        for (std::size_t i = c * chunk; i < end; ++i) {
          const std::uint64_t x = rng();
          const auto pct = static_cast<int>((x >> 32) % 100);
          const K k = static_cast<K>(1 + (((x & 0xffffffffull) * range) >> 32));  // uniform in [1, R]
          ops[i] = pct < mix.insert ? warpkv::op::insert
                   : pct < mix.insert + mix.erase ? warpkv::op::erase
                                                 : warpkv::op::find;
          keys[i] = k;
          values[i] = value_of<V>(k);
        }
      }
    });
  }
  for (auto& t : pool) t.join();
}

/// Checks the statuses and find results of one mixed batch (any interleaving): no full or
/// invalid_key, every status fits its operation, every found value is the key's value. Returns
/// the count of each status.
template <class K, class V>
std::array<std::uint64_t, warpkv::num_status_kinds> verify_mixed(const std::vector<warpkv::op>& ops,
                                                                 const std::vector<K>& keys,
                                                                 const std::vector<status>& s,
                                                                 const std::vector<V>& v,
                                                                 const warpkv::batch_summary& sum, checker& check,
                                                                 const std::string& cfg_name) {
  const std::size_t n = ops.size();
  std::uint64_t full = 0, invalid = 0, implausible = 0, wrong_value = 0;
  std::array<std::uint64_t, warpkv::num_status_kinds> count{};
  for (std::size_t i = 0; i < n; ++i) {
    ++count[static_cast<int>(s[i])];
    if (s[i] == status::full) ++full;
    if (s[i] == status::invalid_key) ++invalid;
    bool plausible = false;
    switch (ops[i]) {
      case warpkv::op::insert: plausible = s[i] == status::inserted || s[i] == status::found; break;
      case warpkv::op::erase: plausible = s[i] == status::erased || s[i] == status::not_found; break;
      default: plausible = s[i] == status::found || s[i] == status::not_found; break;
    }
    if (!plausible) ++implausible;
    if (ops[i] == warpkv::op::find && s[i] == status::found && v[i] != value_of<V>(keys[i])) ++wrong_value;
  }
  check.expect(full == 0 && invalid == 0 && sum[status::full] == 0 && sum[status::invalid_key] == 0,
               strf("%s: %llu full and %llu invalid_key results", cfg_name.c_str(),
                    static_cast<unsigned long long>(full), static_cast<unsigned long long>(invalid)));
  check.expect(implausible == 0, strf("%s: %llu statuses do not fit their operation", cfg_name.c_str(),
                                      static_cast<unsigned long long>(implausible)));
  check.expect(wrong_value == 0, strf("%s: %llu finds returned a wrong value", cfg_name.c_str(),
                                      static_cast<unsigned long long>(wrong_value)));
  return count;
}

}  // namespace warpkv_bench
