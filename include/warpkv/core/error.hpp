#pragma once
#include <stdexcept>
#include <string>

namespace warpkv {

enum class errc {
  invalid_argument,  ///< a caller-supplied argument is out of range; the message names it
  invalid_key,       ///< a batch held the empty-key sentinel and the map was asked to throw
  out_of_memory,     ///< an allocation failed or a size would overflow
  cuda,              ///< a CUDA runtime call or kernel launch failed
  unsupported,       ///< the requested backend or feature is not available in this build/machine
  capacity,          ///< growth could not place every key (should not happen; reported, never silent)
  vulkan             ///< a Vulkan call failed (vulkan backend)
};

/// The one exception type of the host API.
class error : public std::runtime_error {
 public:
  error(errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] errc code() const noexcept { return code_; }

 private:
  errc code_;
};

/// Throws warpkv::error(invalid_argument) naming `argument` unless `ok`.
inline void require(bool ok, const char* argument, const std::string& why) {
  if (!ok) throw error(errc::invalid_argument, std::string("warpkv: invalid argument '") + argument + "': " + why);
}

}  // namespace warpkv
