#pragma once
// The file format of kv_cache::save / load (docs/design/cache.md, "The save file"), version 1.
// Every integer little-endian; offsets in bytes:
//
//   0   8  magic "WKVCACHE"
//   8   4  version (1)
//   12  4  key_bytes     bytes of a stored key: 8 x the key's words (u64: 8; byte_key<N>: N + 8)
//   16  4  value_bytes   the saving cache's cache_config::value_bytes
//   20  4  value_stride  bytes of a stored value: value_bytes rounded up to 8
//   24  1  eviction      the saving cache's design (cache_eviction_policy, cache_slot_sync,
//   25  1  sync          cache_layout, key digests 0/1): recorded, not required to match
//   26  1  layout
//   27  1  key_digests
//   28  4  bucket_width  the saving cache's
//   32  8  capacity      the saving cache's slots
//   40  8  count         entries that follow
//   48     count entries of key_bytes + value_stride + 16 bytes each: the key's words (the last
//          the tag word), the value's words, the score (the design's recency word), the expiry
//          time (0 = never)
//   end-8 8 checksum     FNV-1a 64 of every byte before it
//
// decode() checks, in this order, and throws warpkv::error(invalid_argument) naming the file and
// the problem: too short for a header and checksum, magic, version, key_bytes, value_bytes,
// value_stride, the size the count implies (truncated or trailing bytes), the checksum.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "warpkv/core/error.hpp"

namespace warpkv::detail::cache_file {

static_assert(std::endian::native == std::endian::little, "the save file is little-endian, written in host order");

inline constexpr char magic[8] = {'W', 'K', 'V', 'C', 'A', 'C', 'H', 'E'};
inline constexpr std::uint32_t version = 1;
inline constexpr std::size_t header_bytes = 48;

struct header {
  std::uint32_t key_bytes = 0, value_bytes = 0, value_stride = 0;
  std::uint8_t eviction = 0, sync = 0, layout = 0, key_digests = 0;
  std::uint32_t bucket_width = 0;
  std::uint64_t capacity = 0, count = 0;
  [[nodiscard]] std::size_t entry_bytes() const { return std::size_t{key_bytes} + value_stride + 16; }
};

inline std::uint64_t fnv1a(const std::byte* p, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<std::uint64_t>(p[i])) * 0x100000001b3ull;
  return h;
}

template <class T>
void put(std::vector<std::byte>& out, std::size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}
template <class T>
T get(const std::vector<std::byte>& in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

/// A file image with room for h.count entries: the header written, entries zero, no checksum yet
/// (seal() writes it).
inline std::vector<std::byte> begin_image(const header& h) {
  std::vector<std::byte> out(header_bytes + h.count * h.entry_bytes() + 8);
  std::memcpy(out.data(), magic, sizeof magic);
  put(out, 8, version);
  put(out, 12, h.key_bytes);
  put(out, 16, h.value_bytes);
  put(out, 20, h.value_stride);
  put(out, 24, h.eviction);
  put(out, 25, h.sync);
  put(out, 26, h.layout);
  put(out, 27, h.key_digests);
  put(out, 28, h.bucket_width);
  put(out, 32, h.capacity);
  put(out, 40, h.count);
  return out;
}
inline std::byte* entry_at(std::vector<std::byte>& image, const header& h, std::size_t i) {
  return image.data() + header_bytes + i * h.entry_bytes();
}
inline const std::byte* entry_at(const std::vector<std::byte>& image, const header& h, std::size_t i) {
  return image.data() + header_bytes + i * h.entry_bytes();
}
inline void seal(std::vector<std::byte>& image) { put(image, image.size() - 8, fnv1a(image.data(), image.size() - 8)); }

[[noreturn]] inline void bad_file(const std::string& path, const std::string& why) {
  throw error(errc::invalid_argument, "warpkv: invalid argument 'path': cannot load " + path + ": " + why);
}

/// The header of `image` after every check against the loading cache's key_bytes and
/// value_bytes (throws naming the first problem found).
inline header decode(const std::vector<std::byte>& image, const std::string& path, std::uint32_t key_bytes,
                     std::uint32_t value_bytes) {
  if (image.size() < header_bytes + 8)
    bad_file(path, "truncated: " + std::to_string(image.size()) + " bytes, fewer than a header and a checksum (" +
                       std::to_string(header_bytes + 8) + ")");
  if (std::memcmp(image.data(), magic, sizeof magic) != 0) bad_file(path, "bad magic: not a warpkv kv_cache save file");
  const auto v = get<std::uint32_t>(image, 8);
  if (v != version)
    bad_file(path, "unsupported version " + std::to_string(v) + " (this build reads version " + std::to_string(version) + ")");
  header h;
  h.key_bytes = get<std::uint32_t>(image, 12);
  h.value_bytes = get<std::uint32_t>(image, 16);
  h.value_stride = get<std::uint32_t>(image, 20);
  h.eviction = get<std::uint8_t>(image, 24);
  h.sync = get<std::uint8_t>(image, 25);
  h.layout = get<std::uint8_t>(image, 26);
  h.key_digests = get<std::uint8_t>(image, 27);
  h.bucket_width = get<std::uint32_t>(image, 28);
  h.capacity = get<std::uint64_t>(image, 32);
  h.count = get<std::uint64_t>(image, 40);
  if (h.key_bytes != key_bytes)
    bad_file(path, "key size mismatch: the file's keys are " + std::to_string(h.key_bytes) + " bytes, this cache's " +
                       std::to_string(key_bytes));
  if (h.value_bytes != value_bytes)
    bad_file(path, "value size mismatch: the file's values are " + std::to_string(h.value_bytes) + " bytes, this cache's " +
                       std::to_string(value_bytes));
  if (h.value_stride != (value_bytes + 7) / 8 * 8)
    bad_file(path, "bad value stride " + std::to_string(h.value_stride) + " for " + std::to_string(value_bytes) + "-byte values");
  const std::size_t body = image.size() - header_bytes - 8;
  if (h.count > body / h.entry_bytes() || body != h.count * h.entry_bytes())
    bad_file(path, (h.count > body / h.entry_bytes() ? "truncated: " : "trailing bytes: ") + std::to_string(image.size()) +
                       " bytes, the header's " + std::to_string(h.count) + " entries need " +
                       std::to_string(header_bytes + 8) + " + " + std::to_string(h.count) + " x " +
                       std::to_string(h.entry_bytes()));
  if (fnv1a(image.data(), image.size() - 8) != get<std::uint64_t>(image, image.size() - 8))
    bad_file(path, "checksum mismatch: the file is corrupted");
  return h;
}

/// The whole file (throws naming the path when it cannot be read).
inline std::vector<std::byte> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) bad_file(path, "cannot open it for reading");
  const std::streamoff size = f.tellg();
  if (size < 0) bad_file(path, "cannot tell its size");
  std::vector<std::byte> image(static_cast<std::size_t>(size));
  f.seekg(0);
  if (size > 0 && !f.read(reinterpret_cast<char*>(image.data()), size)) bad_file(path, "read error");
  return image;
}

/// Writes the image to path + ".tmp", then renames it over path: a failed save leaves the file
/// that was there.
inline void write_all(const std::string& path, const std::vector<std::byte>& image) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw error(errc::invalid_argument, "warpkv: invalid argument 'path': cannot open " + tmp + " for writing");
    f.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    f.flush();
    if (!f) {
      f.close();
      std::remove(tmp.c_str());
      throw error(errc::invalid_argument, "warpkv: invalid argument 'path': write error on " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw error(errc::invalid_argument, "warpkv: invalid argument 'path': cannot rename " + tmp + " to " + path);
  }
}

}  // namespace warpkv::detail::cache_file
