#pragma once
// Which backend the test binaries exercise: WARPKV_TEST_BACKEND=host (default) or cuda.
// scripts/gpu-check runs every suite with cuda; without a GPU those runs skip, saying why.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "warpkv/core/execution.hpp"

namespace warpkv::testing {

inline std::string requested_backend() {
  const char* b = std::getenv("WARPKV_TEST_BACKEND");
  return b == nullptr ? "host" : b;
}

/// The execution to test on, or nullopt (with the reason in *why) when it is unavailable.
inline std::optional<execution> test_execution(std::string* why) {
  if (requested_backend() == "cuda") {
    if (!cuda_available()) {
      *why = "WARPKV_TEST_BACKEND=cuda but no CUDA device is available (or this build has no CUDA backend)";
      return std::nullopt;
    }
    return execution::gpu();
  }
  return execution::host();
}

/// Scale of randomized tests: WARPKV_TEST_SCALE (default 1; sanitizer runs use less).
inline double test_scale() {
  const char* s = std::getenv("WARPKV_TEST_SCALE");
  return s == nullptr ? 1.0 : std::atof(s);
}

/// Progress lines for long randomized tests (WARPKV_TEST_PROGRESS=1): what ran and how long it
/// took, so a slow or stuck GPU run shows where it is. Silent otherwise.
class progress {
 public:
  progress() : on_(std::getenv("WARPKV_TEST_PROGRESS") != nullptr), t0_(std::chrono::steady_clock::now()) {}
  template <class... Args>
  void operator()(const char* format, Args... args) {
    if (!on_) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    std::fprintf(stderr, "[progress %9.1f ms] ", ms);
    std::fprintf(stderr, format, args...);
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace warpkv::testing

#define WARPKV_TEST_EXECUTION(var)                                  \
  std::string warpkv_skip_reason_;                                   \
  auto var##_opt = ::warpkv::testing::test_execution(&warpkv_skip_reason_); \
  if (!var##_opt) GTEST_SKIP() << warpkv_skip_reason_;               \
  const ::warpkv::execution var = *var##_opt
