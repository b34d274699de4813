#pragma once
// A setting a program passes where it applies (a layout's or a partition's spec): what its code
// chose, what the run uses instead when the command line or a HIT_* variable said otherwise, and
// which of them did, so that a message about the value sends the user to what set it.

#include <string>
#include <string_view>
#include <utility>

#include "hit/core/error.hpp"

namespace hit {

struct Setting {
  std::string value;  // what the run uses
  std::string code;   // what the program's code chose
  std::string
      source;        // empty: the code's; else the option or variable ("--layout", "HIT_LAYOUT_A")
  std::string name;  // what it sets, for messages ("layout of 'a'")

  Setting() = default;
  // The code's own value, nothing overriding it.
  Setting(std::string v) : value(v), code(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  Setting(std::string_view v) : Setting(std::string(v)) {}  // NOLINT(google-explicit-constructor)
  Setting(const char* v) : Setting(std::string(v)) {}       // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool overridden() const noexcept { return !source.empty(); }
  // "layout of 'a' set to 'cyclic' by HIT_LAYOUT_A"; empty when the code's value runs.
  [[nodiscard]] std::string origin() const {
    if (!overridden()) return {};
    return (name.empty() ? std::string("setting") : name) + " set to '" + value + "' by " + source;
  }
  // `e` with the origin in front when overridden, so a bad value names what set it.
  [[nodiscard]] Error explain(const Error& e) const {
    return overridden() ? Error(e.kind(), origin() + ": " + e.what()) : e;
  }
};

}  // namespace hit
