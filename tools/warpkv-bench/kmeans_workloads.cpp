// warpkv-bench bank-conflicts and kmeans. Compiled by nvcc when the CUDA backend is on, by the
// host compiler otherwise (then bank-conflicts refuses with a message: it measures GPU shared
// memory and has no host meaning).
//
//   bank-conflicts  full-warp shared-memory loads and stores, every lane at lane * stride, for
//                   32-bit words, 64-bit words and 8-bit elements, strides 1..33; and structs of
//                   1..8 32-bit members read (or written) member by member as an array of
//                   structs (stride = members) against a struct of arrays (stride 1). Warp
//                   accesses per second, the slowdown against stride 1 (or SoA), and the bank
//                   model's wavefronts per access (max distinct 32-bit words in one bank).
//                   Kernel names carry the kind so scripts/gpu-kmeans can pair each launch with
//                   Nsight Compute's bank-conflict counters (launch order = JSON line order
//                   when run with --warmup 0 --repeats 1).
//   kmeans          warpkv::kmeans::fit on generated Gaussian blobs: ms per Lloyd iteration
//                   ((fit of --iters) - (fit of 1 iteration)) / (iters - 1), the assignment
//                   step alone (with the segment pass when the sums go by segments), GFLOP/s,
//                   the iteration's two floors (flop_floor_ms, byte_floor_ms); per --accumulation
//                   (automatic, atomics, segments, owners: params.accumulation) and shared-memory layout (padded = the conflict-free
//                   default, natural = the conflicting one), distance precision (fp32; tf32 /
//                   tf32x3 rows add their label agreement with the fp32 fit from the same init
//                   and iterations, and after one step from fp32's centroids) and --distance path
//                   (automatic, fused, gemm: params.distance; distance_used says which ran, gemm
//                   rows run for the first layout only). With --input it runs one fit per
//                   precision on a file and writes labels/centroids (bench/peers/kmeans_peers.py).
//                   --distance cublas adds, per size and precision, the labels-only assignment
//                   step through the GEMM path beside the fused kernel (kmeans_cublas.cpp).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "kmeans_bench.hpp"
#include "session.hpp"
#include "warpkv/core/buffer.hpp"
#include "warpkv/core/error.hpp"
#include "warpkv/core/execution.hpp"
#include "warpkv/core/launcher.hpp"
#include "warpkv/kmeans/kmeans.hpp"

namespace warpkv_bench {

namespace {

using warpkv::buffer;
using warpkv::execution;
using warpkv::smem_layout;

// ---- bank-conflict microbenchmark ---------------------------------------------------------

/// The bank model: wavefronts of one warp access = the largest number of distinct 32-bit
/// words any of the 32 banks must deliver (same word to many lanes is a broadcast).
[[maybe_unused]] unsigned model_wavefronts(unsigned element_bytes, unsigned stride_elements) {
  std::vector<std::set<std::uint64_t>> bank(32);
  for (unsigned lane = 0; lane < 32; ++lane) {
    const std::uint64_t byte = std::uint64_t{lane} * stride_elements * element_bytes;
    for (std::uint64_t b = byte; b < byte + element_bytes; b += 4) {
      const std::uint64_t word = b / 4;
      bank[word % 32].insert(word);
    }
  }
  std::size_t m = 0;
  for (const auto& s : bank) m = std::max(m, s.size());
  return static_cast<unsigned>(m);
}

#if WARPKV_HAS_CUDA
// volatile: every access in the loop is a real shared-memory instruction (no hoisting or
// merging), so the loop measures the LSU's wavefronts per access.
template <class Word>
__global__ void bank_strided_load(unsigned stride, unsigned iters, unsigned long long* sink) {
  extern __shared__ __align__(16) unsigned char bank_raw[];
  volatile Word* s = reinterpret_cast<volatile Word*>(bank_raw);
  for (unsigned i = threadIdx.x; i < 32 * stride + 32; i += blockDim.x) s[i] = static_cast<Word>(i);
  __syncthreads();
  const unsigned idx = (threadIdx.x & 31u) * stride;
  unsigned long long acc = 0;
#pragma unroll 16
  for (unsigned i = 0; i < iters; ++i) acc += s[idx];
  if (acc == 0x123456789ull) *sink = acc;  // practically never: keeps the loads alive
}

template <class Word>
__global__ void bank_strided_store(unsigned stride, unsigned iters, unsigned long long* sink) {
  extern __shared__ __align__(16) unsigned char bank_raw[];
  volatile Word* s = reinterpret_cast<volatile Word*>(bank_raw);
  const unsigned idx = (threadIdx.x & 31u) * stride;
#pragma unroll 16
  for (unsigned i = 0; i < iters; ++i) s[idx] = static_cast<Word>(i);
  __syncthreads();
  if (s[idx] == static_cast<Word>(0x5a) && threadIdx.x == 1023) *sink = 1;
}

/// Structs of `members` 32-bit words: AoS lane l's member m at l * members + m; SoA at m * 32 + l.
__global__ void bank_struct_load(unsigned members, bool aos, unsigned iters, unsigned long long* sink) {
  extern __shared__ __align__(16) unsigned char bank_raw[];
  volatile std::uint32_t* s = reinterpret_cast<volatile std::uint32_t*>(bank_raw);
  for (unsigned i = threadIdx.x; i < 32 * members + 32; i += blockDim.x) s[i] = i;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31u;
  const unsigned base = aos ? lane * members : lane, step = aos ? 1u : 32u;
  unsigned long long acc = 0;
  for (unsigned i = 0; i < iters; ++i)
    for (unsigned m = 0; m < members; ++m) acc += s[base + m * step];
  if (acc == 0x123456789ull) *sink = acc;
}

__global__ void bank_struct_store(unsigned members, bool aos, unsigned iters, unsigned long long* sink) {
  extern __shared__ __align__(16) unsigned char bank_raw[];
  volatile std::uint32_t* s = reinterpret_cast<volatile std::uint32_t*>(bank_raw);
  const unsigned lane = threadIdx.x & 31u;
  const unsigned base = aos ? lane * members : lane, step = aos ? 1u : 32u;
  for (unsigned i = 0; i < iters; ++i)
    for (unsigned m = 0; m < members; ++m) s[base + m * step] = i + m;
  __syncthreads();
  if (s[base] == 0x5au && threadIdx.x == 1023) *sink = 1;
}
#endif

}  // namespace

int run_bank_conflicts(const common_options& co, const bank_conflict_options& o) {
#if !WARPKV_HAS_CUDA
  (void)co;
  (void)o;
  progress("bank-conflicts: this build has no CUDA backend; the benchmark measures GPU shared-memory banks "
           "and needs a GPU (build with -DWARPKV_CUDA=ON and run on the GPU machine)");
  return 3;
#else
  if (co.backend == "host" || !warpkv::cuda_available()) {
    progress("bank-conflicts: needs a GPU (shared-memory banks have no host meaning); backend=" + co.backend +
             (warpkv::cuda_available() ? "" : ", no CUDA device visible"));
    return 3;
  }
  session s(co);
  s.default_warmup(2, 0);
  const int repeats = s.repeats(5);
  const unsigned threads = 256;
  int dev = 0, sms = 0;
  WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
  WARPKV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const unsigned blocks = static_cast<unsigned>(sms) * 8;
  buffer<unsigned long long> sink(1, s.ex());
  const cudaStream_t st = s.ex().stream;

  for (const std::string& kind : o.kinds) {
    for (const std::string& op : o.ops) {
      const bool load = op == "load";
      double base_ms = 0;
      if (kind == "struct") {
        for (unsigned members = 1; members <= 8; ++members) {
          double soa_ms = 0;
          for (bool aos : {false, true}) {
            const std::size_t smem = (32 * members + 32) * sizeof(std::uint32_t);
            const auto samples = s.measure(
                repeats, [](int) {},
                [&](int) {
                  if (load) bank_struct_load<<<blocks, threads, smem, st>>>(members, aos, o.iters, sink.data());
                  else bank_struct_store<<<blocks, threads, smem, st>>>(members, aos, o.iters, sink.data());
                  WARPKV_CUDA_CHECK_LAUNCH("bank_struct kernel");
                });
            const timing_stats t = summarize(samples);
            if (!aos) soa_ms = t.median_ms;
            const double warp_accesses = static_cast<double>(blocks) * (threads / 32) * o.iters * members;
            record r = s.base("bank-conflicts");
            r.set("kind", "struct").set("op", op).set("layout", aos ? "aos" : "soa").set("members", members);
            r.set("member_words_parity", members % 2 == 0 ? "even" : "odd");
            r.set("stride_words", aos ? members : 1u).set("element_bytes", 4);
            r.set("model_wavefronts", model_wavefronts(4, aos ? members : 1));
            r.set("kernel", load ? "bank_struct_load" : "bank_struct_store");
            r.set("median_ms", t.median_ms).set("min_ms", t.min_ms).set("max_ms", t.max_ms);
            r.set("warp_accesses", warp_accesses).set("warp_accesses_per_s", warp_accesses / (t.median_ms * 1e-3));
            r.set("slowdown_vs_soa", t.median_ms / soa_ms);
            r.set("repeats", repeats);
            emit(r);
          }
        }
        continue;
      }
      const unsigned bytes = kind == "u64" ? 8 : kind == "u32" ? 4 : 1;
      for (unsigned stride = 1; stride <= o.max_stride; ++stride) {
        const std::size_t smem = (32 * stride + 32) * bytes;
        const auto samples = s.measure(
            repeats, [](int) {},
            [&](int) {
              if (bytes == 8) {
                if (load) bank_strided_load<std::uint64_t><<<blocks, threads, smem, st>>>(stride, o.iters, sink.data());
                else bank_strided_store<std::uint64_t><<<blocks, threads, smem, st>>>(stride, o.iters, sink.data());
              } else if (bytes == 4) {
                if (load) bank_strided_load<std::uint32_t><<<blocks, threads, smem, st>>>(stride, o.iters, sink.data());
                else bank_strided_store<std::uint32_t><<<blocks, threads, smem, st>>>(stride, o.iters, sink.data());
              } else {
                if (load) bank_strided_load<std::uint8_t><<<blocks, threads, smem, st>>>(stride, o.iters, sink.data());
                else bank_strided_store<std::uint8_t><<<blocks, threads, smem, st>>>(stride, o.iters, sink.data());
              }
              WARPKV_CUDA_CHECK_LAUNCH("bank_strided kernel");
            });
        const timing_stats t = summarize(samples);
        if (stride == 1) base_ms = t.median_ms;
        const double warp_accesses = static_cast<double>(blocks) * (threads / 32) * o.iters;
        record r = s.base("bank-conflicts");
        r.set("kind", kind).set("op", op).set("stride", stride).set("element_bytes", bytes);
        r.set("model_wavefronts", model_wavefronts(bytes, stride));
        r.set("kernel", std::string(load ? "bank_strided_load<" : "bank_strided_store<") + kind + ">");
        r.set("median_ms", t.median_ms).set("min_ms", t.min_ms).set("max_ms", t.max_ms);
        r.set("warp_accesses", warp_accesses).set("warp_accesses_per_s", warp_accesses / (t.median_ms * 1e-3));
        r.set("slowdown_vs_stride1", t.median_ms / base_ms);
        r.set("repeats", repeats);
        emit(r);
      }
      progress("bank-conflicts: " + kind + " " + op + " done");
    }
  }
  return 0;
#endif
}

// ---- k-means ------------------------------------------------------------------------------

namespace {

/// Gaussian-ish blobs (sum of four uniforms) around k centres in [-10, 10]^d; the cluster of
/// point i is a hash of i, so any prefix of the rows is a fair sample.
struct blob_body {
  float* out;
  unsigned d, k;
  std::uint64_t seed;
  template <class Tile>
  WARPKV_HD void operator()(const Tile& t, std::size_t i) const {
    namespace wd = warpkv::detail;
    const std::uint64_t c = wd::random_bits(seed, 1, i) % k;
    for (unsigned j = t.thread_rank(); j < d; j += t.size()) {
      const double centre = (wd::random_unit(seed, 2 + c, j) * 2 - 1) * 10;
      const std::uint64_t e = i * d + j;
      const double noise = wd::random_unit(seed, 3, e) + wd::random_unit(seed, 4, e) + wd::random_unit(seed, 5, e) +
                           wd::random_unit(seed, 6, e) - 2.0;
      out[e] = static_cast<float>(centre + noise);
    }
  }
};

std::pair<unsigned, unsigned> parse_shape(const std::string& s) {
  const auto x = s.find('x');
  if (x == std::string::npos) throw warpkv::error(warpkv::errc::invalid_argument, "--shapes: '" + s + "' is not DxK");
  return {static_cast<unsigned>(std::stoul(s.substr(0, x))), static_cast<unsigned>(std::stoul(s.substr(x + 1)))};
}

/// --distance's fit paths; "kernel" is the fused kernel's name from before the library had a
/// choice (scripts still pass it).
warpkv::kmeans::distance_method parse_distance(const std::string& s) {
  using warpkv::kmeans::distance_method;
  if (s == "fused" || s == "kernel") return distance_method::fused;
  if (s == "gemm") return distance_method::gemm;
  return distance_method::automatic;
}

const char* distance_name(warpkv::kmeans::distance_method m) {
  using warpkv::kmeans::distance_method;
  return m == distance_method::gemm ? "gemm" : m == distance_method::fused ? "fused" : "automatic";
}

const char* accumulation_name_of(warpkv::kmeans::accumulation_method m) {
  using warpkv::kmeans::accumulation_method;
  switch (m) {
    case accumulation_method::segments: return "segments";
    case accumulation_method::owners: return "owners";
    default: return "atomics";
  }
}

warpkv::kmeans::accumulation_method parse_accumulation(const std::string& s) {
  using warpkv::kmeans::accumulation_method;
  if (s == "atomics") return accumulation_method::atomics;
  if (s == "segments") return accumulation_method::segments;
  if (s == "owners") return accumulation_method::owners;
  return accumulation_method::automatic;
}

warpkv::kmeans::init_method parse_init(const std::string& s) {
  using warpkv::kmeans::init_method;
  if (s == "random") return init_method::random;
  if (s == "kmeans++") return init_method::kmeans_plus_plus;
  if (s == "kmeans||") return init_method::kmeans_parallel;
  return init_method::automatic;
}

template <class T>
std::vector<T> read_raw(const std::string& path, std::size_t count) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw warpkv::error(warpkv::errc::invalid_argument, "cannot open '" + path + "'");
  std::vector<T> v(count);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(T)));
  if (static_cast<std::size_t>(f.gcount()) != count * sizeof(T))
    throw warpkv::error(warpkv::errc::invalid_argument, "'" + path + "' holds fewer than " + std::to_string(count) +
                                                            " values");
  return v;
}

template <class T>
void write_raw(const std::string& path, const std::vector<T>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!f) throw warpkv::error(warpkv::errc::invalid_argument, "cannot write '" + path + "'");
}

warpkv::kmeans::distance_precision parse_precision(const std::string& s) {
  using warpkv::kmeans::distance_precision;
  if (s == "tf32") return distance_precision::tf32;
  if (s == "tf32x3") return distance_precision::tf32x3;
  if (s == "fp32") return distance_precision::fp32;
  throw warpkv::error(warpkv::errc::invalid_argument, "--precision: '" + s + "' is not fp32, tf32 or tf32x3");
}

/// fp32 first (its fit is the tf32 rows' reference), then the others in the given order.
std::vector<std::string> ordered_precisions(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  if (std::find(given.begin(), given.end(), "fp32") != given.end()) out.push_back("fp32");
  for (const auto& g : given)
    if (g != "fp32" && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

/// Comparison mode (bench/peers/kmeans_peers.py): one fit per --precision on the points of a
/// file from the given initial centroids. ms per iteration as in the generated-data rows:
/// (fit of --iters - fit of 1 iteration) / (iterations - 1), so the data scan, init gather and
/// final assignment that every fit pays once are not counted; fit_ms_per_iteration keeps them.
/// With more than one precision, the labels / centroids files get ".<precision>" appended.
int run_kmeans_file(session& s, const kmeans_options& o, std::size_t n, unsigned d, unsigned k) {
  namespace km = warpkv::kmeans;
  const std::vector<float> host = read_raw<float>(o.input, n * d);
  buffer<float> pts = buffer<float>::from_host(std::span<const float>(host), s.ex());
  km::params p;
  p.exec = s.ex();
  p.seed = s.options().seed;
  p.tol = o.tol;
  p.init = parse_init(o.init);
  if (!o.init_file.empty()) {
    p.init = km::init_method::user;
    p.initial_centroids = read_raw<float>(o.init_file, std::size_t{k} * d);
  }
  const int repeats = s.repeats(3);
  const std::vector<std::string> precisions = ordered_precisions(o.precisions);
  for (const std::string& precision_name : precisions) {
    p.precision = parse_precision(precision_name);
    km::result last;
    p.max_iter = 1;
    const timing_stats one = summarize(s.measure(repeats, [](int) {}, [&](int) { last = km::fit(pts.data(), n, d, k, p); }));
    p.max_iter = o.iters;
    const timing_stats t = summarize(s.measure(repeats, [](int) {}, [&](int) { last = km::fit(pts.data(), n, d, k, p); }));
    const std::string suffix = precisions.size() > 1 ? "." + precision_name : "";
    if (!o.labels_out.empty()) write_raw(o.labels_out + suffix, last.labels.to_vector());
    if (!o.centroids_out.empty()) write_raw(o.centroids_out + suffix, last.centroids.to_vector());
    const unsigned its = last.iterations;
    record r = s.base("kmeans-file");
    r.set("n", n).set("d", d).set("k", k).set("precision", precision_name);
    r.set("iterations", its).set("converged", last.converged);
    r.set("inertia", last.inertia).set("init", p.init == km::init_method::user ? "user" : o.init);
    r.set("fit_median_ms", t.median_ms).set("fit_min_ms", t.min_ms).set("fit_1iter_median_ms", one.median_ms);
    r.set("repeats", repeats);
    r.set("ms_per_iteration", its > 1 ? (t.median_ms - one.median_ms) / (its - 1) : t.median_ms);
    r.set("fit_ms_per_iteration", t.median_ms / its);
    emit(r);
  }
  return 0;
}

}  // namespace

card_peaks card_limits(const session& s) {
  card_peaks p;
#if WARPKV_HAS_CUDA
  if (!s.cuda()) return p;
  int dev = 0, sms = 0, khz = 0, mem_khz = 0, bus_bits = 0, major = 0, minor = 0;
  WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
  WARPKV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess) khz = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) mem_khz = 0;
  if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) bus_bits = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) major = 0;
  if (cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) minor = 0;
  (void)cudaGetLastError();
  const double sm_ghz = static_cast<double>(sms) * khz * 1e-6;
  p.fp32_gflops = sm_ghz * 128 * 2;  // 128 FP32 lanes per SM (sm_80+), an FMA = 2 flops
  // Dense TF32 tensor-core flops per SM per clock (A100 156, RTX 30/40 series, H100 SXM 495
  // TFLOP/s at their boost clocks); other architectures: unknown, no ratio.
  const int cc = major * 10 + minor;
  const double tf32_per_sm_clock = cc == 80 ? 1024 : (cc == 86 || cc == 89) ? 256 : cc == 90 ? 2048 : 0;
  p.tf32_gflops = sm_ghz * tf32_per_sm_clock;
  p.dram_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) * 1e-9;  // double data rate
#else
  (void)s;
#endif
  return p;
}

int run_kmeans(const common_options& co, const kmeans_options& o) {
  namespace km = warpkv::kmeans;
  session s(co);
  s.default_warmup(1, 0);
  const card_peaks peaks = card_limits(s);
  bool labels_ok = true;  // the cublas rows' label checks
  std::vector<std::uint64_t> ns = o.n;
  if (ns.empty()) ns = s.cuda() ? std::vector<std::uint64_t>{1ull << 20, 1ull << 24} : std::vector<std::uint64_t>{1ull << 14};
  if (!o.input.empty()) {
    if (ns.size() != 1 || o.shapes.size() != 1)
      throw warpkv::error(warpkv::errc::invalid_argument, "--input needs exactly one --n and one --shapes DxK");
    const auto [d, k] = parse_shape(o.shapes[0]);
    return run_kmeans_file(s, o, ns[0], d, k);
  }
  const int repeats = s.repeats(s.cuda() ? 5 : 2);
  // Fit rows per --distance path; "cublas" adds the labels-only trial rows instead.
  std::vector<std::string> fit_distances;
  for (const std::string& m : o.distances)
    if (m != "cublas") fit_distances.push_back(m);
  if (fit_distances.empty()) fit_distances.push_back("automatic");
  std::vector<std::string> shapes = o.shapes;
  if (!s.cuda() && shapes == kmeans_options{}.shapes) {
    shapes = {"4x16", "32x64"};  // the GPU shapes take minutes per iteration on host threads
    progress("kmeans: host backend, default shapes reduced to 4x16,32x64");
  }
  for (const std::uint64_t n : ns) {
    for (const std::string& shape : shapes) {
      const auto [d, k] = parse_shape(shape);
      if (k > n) continue;
      buffer<float> pts(n * d, s.ex());
      warpkv::launch<32>(s.ex(), n, warpkv::simple_body<blob_body>{{pts.data(), d, k, co.seed}});
      warpkv::synchronize(s.ex());
      std::vector<std::pair<std::string, std::string>> variants;  // (layout, accumulation)
      for (const std::string& l : o.layouts)
        for (const std::string& m : o.accumulations) variants.emplace_back(l, m);
      for (const auto& [layout_name, accumulation_name] : variants) {
        const smem_layout layout = layout_name == "natural" ? smem_layout::natural : smem_layout::padded_odd;
        km::params p;
        p.exec = s.ex();
        p.seed = co.seed;
        p.tol = 0;
        p.layout = layout;
        p.init = parse_init(o.init);
        p.accumulation = parse_accumulation(accumulation_name);
        km::result ref;  // the fp32 fit of --iters iterations, for the tf32 rows' agreement
        bool have_ref = false;
        for (const std::string& precision_name : ordered_precisions(o.precisions)) {
          p.precision = parse_precision(precision_name);
          const bool exact = p.precision == km::distance_precision::fp32;
          bool trial_done = false;
          for (const std::string& fit_distance : fit_distances) {
            p.distance = parse_distance(fit_distance);
            bool gemm = false;
            try {
              gemm = km::impl::use_gemm(p.distance, p.exec, d, k, p.precision, "--distance");
              (void)km::impl::pick_accumulation(p.accumulation, gemm, p.precision, d, k, "--accumulation");
            } catch (const warpkv::error& e) {
              progress(strf("kmeans n=%llu d=%u k=%u %s --distance %s --accumulation %s: skipped (%s)",
                            static_cast<unsigned long long>(n), d, k, precision_name.c_str(), fit_distance.c_str(),
                            accumulation_name.c_str(), e.what()));
              continue;
            }
            if (gemm && layout_name != o.layouts.front()) continue;  // the GEMM path has no shared-memory layout
            km::result res;
            p.max_iter = 1;
            const auto one = summarize(s.measure(repeats, [](int) {}, [&](int) { res = km::fit(pts.data(), n, d, k, p); }));
            p.max_iter = o.iters;
            const auto many = summarize(s.measure(repeats, [](int) {}, [&](int) { res = km::fit(pts.data(), n, d, k, p); }));
            const unsigned its = res.iterations;
            const double per_iter = its > 1 ? (many.median_ms - one.median_ms) / (its - 1) : many.median_ms;
            // The fused assignment kernel alone (labels, distances, sums, counts, inertia).
            buffer<std::int32_t> labels(n, s.ex());
            buffer<float> dist(n, s.ex());
            buffer<std::uint64_t> acc(std::size_t{k} * d + k + 1, s.ex());
            const std::vector<float> host_centre =
                warpkv::detail::centroid_mean(res.centroids.to_vector().data(), k, d);
            buffer<float> centre = buffer<float>::from_host(std::span<const float>(host_centre), s.ex());
            warpkv::detail::assign_args a;
            a.points = pts.data();
            a.n = n;
            a.d = d;
            a.centroids = res.centroids.data();
            a.k = k;
            a.labels = labels.data();
            a.dist = dist.data();
            a.dist_mode = warpkv::detail::dist_output::write;
            a.sums = acc.data();
            a.counts = acc.data() + std::size_t{k} * d;
            a.inertia = acc.data() + std::size_t{k} * d + k;
            a.sum_scale = warpkv::detail::fixed_scale(16.0, n);  // blobs lie within [-12, 12]
            a.dist_scale = warpkv::detail::fixed_scale(d * 4.0 * 16 * 16, n);
            a.centre = centre.data();
            a.by_owners = res.accumulation == km::accumulation_method::owners;
            // The assignment step of the path the fit used: the fused kernel, or SGEMM + argmin,
            // and the segment pass when the fit summed by segments.
            std::optional<warpkv::detail::gemm_assigner> by_gemm;
            if (gemm) by_gemm.emplace(s.ex(), n, d, k, !exact, o.cublas_chunk_rows);
            std::optional<warpkv::detail::segment_summer> by_segments;
            if (res.accumulation == km::accumulation_method::segments) by_segments.emplace(s.ex(), n, k);
            const auto kernel = summarize(s.measure(
                repeats, [&](int) { warpkv::detail::fill_zero(s.ex(), acc.data(), acc.size()); },
                [&](int) {
                  warpkv::detail::assign_args step = a;
                  if (by_segments) step.sums = nullptr;
                  if (by_gemm) by_gemm->run(step);
                  else warpkv::detail::assign(s.ex(), layout, step, p.precision);
                  if (by_segments) by_segments->run(a);
                }));
            // fp32 fused: subtract + fused multiply-add per element; tf32 and gemm: the x.c
            // GEMM's multiply-add (x3: three of them), the centroid norms and argmin not counted.
            const double flops = exact && !gemm ? 3.0 * static_cast<double>(n) * k * d
                                       : (p.precision == km::distance_precision::tf32x3 ? 3.0 : 1.0) * 2.0 *
                                             static_cast<double>(n) * k * d;
            unsigned stride = 0, ways = 0, centroid_stride = 0;
            if (gemm) {
              // no shared-memory tile of points: stride and conflict ways stay 0
            } else if (exact) {
              const auto body = warpkv::detail::assign_body<smem_layout::padded_odd>::make(a);
              stride = layout == smem_layout::natural ? warpkv::detail::row_stride<smem_layout::natural>(body.cwidth)
                                                      : body.stride;
              ways = warpkv::detail::conflict_ways(stride);
            } else {  // the A (point) and B (centroid) fragment loads' row strides
              namespace wd = warpkv::detail;
              constexpr auto tf32 = km::distance_precision::tf32;
              const auto strides = [&](auto body) { return std::pair<unsigned, unsigned>{body.ldx, body.ldm}; };
              std::tie(stride, centroid_stride) =
                  layout == smem_layout::natural ? strides(wd::assign_mma_body<smem_layout::natural, tf32>::make(a))
                                                 : strides(wd::assign_mma_body<smem_layout::padded_odd, tf32>::make(a));
              ways = std::max(wd::fragment_conflict_ways(stride), wd::fragment_conflict_ways(centroid_stride));
            }
            record r = s.base("kmeans");
            r.set("n", n).set("d", d).set("k", k).set("layout", layout_name).set("init", o.init);
            r.set("precision", precision_name).set("distance", fit_distance).set("distance_used", distance_name(res.distance));
            r.set("accumulation", accumulation_name)
                .set("accumulation_used", accumulation_name_of(res.accumulation));
            if (gemm) r.set("chunk_rows", by_gemm->chunk_rows()).set("cublas_version", by_gemm->cublas_version());
            r.set("iterations", its).set("inertia", res.inertia).set("empty_clusters_reseeded", res.reseeded);
            r.set("fit_median_ms", many.median_ms).set("fit_1iter_median_ms", one.median_ms);
            r.set("ms_per_iteration", per_iter);
            r.set("assign_kernel_median_ms", kernel.median_ms).set("assign_kernel_min_ms", kernel.min_ms);
            r.set("gflops_per_iteration", flops / (per_iter * 1e6));
            r.set("assign_kernel_gflops", flops / (kernel.median_ms * 1e6));
            r.set("point_bytes_gb_per_s", static_cast<double>(n) * d * 4 / (kernel.median_ms * 1e6));
            if (!gemm) r.set("smem_row_stride_words", stride).set("model_conflict_ways", ways);
            if (!exact && !gemm) r.set("smem_centroid_row_stride_words", centroid_stride);
            const double kernel_gflops = flops / (kernel.median_ms * 1e6);
            if (exact && gemm && peaks.fp32_gflops > 0) {
              r.set("fp32_peak_gflops", peaks.fp32_gflops).set("assign_kernel_fraction_of_fp32_peak", kernel_gflops / peaks.fp32_gflops);
              r.set("note_flops", "2 flops per point-centroid-dimension (the SGEMM's multiply-add); assign_kernel_* time the GEMM path's whole assignment step (SGEMM chunks, argmin, sums)");
            }
            if (exact && !gemm && peaks.fp32_gflops > 0) {
              r.set("fp32_peak_gflops", peaks.fp32_gflops).set("assign_kernel_fraction_of_fp32_peak", kernel_gflops / peaks.fp32_gflops);
              r.set("fraction_of_fp32_peak_per_iteration", flops / (per_iter * 1e6) / peaks.fp32_gflops);
              r.set("note_flops", "3 flops per point-centroid-dimension (subtract + FMA) vs the card's FMA peak; the kernel issues 2 FP32 instructions per element, so 0.75 of that peak is its ceiling");
            }
            if (!exact) {
              r.set("note_flops", gemm ? "2 flops per point-centroid-dimension (cuBLAS SGEMM in TF32 tensor-op math); assign_kernel_* time the GEMM path's whole assignment step (SGEMM chunks, argmin, sums)"
                                       : "2 flops per point-centroid-dimension (the x.c multiply-add on tensor cores; 6 for tf32x3's three products); stride and conflict ways are those of the TF32 fragment loads");
              if (peaks.tf32_gflops > 0) {
                r.set("tf32_peak_gflops", peaks.tf32_gflops).set("assign_kernel_fraction_of_tf32_peak", kernel_gflops / peaks.tf32_gflops);
                r.set("fraction_of_tf32_peak_per_iteration", flops / (per_iter * 1e6) / peaks.tf32_gflops);
                r.set("note_peak", "dense TF32 tensor-core peak at the clock attribute; mma.sync (this kernel) reaches about half of it on sm_90, only wgmma the rest");
              }
            }
            if (peaks.dram_gbs > 0) {
              const double point_gbs = static_cast<double>(n) * d * 4 / (kernel.median_ms * 1e6);
              r.set("dram_peak_gb_per_s", peaks.dram_gbs).set("point_read_fraction_of_dram_peak", point_gbs / peaks.dram_gbs);
              r.set("point_bytes_gb_per_s_per_iteration", static_cast<double>(n) * d * 4 / (per_iter * 1e6));
            }
            {
              // The two floors of an iteration (docs/perf.md): the GEMM form's arithmetic (one
              // multiply-add per point-centroid-dimension; x3 for tf32x3) at the card's peak, and
              // the bytes that must move (points read once, labels and distances written once).
              const double floor_flops = (p.precision == km::distance_precision::tf32x3 ? 3.0 : 1.0) * 2.0 *
                                         static_cast<double>(n) * k * d;
              const double floor_bytes = static_cast<double>(n) * d * 4 + static_cast<double>(n) * 8;
              const double peak = exact ? peaks.fp32_gflops : peaks.tf32_gflops;
              double floor_ms = 0;
              if (peak > 0) {
                floor_ms = floor_flops / (peak * 1e6);
                r.set("flop_floor_ms", floor_ms);
              }
              if (peaks.dram_gbs > 0) {
                const double byte_ms = floor_bytes / (peaks.dram_gbs * 1e6);
                r.set("byte_floor_ms", byte_ms).set("gb_per_s_per_iteration", floor_bytes / (per_iter * 1e6));
                r.set("fraction_of_dram_peak_per_iteration", floor_bytes / (per_iter * 1e6) / peaks.dram_gbs);
                floor_ms = std::max(floor_ms, byte_ms);
              }
              if (floor_ms > 0) r.set("iteration_over_floor", per_iter / floor_ms);
            }
            if (exact) {
              if (!have_ref) {  // the first fp32 fit: the reference of the tf32 rows
                ref = std::move(res);
                have_ref = true;
              }
            } else {
              if (!have_ref) {
                km::params q = p;
                q.precision = km::distance_precision::fp32;
                ref = km::fit(pts.data(), n, d, k, q);
                have_ref = true;
              }
              // Same init, same --iters: whole-fit agreement (trajectories may drift apart on
              // near-ties); and one assignment step from fp32's final centroids (the precision's
              // own effect on labels).
              const std::vector<std::int32_t> want = ref.labels.to_vector(), got = res.labels.to_vector();
              km::predict(pts.data(), n, d, ref.centroids.data(), k, labels.data(), s.ex(), layout, p.precision,
                          p.distance);
              const std::vector<std::int32_t> step = labels.to_vector();
              std::size_t same_fit = 0, same_step = 0;
              for (std::size_t i = 0; i < n; ++i) {
                same_fit += got[i] == want[i] ? 1 : 0;
                same_step += step[i] == want[i] ? 1 : 0;
              }
              r.set("label_agreement_vs_fp32", static_cast<double>(same_fit) / static_cast<double>(n));
              r.set("label_agreement_vs_fp32_one_step", static_cast<double>(same_step) / static_cast<double>(n));
              r.set("fp32_iterations", ref.iterations).set("inertia_ratio_vs_fp32", res.inertia / ref.inertia);
            }
            r.set("repeats", repeats);
            emit(r);
            progress(strf("kmeans n=%llu d=%u k=%u %s %s %s: %.3f ms/iteration, assignment step %.3f ms",
                          static_cast<unsigned long long>(n), d, k, layout_name.c_str(), precision_name.c_str(),
                          distance_name(res.distance), per_iter, kernel.median_ms));
            // The labels-only trial on the same centroids (once per size and precision: it has
            // no layout; the fused kernel's labels-only time beside it uses this layout).
            if (!trial_done && layout_name == o.layouts.front() &&
                std::find(o.distances.begin(), o.distances.end(), "cublas") != o.distances.end()) {
              trial_done = true;
              cublas_row_input in;
              in.points = pts.data();
              in.n = n;
              in.d = d;
              in.k = k;
              in.centroids = (exact ? ref : res).centroids.data();
              in.precision = precision_name;
              in.layout = layout_name;
              in.init = o.init;
              in.repeats = repeats;
              in.chunk_rows = o.cublas_chunk_rows;
              in.peaks = peaks;
              labels_ok = run_cublas_row(s, in) && labels_ok;
            }
          }
        }
      }
    }
  }
  return labels_ok ? 0 : 1;
}

}  // namespace warpkv_bench
