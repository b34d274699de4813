#pragma once
// The message of the hit::Error a call throws, or "(no error)": for tests that check what a
// failure says.

#include <functional>
#include <string>

#include "hit/core/error.hpp"

namespace hit_test {

inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const hit::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace hit_test
