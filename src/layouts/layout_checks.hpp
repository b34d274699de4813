#pragma once
// Internal to the layouts: what the Layout constructor and the plug-ins' building blocks share
// when they check the blocks a plug-in gives.

#include <cstddef>
#include <string>

namespace hit::detail {

// Most pairs of blocks (or of one axis's pieces) an overlap test compares; past it the element
// count check stands alone.
inline constexpr std::size_t overlap_budget = 20'000'000;

// A number as messages and Layout::str() print it: every digit of a double (%.17g), so equal
// texts mean equal values.
std::string number_text(double x);

}  // namespace hit::detail
