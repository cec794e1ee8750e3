#pragma once
// Arrays in a backend's memory for tests of the calls that take them (the cache's
// HierarchicalKV-named calls): copied from and to host vectors.
#include <span>
#include <vector>

#include "warpkv/core/buffer.hpp"

namespace warpkv::testing {

template <class T>
buffer<T> on(const execution& ex, const std::vector<T>& v) {
  return buffer<T>::from_host(std::span<const T>(v), ex);
}
template <class T>
std::vector<T> back(const buffer<T>& b) {
  return b.size() == 0 ? std::vector<T>{} : b.to_vector();
}

}  // namespace warpkv::testing
