#include "hit/core/version.hpp"

namespace hit {

// HIT_VERSION is set for this file alone by CMakeLists.txt, so a new version rebuilds one file.
std::string_view version() noexcept {
  return HIT_VERSION;
}

}  // namespace hit
