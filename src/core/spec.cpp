#include "hit/core/spec.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "hit/core/error.hpp"

namespace hit {
namespace {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

bool valid_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// The next ',' at parenthesis depth 0 from `start` (npos when none): a parenthesised value, a
// spec given to another spec, is one token whatever it holds.
std::size_t next_comma(const std::string& value, std::size_t start) {
  int depth = 0;
  for (std::size_t i = start; i < value.size(); ++i) {
    if (value[i] == '(') ++depth;
    if (value[i] == ')') --depth;
    if (value[i] == ',' && depth == 0) return i;
  }
  return std::string::npos;
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const auto comma = next_comma(value, start);
    const auto end = comma == std::string::npos ? value.size() : comma;
    out.push_back(trim(std::string_view(value).substr(start, end - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool balanced(std::string_view text) {
  int depth = 0;
  for (const char c : text) {
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) return false;
  }
  return depth == 0;
}

}  // namespace

Spec Spec::parse(std::string_view text) {
  const std::string whole = trim(text);
  const auto colon = whole.find(':');
  Spec spec(trim(std::string_view(whole).substr(0, colon)));
  if (!valid_identifier(spec.name_)) {
    throw Error(ErrorKind::parse, "malformed plug-in spec '" + std::string(text) +
                                      "': expected name[:key=value[,key=value...]]");
  }
  if (colon == std::string::npos) return spec;
  if (!balanced(whole)) {
    throw Error(ErrorKind::parse, "malformed plug-in spec '" + std::string(text) +
                                      "': unbalanced parentheses (a spec given as a value is "
                                      "written key=(name:key=value,...))");
  }
  const std::string rest = whole.substr(colon + 1);
  if (trim(rest).empty()) {
    throw Error(ErrorKind::parse, "malformed plug-in spec '" + std::string(text) +
                                      "': nothing after ':' (expected key=value)");
  }
  for (const std::string& token : split_list(rest)) {
    const auto eq = token.find('=');
    if (eq == std::string::npos) {
      if (spec.params_.empty() || token.empty()) {
        throw Error(ErrorKind::parse, "malformed plug-in spec '" + std::string(text) +
                                          "': parameter '" + token + "' has no '=value'");
      }
      spec.params_.back().second += "," + token;
      continue;
    }
    const std::string key = trim(std::string_view(token).substr(0, eq));
    const std::string value = trim(std::string_view(token).substr(eq + 1));
    if (!valid_identifier(key) || value.empty()) {
      throw Error(ErrorKind::parse, "malformed plug-in spec '" + std::string(text) +
                                        "': expected key=value, got '" + token + "'");
    }
    if (spec.has(key)) {
      throw Error(ErrorKind::parse, "malformed plug-in spec '" + std::string(text) +
                                        "': parameter '" + key + "' given twice");
    }
    spec.params_.emplace_back(key, value);
  }
  return spec;
}

Spec Spec::get_spec(std::string_view key, std::string_view fallback) const {
  std::string value = get(key).value_or(std::string(fallback));
  if (value.size() >= 2 && value.front() == '(' && value.back() == ')') {
    value = value.substr(1, value.size() - 2);
  }
  try {
    return Spec::parse(value);
  } catch (const Error& e) {
    throw Error(ErrorKind::plugin, "plug-in '" + name_ + "': parameter " + std::string(key) + "='" +
                                       value + "' is not a spec: " + e.what());
  }
}

bool Spec::has(std::string_view key) const noexcept {
  for (const auto& [k, v] : params_) {
    if (k == key) return true;
  }
  return false;
}

std::optional<std::string> Spec::get(std::string_view key) const {
  for (const auto& [k, v] : params_) {
    if (k == key) return v;
  }
  return std::nullopt;
}

void Spec::set(std::string key, std::string value) {
  for (auto& [k, v] : params_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  params_.emplace_back(std::move(key), std::move(value));
}

void Spec::set(std::string key, std::int64_t value) {
  set(std::move(key), std::to_string(value));
}

void Spec::set(std::string key, double value) {
  if (!std::isfinite(value)) {
    throw Error(ErrorKind::invalid_argument, "plug-in '" + name_ + "': parameter " + key +
                                                 " cannot be " + fmt::format("{}", value));
  }
  set(std::move(key), fmt::format("{}", value));
}

void Spec::set(std::string key, std::span<const double> values) {
  std::string text;
  for (const double x : values) {
    if (!std::isfinite(x)) {
      throw Error(ErrorKind::invalid_argument, "plug-in '" + name_ + "': parameter " + key +
                                                   " cannot hold " + fmt::format("{}", x));
    }
    text += (text.empty() ? "" : ",") + fmt::format("{}", x);
  }
  set(std::move(key), std::move(text));
}

void Spec::set(std::string key, std::span<const std::int64_t> values) {
  std::string text;
  for (const std::int64_t x : values) text += (text.empty() ? "" : ",") + std::to_string(x);
  set(std::move(key), std::move(text));
}

void Spec::set(std::string key, std::span<const std::string> values) {
  std::string text;
  for (const std::string& x : values) {
    if (x.empty() || x.find_first_of(",=()") != std::string::npos) {
      throw Error(ErrorKind::invalid_argument, "plug-in '" + name_ + "': parameter " + key +
                                                   " cannot hold the name '" + x +
                                                   "' (empty, or holding ',', '=', '(' or ')')");
    }
    text += (text.empty() ? "" : ",") + x;
  }
  set(std::move(key), std::move(text));
}

void Spec::set(std::string key, const Spec& value) {
  set(std::move(key), value.params().empty() ? value.str() : "(" + value.str() + ")");
}

void Spec::erase(std::string_view key) {
  std::erase_if(params_, [&](const auto& kv) { return kv.first == key; });
}

std::string Spec::get_string(std::string_view key, std::string_view fallback) const {
  auto v = get(key);
  return v ? *v : std::string(fallback);
}

namespace {

[[noreturn]] void bad_value(const Spec& spec, std::string_view key, const std::string& value,
                            std::string_view expected) {
  throw Error(ErrorKind::plugin, "plug-in '" + spec.name() + "': parameter " + std::string(key) +
                                     "='" + value + "' is not " + std::string(expected));
}

bool parse_int(const std::string& s, std::int64_t& out) {
  const char* first = s.data();
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

}  // namespace

std::int64_t Spec::get_int(std::string_view key, std::int64_t fallback) const {
  auto v = get(key);
  if (!v) return fallback;
  std::int64_t out = 0;
  if (!parse_int(*v, out)) bad_value(*this, key, *v, "an integer");
  return out;
}

double Spec::get_double(std::string_view key, double fallback) const {
  auto v = get(key);
  if (!v) return fallback;
  double out = 0;
  if (!parse_double(*v, out)) bad_value(*this, key, *v, "a number");
  return out;
}

std::vector<double> Spec::get_doubles(std::string_view key) const {
  std::vector<double> out;
  auto v = get(key);
  if (!v) return out;
  for (const std::string& item : split_list(*v)) {
    double x = 0;
    if (!parse_double(item, x)) bad_value(*this, key, *v, "a comma-separated list of numbers");
    out.push_back(x);
  }
  return out;
}

std::vector<std::int64_t> Spec::get_ints(std::string_view key) const {
  std::vector<std::int64_t> out;
  auto v = get(key);
  if (!v) return out;
  for (const std::string& item : split_list(*v)) {
    std::int64_t x = 0;
    if (!parse_int(item, x)) bad_value(*this, key, *v, "a comma-separated list of integers");
    out.push_back(x);
  }
  return out;
}

std::vector<std::string> Spec::get_strings(std::string_view key) const {
  auto v = get(key);
  if (!v) return {};
  return split_list(*v);
}

void Spec::check_keys(const std::vector<ParamInfo>& allowed) const {
  for (const auto& [k, v] : params_) {
    bool known = false;
    for (const auto& p : allowed) known = known || p.key == k;
    if (known) continue;
    std::string list;
    for (const auto& p : allowed) list += (list.empty() ? "" : ", ") + p.key;
    throw Error(ErrorKind::plugin, "plug-in '" + name_ + "' has no parameter '" + k +
                                       "' (allowed: " + (list.empty() ? "none" : list) + ")");
  }
}

std::string Spec::str() const {
  std::string out = name_;
  char sep = ':';
  for (const auto& [k, v] : params_) {
    out += sep + k + "=" + v;
    sep = ',';
  }
  return out;
}

}  // namespace hit
