// warpkv-ceiling: the card's memory ceilings that the maps' bulk kernels are measured against
// (issue 24, experiment E0; issue 23's ">= 75% of the random-read ceiling").
//
// Standalone CUDA (no warpkv headers, no dependencies), one JSON line per measurement
// ("workload":"ceiling"). On a buffer much larger than L2 (default 4 GiB), with random
// addresses from a hash of the access number (uniform over the buffer, aligned to the access):
//   random_read   B-byte reads (B = 8, 16, 32, 64, 128) by L cooperating lanes (L = 1, 4, 8):
//                 each lane of the group loads B/L contiguous bytes of the same B-byte window
//                 (a 64-byte window read by 4 lanes is 4 x 16-byte loads); combinations with
//                 fewer than 4 bytes per lane are skipped. `ilp` independent accesses per group
//                 (1: one access per group, the shape of a bulk kernel with one op per tile;
//                 4: four independent accesses issued before their results are used).
//                 `load`: plain (ld.global), nc (ld.global.nc, the read-only path nvcc picks for
//                 const __restrict__ data) or relaxed (ld.relaxed.gpu, an atomic_ref relaxed load).
//   random_cas    one lane per access, 4- or 8-byte compare-exchange, relaxed, device scope,
//                 on a zero-filled buffer (re-zeroed untimed before every run: the first CAS on
//                 a word succeeds, as an insert into an empty table).
//   random_store  one lane per access, 4- or 8-byte stores.
//   sequential_read  coalesced 16-byte loads over the whole buffer (GB/s).
//   copy          coalesced 16-byte copy of one half of the buffer to the other; gbs counts the
//                 bytes read plus the bytes written.
// Every row: median/min/max of CUDA-event timings of --repeats runs after --warmup runs,
// gops = G accesses/s at the median, gbs = useful bytes (accesses x access bytes) / s,
// sector_gbs = 32-byte sectors touched x 32 / s.
//
// Usage: warpkv-ceiling [--bytes 4GiB] [--accesses 2^28] [--repeats 5] [--warmup 1] [--out FILE]
//          [--ops read,cas,store,seq,copy] [--access-bytes 8,16,32,64,128] [--lanes 1,4,8]
//          [--ilp 1,4] [--loads plain,nc,relaxed] [--block 256] [--seed 42]
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#ifndef WARPKV_CEILING_COMMIT
#define WARPKV_CEILING_COMMIT "unknown"
#endif

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

#define CEIL_CHECK(call)                                                                                  \
  do {                                                                                                    \
    const cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "warpkv-ceiling: CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, \
                   __LINE__, cudaGetErrorString(e_));                                                     \
      std::exit(2);                                                                                       \
    }                                                                                                     \
  } while (0)

// ---- device side -------------------------------------------------------------------------------

__host__ __device__ inline u64 mix64(u64 x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}
/// Index of access `a` among `slots` slots: uniform, from a hash of the access number.
__device__ inline u64 slot_of(u64 a, u64 seed, u64 slots) { return __umul64hi(mix64(a ^ seed), slots); }

enum class load_kind { plain, nc, relaxed };

// The loads are written in PTX so that the compiler does not pick another kind: plain is a weak
// ld.global (the L1 path a kernel that also writes gets), nc the read-only ld.global.nc path that
// nvcc picks for const __restrict__ data, relaxed is ld.relaxed.gpu (an atomic_ref relaxed load).

template <load_kind LK>
__device__ inline u32 load4(const unsigned char* p) {
  u32 v;
  if constexpr (LK == load_kind::plain)
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else if constexpr (LK == load_kind::nc)
    asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
template <load_kind LK>
__device__ inline u64 load8(const unsigned char* p) {
  u64 v;
  if constexpr (LK == load_kind::plain)
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else if constexpr (LK == load_kind::nc)
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
template <load_kind LK>
__device__ inline uint4 load16(const unsigned char* p) {
  uint4 v;
  if constexpr (LK == load_kind::plain)
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  else if constexpr (LK == load_kind::nc)
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  else
    asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}

/// This lane's PER_LANE bytes at p, folded into 64 bits.
template <int PER_LANE, load_kind LK>
__device__ inline u64 read_part(const unsigned char* p) {
  if constexpr (PER_LANE == 4) {
    return load4<LK>(p);
  } else if constexpr (PER_LANE == 8) {
    return load8<LK>(p);
  } else {
    static_assert(PER_LANE % 16 == 0, "per-lane bytes must be 4, 8 or a multiple of 16");
    uint4 v[PER_LANE / 16];
#pragma unroll
    for (int j = 0; j < PER_LANE / 16; ++j) v[j] = load16<LK>(p + 16 * j);
    u64 acc = 0;
#pragma unroll
    for (int j = 0; j < PER_LANE / 16; ++j) acc ^= (static_cast<u64>(v[j].x) | (static_cast<u64>(v[j].y) << 32)) ^
                                                    (static_cast<u64>(v[j].z) | (static_cast<u64>(v[j].w) << 32));
    return acc;
  }
}

/// Group g (LANES consecutive threads) makes accesses g*ILP .. g*ILP+ILP-1, each a BYTES-byte
/// window at a random BYTES-aligned offset; lane l reads bytes [l*BYTES/LANES, (l+1)*BYTES/LANES).
template <int BYTES, int LANES, int ILP, load_kind LK>
__global__ void random_read_kernel(const unsigned char* buf, u64 slots, u64 groups, u64 seed,
                                   u64* __restrict__ sink) {
  constexpr int per_lane = BYTES / LANES;
  const u64 tid = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  const u64 group = tid / LANES;
  const int lane = static_cast<int>(tid % LANES);
  if (group >= groups) return;
  const unsigned char* p[ILP];
#pragma unroll
  for (int k = 0; k < ILP; ++k) p[k] = buf + slot_of(group * ILP + k, seed, slots) * BYTES + lane * per_lane;
  u64 v[ILP];
#pragma unroll
  for (int k = 0; k < ILP; ++k) v[k] = read_part<per_lane, LK>(p[k]);
  u64 acc = 0;
#pragma unroll
  for (int k = 0; k < ILP; ++k) acc ^= v[k];
  if (acc == seed) sink[0] = acc;  // keeps the loads; practically never taken
}

template <class T>
__global__ void random_cas_kernel(unsigned char* __restrict__ buf, u64 slots, u64 accesses, u64 seed,
                                  u64* __restrict__ sink) {
  const u64 a = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a >= accesses) return;
  T* p = reinterpret_cast<T*>(buf) + slot_of(a, seed, slots);
  cuda::atomic_ref<T, cuda::thread_scope_device> ref(*p);
  T expected = 0;
  const bool won = ref.compare_exchange_strong(expected, static_cast<T>(a | 1), cuda::std::memory_order_relaxed,
                                               cuda::std::memory_order_relaxed);
  if (!won && static_cast<u64>(expected) == seed) sink[0] = expected;  // keeps the result
}

template <class T>
__global__ void random_store_kernel(unsigned char* __restrict__ buf, u64 slots, u64 accesses, u64 seed) {
  const u64 a = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (a >= accesses) return;
  const u64 h = mix64(a ^ seed);
  reinterpret_cast<T*>(buf)[__umul64hi(h, slots)] = static_cast<T>(h);
}

__global__ void sequential_read_kernel(const uint4* __restrict__ buf, u64 n, u64 seed, u64* __restrict__ sink) {
  u64 acc = 0;
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const uint4 v = buf[i];
    acc ^= (static_cast<u64>(v.x) | (static_cast<u64>(v.y) << 32)) ^ (static_cast<u64>(v.z) | (static_cast<u64>(v.w) << 32));
  }
  if (acc == seed) sink[0] = acc;
}

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n) {
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void fill_kernel(u64* buf, u64 n, u64 seed) {
  for (u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * blockDim.x)
    buf[i] = mix64(i + seed);
}

// ---- host side ---------------------------------------------------------------------------------

struct options {
  u64 bytes = u64{4} << 30;
  u64 accesses = u64{1} << 28;
  int repeats = 5;
  int warmup = 1;
  int block = 256;
  u64 seed = 42;
  std::string out;
  std::vector<std::string> ops{"read", "cas", "store", "seq", "copy"};
  std::vector<int> access_bytes{8, 16, 32, 64, 128};
  std::vector<int> lanes{1, 4, 8};
  std::vector<int> ilp{1, 4};
  std::vector<std::string> loads{"plain", "nc", "relaxed"};
  std::string command;
};

const char* const usage =
    "warpkv-ceiling: random-access and sequential memory ceilings of the GPU (JSON lines, \"workload\":\"ceiling\")\n"
    "  --bytes N          buffer size (default 4GiB; must be much larger than L2); accepts 2^K, K/M/G/KiB/MiB/GiB\n"
    "  --accesses N       random accesses per timed run (default 2^28)\n"
    "  --repeats N        timed runs per row, the row reports their median (default 5)\n"
    "  --warmup N         untimed runs before them (default 1)\n"
    "  --ops LIST         read,cas,store,seq,copy (default all)\n"
    "  --access-bytes L   random_read window sizes (default 8,16,32,64,128; cas and store use 4,8)\n"
    "  --lanes LIST       lanes cooperating on one random_read access (default 1,4,8)\n"
    "  --ilp LIST         independent accesses per lane group (default 1,4)\n"
    "  --loads LIST       random_read's loads: plain (ld.global), nc (ld.global.nc, read-only path),\n"
    "                     relaxed (ld.relaxed.gpu) (default all three)\n"
    "  --block N          threads per block (default 256)\n"
    "  --seed N           address hash seed (default 42)\n"
    "  --out FILE         append the JSON lines to FILE too (they always go to stdout)\n";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

u64 parse_size(const std::string& text) {
  const auto caret = text.find('^');
  if (caret != std::string::npos) {
    const double base = std::stod(text.substr(0, caret));
    const double e = std::stod(text.substr(caret + 1));
    return static_cast<u64>(std::llround(std::pow(base, e)));
  }
  std::size_t used = 0;
  const double v = std::stod(text, &used);
  std::string suffix = text.substr(used);
  double mul = 1;
  if (suffix == "K" || suffix == "KiB") mul = 1024.0;
  else if (suffix == "M" || suffix == "MiB") mul = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GiB") mul = 1024.0 * 1024 * 1024;
  else if (suffix == "KB") mul = 1e3;
  else if (suffix == "MB") mul = 1e6;
  else if (suffix == "GB") mul = 1e9;
  else if (!suffix.empty()) {
    std::fprintf(stderr, "warpkv-ceiling: bad size '%s'\n%s", text.c_str(), usage);
    std::exit(1);
  }
  return static_cast<u64>(v * mul);
}

std::vector<int> int_list(const std::string& s) {
  std::vector<int> v;
  for (const auto& x : split(s)) v.push_back(std::stoi(x));
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "warpkv-ceiling: %s needs a value\n%s", a.c_str(), usage);
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--bytes") o.bytes = parse_size(value());
    else if (a == "--accesses") o.accesses = parse_size(value());
    else if (a == "--repeats") o.repeats = std::stoi(value());
    else if (a == "--warmup") o.warmup = std::stoi(value());
    else if (a == "--block") o.block = std::stoi(value());
    else if (a == "--seed") o.seed = std::stoull(value());
    else if (a == "--out") o.out = value();
    else if (a == "--ops") o.ops = split(value());
    else if (a == "--access-bytes") o.access_bytes = int_list(value());
    else if (a == "--lanes") o.lanes = int_list(value());
    else if (a == "--ilp") o.ilp = int_list(value());
    else if (a == "--loads") o.loads = split(value());
    else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "warpkv-ceiling: unknown argument %s\n%s", a.c_str(), usage);
      std::exit(1);
    }
  }
  o.bytes = o.bytes / 256 * 256;
  if (o.repeats < 1 || o.warmup < 0 || o.block < 32 || o.block > 1024 || o.block % 32 != 0 || o.bytes < 4096 ||
      o.accesses == 0) {
    std::fprintf(stderr, "warpkv-ceiling: bad arguments\n%s", usage);
    std::exit(1);
  }
  return o;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
      o += b;
    } else {
      o += c;
    }
  }
  return o + "\"";
}
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

/// One JSON object, fields in insertion order.
class record {
 public:
  record& str(const std::string& k, const std::string& v) { return add(k, json_string(v)); }
  record& num(const std::string& k, double v) { return add(k, json_number(v)); }
  record& integer(const std::string& k, long long v) { return add(k, std::to_string(v)); }
  record& list(const std::string& k, const std::vector<double>& v) {
    std::string l = "[";
    for (std::size_t j = 0; j < v.size(); ++j) l += (j ? "," : "") + json_number(v[j]);
    return add(k, l + "]");
  }
  [[nodiscard]] std::string text() const { return "{" + body_ + "}"; }

 private:
  record& add(const std::string& k, const std::string& v) {
    body_ += (body_.empty() ? "" : ",") + json_string(k) + ":" + v;
    return *this;
  }
  std::string body_;
};

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

struct device_info {
  std::string name, cc;
  int sms = 0, driver = -1, runtime = -1;
  long long l2 = 0, mem_clock_khz = 0, bus_bits = 0;
};

device_info describe() {
  device_info d;
  int dev = 0;
  CEIL_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CEIL_CHECK(cudaGetDeviceProperties(&prop, dev));
  d.name = prop.name;
  d.cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  d.sms = prop.multiProcessorCount;
  d.l2 = prop.l2CacheSize;
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) == cudaSuccess) d.mem_clock_khz = v;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess) d.bus_bits = v;
  (void)cudaGetLastError();
  CEIL_CHECK(cudaDriverGetVersion(&d.driver));
  CEIL_CHECK(cudaRuntimeGetVersion(&d.runtime));
  return d;
}

class bench {
 public:
  explicit bench(options o) : o_(std::move(o)), dev_(describe()) {
    CEIL_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CEIL_CHECK(cudaEventCreate(&start_));
    CEIL_CHECK(cudaEventCreate(&stop_));
    CEIL_CHECK(cudaMalloc(&buf_, o_.bytes));
    CEIL_CHECK(cudaMalloc(&sink_, sizeof(u64)));
    if (static_cast<double>(o_.bytes) < 8.0 * static_cast<double>(dev_.l2))
      std::fprintf(stderr, "warpkv-ceiling: WARNING: the buffer (%llu bytes) is less than 8x the L2 (%lld bytes)\n",
                   static_cast<unsigned long long>(o_.bytes), dev_.l2);
    std::fprintf(stderr, "warpkv-ceiling: %s (cc %s, %d SMs, L2 %lld MiB), buffer %.2f GiB, %llu accesses per run\n",
                 dev_.name.c_str(), dev_.cc.c_str(), dev_.sms, dev_.l2 >> 20, static_cast<double>(o_.bytes) / (1u << 30),
                 static_cast<unsigned long long>(o_.accesses));
  }
  ~bench() {
    (void)cudaFree(buf_);
    (void)cudaFree(sink_);
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
    (void)cudaStreamDestroy(stream_);
  }
  bench(const bench&) = delete;
  bench& operator=(const bench&) = delete;

  void run() {
    if (has(o_.ops, "read")) {
      fill();
      for (const std::string& load : o_.loads)
        for (const int b : o_.access_bytes)
          for (const int l : o_.lanes)
            for (const int k : o_.ilp) read_row(b, l, k, load);
    }
    if (has(o_.ops, "cas")) {
      cas_row<u32>();
      cas_row<u64>();
    }
    if (has(o_.ops, "store")) {
      fill();
      store_row<u32>();
      store_row<u64>();
    }
    if (has(o_.ops, "seq")) {
      fill();
      const u64 n = o_.bytes / 16;
      const auto ms = measure([] {}, [&] { sequential_read_kernel<<<grid_stride_blocks(), o_.block, 0, stream_>>>(
                                          reinterpret_cast<const uint4*>(buf_), n, o_.seed, sink_); });
      emit(base("sequential_read").integer("access_bytes", 16).integer("lanes", 1).integer("ilp", 1).str("load", "plain"),
           "sequential_read 16 B loads", ms, n, 16, o_.bytes);
    }
    if (has(o_.ops, "copy")) {
      const u64 half = o_.bytes / 2 / 16;
      const auto ms = measure([] {}, [&] {
        copy_kernel<<<grid_stride_blocks(), o_.block, 0, stream_>>>(reinterpret_cast<const uint4*>(buf_),
                                                                     reinterpret_cast<uint4*>(buf_) + half, half);
      });
      // gbs: bytes read + bytes written
      emit(base("copy").integer("access_bytes", 16).integer("lanes", 1).integer("ilp", 1).str("load", "plain")
               .integer("bytes_copied", static_cast<long long>(half * 16)),
           "copy (GB/s: read + written)", ms, half, 32, 2 * half * 16);
    }
  }

 private:
  static constexpr int sector = 32;

  unsigned grid_stride_blocks() const { return static_cast<unsigned>(dev_.sms) * (2048u / static_cast<unsigned>(o_.block)); }
  unsigned blocks_for(u64 threads) const {
    const u64 b = (threads + static_cast<u64>(o_.block) - 1) / static_cast<u64>(o_.block);
    if (b > 0x7fffffffull) {
      std::fprintf(stderr, "warpkv-ceiling: too many accesses for one launch\n");
      std::exit(1);
    }
    return static_cast<unsigned>(b);
  }

  void fill() {
    fill_kernel<<<grid_stride_blocks(), o_.block, 0, stream_>>>(reinterpret_cast<u64*>(buf_), o_.bytes / 8, o_.seed);
    CEIL_CHECK(cudaStreamSynchronize(stream_));
    CEIL_CHECK(cudaGetLastError());
  }

  template <class Setup, class Body>
  std::vector<double> measure(Setup&& setup, Body&& body) {
    std::vector<double> out;
    for (int r = 0; r < o_.warmup + o_.repeats; ++r) {
      setup();
      CEIL_CHECK(cudaStreamSynchronize(stream_));
      CEIL_CHECK(cudaEventRecord(start_, stream_));
      body();
      CEIL_CHECK(cudaEventRecord(stop_, stream_));
      CEIL_CHECK(cudaEventSynchronize(stop_));
      CEIL_CHECK(cudaGetLastError());
      float ms = 0;
      CEIL_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      if (r >= o_.warmup) out.push_back(static_cast<double>(ms));
    }
    return out;
  }

  template <int B, int L, int K, load_kind LK>
  void launch_read(u64 groups) {
    random_read_kernel<B, L, K, LK><<<blocks_for(groups * L), o_.block, 0, stream_>>>(buf_, o_.bytes / B, groups, o_.seed, sink_);
  }
  template <int B, int L, load_kind LK>
  bool dispatch_ilp(int k, u64 groups) {
    if (k == 1) {
      launch_read<B, L, 1, LK>(groups);
      return true;
    }
    if (k == 4) {
      launch_read<B, L, 4, LK>(groups);
      return true;
    }
    return false;
  }
  template <int B, load_kind LK>
  bool dispatch_lanes(int l, int k, u64 groups) {
    if (l == 1) return dispatch_ilp<B, 1, LK>(k, groups);
    if constexpr (B / 4 >= 4) {
      if (l == 4) return dispatch_ilp<B, 4, LK>(k, groups);
    }
    if constexpr (B / 8 >= 4) {
      if (l == 8) return dispatch_ilp<B, 8, LK>(k, groups);
    }
    return false;
  }
  template <load_kind LK>
  bool dispatch_bytes(int b, int l, int k, u64 groups) {
    switch (b) {
      case 8: return dispatch_lanes<8, LK>(l, k, groups);
      case 16: return dispatch_lanes<16, LK>(l, k, groups);
      case 32: return dispatch_lanes<32, LK>(l, k, groups);
      case 64: return dispatch_lanes<64, LK>(l, k, groups);
      case 128: return dispatch_lanes<128, LK>(l, k, groups);
      default: return false;
    }
  }

  void read_row(int b, int l, int k, const std::string& load) {
    if (load != "plain" && load != "nc" && load != "relaxed") {
      std::fprintf(stderr, "warpkv-ceiling: unknown load kind %s (plain, nc, relaxed)\n", load.c_str());
      std::exit(1);
    }
    const u64 groups = std::max<u64>(1, o_.accesses / static_cast<u64>(k));
    const u64 accesses = groups * static_cast<u64>(k);
    // The built combinations: 4, 8 or a multiple of 16 bytes per lane.
    const bool built = b % l == 0 && b / l >= 4 && (k == 1 || k == 4) &&
                       (b == 8 || b == 16 || b == 32 || b == 64 || b == 128) && (l == 1 || l == 4 || l == 8);
    if (!built) {
      std::fprintf(stderr, "  skipped: random_read %d B by %d lanes, ilp %d (fewer than 4 bytes per lane or not built)\n", b, l, k);
      return;
    }
    const auto ms = measure([] {}, [&] {
      const bool ok = load == "relaxed" ? dispatch_bytes<load_kind::relaxed>(b, l, k, groups)
                      : load == "nc"    ? dispatch_bytes<load_kind::nc>(b, l, k, groups)
                                        : dispatch_bytes<load_kind::plain>(b, l, k, groups);
      if (!ok) {
        std::fprintf(stderr, "warpkv-ceiling: internal: random_read %d/%d/%d not dispatched\n", b, l, k);
        std::exit(2);
      }
    });
    emit(base("random_read").integer("access_bytes", b).integer("lanes", l).integer("bytes_per_lane", b / l)
             .integer("ilp", k).str("load", load),
         "random_read " + std::to_string(b) + " B by " + std::to_string(l) + " lanes, ilp " + std::to_string(k) + ", " + load,
         ms, accesses, b, accesses * static_cast<u64>(b));
  }

  template <class T>
  void cas_row() {
    const auto ms = measure([&] { CEIL_CHECK(cudaMemsetAsync(buf_, 0, o_.bytes, stream_)); }, [&] {
      random_cas_kernel<T><<<blocks_for(o_.accesses), o_.block, 0, stream_>>>(buf_, o_.bytes / sizeof(T), o_.accesses, o_.seed, sink_);
    });
    emit(base("random_cas").integer("access_bytes", sizeof(T)).integer("lanes", 1).integer("ilp", 1)
             .str("memory_order", "relaxed").str("scope", "device").str("initial", "zero-filled"),
         "random_cas " + std::to_string(sizeof(T)) + " B, relaxed, device scope", ms, o_.accesses, sizeof(T),
         o_.accesses * sizeof(T));
  }

  template <class T>
  void store_row() {
    const auto ms = measure([] {}, [&] {
      random_store_kernel<T><<<blocks_for(o_.accesses), o_.block, 0, stream_>>>(buf_, o_.bytes / sizeof(T), o_.accesses, o_.seed);
    });
    emit(base("random_store").integer("access_bytes", sizeof(T)).integer("lanes", 1).integer("ilp", 1),
         "random_store " + std::to_string(sizeof(T)) + " B", ms, o_.accesses, sizeof(T), o_.accesses * sizeof(T));
  }

  record base(const std::string& operation) const {
    record r;
    r.str("tool", "warpkv-ceiling").integer("schema", 1).str("workload", "ceiling").str("operation", operation);
    return r;
  }

  /// Completes and writes a row: `accesses` accesses of `bytes_each` useful bytes (`useful_bytes` in all).
  void emit(record r, const std::string& label, std::vector<double> ms, u64 accesses, u64 bytes_each, u64 useful_bytes) {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    const double best = sorted.front();
    const auto per_s = [](double count, double t_ms) { return t_ms > 0 ? count / (t_ms * 1e-3) : 0.0; };
    const u64 sectors_each = (bytes_each + sector - 1) / sector;
    const bool random = label.rfind("random_", 0) == 0;
    r.integer("accesses", static_cast<long long>(accesses)).integer("buffer_bytes", static_cast<long long>(o_.bytes));
    r.integer("block", o_.block);
    r.num("median_ms", median).num("min_ms", best).num("max_ms", sorted.back());
    r.num("gops", per_s(static_cast<double>(accesses), median) / 1e9);
    r.num("gops_best", per_s(static_cast<double>(accesses), best) / 1e9);
    r.num("gbs", per_s(static_cast<double>(useful_bytes), median) / 1e9);
    r.num("gbs_best", per_s(static_cast<double>(useful_bytes), best) / 1e9);
    if (random) {
      r.integer("sectors_per_access", static_cast<long long>(sectors_each));
      r.num("sector_gbs", per_s(static_cast<double>(accesses * sectors_each * sector), median) / 1e9);
    }
    r.str("device", dev_.name).str("compute_capability", dev_.cc).integer("sm_count", dev_.sms).integer("l2_bytes", dev_.l2);
    r.integer("memory_clock_khz", dev_.mem_clock_khz).integer("memory_bus_bits", dev_.bus_bits);
    r.integer("driver_version", dev_.driver).integer("runtime_version", dev_.runtime);
    r.str("timing", "cuda-events").integer("warmup", o_.warmup).integer("repeats", o_.repeats);
    r.integer("seed", static_cast<long long>(o_.seed));
    const char* env_commit = std::getenv("WARPKV_COMMIT");
    r.str("commit", env_commit != nullptr && *env_commit != '\0' ? env_commit : WARPKV_CEILING_COMMIT);
    r.str("command", o_.command).str("timestamp", utc_timestamp()).list("samples_ms", ms);
    const std::string line = r.text();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (!o_.out.empty()) {
      FILE* f = std::fopen(o_.out.c_str(), "a");
      if (f == nullptr) {
        std::fprintf(stderr, "warpkv-ceiling: cannot open %s\n", o_.out.c_str());
        std::exit(1);
      }
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
    std::fprintf(stderr, "  %-44s %9.3f G accesses/s %9.1f GB/s\n", label.c_str(),
                 per_s(static_cast<double>(accesses), median) / 1e9, per_s(static_cast<double>(useful_bytes), median) / 1e9);
  }

  options o_;
  device_info dev_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  unsigned char* buf_ = nullptr;
  u64* sink_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "warpkv-ceiling: no CUDA device\n");
    return 1;
  }
  bench b(o);
  b.run();
  return 0;
}
