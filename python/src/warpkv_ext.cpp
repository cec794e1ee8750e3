// warpkv._ext: the nanobind module under the Python package (python/warpkv/__init__.py wraps it).
//
// It binds only the maps' and the cache's public host API: the pointer overloads of the bulk
// calls (insert, insert_or_assign, find, contains, erase, execute, retrieve_all), kv_cache's
// execute_resident (with the score policies' scores), its span batches (for eviction reports)
// and accum_or_assign (both forms, float16/32/64 rows), and the whole-table calls. Arrays come
// in as anything nb::ndarray accepts (DLPack: PyTorch, CuPy, JAX; the buffer protocol: NumPy)
// or, on the device, anything exporting __cuda_array_interface__ (Numba); they are used in
// place: no copies, except the cache's rows when value_bytes is not a multiple of 8 (its stride).
//
// Maps are instantiated per storage width only (keys of 4 or 8 bytes, values of 4 or 8 bytes):
// a signed key dtype is the unsigned map of its width with the signed type's sentinels (those of
// the C++ map of that type), a float value is its bits. 12 map instantiations and five cache
// types: by_config and the four score policies' designs.
//
// Built by nvcc (WARPKV_CUDA=ON), the maps run on the GPU when one is visible; otherwise this is
// the host backend (host threads that emulate warps), which takes NumPy arrays.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "warpkv/cache/kv_cache.hpp"
#include "warpkv/core/stream_order.hpp"
#include "warpkv/cuckoo/cuckoo_map.hpp"
#include "warpkv/hopscotch/hopscotch_map.hpp"
#include "warpkv/open_addressing/linear_map.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ---- arrays ----------------------------------------------------------------------------------

constexpr int dev_cpu = 1, dev_cuda = 2, dev_cuda_host = 3, dev_cuda_managed = 13;  // DLPack device types

std::string dtype_name(char kind, int bits) {
  switch (kind) {
    case 'i': return "int" + std::to_string(bits);
    case 'u': return "uint" + std::to_string(bits);
    case 'f': return "float" + std::to_string(bits);
    case 'b': return "bool";
    case 'c': return "complex" + std::to_string(bits);
    default: return "an unsupported dtype";
  }
}

std::string device_name(int type, int id) {
  switch (type) {
    case dev_cpu: return "cpu";
    case dev_cuda: return "cuda:" + std::to_string(id);
    case dev_cuda_host: return "cuda_host (pinned cpu)";
    case dev_cuda_managed: return "cuda_managed";
    default: return "device type " + std::to_string(type);
  }
}

[[noreturn]] void type_fail(const char* arg, const std::string& why) {
  throw nb::type_error(("warpkv: argument '" + std::string(arg) + "': " + why).c_str());
}
[[noreturn]] void value_fail(const char* arg, const std::string& why) {
  throw nb::value_error(("warpkv: argument '" + std::string(arg) + "': " + why).c_str());
}

/// One array argument, used in place.
struct array_view {
  void* data = nullptr;
  std::size_t n = 0;    ///< rows (elements of a 1-D array)
  std::size_t row = 1;  ///< elements per row (shape[1] of a 2-D array)
  char kind = '?';      ///< 'i', 'u', 'f', 'b', ...
  int bits = 0;
  int device_type = dev_cpu;
  int device_id = 0;
  std::uint64_t cai_stream = 0;  ///< __cuda_array_interface__'s producer stream (0: none)
  [[nodiscard]] std::string dtype() const { return dtype_name(kind, bits); }
  [[nodiscard]] std::size_t itemsize() const { return static_cast<std::size_t>(bits) / 8; }
};

char kind_of(const nb::dlpack::dtype& t) {
  switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Int: return 'i';
    case nb::dlpack::dtype_code::UInt: return 'u';
    case nb::dlpack::dtype_code::Float: return 'f';
    case nb::dlpack::dtype_code::Bool: return 'b';
    case nb::dlpack::dtype_code::Complex: return 'c';
    default: return '?';
  }
}

#if WARPKV_HAS_CUDA
int pointer_device(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}
#endif

/// From __cuda_array_interface__ (version 2 or 3): Numba and other producers without DLPack.
bool from_cuda_array_interface(nb::handle obj, const char* arg, int max_ndim, array_view& v) {
  if (!nb::hasattr(obj, "__cuda_array_interface__")) return false;
  nb::dict d = nb::cast<nb::dict>(obj.attr("__cuda_array_interface__"));
  nb::tuple shape = nb::cast<nb::tuple>(d["shape"]);
  const std::string ts = nb::cast<std::string>(d["typestr"]);
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  if (ts.size() < 3) type_fail(arg, "unreadable __cuda_array_interface__ typestr '" + ts + "'");
  v.kind = ts[1] == 'b' && ts[2] == '1' ? 'b' : ts[1];
  v.bits = std::stoi(ts.substr(2)) * 8;
  if (ts[0] == '>') type_fail(arg, "big-endian arrays are not supported");
  const std::size_t ndim = nb::len(shape);
  if (ndim == 0 || static_cast<int>(ndim) > max_ndim)
    value_fail(arg, "expected a " + std::string(max_ndim == 1 ? "1-D" : "1-D or 2-D") + " array, got " +
                        std::to_string(ndim) + " dimensions");
  v.n = nb::cast<std::size_t>(shape[0]);
  v.row = ndim == 2 ? nb::cast<std::size_t>(shape[1]) : 1;
  if (d.contains("strides") && !d["strides"].is_none()) {
    nb::tuple strides = nb::cast<nb::tuple>(d["strides"]);
    const std::size_t item = v.itemsize();
    const bool row_ok = ndim == 1 || v.row <= 1 || nb::cast<std::size_t>(strides[1]) == item;
    const bool col_ok = v.n <= 1 || nb::cast<std::size_t>(strides[0]) == v.row * item;
    if (!row_ok || !col_ok) value_fail(arg, "must be contiguous (C order); make a contiguous copy first");
  }
  v.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(data[0]));
  if (d.contains("stream") && !d["stream"].is_none()) v.cai_stream = nb::cast<std::uint64_t>(d["stream"]);
  v.device_type = dev_cuda;
#if WARPKV_HAS_CUDA
  const int dev = v.data != nullptr ? pointer_device(v.data) : -1;
  v.device_id = dev < 0 ? 0 : dev;
#endif
  return true;
}

/// Reads `obj` as an array of at most `max_ndim` dimensions, C-contiguous; `writable` for outputs.
array_view view_of(nb::handle obj, const char* arg, bool writable, int max_ndim = 1) {
  if (obj.is_none()) type_fail(arg, "is required (got None)");
  array_view v;
  nb::ndarray<> rw;
  nb::ndarray<nb::ro> ro;
  const bool got_rw = nb::try_cast(obj, rw, false);
  const bool got = got_rw || nb::try_cast(obj, ro, false);
  if (!got) {
    if (from_cuda_array_interface(obj, arg, max_ndim, v)) return v;
    const std::string type = nb::cast<std::string>(nb::str(obj.type().attr("__name__")));
    if (nb::hasattr(obj, "dtype"))
      type_fail(arg, "a " + type + " of dtype " + nb::cast<std::string>(obj.attr("dtype").attr("__str__")()) +
                         " cannot be shared (object, big-endian or otherwise unsupported dtype); convert it first");
    type_fail(arg, "expected an array (NumPy, PyTorch, CuPy or anything exporting DLPack or "
                   "__cuda_array_interface__), got " + type);
  }
  if (writable && !got_rw) value_fail(arg, "is read-only but receives results");
  const std::size_t ndim = got_rw ? rw.ndim() : ro.ndim();
  auto shape = [&](std::size_t i) { return static_cast<std::size_t>(got_rw ? rw.shape(i) : ro.shape(i)); };
  auto stride = [&](std::size_t i) { return static_cast<std::int64_t>(got_rw ? rw.stride(i) : ro.stride(i)); };
  const nb::dlpack::dtype t = got_rw ? rw.dtype() : ro.dtype();
  v.kind = kind_of(t);
  v.bits = t.bits * t.lanes;
  if (t.lanes != 1) v.kind = '?';
  if (ndim == 0 || static_cast<int>(ndim) > max_ndim)
    value_fail(arg, "expected a " + std::string(max_ndim == 1 ? "1-D" : "1-D or 2-D") + " array, got " +
                        std::to_string(ndim) + " dimensions");
  v.n = shape(0);
  v.row = ndim == 2 ? shape(1) : 1;
  const bool empty = v.n * v.row == 0;  // any strides will do
  const bool row_ok = empty || ndim == 1 || v.row <= 1 || stride(1) == 1;
  const bool col_ok = empty || v.n <= 1 || stride(0) == static_cast<std::int64_t>(v.row);
  if (!row_ok || !col_ok) value_fail(arg, "must be contiguous (C order); make a contiguous copy first");
  v.data = got_rw ? rw.data() : const_cast<void*>(ro.data());
  v.device_type = got_rw ? rw.device_type() : ro.device_type();
  v.device_id = got_rw ? rw.device_id() : ro.device_id();
  return v;
}

void check_dtype(const array_view& v, const char* arg, char kind, int bits, const char* what) {
  if (v.kind != kind || v.bits != bits)
    type_fail(arg, "expected " + dtype_name(kind, bits) + " " + what + ", got " + v.dtype());
}
void check_length(const array_view& v, const char* arg, std::size_t n, const char* of = "keys") {
  if (v.n != n)
    value_fail(arg, "has " + std::to_string(v.n) + " elements but " + of + " has " + std::to_string(n));
}
// ---- backends, streams -----------------------------------------------------------------------

warpkv::execution make_execution(const std::string& backend, [[maybe_unused]] std::uint64_t stream, unsigned host_tiles) {
  if (backend == "host") return warpkv::execution::host(host_tiles);
  if (backend == "cuda" || backend == "gpu") {
#if WARPKV_HAS_CUDA
    return warpkv::execution::gpu(reinterpret_cast<warpkv::stream_t>(stream));
#else
    throw warpkv::error(warpkv::errc::unsupported,
                        "warpkv: backend 'cuda' requested but this build of the extension has the host backend only "
                        "(reinstall with WARPKV_CUDA=ON where nvcc is found)");
#endif
  }
  if (backend == "auto") {
    warpkv::execution ex = warpkv::execution::automatic();
    if (ex.where == warpkv::backend::host) ex.host_tiles = host_tiles;
#if WARPKV_HAS_CUDA
    else ex.stream = reinterpret_cast<warpkv::stream_t>(stream);
#endif
    return ex;
  }
  value_fail("backend", "must be 'auto', 'cuda' or 'host', got '" + backend + "'");
}

int current_device([[maybe_unused]] const warpkv::execution& ex) {
  int dev = 0;
#if WARPKV_HAS_CUDA
  if (ex.where == warpkv::backend::cuda) WARPKV_CUDA_CHECK(cudaGetDevice(&dev));
#endif
  return dev;
}

/// Where a structure runs: its execution and (cuda) the device it was made on.
struct placement {
  warpkv::execution ex;
  int device = 0;
  [[nodiscard]] bool on_cuda() const { return ex.where == warpkv::backend::cuda; }
  [[nodiscard]] std::string name() const { return on_cuda() ? "cuda:" + std::to_string(device) : "host"; }

  /// An array argument of a fixed dtype and length in this structure's memory, checked.
  [[nodiscard]] array_view typed(nb::handle h, const char* arg, bool writable, char kind, int bits, const char* what,
                                 std::size_t n) const {
    array_view v = view_of(h, arg, writable);
    check_dtype(v, arg, kind, bits, what);
    check_length(v, arg, n);
    check(v, arg);
    return v;
  }

  /// Throws ValueError unless `v` is in memory this structure's backend reads.
  void check(const array_view& v, const char* arg) const {
    if (v.n == 0) return;
    if (on_cuda()) {
      const bool ok = (v.device_type == dev_cuda && v.device_id == device) || v.device_type == dev_cuda_managed;
      if (!ok)
        value_fail(arg, "is on " + device_name(v.device_type, v.device_id) + " but this structure runs on " + name() +
                            "; move it there first (e.g. tensor.to('" + name() + "'))");
    } else if (v.device_type != dev_cpu && v.device_type != dev_cuda_host) {
      value_fail(arg, "is on " + device_name(v.device_type, v.device_id) +
                          " but this structure runs on the host backend; pass a NumPy (cpu) array");
    }
  }
};

/// A call's stream order on the cuda backend: the structure's stream waits for `user` (the
/// caller's stream) and for producer streams of __cuda_array_interface__ arrays before the call,
/// and `user` waits for the structure's stream after it. No-op on the host backend.
class stream_order {
 public:
  stream_order(const placement& p, std::optional<std::uint64_t> user, std::initializer_list<const array_view*> arrays) {
#if WARPKV_HAS_CUDA
    if (!p.on_cuda()) return;
    own_ = p.ex.stream;
    for (const array_view* a : arrays)
      if (a != nullptr && a->cai_stream != 0) wait(own_, reinterpret_cast<cudaStream_t>(a->cai_stream));
    if (user && reinterpret_cast<cudaStream_t>(*user) != own_) {
      user_ = reinterpret_cast<cudaStream_t>(*user);
      active_ = true;
      wait(own_, user_);
    }
#else
    (void)p, (void)user, (void)arrays;
#endif
  }
  /// Call after the work was queued (not on an error path).
  void done() {
#if WARPKV_HAS_CUDA
    if (active_) wait(user_, own_);
#endif
  }

 private:
#if WARPKV_HAS_CUDA
  static void wait(cudaStream_t waiter, cudaStream_t on) { warpkv::detail::stream_wait(waiter, on); }
  cudaStream_t own_ = nullptr, user_ = nullptr;
  bool active_ = false;
#endif
};

std::optional<std::uint64_t> stream_arg(nb::handle s) {
  if (s.is_none()) return std::nullopt;
  std::uint64_t h = 0;
  if (!nb::try_cast(s, h)) type_fail("stream", "expected a non-negative int handle (a cudaStream_t)");
  return h;
}

/// Copies `rows` rows of `bytes` bytes between pitched buffers of the backend.
void copy_rows([[maybe_unused]] const placement& p, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t bytes, std::size_t rows) {
  if (rows == 0) return;
#if WARPKV_HAS_CUDA
  if (p.on_cuda()) {
    WARPKV_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, bytes, rows, cudaMemcpyDefault, p.ex.stream));
    return;
  }
#endif
  for (std::size_t i = 0; i < rows; ++i)
    std::memcpy(static_cast<char*>(dst) + i * dst_pitch, static_cast<const char*>(src) + i * src_pitch, bytes);
}

/// Zeroes `bytes` bytes of the backend's memory (queued on the structure's stream).
void zero_bytes([[maybe_unused]] const placement& p, void* dst, std::size_t bytes) {
  if (bytes == 0) return;
#if WARPKV_HAS_CUDA
  if (p.on_cuda()) {
    WARPKV_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, p.ex.stream));
    return;
  }
#endif
  std::memset(dst, 0, bytes);
}

// ---- dtypes ----------------------------------------------------------------------------------

struct key_spec {
  char kind;  // 'i' or 'u'
  int bits;   // 32 or 64
  [[nodiscard]] std::string name() const { return dtype_name(kind, bits); }
};
struct value_spec {
  char kind;  // 'i', 'u' or 'f'
  int bits;   // 32 or 64
  [[nodiscard]] std::string name() const { return dtype_name(kind, bits); }
};

key_spec parse_key_dtype(const std::string& s) {
  if (s == "int32") return {'i', 32};
  if (s == "uint32") return {'u', 32};
  if (s == "int64") return {'i', 64};
  if (s == "uint64") return {'u', 64};
  type_fail("key_dtype", "must be int32, uint32, int64 or uint64, got " + s);
}
value_spec parse_value_dtype(const std::string& s) {
  for (const char* k : {"int", "uint", "float"})
    for (int b : {32, 64})
      if (s == std::string(k) + std::to_string(b)) return {k[0], b};
  type_fail("value_dtype", "must be int32, uint32, int64, uint64, float32 or float64, got " + s);
}

void check_mask(const array_view& v, const char* arg) {
  if (!(v.kind == 'b' && v.bits == 8) && !(v.kind == 'u' && v.bits == 8))
    type_fail(arg, "expected a bool (or uint8) array, got " + v.dtype());
}

// ---- maps ------------------------------------------------------------------------------------

/// The bulk API of one map instantiation, type-erased (keys and values as their bits).
struct map_api {
  virtual ~map_api() = default;
  virtual void insert(const void* k, const void* v, std::size_t n, std::uint8_t* st, bool assign) = 0;
  virtual void find(const void* k, std::size_t n, void* v, std::uint8_t* st) = 0;
  virtual void contains(const void* k, std::size_t n, bool* out) = 0;
  virtual void erase(const void* k, std::size_t n, std::uint8_t* st) = 0;
  virtual void execute(const std::uint8_t* ops, const void* k, const void* v, std::size_t n, std::uint8_t* st,
                       void* out) = 0;
  virtual std::size_t retrieve_all(void* k, void* v) const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
  [[nodiscard]] virtual std::size_t capacity() const = 0;
  virtual void clear() = 0;
  virtual void reserve(std::size_t n) = 0;
  virtual void rehash(std::size_t n) = 0;
  [[nodiscard]] virtual std::size_t rehash_count() const = 0;
  [[nodiscard]] virtual std::string validate() const = 0;
  [[nodiscard]] virtual std::uint64_t empty_key_bits() const = 0;
};

template <class Map>
struct map_impl final : map_api {
  using K = typename Map::key_type;
  using V = typename Map::mapped_type;
  template <class... A>
  explicit map_impl(A&&... a) : m(std::forward<A>(a)...) {}
  static const K* keys(const void* p) { return static_cast<const K*>(p); }
  static warpkv::status* st(std::uint8_t* p) { return reinterpret_cast<warpkv::status*>(p); }
  void insert(const void* k, const void* v, std::size_t n, std::uint8_t* s, bool assign) override {
    if (assign) m.insert_or_assign(keys(k), static_cast<const V*>(v), n, st(s));
    else m.insert(keys(k), static_cast<const V*>(v), n, st(s));
  }
  void find(const void* k, std::size_t n, void* v, std::uint8_t* s) override {
    m.find(keys(k), n, static_cast<V*>(v), st(s));
  }
  void contains(const void* k, std::size_t n, bool* out) override { m.contains(keys(k), n, out); }
  void erase(const void* k, std::size_t n, std::uint8_t* s) override { m.erase(keys(k), n, st(s)); }
  void execute(const std::uint8_t* ops, const void* k, const void* v, std::size_t n, std::uint8_t* s,
               void* out) override {
    m.execute(reinterpret_cast<const warpkv::op*>(ops), keys(k), static_cast<const V*>(v), n, st(s),
              static_cast<V*>(out));
  }
  std::size_t retrieve_all(void* k, void* v) const override {
    return m.retrieve_all(static_cast<K*>(k), static_cast<V*>(v));
  }
  [[nodiscard]] std::size_t size() const override { return m.size(); }
  [[nodiscard]] std::size_t capacity() const override { return m.capacity(); }
  void clear() override { m.clear(); }
  void reserve(std::size_t n) override { m.reserve(n); }
  void rehash(std::size_t n) override { m.rehash(n); }
  [[nodiscard]] std::size_t rehash_count() const override { return m.rehash_count(); }
  [[nodiscard]] std::string validate() const override { return m.validate(); }
  [[nodiscard]] std::uint64_t empty_key_bits() const override { return warpkv::to_bits(m.empty_key()); }
  Map m;
};

/// Reads config[name] as T, or `fallback`; `used` collects the names read.
template <class T>
T config_get(const nb::dict& cfg, const char* name, T fallback, std::vector<std::string>& used) {
  used.emplace_back(name);
  if (!cfg.contains(name) || cfg[name].is_none()) return fallback;
  try {
    return nb::cast<T>(cfg[name]);
  } catch (const nb::cast_error&) {
    type_fail(name, "has the wrong type (" + nb::cast<std::string>(nb::str(cfg[name].type().attr("__name__"))) + ")");
  }
}
void reject_unknown(const nb::dict& cfg, const std::vector<std::string>& used, const std::string& kind) {
  for (auto [k, v] : cfg) {
    const std::string name = nb::cast<std::string>(k);
    bool known = false;
    for (const auto& u : used) known = known || u == name;
    if (!known) type_fail(name.c_str(), "is not an option of " + kind);
  }
}

/// The sentinels of the C++ map of the signed or unsigned key type, as bits of the unsigned one.
template <class U>
U empty_bits(const key_spec& k) {
  return k.kind == 'i' ? static_cast<U>(std::numeric_limits<std::make_signed_t<U>>::max()) : std::numeric_limits<U>::max();
}

template <class K, class V>
std::unique_ptr<map_api> make_typed(const std::string& kind, std::size_t capacity, const key_spec& ks,
                                    const nb::dict& cfg, const warpkv::execution& ex) {
  std::vector<std::string> used;
  const double mlf = config_get<double>(cfg, "max_load_factor", 0.9, used);
  const std::uint64_t seed = config_get<std::uint64_t>(cfg, "seed", 0, used);
  const bool throw_invalid = config_get<bool>(cfg, "throw_on_invalid_key", false, used);
  const K empty = empty_bits<K>(ks);
  if (kind == "hopscotch") {
    warpkv::hopscotch_config c;
    c.max_load_factor = mlf, c.seed = seed, c.throw_on_invalid_key = throw_invalid;
    c.neighborhood = config_get<unsigned>(cfg, "neighborhood", c.neighborhood, used);
    c.max_probe = config_get<std::size_t>(cfg, "max_probe", c.max_probe, used);
    reject_unknown(cfg, used, "HopscotchMap");
    return std::make_unique<map_impl<warpkv::hopscotch_map<K, V>>>(capacity, c, ex, empty);
  }
  if (kind == "linear") {
    warpkv::open_addressing_config c;
    c.max_load_factor = mlf, c.seed = seed, c.throw_on_invalid_key = throw_invalid;
    c.tombstone_threshold = config_get<double>(cfg, "tombstone_threshold", c.tombstone_threshold, used);
    c.max_probe = config_get<std::size_t>(cfg, "max_probe", c.max_probe, used);
    reject_unknown(cfg, used, "LinearMap");
    return std::make_unique<map_impl<warpkv::linear_map<K, V>>>(capacity, c, ex, empty, static_cast<K>(empty - 1));
  }
  if (kind == "cuckoo") {
    warpkv::cuckoo_config c;
    c.max_load_factor = mlf, c.seed = seed, c.throw_on_invalid_key = throw_invalid;
    c.hash_functions = config_get<unsigned>(cfg, "hash_functions", c.hash_functions, used);
    c.max_chain = config_get<unsigned>(cfg, "max_chain", c.max_chain, used);
    c.eviction_attempts = config_get<unsigned>(cfg, "eviction_attempts", c.eviction_attempts, used);
    reject_unknown(cfg, used, "CuckooMap");
    return std::make_unique<map_impl<warpkv::cuckoo_map<K, V>>>(capacity, c, ex, empty);
  }
  value_fail("kind", "must be 'hopscotch', 'linear' or 'cuckoo', got '" + kind + "'");
}

/// A map of any kind and dtype, with its arguments checked: what the Python classes wrap.
class py_map {
 public:
  py_map(const std::string& kind, std::size_t capacity, const std::string& key_dtype, const std::string& value_dtype,
         const std::string& backend, std::uint64_t stream, unsigned host_tiles, const nb::dict& config)
      : kind_(kind), key_(parse_key_dtype(key_dtype)), value_(parse_value_dtype(value_dtype)) {
    place_.ex = make_execution(backend, stream, host_tiles);
    place_.device = current_device(place_.ex);
    const bool k64 = key_.bits == 64, v64 = value_.bits == 64;
    if (!k64 && !v64) impl_ = make_typed<std::uint32_t, std::uint32_t>(kind, capacity, key_, config, place_.ex);
    if (!k64 && v64) impl_ = make_typed<std::uint32_t, std::uint64_t>(kind, capacity, key_, config, place_.ex);
    if (k64 && !v64) impl_ = make_typed<std::uint64_t, std::uint32_t>(kind, capacity, key_, config, place_.ex);
    if (k64 && v64) impl_ = make_typed<std::uint64_t, std::uint64_t>(kind, capacity, key_, config, place_.ex);
  }

  void insert(nb::handle keys, nb::handle values, nb::handle statuses, nb::handle stream, bool assign) {
    const array_view k = keys_arg(keys), v = values_arg(values, "values", k.n, false),
                     s = status_arg(statuses, k.n);
    run(stream, {&k, &v}, [&] { impl_->insert(k.data, v.data, k.n, u8(s), assign); });
  }
  void find(nb::handle keys, nb::handle values_out, nb::handle statuses, nb::handle stream) {
    const array_view k = keys_arg(keys), v = values_arg(values_out, "out", k.n, true), s = status_arg(statuses, k.n);
    run(stream, {&k}, [&] { impl_->find(k.data, k.n, v.data, u8(s)); });
  }
  void contains(nb::handle keys, nb::handle found_out, nb::handle stream) {
    const array_view k = keys_arg(keys), f = view_of(found_out, "out", true);
    check_mask(f, "out");
    check_length(f, "out", k.n);
    place_.check(f, "out");
    run(stream, {&k}, [&] { impl_->contains(k.data, k.n, static_cast<bool*>(f.data)); });
  }
  void erase(nb::handle keys, nb::handle statuses, nb::handle stream) {
    const array_view k = keys_arg(keys), s = status_arg(statuses, k.n);
    run(stream, {&k}, [&] { impl_->erase(k.data, k.n, u8(s)); });
  }
  void execute(nb::handle ops, nb::handle keys, nb::handle values, nb::handle statuses, nb::handle values_out,
               nb::handle stream) {
    const array_view k = keys_arg(keys), o = place_.typed(ops, "ops", false, 'u', 8, "op codes (warpkv.Op)", k.n);
    const array_view v = values_arg(values, "values", k.n, false), out = values_arg(values_out, "out", k.n, true),
                     s = status_arg(statuses, k.n);
    run(stream, {&k, &o, &v}, [&] { impl_->execute(u8(o), k.data, v.data, k.n, u8(s), out.data); });
  }
  std::size_t retrieve_all(nb::handle keys_out, nb::handle values_out, nb::handle stream) {
    const array_view k = view_of(keys_out, "keys_out", true), v = view_of(values_out, "values_out", true);
    check_dtype(k, "keys_out", key_.kind, key_.bits, "keys");
    check_dtype(v, "values_out", value_.kind, value_.bits, "values");
    place_.check(k, "keys_out");
    place_.check(v, "values_out");
    std::size_t n = 0, need = 0;
    run(stream, {}, [&] {
      need = impl_->size();
      if (k.n >= need && v.n >= need) n = impl_->retrieve_all(k.data, v.data);
    });
    if (k.n < need || v.n < need)
      value_fail(k.n < need ? "keys_out" : "values_out", "needs room for size() = " + std::to_string(need) + " entries");
    return n;
  }

  // under the lock too: another Python thread's batch may be changing them
  [[nodiscard]] std::size_t size() { return locked([&] { return impl_->size(); }); }
  [[nodiscard]] std::size_t capacity() { return locked([&] { return impl_->capacity(); }); }
  void clear() { locked([&] { impl_->clear(); }); }
  void reserve(std::size_t n) { locked([&] { impl_->reserve(n); }); }
  void rehash(std::size_t n) { locked([&] { impl_->rehash(n); }); }
  [[nodiscard]] std::size_t rehash_count() { return locked([&] { return impl_->rehash_count(); }); }
  [[nodiscard]] std::string validate() { return locked([&] { return impl_->validate(); }); }
  [[nodiscard]] std::string key_dtype() const { return key_.name(); }
  [[nodiscard]] std::string value_dtype() const { return value_.name(); }
  [[nodiscard]] std::string device() const { return place_.name(); }
  [[nodiscard]] std::string backend() const { return place_.ex.name(); }
  [[nodiscard]] std::uint64_t empty_key_bits() const { return impl_->empty_key_bits(); }
  [[nodiscard]] std::uint64_t stream() const { return reinterpret_cast<std::uint64_t>(place_.ex.stream); }

 private:
  static std::uint8_t* u8(const array_view& v) { return static_cast<std::uint8_t*>(v.data); }

  array_view keys_arg(nb::handle keys) const {
    array_view k = view_of(keys, "keys", false);
    check_dtype(k, "keys", key_.kind, key_.bits, "keys (the map's key_dtype)");
    place_.check(k, "keys");
    return k;
  }
  array_view values_arg(nb::handle h, const char* arg, std::size_t n, bool out) const {
    array_view v = view_of(h, arg, out);
    check_dtype(v, arg, value_.kind, value_.bits, "values (the map's value_dtype)");
    check_length(v, arg, n);
    place_.check(v, arg);
    return v;
  }
  array_view status_arg(nb::handle h, std::size_t n) const {
    return place_.typed(h, "statuses", true, 'u', 8, "statuses", n);
  }

  template <class F>
  std::invoke_result_t<F> locked(F&& f) {
    nb::gil_scoped_release nogil;
    std::lock_guard<std::mutex> g(mutex_);
    return f();
  }
  template <class F>
  void run(nb::handle stream, std::initializer_list<const array_view*> inputs, F&& f) {
    const std::optional<std::uint64_t> user = stream_arg(stream);
    locked([&] {
      stream_order order(place_, user, inputs);
      f();
      order.done();
    });
  }

  std::string kind_;
  key_spec key_;
  value_spec value_;
  placement place_;
  std::unique_ptr<map_api> impl_;
  std::mutex mutex_;  // one map, one host thread at a time (the bulk API's rule)
};

// ---- the cache -------------------------------------------------------------------------------

// The design comes from the config dict at run time: cache_designs::by_config (its 24 designs:
// eviction lru, random or clock x sync x layout x key_digests), or one of the four score
// policies' designs (cache_designs::optimistic_lfu, ...: optimistic sync, value slab, no
// digests), each one instantiation more. The score policies with the other sync, layout and
// digest choices are not compiled here (another 28 designs' kernels: by_config leaves them out
// for the same reason, cache_design.hpp); the config refuses them by name.
struct cache_entries {
  std::vector<std::uint64_t> keys;
  std::vector<std::byte> values;  ///< keys.size() x value_stride()
  std::vector<std::uint64_t> expires_at, scores;
};
/// The cache calls the module makes, over kv_cache<uint64, 4, 4, Design> of any bound design.
struct cache_api {
  virtual ~cache_api() = default;
  virtual void execute_resident(std::size_t n, const warpkv::cache_op* ops, warpkv::cache_op uniform, const std::uint64_t* keys,
                                const std::uint64_t* in, std::uint64_t* out, warpkv::status* statuses,
                                const std::uint64_t* expires_at, const std::uint64_t* scores) = 0;
  /// The host-span batch that reports evictions: execute (ops not empty), else set, add or get_or_set.
  virtual void run_reporting(std::span<const warpkv::cache_op> ops, warpkv::cache_op uniform, std::span<const std::uint64_t> keys,
                             std::span<const std::byte> in, std::span<std::byte> out, std::span<warpkv::status> statuses,
                             warpkv::cache_evictions<std::uint64_t>& ev, std::span<const std::uint64_t> expires_at) = 0;
  /// accum_or_assign<T> over rows of value_stride() bytes, T the half, float or double of
  /// `element_bits` 16, 32 or 64; flags null: the form without HKV's accum_or_assigns flags.
  virtual void accum_or_assign(int element_bits, std::size_t n, const std::uint64_t* keys, const std::uint64_t* deltas,
                               const bool* flags, warpkv::status* statuses) = 0;
  virtual cache_entries export_entries() const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
  [[nodiscard]] virtual std::size_t capacity() const = 0;
  virtual void clear() = 0;
  virtual void set_time(std::uint64_t t) = 0;
  [[nodiscard]] virtual std::uint64_t time() const = 0;
  virtual void set_global_epoch(std::uint64_t e) = 0;
  [[nodiscard]] virtual std::uint64_t global_epoch() const = 0;
  [[nodiscard]] virtual std::size_t value_bytes() const = 0;
  [[nodiscard]] virtual std::size_t value_stride() const = 0;
};
template <class Design>
struct cache_impl final : cache_api {
  cache_impl(const warpkv::cache_config& c, const warpkv::execution& ex) : cache(c, ex) {}
  void execute_resident(std::size_t n, const warpkv::cache_op* ops, warpkv::cache_op uniform, const std::uint64_t* keys,
                        const std::uint64_t* in, std::uint64_t* out, warpkv::status* statuses, const std::uint64_t* expires_at,
                        const std::uint64_t* scores) override {
    cache.execute_resident(n, ops, uniform, keys, in, out, statuses, expires_at, scores);
  }
  void run_reporting(std::span<const warpkv::cache_op> ops, warpkv::cache_op uniform, std::span<const std::uint64_t> keys,
                     std::span<const std::byte> in, std::span<std::byte> out, std::span<warpkv::status> statuses,
                     warpkv::cache_evictions<std::uint64_t>& ev, std::span<const std::uint64_t> expires_at) override {
    if (!ops.empty()) cache.execute(ops, keys, in, out, statuses, &ev, expires_at);
    else if (uniform == warpkv::cache_op::set) cache.set(keys, in, statuses, &ev, expires_at);
    else if (uniform == warpkv::cache_op::add) cache.add(keys, in, statuses, &ev, expires_at);
    else cache.get_or_set(keys, in, out, statuses, &ev, expires_at);
  }
  void accum_or_assign(int element_bits, std::size_t n, const std::uint64_t* keys, const std::uint64_t* deltas,
                       const bool* flags, warpkv::status* statuses) override {
    if (element_bits == 16) accum<warpkv::half>(n, keys, deltas, flags, statuses);
    else if (element_bits == 32) accum<float>(n, keys, deltas, flags, statuses);
    else accum<double>(n, keys, deltas, flags, statuses);
  }
  template <class T>
  void accum(std::size_t n, const std::uint64_t* keys, const std::uint64_t* deltas, const bool* flags,
             warpkv::status* statuses) {
    if (flags != nullptr) cache.template accum_or_assign<T>(n, keys, deltas, flags, statuses);
    else cache.template accum_or_assign<T>(n, keys, deltas, statuses);
  }
  cache_entries export_entries() const override {
    auto e = cache.export_entries();
    return {std::move(e.keys), std::move(e.values), std::move(e.expires_at), std::move(e.scores)};
  }
  [[nodiscard]] std::size_t size() const override { return cache.size(); }
  [[nodiscard]] std::size_t capacity() const override { return cache.capacity(); }
  void clear() override { cache.clear(); }
  void set_time(std::uint64_t t) override { cache.set_time(t); }
  [[nodiscard]] std::uint64_t time() const override { return cache.time(); }
  void set_global_epoch(std::uint64_t e) override { cache.set_global_epoch(e); }
  [[nodiscard]] std::uint64_t global_epoch() const override { return cache.global_epoch(); }
  [[nodiscard]] std::size_t value_bytes() const override { return cache.value_bytes(); }
  [[nodiscard]] std::size_t value_stride() const override { return cache.value_stride(); }
  warpkv::kv_cache<std::uint64_t, 4, 4, Design> cache;
};

template <class E>
E parse_enum(const std::string& s, const char* arg, std::initializer_list<std::pair<const char*, E>> names) {
  std::string all;
  for (const auto& [n, e] : names) {
    if (s == n) return e;
    all += (all.empty() ? "'" : ", '") + std::string(n) + "'";
  }
  value_fail(arg, "must be one of " + all + ", got '" + s + "'");
}

class py_cache {
 public:
  py_cache(std::size_t capacity, const std::string& value_dtype, std::size_t value_width, const std::string& backend,
           std::uint64_t stream, unsigned host_tiles, const nb::dict& config) {
    if (value_width == 0) value_fail("value_width", "must be at least 1");
    value_kind_ = value_dtype.rfind("uint", 0) == 0 ? 'u' : value_dtype.rfind("int", 0) == 0 ? 'i'
                  : value_dtype.rfind("float", 0) == 0                                     ? 'f'
                                                                                           : '?';
    const std::size_t digits = value_kind_ == 'u' ? 4 : value_kind_ == 'i' ? 3 : 5;
    value_bits_ = value_kind_ == '?' ? 0 : std::atoi(value_dtype.c_str() + digits);
    if (dtype_name(value_kind_, value_bits_) != value_dtype ||
        !(value_bits_ == 8 || value_bits_ == 16 || value_bits_ == 32 || value_bits_ == 64) ||
        (value_kind_ == 'f' && value_bits_ == 8))
      type_fail("value_dtype", "must be an int, uint or float dtype of 1, 2, 4 or 8 bytes, got " + value_dtype);
    width_ = value_width;
    place_.ex = make_execution(backend, stream, host_tiles);
    place_.device = current_device(place_.ex);
    warpkv::cache_config c;
    std::vector<std::string> used;
    c.capacity = capacity;
    c.value_bytes = value_width * static_cast<std::size_t>(value_bits_ / 8);
    c.max_kicks = config_get<std::uint32_t>(config, "max_kicks", c.max_kicks, used);
    c.kick_load_limit = config_get<double>(config, "kick_load_limit", c.kick_load_limit, used);
    c.seed = config_get<std::uint64_t>(config, "seed", c.seed, used);
    using ev = warpkv::cache_eviction_policy;
    c.eviction = parse_enum<ev>(config_get<std::string>(config, "eviction", "lru", used), "eviction",
                                {{"lru", ev::lru},
                                 {"random", ev::random},
                                 {"clock", ev::clock},
                                 {"lfu", ev::lfu},
                                 {"epoch_lru", ev::epoch_lru},
                                 {"epoch_lfu", ev::epoch_lfu},
                                 {"custom", ev::custom}});
    c.sync = parse_enum<warpkv::cache_slot_sync>(config_get<std::string>(config, "sync", "optimistic", used), "sync",
                                                 {{"optimistic", warpkv::cache_slot_sync::optimistic},
                                                  {"rw_lock", warpkv::cache_slot_sync::rw_lock}});
    c.layout = parse_enum<warpkv::cache_layout>(config_get<std::string>(config, "layout", "value_slab", used), "layout",
                                                {{"value_slab", warpkv::cache_layout::value_slab},
                                                 {"inline_values", warpkv::cache_layout::inline_values}});
    c.absorb_sets = config_get<bool>(config, "absorb_sets", false, used);
    c.combine_get_or_set = config_get<bool>(config, "combine_get_or_set", false, used);
    c.key_digests = config_get<bool>(config, "key_digests", false, used);
    reject_unknown(config, used, "KVCache");
    namespace cd = warpkv::cache_designs;
    if (static_cast<unsigned>(c.eviction) <= static_cast<unsigned>(ev::clock)) {
      cache_ = std::make_unique<cache_impl<cd::by_config>>(c, place_.ex);
      return;
    }
    const char* why = "the score policies (lfu, epoch_lru, epoch_lfu, custom) are built with sync 'optimistic', "
                      "layout 'value_slab' and no key_digests only";
    if (c.sync != warpkv::cache_slot_sync::optimistic) value_fail("sync", why);
    if (c.layout != warpkv::cache_layout::value_slab) value_fail("layout", why);
    if (c.key_digests) value_fail("key_digests", why);
    if (c.eviction == ev::lfu) cache_ = std::make_unique<cache_impl<cd::optimistic_lfu>>(c, place_.ex);
    else if (c.eviction == ev::epoch_lru) cache_ = std::make_unique<cache_impl<cd::optimistic_epoch_lru>>(c, place_.ex);
    else if (c.eviction == ev::epoch_lfu) cache_ = std::make_unique<cache_impl<cd::optimistic_epoch_lfu>>(c, place_.ex);
    else cache_ = std::make_unique<cache_impl<cd::optimistic_custom>>(c, place_.ex);
  }

  /// n rows of value_bytes at `src` (the backend's memory) copied into a staging buffer of the
  /// cache's stride; `zero_padding`: the bytes past each row zeroed too (accum_or_assign adds
  /// whole 8-byte words). Queued on the cache's stream.
  warpkv::buffer<std::uint64_t> staged_rows(const void* src, std::size_t n, bool zero_padding) const {
    const std::size_t stride = cache_->value_stride(), bytes = cache_->value_bytes();
    warpkv::buffer<std::uint64_t> rows(n * stride / 8, place_.ex);
    if (zero_padding) zero_bytes(place_, rows.data(), n * stride);
    copy_rows(place_, rows.data(), stride, src, bytes, bytes, n);
    return rows;
  }

  /// A batch over arrays in the backend's memory (execute_resident). ops: None for `uniform`.
  /// scores (None or uint64 per key): the writes' scores for the score policies that take them.
  void run(nb::handle ops, int uniform, nb::handle keys, nb::handle values, nb::handle values_out, nb::handle statuses,
           nb::handle expires_at, nb::handle scores, nb::handle stream) {
    const batch_args a = parse(ops, keys, values, values_out, statuses, expires_at);
    const array_view &k = a.keys, &s = a.statuses, &o = a.ops, &v = a.values, &out = a.out, &e = a.expires;
    array_view sc;
    if (!scores.is_none()) sc = place_.typed(scores, "scores", false, 'u', 64, "scores", k.n);
    const bool has_ops = o.data != nullptr;
    const std::size_t n = k.n, stride = cache_->value_stride(), bytes = cache_->value_bytes();
    const bool direct = bytes == stride;  // rows already have the cache's stride: used in place
    const std::optional<std::uint64_t> user = stream_arg(stream);
    nb::gil_scoped_release nogil;
    stream_order order(place_, user, {&k, &o, &v, &e, &sc});
    warpkv::buffer<std::uint64_t> in_rows, out_rows;
    const std::uint64_t* in = static_cast<const std::uint64_t*>(v.data);
    std::uint64_t* res = static_cast<std::uint64_t*>(out.data);
    if (!direct && n > 0) {
      if (v.data != nullptr) {
        in_rows = staged_rows(v.data, n, false);
        in = in_rows.data();
      }
      if (out.data != nullptr) {
        out_rows = warpkv::buffer<std::uint64_t>(n * stride / 8, place_.ex);
        res = out_rows.data();
      }
    }
    cache_->execute_resident(n, has_ops ? static_cast<const warpkv::cache_op*>(o.data) : nullptr,
                             static_cast<warpkv::cache_op>(uniform), static_cast<const std::uint64_t*>(k.data), in, res,
                             static_cast<warpkv::status*>(s.data), static_cast<const std::uint64_t*>(e.data),
                             static_cast<const std::uint64_t*>(sc.data));
    if (!direct && out.data != nullptr) copy_rows(place_, out.data, bytes, res, stride, bytes, n);
    warpkv::synchronize(place_.ex);  // staging buffers are freed on the cache's stream; outputs are ready
    order.done();
  }

  /// HierarchicalKV's accum_or_assign (kv_cache::accum_or_assign<T>, T the cache's float
  /// dtype): deltas are rows of the cache's value_dtype; flags (None, or a bool per key) is
  /// HKV's accum_or_assigns. Rows narrower than the stride are staged (padding zeroed: the
  /// kernel adds whole 8-byte words).
  void accum(nb::handle keys, nb::handle deltas, nb::handle flags, nb::handle statuses, nb::handle stream) {
    if (value_kind_ != 'f')
      type_fail("value_dtype", "accum_or_assign adds rows of float16, float32 or float64 (HierarchicalKV's "
                               "accum_or_assign); this cache's value_dtype is " + value_dtype());
    const array_view k = keys_arg(keys);
    const std::size_t n = k.n;
    const array_view s = status_arg(statuses, n);
    const array_view d = rows_arg(deltas, "deltas", n, false);
    array_view f;
    const bool has_flags = !flags.is_none();
    if (has_flags) {
      f = view_of(flags, "flags", false);
      check_dtype(f, "flags", 'b', 8, "flags (one per key: true accumulates into a live entry, false inserts an absent key)");
      check_length(f, "flags", n);
      place_.check(f, "flags");
    }
    const std::optional<std::uint64_t> user = stream_arg(stream);
    nb::gil_scoped_release nogil;
    stream_order order(place_, user, {&k, &d, &f});
    warpkv::buffer<std::uint64_t> rows;
    const std::uint64_t* in = static_cast<const std::uint64_t*>(d.data);
    if (cache_->value_bytes() != cache_->value_stride() && n > 0) {
      rows = staged_rows(d.data, n, true);
      in = rows.data();
    }
    cache_->accum_or_assign(value_bits_, n, static_cast<const std::uint64_t*>(k.data), in,
                            has_flags ? static_cast<const bool*>(f.data) : nullptr, static_cast<warpkv::status*>(s.data));
    warpkv::synchronize(place_.ex);  // the staging buffer is freed on the cache's stream
    order.done();
  }

  /// The same batch through the host-span API, which reports evictions: returns (op_index,
  /// keys, values) of the entries evicted, values as rows of value_bytes. Copies in and out.
  nb::tuple run_reporting(nb::handle ops, int uniform, nb::handle keys, nb::handle values, nb::handle values_out,
                          nb::handle statuses, nb::handle expires_at, nb::handle stream) {
    const batch_args a = parse(ops, keys, values, values_out, statuses, expires_at);
    const array_view &k = a.keys, &s = a.statuses, &o = a.ops, &v = a.values, &out = a.out, &e = a.expires;
    const auto u = static_cast<warpkv::cache_op>(uniform);
    if (o.data == nullptr && u != warpkv::cache_op::set && u != warpkv::cache_op::add && u != warpkv::cache_op::get_or_set)
      value_fail("return_evicted", "only set, add, get_or_set and execute evict");
    const std::size_t n = k.n, stride = cache_->value_stride(), bytes = cache_->value_bytes();
    const std::optional<std::uint64_t> user = stream_arg(stream);
    warpkv::cache_evictions<std::uint64_t> ev;
    {
      nb::gil_scoped_release nogil;
      stream_order order(place_, user, {&k, &o, &v, &e});
      warpkv::synchronize(place_.ex);
      std::vector<std::uint64_t> hk(n), hexp(e.data ? n : 0);
      std::vector<std::uint8_t> hops(o.data ? n : 0);
      std::vector<std::byte> hin(v.data ? n * stride : 0), hout(out.data ? n * stride : 0);
      std::vector<warpkv::status> hst(n);
      copy_bytes(hk.data(), k.data, n * 8);
      copy_bytes(hexp.data(), e.data, hexp.size() * 8);
      copy_bytes(hops.data(), o.data, hops.size());
      if (v.data != nullptr) copy_rows(place_, hin.data(), stride, v.data, bytes, bytes, n);
      warpkv::synchronize(place_.ex);  // the host copies are complete
      cache_->run_reporting(std::span<const warpkv::cache_op>(reinterpret_cast<const warpkv::cache_op*>(hops.data()), hops.size()),
                            u, hk, hin, hout, hst, ev, hexp);
      copy_bytes(s.data, hst.data(), n);
      if (out.data != nullptr) copy_rows(place_, out.data, bytes, hout.data(), stride, bytes, n);
      warpkv::synchronize(place_.ex);
      order.done();
    }
    const std::size_t m = ev.op_index.size();
    std::vector<std::uint8_t> rows(m * bytes);
    for (std::size_t i = 0; i < m; ++i) std::memcpy(rows.data() + i * bytes, ev.values.data() + i * stride, bytes);
    nb::bytes idx(reinterpret_cast<const char*>(ev.op_index.data()), m * sizeof(std::size_t));
    nb::bytes ks(reinterpret_cast<const char*>(ev.keys.data()), m * 8);
    nb::bytes vs(reinterpret_cast<const char*>(rows.data()), rows.size());
    return nb::make_tuple(idx, ks, vs);
  }

  /// (keys, values, expires_at, scores) of every live entry, as bytes (the Python layer makes arrays).
  nb::tuple export_entries() {
    cache_entries en;
    {
      nb::gil_scoped_release nogil;
      en = cache_->export_entries();
    }
    const std::size_t n = en.keys.size(), stride = cache_->value_stride(), bytes = cache_->value_bytes();
    std::vector<std::uint8_t> rows(n * bytes);
    for (std::size_t i = 0; i < n; ++i) std::memcpy(rows.data() + i * bytes, en.values.data() + i * stride, bytes);
    return nb::make_tuple(nb::bytes(reinterpret_cast<const char*>(en.keys.data()), n * 8),
                          nb::bytes(reinterpret_cast<const char*>(rows.data()), rows.size()),
                          nb::bytes(reinterpret_cast<const char*>(en.expires_at.data()), n * 8),
                          nb::bytes(reinterpret_cast<const char*>(en.scores.data()), n * 8));
  }

  [[nodiscard]] std::size_t size() const {
    nb::gil_scoped_release nogil;
    return cache_->size();
  }
  [[nodiscard]] std::size_t capacity() const { return cache_->capacity(); }
  void clear() {
    nb::gil_scoped_release nogil;
    cache_->clear();
  }
  void set_time(std::uint64_t t) { cache_->set_time(t); }
  [[nodiscard]] std::uint64_t time() const { return cache_->time(); }
  void set_global_epoch(std::uint64_t e) { cache_->set_global_epoch(e); }
  [[nodiscard]] std::uint64_t global_epoch() const { return cache_->global_epoch(); }
  [[nodiscard]] std::size_t value_bytes() const { return cache_->value_bytes(); }
  [[nodiscard]] std::size_t value_stride() const { return cache_->value_stride(); }
  [[nodiscard]] std::string value_dtype() const { return dtype_name(value_kind_, value_bits_); }
  [[nodiscard]] std::size_t value_width() const { return width_; }
  [[nodiscard]] std::string device() const { return place_.name(); }
  [[nodiscard]] std::string backend() const { return place_.ex.name(); }

 private:
  /// A batch's arrays, checked (those not given are empty views).
  struct batch_args {
    array_view keys, statuses, ops, values, out, expires;
  };
  batch_args parse(nb::handle ops, nb::handle keys, nb::handle values, nb::handle values_out, nb::handle statuses,
                   nb::handle expires_at) const {
    batch_args a;
    a.keys = keys_arg(keys);
    a.statuses = status_arg(statuses, a.keys.n);
    const std::size_t n = a.keys.n;
    if (!ops.is_none()) a.ops = place_.typed(ops, "ops", false, 'u', 8, "op codes (warpkv.CacheOp)", n);
    if (!values.is_none()) a.values = rows_arg(values, "values", n, false);
    if (!values_out.is_none()) a.out = rows_arg(values_out, "out", n, true);
    if (!expires_at.is_none()) a.expires = place_.typed(expires_at, "expires_at", false, 'u', 64, "expiry times", n);
    return a;
  }
  array_view keys_arg(nb::handle keys) const {
    array_view k = view_of(keys, "keys", false);
    if (!(k.bits == 64 && (k.kind == 'u' || k.kind == 'i')))
      type_fail("keys", "expected uint64 or int64 keys, got " + k.dtype());
    place_.check(k, "keys");
    return k;
  }
  array_view rows_arg(nb::handle h, const char* arg, std::size_t n, bool out) const {
    array_view v = view_of(h, arg, out, 2);
    check_dtype(v, arg, value_kind_, value_bits_, "values (the cache's value_dtype)");
    check_length(v, arg, n);
    if (v.row != width_)
      value_fail(arg, "rows have " + std::to_string(v.row) + " elements but the cache's value_width is " +
                          std::to_string(width_));
    place_.check(v, arg);
    return v;
  }
  array_view status_arg(nb::handle h, std::size_t n) const {
    return place_.typed(h, "statuses", true, 'u', 8, "statuses", n);
  }
  /// Copies `bytes` bytes between host memory and this cache's memory (either way), queued.
  void copy_bytes(void* dst, const void* src, std::size_t bytes) const {
    copy_rows(place_, dst, bytes, src, bytes, bytes, bytes ? 1 : 0);
  }

  placement place_;
  char value_kind_ = 'u';
  int value_bits_ = 64;
  std::size_t width_ = 1;
  std::unique_ptr<cache_api> cache_;
};

// ---- errors ----------------------------------------------------------------------------------

PyObject* error_classes[7] = {};  // warpkv.Error subclasses by errc, set by warpkv/__init__.py

}  // namespace

NB_MODULE(_ext, m) {
  m.doc() = "warpkv's compiled core (use the classes of the warpkv package, which wrap these)";
#if WARPKV_HAS_CUDA
  m.attr("built_backend") = "cuda";
#ifdef WARPKV_PY_CUDA_ARCHITECTURES
  m.attr("cuda_architectures") = WARPKV_PY_CUDA_ARCHITECTURES;  // CMAKE_CUDA_ARCHITECTURES of the build
#else
  m.attr("cuda_architectures") = "";
#endif
#else
  m.attr("built_backend") = "host";
  m.attr("cuda_architectures") = "";
#endif
  m.def("cuda_available", &warpkv::cuda_available, "True when this build has CUDA and a device is visible.");

  m.def(
      "_set_error_classes",
      [](nb::list classes) {
        if (nb::len(classes) != 7) throw nb::value_error("seven error classes, one per warpkv.errc");
        for (std::size_t i = 0; i < 7; ++i) {
          Py_XDECREF(error_classes[i]);
          error_classes[i] = classes[i].inc_ref().ptr();
        }
      },
      "classes"_a, "Registers the Python exception class raised for each warpkv::errc (internal).");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const warpkv::error& e) {
      const int code = static_cast<int>(e.code());
      PyObject* cls = code >= 0 && code < 7 && error_classes[code] != nullptr ? error_classes[code] : PyExc_RuntimeError;
      PyObject* exc = PyObject_CallFunction(cls, "is", code, e.what());
      if (exc == nullptr) return;  // the constructor raised: that error propagates
      PyErr_SetObject(cls, exc);
      Py_DECREF(exc);
    }
  });

  nb::class_<py_map>(m, "Map", "A warpkv map of one kind and dtype pair (internal; see warpkv.HopscotchMap).")
      .def(nb::init<const std::string&, std::size_t, const std::string&, const std::string&, const std::string&,
                    std::uint64_t, unsigned, const nb::dict&>(),
           "kind"_a, "capacity"_a, "key_dtype"_a, "value_dtype"_a, "backend"_a, "stream"_a, "host_tiles"_a, "config"_a)
      .def("insert", &py_map::insert, "keys"_a, "values"_a, "statuses"_a, "stream"_a.none(), "assign"_a)
      .def("find", &py_map::find, "keys"_a, "out"_a, "statuses"_a, "stream"_a.none())
      .def("contains", &py_map::contains, "keys"_a, "out"_a, "stream"_a.none())
      .def("erase", &py_map::erase, "keys"_a, "statuses"_a, "stream"_a.none())
      .def("execute", &py_map::execute, "ops"_a, "keys"_a, "values"_a, "statuses"_a, "out"_a, "stream"_a.none())
      .def("retrieve_all", &py_map::retrieve_all, "keys_out"_a, "values_out"_a, "stream"_a.none())
      .def("size", &py_map::size)
      .def("capacity", &py_map::capacity)
      .def("clear", &py_map::clear)
      .def("reserve", &py_map::reserve, "n"_a)
      .def("rehash", &py_map::rehash, "capacity"_a)
      .def("rehash_count", &py_map::rehash_count)
      .def("validate", &py_map::validate)
      .def_prop_ro("key_dtype", &py_map::key_dtype)
      .def_prop_ro("value_dtype", &py_map::value_dtype)
      .def_prop_ro("device", &py_map::device)
      .def_prop_ro("backend", &py_map::backend)
      .def_prop_ro("stream", &py_map::stream)
      .def_prop_ro("empty_key_bits", &py_map::empty_key_bits);

  nb::class_<py_cache>(m, "Cache", "A warpkv kv_cache with uint64 keys (internal; see warpkv.KVCache).")
      .def(nb::init<std::size_t, const std::string&, std::size_t, const std::string&, std::uint64_t, unsigned,
                    const nb::dict&>(),
           "capacity"_a, "value_dtype"_a, "value_width"_a, "backend"_a, "stream"_a, "host_tiles"_a, "config"_a)
      .def("run", &py_cache::run, "ops"_a.none(), "uniform"_a, "keys"_a, "values"_a.none(), "out"_a.none(),
           "statuses"_a, "expires_at"_a.none(), "scores"_a.none(), "stream"_a.none())
      .def("run_reporting", &py_cache::run_reporting, "ops"_a.none(), "uniform"_a, "keys"_a, "values"_a.none(),
           "out"_a.none(), "statuses"_a, "expires_at"_a.none(), "stream"_a.none())
      .def("accum", &py_cache::accum, "keys"_a, "deltas"_a.none(), "flags"_a.none(), "statuses"_a, "stream"_a.none())
      .def("export_entries", &py_cache::export_entries)
      .def("size", &py_cache::size)
      .def("capacity", &py_cache::capacity)
      .def("clear", &py_cache::clear)
      .def("set_time", &py_cache::set_time, "now"_a)
      .def("set_global_epoch", &py_cache::set_global_epoch, "epoch"_a)
      .def("global_epoch", &py_cache::global_epoch)
      .def("time", &py_cache::time)
      .def_prop_ro("value_bytes", &py_cache::value_bytes)
      .def_prop_ro("value_stride", &py_cache::value_stride)
      .def_prop_ro("value_dtype", &py_cache::value_dtype)
      .def_prop_ro("value_width", &py_cache::value_width)
      .def_prop_ro("device", &py_cache::device)
      .def_prop_ro("backend", &py_cache::backend);
}
