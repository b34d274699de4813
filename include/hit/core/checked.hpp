#pragma once
// Sizes formed with checked arithmetic: a sum or a product of element or byte counts that does
// not fit a 64-bit count is an Error naming what was being computed, never a wrapped value.

#include <cstdint>
#include <string>
#include <string_view>

#include "hit/core/error.hpp"

namespace hit {

[[noreturn]] inline void throw_size_overflow(std::string_view what, std::int64_t a, char op,
                                             std::int64_t b) {
  throw Error(ErrorKind::invalid_argument,
              std::string(what) + " is too large: " + std::to_string(a) + " " + op + " " +
                  std::to_string(b) + " does not fit a 64-bit count");
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_size_overflow(what, a, '+', b);
  return r;
}

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_size_overflow(what, a, '*', b);
  return r;
}

}  // namespace hit
