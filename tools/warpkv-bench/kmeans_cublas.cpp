// warpkv-bench kmeans --distance cublas: the assignment step alone through the library's GEMM
// path (kmeans/detail/assign_gemm.hpp: cuBLAS SGEMM per chunk of points, then the argmin
// kernel), labels only, beside the fused kernel in labels-only mode on the same centroids: the
// trial behind the library's automatic distance choice (docs/perf.md, Session 4). The fit rows
// with --distance gemm time the whole Lloyd iteration through the same path.
//
// Per chunk of R points (R x k scores of about 32 MiB, so the chunk stays within the H100's
// 50 MB L2 and the n x k matrix never exists; --cublas-chunk-rows changes R). fp32 rows use
// cuBLAS's default math (FP32 FMA); tf32 rows CUBLAS_TF32_TENSOR_OP_MATH.
//
// libcublas is opened at run time by the library (kmeans/detail/cublas.hpp): without it the
// rows say why they are skipped. WARPKV_CUBLAS=/path/to/libcublas.so.N names the library.
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

namespace warpkv_bench {

#if WARPKV_HAS_CUDA
namespace {

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
  if (const std::string why = warpkv::detail::cublas_unavailable(); !why.empty()) {
    r.set("skipped", why);
    emit(r);
    progress("kmeans --distance cublas: skipped: " + why);
    return true;
  }
  const bool tf32 = in.precision == "tf32";
  const warpkv::execution& ex = s.ex();
  const std::size_t n = in.n;
  const unsigned d = in.d, k = in.k;
  std::vector<float> cents(std::size_t{k} * d);
  WARPKV_CUDA_CHECK(cudaMemcpy(cents.data(), in.centroids, cents.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const std::vector<float> host_centre = warpkv::detail::centroid_mean(cents.data(), k, d);
  warpkv::buffer<float> centre = warpkv::buffer<float>::from_host(std::span<const float>(host_centre), ex);
  warpkv::buffer<std::int32_t> got(n, ex), want(n, ex), fused(n, ex);
  // Labels only (no distances, sums, counts, inertia) on both paths: the same work.
  warpkv::detail::assign_args a;
  a.points = in.points;
  a.n = n;
  a.d = d;
  a.centroids = in.centroids;
  a.k = k;
  a.centre = centre.data();
  a.labels = got.data();
  warpkv::detail::gemm_assigner ga(ex, n, d, k, tf32, in.chunk_rows);
  const auto t = summarize(s.measure(in.repeats, [](int) {}, [&](int) { ga.run(a); }));

  // The fused kernel on the same centroids, in the row's precision and the given layout.
  a.labels = fused.data();
  const warpkv::smem_layout layout =
      in.layout == "natural" ? warpkv::smem_layout::natural : warpkv::smem_layout::padded_odd;
  const auto prec = tf32 ? km::distance_precision::tf32 : km::distance_precision::fp32;
  const auto tk = summarize(s.measure(in.repeats, [](int) {}, [&](int) { warpkv::detail::assign(ex, layout, a, prec); }));

  // Labels against the fp32 fused kernel's; every disagreement (up to a cap) must be a near-tie
  // within the GEMM form's rounding: |d2(a) - d2(b)| <= 4 (e + (d + 4) 2^-24) (|x| + max|c|)^2,
  // e = 2^-10 for TF32 operands (two roundings of 2^-11), 0 for fp32 (a loose bound: the path
  // centres the centroids, which only shrinks its error).
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
  r.set("layout_of_fused_kernel", in.layout).set("cublas_library", warpkv::detail::cublas_api::get().path);
  r.set("cublas_version", ga.cublas_version());
  r.set("chunk_rows", ga.chunk_rows()).set("chunk_score_bytes", ga.chunk_rows() * k * 4);
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
