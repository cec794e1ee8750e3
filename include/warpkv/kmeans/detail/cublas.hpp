#pragma once
// cuBLAS for k-means' GEMM assignment path (assign_gemm.hpp), opened at run time.
//
// libcublas is dlopen'ed rather than linked: the library stays header-only with nothing new to
// link, a binary built here starts on a machine without cuBLAS (the automatic distance choice
// then stays on the fused kernel), and the host-only build needs nothing at all. The loader
// tries $WARPKV_CUBLAS (a path or a soname), then libcublas.so.<the toolkit's major>, then
// libcublas.so. Every cuBLAS status is checked and turned into warpkv::error(errc::cuda).
//
// Determinism: cuBLAS SGEMM gives bitwise identical results run to run for one configuration
// (same GPU model and SM count, same cuBLAS version, one stream per handle, the default
// workspace), which is what fit()'s same-input-same-result promise needs; a different GPU or
// cuBLAS version may pick another kernel and round differently.
#include <string>

#include "warpkv/core/config.hpp"
#include "warpkv/core/error.hpp"

#if WARPKV_HAS_CUDA
#include <cublas_v2.h>
#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "warpkv/core/cuda_check.hpp"
#endif

namespace warpkv::detail {

#if WARPKV_HAS_CUDA

/// The few cuBLAS entry points k-means uses, bound once per process.
struct cublas_api {
  std::string error;  ///< why cuBLAS is unusable; empty when loaded
  std::string path;   ///< the name dlopen succeeded with
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetVersion_v2) version = nullptr;

  static const cublas_api& get() {
    static const cublas_api api = load();  // thread-safe initialisation; the library stays open
    return api;
  }

 private:
  template <class F>
  static void bind(void* lib, const char* name, F& f, std::string& missing) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  static cublas_api load() {
    cublas_api a;
    std::vector<std::string> names;
    if (const char* env = std::getenv("WARPKV_CUBLAS"); env != nullptr && *env != '\0') names.emplace_back(env);
    names.push_back("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
    names.emplace_back("libcublas.so");
    void* lib = nullptr;
    std::string tried;
    for (const std::string& name : names) {
      lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr) {
        a.path = name;
        break;
      }
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + name + ": " + (why != nullptr ? why : "not found");
    }
    if (lib == nullptr) {
      a.error = "libcublas could not be opened (" + tried + "); set WARPKV_CUBLAS=/path/to/libcublas.so." +
                std::to_string(CUBLAS_VER_MAJOR);
      return a;
    }
    std::string missing;
    bind(lib, "cublasCreate_v2", a.create, missing);
    bind(lib, "cublasDestroy_v2", a.destroy, missing);
    bind(lib, "cublasSetStream_v2", a.set_stream, missing);
    bind(lib, "cublasSetMathMode", a.set_math_mode, missing);
    bind(lib, "cublasSgemm_v2", a.sgemm, missing);
    bind(lib, "cublasGetVersion_v2", a.version, missing);
    if (!missing.empty()) a.error = a.path + " lacks " + missing;
    return a;
  }
};

inline void cublas_check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw error(errc::cuda, std::string("warpkv: cuBLAS ") + what + " failed with status " +
                                std::to_string(static_cast<int>(st)));
}

/// A cuBLAS handle bound to one stream, in FP32 (default) or TF32 tensor-op math.
class cublas_handle {
 public:
  cublas_handle(cudaStream_t stream, bool tf32) : api_(&cublas_api::get()) {
    if (!api_->error.empty()) throw error(errc::unsupported, "warpkv: " + api_->error);
    cublas_check(api_->create(&h_), "cublasCreate");
    try {
      cublas_check(api_->set_stream(h_, stream), "cublasSetStream");
      cublas_check(api_->set_math_mode(h_, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
                   "cublasSetMathMode");
    } catch (...) {
      api_->destroy(h_);
      throw;
    }
  }
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  ~cublas_handle() { api_->destroy(h_); }  // a failure here has nowhere to go (destructor)

  [[nodiscard]] const cublas_api& api() const { return *api_; }
  [[nodiscard]] cublasHandle_t get() const { return h_; }
  [[nodiscard]] int version() const {
    int v = 0;
    cublas_check(api_->version(h_, &v), "cublasGetVersion");
    return v;
  }

 private:
  const cublas_api* api_;
  cublasHandle_t h_ = nullptr;
};

#endif

/// Empty when cuBLAS can be used from this translation unit, else why not.
inline std::string cublas_unavailable() {
#if WARPKV_HAS_CUDA
  return cublas_api::get().error;
#else
  return "this translation unit was not compiled with CUDA";
#endif
}

}  // namespace warpkv::detail
