#pragma once
// The version of the hitmap++ library a program runs with (CMake's project version, e.g. "0.1.0"),
// for results and reports.

#include <string_view>

namespace hit {

std::string_view version() noexcept;

}  // namespace hit
