#include "hit/core/param.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "hit/core/error.hpp"
#include "hit/core/spec.hpp"

namespace hit {

// ---- declarations ------------------------------------------------------------------------------

namespace {

ParamInfo make(ParamType type, std::string key, std::string description,
               std::string default_value) {
  ParamInfo p{std::move(key), std::move(description), std::move(default_value)};
  p.type = type;
  return p;
}

bool is_list(ParamType t) {
  return t == ParamType::integers || t == ParamType::reals;
}

bool is_integral(ParamType t) {
  return t == ParamType::integer || t == ParamType::integers;
}

std::string one_of(const std::vector<std::string>& choices) {
  std::string out = "one of";
  for (std::size_t i = 0; i < choices.size(); ++i) out += (i == 0 ? " " : ", ") + choices[i];
  return out;
}

}  // namespace

ParamInfo ParamInfo::text(std::string key, std::string description, std::string default_value) {
  return make(ParamType::text, std::move(key), std::move(description), std::move(default_value));
}

ParamInfo ParamInfo::integer(std::string key, std::string description, std::string default_value) {
  return make(ParamType::integer, std::move(key), std::move(description), std::move(default_value));
}

ParamInfo ParamInfo::real(std::string key, std::string description, std::string default_value) {
  return make(ParamType::real, std::move(key), std::move(description), std::move(default_value));
}

ParamInfo ParamInfo::integers(std::string key, std::string description, std::string default_value) {
  return make(ParamType::integers, std::move(key), std::move(description),
              std::move(default_value));
}

ParamInfo ParamInfo::reals(std::string key, std::string description, std::string default_value) {
  return make(ParamType::reals, std::move(key), std::move(description), std::move(default_value));
}

ParamInfo ParamInfo::choice(std::string key, std::string description,
                            std::vector<std::string> choices, std::string default_value) {
  ParamInfo p =
      make(ParamType::choice, std::move(key), std::move(description), std::move(default_value));
  p.choices = std::move(choices);
  return p;
}

ParamInfo ParamInfo::at_least(double v) && {
  min = ParamBound{v};
  return std::move(*this);
}

ParamInfo ParamInfo::at_least(std::string other_key) && {
  min = ParamBound{0, std::move(other_key)};
  return std::move(*this);
}

ParamInfo ParamInfo::above(double v) && {
  min = ParamBound{v, {}, true};
  return std::move(*this);
}

ParamInfo ParamInfo::at_most(double v) && {
  max = ParamBound{v};
  return std::move(*this);
}

ParamInfo ParamInfo::at_most(std::string other_key) && {
  max = ParamBound{0, std::move(other_key)};
  return std::move(*this);
}

ParamInfo ParamInfo::below(double v) && {
  max = ParamBound{v, {}, true};
  return std::move(*this);
}

ParamInfo ParamInfo::required(std::string what_is_needed) && {
  needed = what_is_needed.empty() ? "the parameter " + key : std::move(what_is_needed);
  return std::move(*this);
}

ParamInfo ParamInfo::named(std::string value_noun) && {
  noun = std::move(value_noun);
  return std::move(*this);
}

ParamInfo ParamInfo::range_in_words(std::string words) && {
  range_words = std::move(words);
  return std::move(*this);
}

// ---- the range in words ------------------------------------------------------------------------

namespace {

// A bound as a message shows it: "1", "0.5", "B" (in --list) or "B=64" (with the spec's value).
std::string bound_text(const ParamBound& b, const std::optional<double>& resolved) {
  if (b.key.empty()) return fmt::format("{}", b.value);
  return resolved ? fmt::format("{}={}", b.key, *resolved) : b.key;
}

// "positive", "at least 0", "between 1 and B=64", "in (0, 1]", "at most 64"; empty: no range.
// A bound that is another parameter shows its value, else (for a listing, `all`) its name; in a
// check, one without a value is left out.
std::string range_text(const ParamInfo& p, const std::optional<double>& lo_value,
                       const std::optional<double>& hi_value, bool all) {
  if (!p.range_words.empty()) return p.range_words;
  const bool has_lo = p.min && (p.min->key.empty() || lo_value || all);
  const bool has_hi = p.max && (p.max->key.empty() || hi_value || all);
  if (has_lo && has_hi) {
    const std::string lo = bound_text(*p.min, lo_value);
    const std::string hi = bound_text(*p.max, hi_value);
    if (!p.min->strict && !p.max->strict) return fmt::format("between {} and {}", lo, hi);
    return fmt::format("in {}{}, {}{}", p.min->strict ? '(' : '[', lo, hi,
                       p.max->strict ? ')' : ']');
  }
  if (has_lo) {
    const ParamBound& b = *p.min;
    const bool positive = b.key.empty() && ((b.strict && b.value == 0) ||
                                            (!b.strict && b.value == 1 && is_integral(p.type)));
    if (positive) return "positive";
    return fmt::format("{} {}", b.strict ? "above" : "at least", bound_text(b, lo_value));
  }
  if (has_hi) {
    return fmt::format("{} {}", p.max->strict ? "below" : "at most", bound_text(*p.max, hi_value));
  }
  return {};
}

}  // namespace

std::string ParamInfo::type_text() const {
  std::string out;
  switch (type) {
    case ParamType::text:
      out = "text";
      break;
    case ParamType::integer:
      out = "integer";
      break;
    case ParamType::real:
      out = "number";
      break;
    case ParamType::integers:
      out = "integers";
      break;
    case ParamType::reals:
      out = "numbers";
      break;
    case ParamType::choice:
      out = one_of(choices);
      break;
  }
  const std::string range = range_text(*this, std::nullopt, std::nullopt, true);
  if (!range.empty()) out += (is_list(type) ? ", each " : ", ") + range;
  if (is_required()) out += ", required";
  return out;
}

// ---- checking a spec ---------------------------------------------------------------------------

namespace {

// The value a bound stands for in `spec`: its number, or the other parameter's value (given, else
// its numeric default); nullopt when there is none.
std::optional<double> resolve(const ParamBound& b, const Spec& spec,
                              const std::vector<ParamInfo>& params) {
  if (b.key.empty()) return b.value;
  if (spec.has(b.key)) return static_cast<double>(spec.get_int(b.key, 0));
  for (const ParamInfo& other : params) {
    if (other.key != b.key) continue;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(
        other.default_value.data(), other.default_value.data() + other.default_value.size(), value);
    if (ec == std::errc() && ptr == other.default_value.data() + other.default_value.size()) {
      return value;
    }
  }
  return std::nullopt;
}

bool within(double v, const std::optional<ParamBound>& b, const std::optional<double>& at,
            bool lower) {
  if (!b || !at) return true;
  if (lower) return b->strict ? v > *at : v >= *at;
  return b->strict ? v < *at : v <= *at;
}

// Throws unless every value lies in the range of `p`, naming the first that does not.
void check_range(const Spec& spec, const ParamInfo& p, const std::vector<ParamInfo>& params,
                 const std::vector<double>& values, std::string_view kind) {
  const std::optional<double> lo = p.min ? resolve(*p.min, spec, params) : std::nullopt;
  const std::optional<double> hi = p.max ? resolve(*p.max, spec, params) : std::nullopt;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (within(v, p.min, lo, true) && within(v, p.max, hi, false)) continue;
    // Integers as integers: a double would print 1e+17 for a large one.
    const std::string value =
        is_integral(p.type) ? std::to_string(static_cast<std::int64_t>(v)) : fmt::format("{}", v);
    std::string subject;
    if (!is_list(p.type) || values.size() == 1) {
      subject = p.noun.empty()    ? fmt::format("{}={}", p.key, value)
                : is_list(p.type) ? fmt::format("{} {}", p.noun, value)
                                  : fmt::format("{} {}={}", p.noun, p.key, value);
    } else {
      subject = fmt::format("{} {} (position {} of {})", p.noun.empty() ? "value" : p.noun, value,
                            i, p.key);
    }
    throw Error(ErrorKind::plugin, fmt::format("{} '{}': {} is not {}", kind, spec.str(), subject,
                                               range_text(p, lo, hi, false)));
  }
}

// The values of a numeric parameter; Spec's typed getters name the value that does not convert.
std::vector<double> numbers(const Spec& spec, const ParamInfo& p) {
  switch (p.type) {
    case ParamType::integer:
      return {static_cast<double>(spec.get_int(p.key, 0))};
    case ParamType::real:
      return {spec.get_double(p.key, 0)};
    case ParamType::integers: {
      std::vector<double> out;
      for (const std::int64_t v : spec.get_ints(p.key)) out.push_back(static_cast<double>(v));
      return out;
    }
    case ParamType::reals:
      return spec.get_doubles(p.key);
    case ParamType::text:
    case ParamType::choice:
      break;
  }
  return {};
}

void check_one(const Spec& spec, const ParamInfo& p, const std::vector<ParamInfo>& params,
               std::string_view kind) {
  if (!spec.has(p.key)) {
    if (p.is_required()) {
      throw Error(ErrorKind::plugin, fmt::format("{} '{}' needs {}", kind, spec.str(), p.needed));
    }
    return;
  }
  if (p.type == ParamType::choice) {
    const std::string value = *spec.get(p.key);
    if (std::find(p.choices.begin(), p.choices.end(), value) == p.choices.end()) {
      throw Error(ErrorKind::plugin, fmt::format("{} '{}': {}={} is not {}", kind, spec.str(),
                                                 p.key, value, one_of(p.choices)));
    }
    return;
  }
  check_range(spec, p, params, numbers(spec, p), kind);
}

}  // namespace

void check_params(const Spec& spec, const std::vector<ParamInfo>& params, std::string_view kind) {
  spec.check_keys(params);
  for (const ParamInfo& p : params) check_one(spec, p, params, kind);
}

}  // namespace hit
