// The emulated device's speed: its slowdown over the problem size (SlowdownProfile) and its
// change during a run (SpeedChange), as `slowdown=` and `change=` write them.

#include <fmt/format.h>

#include <cmath>

#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "topology/param_text.hpp"

namespace hit {

using detail::format_number;
using detail::parse_number;
using detail::strip_spaces;
using detail::try_parse_bytes;

SlowdownProfile::SlowdownProfile(double factor) {
  if (!(factor >= 1.0) || !std::isfinite(factor)) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("slowdown factor {} is not allowed (an emulated device is as fast as "
                            "its host or slower: factor >= 1)",
                            factor));
  }
  steps_ = {Step{0, factor}};
}

SlowdownProfile SlowdownProfile::parse(std::string_view text) {
  const std::string t = strip_spaces(text);
  const auto fail = [&](const std::string& why) -> Error {
    return Error(ErrorKind::parse,
                 fmt::format("slowdown '{}' is not valid: {} (expected F or F0;F1@S1;F2@S2... with "
                             "factors >= 1 and sizes such as 256MiB, strictly increasing)",
                             text, why));
  };
  SlowdownProfile p;
  p.steps_.clear();
  std::size_t start = 0;
  while (start <= t.size()) {
    const auto semi = t.find(';', start);
    const std::string item = t.substr(start, semi == std::string::npos ? semi : semi - start);
    Step step;
    const auto at = item.find('@');
    const std::string factor_text = item.substr(0, at);
    if (!parse_number(factor_text, step.factor))
      throw fail("'" + factor_text + "' is not a number");
    if (step.factor < 1.0) throw fail("factor " + factor_text + " is below 1");
    if (at != std::string::npos) {
      auto b = try_parse_bytes(item.substr(at + 1));
      if (!b) throw fail("'" + item.substr(at + 1) + "' is not a byte size");
      step.from_bytes = *b;
    }
    if (p.steps_.empty()) {
      if (step.from_bytes != 0 && at != std::string::npos) {
        // "2@1GiB" alone: factor 1 below the first size.
        p.steps_.push_back(Step{0, 1.0});
      }
    } else {
      if (at == std::string::npos) throw fail("step '" + item + "' after the first needs @size");
      if (step.from_bytes <= p.steps_.back().from_bytes) {
        throw fail("sizes must increase strictly, '" + item + "' does not");
      }
    }
    p.steps_.push_back(step);
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return p;
}

double SlowdownProfile::at(std::uint64_t problem_bytes) const noexcept {
  double f = steps_.front().factor;
  for (const Step& s : steps_) {
    if (problem_bytes >= s.from_bytes) f = s.factor;
  }
  return f;
}

std::string SlowdownProfile::str() const {
  std::string out;
  for (const Step& s : steps_) {
    if (!out.empty()) out += ';';
    out += format_number(s.factor);
    if (s.from_bytes != 0) out += "@" + format_bytes(s.from_bytes);
  }
  return out;
}

SpeedChange SpeedChange::parse(std::string_view text) {
  const std::string t = strip_spaces(text);
  const auto fail = [&](const std::string& why) -> Error {
    return Error(ErrorKind::parse,
                 fmt::format("change '{}' is not valid: {} (expected F@W or F1@W1;F2@W2... with "
                             "factors > 0 and W launch counts such as 200 or times such as 30s, "
                             "strictly increasing)",
                             text, why));
  };
  SpeedChange c;
  std::size_t start = 0;
  while (start <= t.size()) {
    const auto semi = t.find(';', start);
    const std::string item = t.substr(start, semi == std::string::npos ? semi : semi - start);
    const auto at = item.find('@');
    if (at == std::string::npos) throw fail("'" + item + "' has no @");
    Step step;
    const std::string factor_text = item.substr(0, at);
    if (!parse_number(factor_text, step.factor) || !(step.factor > 0)) {
      throw fail("'" + factor_text + "' is not a positive number");
    }
    std::string when = item.substr(at + 1);
    const bool seconds = !when.empty() && when.back() == 's';
    if (seconds) when.pop_back();
    if (!parse_number(when, step.at) || !(step.at >= 0)) {
      throw fail("'" + item.substr(at + 1) + "' is not a launch count or a time in seconds");
    }
    if (!seconds && step.at != std::floor(step.at)) {
      throw fail("'" + item.substr(at + 1) + "' is not a whole launch count (times end in s)");
    }
    if (!c.steps_.empty()) {
      if (seconds != c.seconds_) throw fail("launch counts and times are mixed");
      if (step.at <= c.steps_.back().at) {
        throw fail("points must increase strictly, '" + item + "' does not");
      }
    }
    c.seconds_ = seconds;
    c.steps_.push_back(step);
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return c;
}

double SpeedChange::factor(std::uint64_t launches, double seconds) const noexcept {
  const double now = seconds_ ? seconds : static_cast<double>(launches);
  double f = 1;
  for (const Step& s : steps_) {
    if (now >= s.at) f = s.factor;
  }
  return f;
}

std::string SpeedChange::str() const {
  std::string out;
  for (const Step& s : steps_) {
    if (!out.empty()) out += ';';
    out += format_number(s.factor) + "@" + format_number(s.at) + (seconds_ ? "s" : "");
  }
  return out;
}

}  // namespace hit
