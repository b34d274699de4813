#pragma once
// Plug-in spec strings: `name[:key=value[,key=value…]]` (docs/architecture.md, "Spec strings").
//
// A value may itself be a comma-separated list: a token without '=' continues the previous
// value, so `weighted:w=1,2,4,axis=0` has w = "1,2,4" and axis = "0". A value in parentheses is
// one token whatever it holds, which is how a spec is given to another:
// `hierarchical:nodes=(columns2d:b=4),devices=(weighted:w=1,3)` has nodes = "(columns2d:b=4)",
// read with get_spec("nodes"). Parentheses must balance.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hit/core/param.hpp"

namespace hit {

class Spec {
 public:
  Spec() = default;
  explicit Spec(std::string name) : name_(std::move(name)) {}

  // Parses `text`; throws Error(parse) naming the text when it is malformed.
  static Spec parse(std::string_view text);

  const std::string& name() const noexcept { return name_; }
  const std::vector<std::pair<std::string, std::string>>& params() const noexcept {
    return params_;
  }
  bool has(std::string_view key) const noexcept;
  std::optional<std::string> get(std::string_view key) const;

  // Typed access; a value that does not convert is an Error(plugin) naming spec, key and value.
  std::string get_string(std::string_view key, std::string_view fallback) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  double get_double(std::string_view key, double fallback) const;
  std::vector<double> get_doubles(std::string_view key) const;  // empty when absent
  std::vector<std::int64_t> get_ints(std::string_view key) const;
  std::vector<std::string> get_strings(std::string_view key) const;  // empty when absent
  // A spec given as the value of `key` (in parentheses or not), else `fallback` parsed;
  // Error(plugin) naming the key when it is not a spec.
  Spec get_spec(std::string_view key, std::string_view fallback) const;

  // Sets `key` (replacing a value given before) from text, or from a typed value printed
  // canonically: a number as the shortest text that reads back the same, a list comma-separated,
  // a spec in parentheses when it has parameters (read back with get_spec).
  void set(std::string key, std::string value);
  void set(std::string key, std::int64_t value);
  void set(std::string key, double value);
  void set(std::string key, std::span<const double> values);
  void set(std::string key, std::span<const std::int64_t> values);
  // A list of names (files, labels); Error(invalid_argument) for an empty name or one holding
  // ',', '=', '(' or ')', which would not read back as the same list.
  void set(std::string key, std::span<const std::string> values);
  void set(std::string key, const Spec& value);
  // The same spec with `key` set: Spec("weighted").with("w", weights).with("axis", 1).
  template <class T>
  [[nodiscard]] Spec with(std::string key, const T& value) const {
    Spec out = *this;
    if constexpr (std::is_integral_v<T>) {
      out.set(std::move(key), static_cast<std::int64_t>(value));
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      out.set(std::move(key), std::span<const double>(value));
    } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
      out.set(std::move(key), std::span<const std::int64_t>(value));
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      out.set(std::move(key), std::span<const std::string>(value));
    } else if constexpr (std::is_convertible_v<const T&, std::string_view> &&
                         !std::is_same_v<T, Spec>) {
      out.set(std::move(key), std::string(std::string_view(value)));
    } else {
      out.set(std::move(key), value);
    }
    return out;
  }
  // Removes `key` (nothing when it is not given).
  void erase(std::string_view key);

  // Throws Error(plugin) if a key is not among `allowed`, listing the keys that are (the types
  // and ranges are checked by check_params, hit/core/param.hpp).
  void check_keys(const std::vector<ParamInfo>& allowed) const;

  // Canonical text: name, then keys in the order given.
  std::string str() const;

 private:
  std::string name_;
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace hit
