// warpkv-bench kmeans --distance cublas: the k-means assignment step through cuBLAS, the
// library side of issue 8's "hand-written kernel or a well-kept library" trial (benchmark only,
// not the library API).
//
// Per chunk of R points (R x k scores of about 32 MiB, so the chunk stays within the H100's
// 50 MB L2 and the n x k matrix never exists): one SGEMM, scores S = X_chunk C^T (column-major
// k x R, i.e. row i of S holds point i's k dot products, contiguous), then one kernel, a warp
// per point, takes the lowest-index minimum of ||c||^2 - 2 x.c (||x||^2 is common to every
// centroid of a point and dropped; the centroid norms come from a small kernel per call).
// fp32 rows use cuBLAS's default math (FP32 FMA); tf32 rows CUBLAS_TF32_TENSOR_OP_MATH.
// Labels only: the fused kernel also accumulates sums, counts and inertia, so the rows time
// the fused kernel in labels-only mode beside it.
//
// libcublas is opened at run time (dlopen), not linked: a carried binary then starts on a
// machine without it (the rows say why they are skipped), and the host build needs nothing.
// WARPKV_CUBLAS=/path/to/libcublas.so.N names the library when the loader cannot find it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kmeans_bench.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/kmeans/kmeans.hpp"

#if WARPKV_HAS_CUDA
#include <cublas_v2.h>
#include <dlfcn.h>
#endif

namespace warpkv_bench {

#if WARPKV_HAS_CUDA
namespace {

/// The few cuBLAS entry points the rows need, from a libcublas opened at run time.
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
    static const cublas_api api = load();
    return api;
  }

 private:
  template <class F>
  static bool bind(void* lib, const char* name, F& f, std::string& missing) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
    return f != nullptr;
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

void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw warpkv::error(warpkv::errc::cuda, std::string("cuBLAS ") + what + " failed with status " +
                                                std::to_string(static_cast<int>(st)));
}

/// ||c||^2 of every centroid, summed over dimensions in order.
__global__ void centroid_norms(const float* centroids, unsigned k, unsigned d, float* norms) {
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= k) return;
  const float* row = centroids + std::size_t{c} * d;
  float s = 0;
  for (unsigned j = 0; j < d; ++j) s = fmaf(row[j], row[j], s);
  norms[c] = s;
}

/// A warp per point: the lowest-index minimum of ||c||^2 - 2 x.c over the point's row of k
/// scores (read coalesced), lanes striding the centroids in increasing order (strict <), then a
/// butterfly that keeps the lower score and, on equal scores, the lower index.
__global__ void argmin_rows(const float* scores, const float* norms, unsigned k, unsigned rows,
                            std::int32_t* labels) {
  const unsigned point = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (point >= rows) return;  // the whole warp leaves together
  const float* row = scores + std::size_t{point} * k;
  float best = INFINITY;
  unsigned idx = 0xffffffffu;
  for (unsigned c = lane; c < k; c += 32) {
    const float v = fmaf(-2.0f, row[c], norms[c]);
    if (v < best) {
      best = v;
      idx = c;
    }
  }
  for (unsigned off = 16; off > 0; off /= 2) {
    const float ob = __shfl_xor_sync(0xffffffffu, best, off);
    const unsigned oi = __shfl_xor_sync(0xffffffffu, idx, off);
    if (ob < best || (ob == best && oi < idx)) {
      best = ob;
      idx = oi;
    }
  }
  if (lane == 0) labels[point] = static_cast<std::int32_t>(idx);
}

/// The assignment step through cuBLAS: owns the handle, the chunk's score buffer and the norms.
class cublas_assigner {
 public:
  cublas_assigner(const warpkv::execution& ex, std::size_t n, unsigned d, unsigned k, bool tf32,
                  std::size_t chunk_rows)
      : api_(cublas_api::get()),
        ex_(ex),
        n_(n),
        d_(d),
        k_(k),
        chunk_(pick_chunk(n, k, chunk_rows)),
        scores_(chunk_ * k, ex),
        norms_(k, ex) {
    check(api_.create(&handle_), "cublasCreate");
    check(api_.set_stream(handle_, ex.stream), "cublasSetStream");
    check(api_.set_math_mode(handle_, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    check(api_.version(handle_, &version_), "cublasGetVersion");
  }
  cublas_assigner(const cublas_assigner&) = delete;
  cublas_assigner& operator=(const cublas_assigner&) = delete;
  ~cublas_assigner() { api_.destroy(handle_); }

  [[nodiscard]] std::size_t chunk_rows() const { return chunk_; }
  [[nodiscard]] int version() const { return version_; }

  /// labels[i] = the lowest-index nearest centroid of point i (stream-ordered on ex's stream).
  void run(const float* points, const float* centroids, std::int32_t* labels) {
    centroid_norms<<<(k_ + 127) / 128, 128, 0, ex_.stream>>>(centroids, k_, d_, norms_.data());
    WARPKV_CUDA_CHECK_LAUNCH("centroid_norms");
    const float one = 1.0f, zero = 0.0f;
    for (std::size_t off = 0; off < n_; off += chunk_) {
      const auto rows = static_cast<unsigned>(std::min(chunk_, n_ - off));
      // Column-major: S (k x rows, ld k) = C^T (k x d; C stored d x k, ld d) * X (d x rows, ld d).
      check(api_.sgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(k_), static_cast<int>(rows),
                       static_cast<int>(d_), &one, centroids, static_cast<int>(d_), points + off * d_,
                       static_cast<int>(d_), &zero, scores_.data(), static_cast<int>(k_)),
            "cublasSgemm");
      argmin_rows<<<(rows + 7) / 8, 256, 0, ex_.stream>>>(scores_.data(), norms_.data(), k_, rows, labels + off);
      WARPKV_CUDA_CHECK_LAUNCH("argmin_rows");
    }
  }

 private:
  /// About 32 MiB of scores per chunk (2^23 floats), at least 1024 rows, a multiple of 128.
  static std::size_t pick_chunk(std::size_t n, unsigned k, std::size_t asked) {
    std::size_t rows = asked != 0 ? asked : std::max<std::size_t>(1024, (std::size_t{1} << 23) / k / 128 * 128);
    rows = std::min(rows, n);
    if (rows > (std::size_t{1} << 30) / std::max(1u, k))
      throw warpkv::error(warpkv::errc::invalid_argument, "--cublas-chunk-rows: a chunk's scores must stay below 2^30 floats");
    return std::max<std::size_t>(rows, 1);
  }

  const cublas_api& api_;
  warpkv::execution ex_;
  std::size_t n_;
  unsigned d_, k_;
  std::size_t chunk_;
  warpkv::buffer<float> scores_, norms_;
  cublasHandle_t handle_ = nullptr;
  int version_ = 0;
};

/// Squared distance in double of a host point row to centroid c.
double dist2(const float* x, const std::vector<float>& cents, unsigned d, std::int32_t c) {
  double s = 0;
  for (unsigned j = 0; j < d; ++j) {
    const double t = static_cast<double>(x[j]) - cents[std::size_t(c) * d + j];
    s += t * t;
  }
  return s;
}

}  // namespace
#endif

bool run_cublas_row(session& s, const cublas_row_input& in) {
#if !WARPKV_HAS_CUDA
  (void)s;
  (void)in;
  progress("kmeans --distance cublas: this build has no CUDA backend; the cublas rows are skipped");
  return true;
#else
  namespace km = warpkv::kmeans;
  if (!s.cuda()) {
    progress("kmeans --distance cublas: cuBLAS runs on the GPU only; rows skipped on the host backend");
    return true;
  }
  record r = s.base("kmeans");
  r.set("n", in.n).set("d", in.d).set("k", in.k).set("distance", "cublas").set("precision", in.precision);
  r.set("init", in.init);
  if (in.precision != "fp32" && in.precision != "tf32") {
    progress("kmeans --distance cublas: no " + in.precision + " mode in cuBLAS's SGEMM; row skipped");
    return true;
  }
  const cublas_api& api = cublas_api::get();
  if (!api.error.empty()) {
    r.set("skipped", api.error);
    emit(r);
    progress("kmeans --distance cublas: skipped: " + api.error);
    return true;
  }
  const bool tf32 = in.precision == "tf32";
  const warpkv::execution& ex = s.ex();
  const std::size_t n = in.n;
  const unsigned d = in.d, k = in.k;
  cublas_assigner ca(ex, n, d, k, tf32, in.chunk_rows);
  warpkv::buffer<std::int32_t> got(n, ex), want(n, ex);
  const auto t = summarize(s.measure(in.repeats, [](int) {}, [&](int) { ca.run(in.points, in.centroids, got.data()); }));

  // The fused kernel on the same centroids in labels-only mode (no distances, sums, counts,
  // inertia): the same work as the cuBLAS path, in the row's precision and the given layout.
  std::vector<float> cents(std::size_t{k} * d);
  WARPKV_CUDA_CHECK(cudaMemcpy(cents.data(), in.centroids, cents.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const std::vector<float> host_centre = warpkv::detail::centroid_mean(cents.data(), k, d);
  warpkv::buffer<float> centre = warpkv::buffer<float>::from_host(std::span<const float>(host_centre), ex);
  warpkv::buffer<std::int32_t> fused(n, ex);
  warpkv::detail::assign_args a;
  a.points = in.points;
  a.n = n;
  a.d = d;
  a.centroids = in.centroids;
  a.k = k;
  a.labels = fused.data();
  a.centre = centre.data();
  const warpkv::smem_layout layout =
      in.layout == "natural" ? warpkv::smem_layout::natural : warpkv::smem_layout::padded_odd;
  const auto prec = tf32 ? km::distance_precision::tf32 : km::distance_precision::fp32;
  const auto tk = summarize(s.measure(in.repeats, [](int) {}, [&](int) { warpkv::detail::assign(ex, layout, a, prec); }));

  // Labels against the fp32 fused kernel's; every disagreement (up to a cap) must be a near-tie
  // within the GEMM form's rounding: |d2(a) - d2(b)| <= 4 (e + (d + 4) 2^-24) (|x| + max|c|)^2,
  // e = 2^-10 for TF32 operands (two roundings of 2^-11), 0 for fp32.
  a.labels = want.data();
  warpkv::detail::assign(ex, layout, a, km::distance_precision::fp32);
  const std::vector<std::int32_t> g = got.to_vector(), w = want.to_vector();
  double max_c2 = 0;
  for (unsigned c = 0; c < k; ++c) {
    double s2 = 0;
    for (unsigned j = 0; j < d; ++j) s2 += double(cents[std::size_t{c} * d + j]) * cents[std::size_t{c} * d + j];
    max_c2 = std::max(max_c2, s2);
  }
  const double eps = (tf32 ? std::ldexp(1.0, -10) : 0.0) + (d + 4.0) * std::ldexp(1.0, -24);
  constexpr std::size_t check_cap = 20000;
  std::size_t disagree = 0, checked = 0, beyond = 0, out_of_range = 0;
  std::vector<float> x(d);
  for (std::size_t i = 0; i < n; ++i) {
    if (g[i] == w[i]) continue;
    ++disagree;
    if (g[i] < 0 || static_cast<unsigned>(g[i]) >= k) {
      ++out_of_range;
      continue;
    }
    if (checked == check_cap) continue;
    ++checked;
    WARPKV_CUDA_CHECK(cudaMemcpy(x.data(), in.points + i * d, d * sizeof(float), cudaMemcpyDeviceToHost));
    double x2 = 0;
    for (unsigned j = 0; j < d; ++j) x2 += double(x[j]) * x[j];
    const double scale = std::sqrt(x2) + std::sqrt(max_c2);
    if (std::abs(dist2(x.data(), cents, d, g[i]) - dist2(x.data(), cents, d, w[i])) > 4 * eps * scale * scale) ++beyond;
  }
  const double agreement = 1.0 - static_cast<double>(disagree) / static_cast<double>(n);
  const bool ok = beyond == 0 && out_of_range == 0;

  const double flops = 2.0 * static_cast<double>(n) * k * d;  // the GEMM's multiply-adds
  const double gflops = flops / (t.median_ms * 1e6);
  // Bytes the cuBLAS path moves at least: points once, scores written and read once (L2 or DRAM).
  const double bytes = static_cast<double>(n) * d * 4 + 2.0 * static_cast<double>(n) * k * 4;
  r.set("layout_of_fused_kernel", in.layout).set("cublas_library", api.path).set("cublas_version", ca.version());
  r.set("chunk_rows", ca.chunk_rows()).set("chunk_score_bytes", ca.chunk_rows() * k * 4);
  r.set("assign_kernel_median_ms", t.median_ms).set("assign_kernel_min_ms", t.min_ms);
  r.set("fused_labels_only_median_ms", tk.median_ms).set("fused_labels_only_min_ms", tk.min_ms);
  r.set("cublas_speedup_vs_fused_labels_only", tk.median_ms / t.median_ms);
  r.set("assign_kernel_gflops", gflops);
  r.set("point_bytes_gb_per_s", static_cast<double>(n) * d * 4 / (t.median_ms * 1e6));
  r.set("min_traffic_gb_per_s", bytes / (t.median_ms * 1e6));
  const double peak = tf32 ? in.peaks.tf32_gflops : in.peaks.fp32_gflops;
  if (peak > 0)
    r.set(tf32 ? "tf32_peak_gflops" : "fp32_peak_gflops", peak)
        .set(tf32 ? "assign_kernel_fraction_of_tf32_peak" : "assign_kernel_fraction_of_fp32_peak", gflops / peak);
  if (in.peaks.dram_gbs > 0)
    r.set("dram_peak_gb_per_s", in.peaks.dram_gbs).set("min_traffic_fraction_of_dram_peak", bytes / (t.median_ms * 1e6) / in.peaks.dram_gbs);
  r.set("label_agreement_vs_fp32_kernel", agreement).set("label_disagreements", disagree);
  r.set("disagreements_checked", checked).set("disagreements_beyond_near_tie_bound", beyond + out_of_range);
  r.set("labels_check", ok ? "ok" : "FAILED");
  r.set("note_flops", "2 flops per point-centroid-dimension (the SGEMM); norms and argmin not counted. Labels only: "
                      "compare with fused_labels_only_median_ms (the fused kernel without sums, counts, inertia)");
  r.set("note_traffic", "min traffic = points once + the chunk's scores written and read once (they stay in L2 "
                        "when chunk_score_bytes fits)");
  r.set("repeats", in.repeats);
  emit(r);
  progress(strf("kmeans n=%zu d=%u k=%u cublas %s: assignment %.3f ms (fused kernel, labels only, %s: %.3f ms), "
                "agreement with fp32 kernel %.6f%s",
                n, d, k, in.precision.c_str(), t.median_ms, in.layout.c_str(), tk.median_ms, agreement,
                ok ? "" : " -- LABEL CHECK FAILED"));
  return ok;
#endif
}

}  // namespace warpkv_bench
