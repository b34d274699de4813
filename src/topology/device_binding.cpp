// Parsing of `--devices` / HIT_DEVICES and of the typed device parameters (docs/devices.md §2).

#include "hit/device_binding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <ostream>

#include "hit/core/error.hpp"
#include "hit/device_params.hpp"

namespace hit {
namespace {

struct Unit {
  std::string_view name;
  std::uint64_t factor;
};

// Longest names first, so "MiB" is not read as "M" + "iB".
constexpr Unit byte_units[] = {
    {"kib", 1ULL << 10},   {"mib", 1ULL << 20},      {"gib", 1ULL << 30},
    {"tib", 1ULL << 40},   {"kb", 1000ULL},          {"mb", 1000000ULL},
    {"gb", 1000000000ULL}, {"tb", 1000000000000ULL}, {"b", 1ULL},
};
constexpr std::string_view byte_units_text = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string strip_spaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) out += c;
  }
  return out;
}

// A non-negative decimal number with an optional fraction, the whole of `s`.
bool parse_number(std::string_view s, double& out) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return false;
  for (char c : s) {
    if ((std::isdigit(static_cast<unsigned char>(c)) == 0) && c != '.') return false;
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

bool parse_count(std::string_view s, int& out) {
  if (s.empty()) return false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Splits "512MiB" into number and unit text.
std::pair<std::string_view, std::string_view> split_unit(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) ++i;
  return {s.substr(0, i), s.substr(i)};
}

__extension__ using uint128 = unsigned __int128;

std::optional<std::uint64_t> try_parse_bytes(std::string_view text) {
  const std::string t = strip_spaces(text);
  const auto [num, unit_text] = split_unit(t);
  double check = 0;
  if (!parse_number(num, check)) return std::nullopt;
  std::uint64_t factor = 1;
  if (!unit_text.empty()) {
    const std::string u = lower(unit_text);
    bool found = false;
    for (const Unit& unit : byte_units) {
      if (u == unit.name) {
        factor = unit.factor;
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  // The integer part exactly (sizes beyond 2^53 bytes must not be rounded), the fraction in double.
  const auto dot = num.find('.');
  const std::string_view whole = num.substr(0, dot);
  uint128 bytes = 0;
  for (char c : whole) {
    bytes = bytes * 10 + static_cast<unsigned>(c - '0');
    if (bytes > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  }
  bytes *= factor;
  if (dot != std::string_view::npos) {
    double fraction = 0;
    const std::string frac_text = "0" + std::string(num.substr(dot));
    if (frac_text.size() > 2) {
      std::from_chars(frac_text.data(), frac_text.data() + frac_text.size(), fraction);
    }
    bytes += static_cast<uint128>(std::llround(fraction * static_cast<double>(factor)));
  }
  if (bytes > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::string format_number(double x) {
  return fmt::format("{}", x);
}

}  // namespace

// ---- units -------------------------------------------------------------------------------------

std::uint64_t parse_bytes(std::string_view text) {
  if (auto b = try_parse_bytes(text)) return *b;
  throw Error(ErrorKind::parse, fmt::format("'{}' is not a byte size (expected <number>[unit] with "
                                            "unit one of {}, e.g. 512MiB)",
                                            text, byte_units_text));
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes == 0) return "0B";
  static constexpr Unit binary[] = {
      {"TiB", 1ULL << 40}, {"GiB", 1ULL << 30}, {"MiB", 1ULL << 20}, {"KiB", 1ULL << 10}};
  static constexpr Unit decimal[] = {
      {"TB", 1000000000000ULL}, {"GB", 1000000000ULL}, {"MB", 1000000ULL}, {"KB", 1000ULL}};
  for (const Unit& u : binary) {
    if (bytes % u.factor == 0) return fmt::format("{}{}", bytes / u.factor, u.name);
  }
  for (const Unit& u : decimal) {
    if (bytes % u.factor == 0) return fmt::format("{}{}", bytes / u.factor, u.name);
  }
  return fmt::format("{}B", bytes);
}

std::string human_bytes(double bytes) {
  static constexpr std::string_view names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t k = 0;
  while (bytes >= 1024.0 && k + 1 < std::size(names)) {
    bytes /= 1024.0;
    ++k;
  }
  if (k == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.2f} {}", bytes, names[k]);
}

double parse_bandwidth(std::string_view text) {
  std::string t = strip_spaces(text);
  const std::string l = lower(t);
  if (l.size() >= 2 && l.substr(l.size() - 2) == "/s") t.resize(t.size() - 2);
  const auto [num, unit_text] = split_unit(t);
  double value = 0;
  auto bytes = try_parse_bytes(t);
  if (!bytes || !parse_number(num, value) || value <= 0) {
    throw Error(ErrorKind::parse,
                fmt::format("'{}' is not a bandwidth (expected a positive <number><unit>/s with "
                            "unit one of {}, e.g. 10GB/s)",
                            text, byte_units_text));
  }
  std::uint64_t factor = 1;
  const std::string u = lower(unit_text);
  for (const Unit& unit : byte_units) {
    if (u == unit.name) factor = unit.factor;
  }
  return value * static_cast<double>(factor);
}

std::string format_bandwidth(double bytes_per_second) {
  const double rounded = std::round(bytes_per_second);
  if (rounded == bytes_per_second && rounded < 1.8e19) {
    const auto b = static_cast<std::uint64_t>(rounded);
    // Bandwidths read best in decimal units (as vendors quote them).
    static constexpr Unit decimal[] = {
        {"TB", 1000000000000ULL}, {"GB", 1000000000ULL}, {"MB", 1000000ULL}, {"KB", 1000ULL}};
    for (const Unit& u : decimal) {
      if (b % u.factor == 0 && b != 0) return fmt::format("{}{}/s", b / u.factor, u.name);
    }
    return format_bytes(b) + "/s";
  }
  return format_number(bytes_per_second) + "B/s";
}

// ---- slowdown profile --------------------------------------------------------------------------

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

// ---- kinds and parameters ----------------------------------------------------------------------

DeviceKind device_kind(std::string_view name) {
  if (const auto kind = parse_device_kind(name)) return *kind;
  throw Error(ErrorKind::device,
              fmt::format("unknown device kind '{}' (known kinds: cpu, cuda, emu)", name));
}

std::ostream& operator<<(std::ostream& out, DeviceKind kind) {
  return out << to_string(kind);
}

namespace {
// fail=K: a launch count, 0 or more.
std::uint64_t parse_fail_after(const std::string& value) {
  std::uint64_t k = 0;
  const auto* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, k);
  if (value.empty() || ec != std::errc() || ptr != end) {
    throw Error(ErrorKind::parse,
                fmt::format("fail={} is not a launch count (K: the K-th execution, from 0, and "
                            "every later one fail)",
                            excerpt(value)));
  }
  return k;
}
}  // namespace

const std::vector<ParamInfo>& device_params(DeviceKind kind) {
  static const ParamInfo cores{"cores", "host cores the rank uses (threads, BLAS, pinning)", ""};
  static const std::vector<ParamInfo> cpu = {cores};
  static const std::vector<ParamInfo> cuda = {
      {"mem",
       "a budget of GPU memory for the ranks of this run on the GPU together, e.g. 4GiB (below "
       "the GPU's own: to try time-sharing, or to leave room for other programs)",
       "the GPU's memory"},
      cores};
  static const std::vector<ParamInfo> emu = {
      {"mem", "memory capacity of the emulated device, e.g. 512MiB", "unlimited"},
      {"bw", "copy bandwidth between host and device, e.g. 10GB/s", "memcpy speed"},
      {"slowdown", "F, or a profile F0;F1@S1;... over the bytes a launch stages", "1"},
      {"change",
       "the slowdown multiplied by F from a launch count or a time on: F@W or F1@W1;F2@W2;..., "
       "W a count (200) or seconds (30s)",
       "none"},
      {"clock",
       "what the slowdown scales: wall (the host kernel's elapsed time) or cpu (its thread's CPU "
       "time: steady when the host is shared; for single-threaded bodies)",
       "wall"},
      {"fail",
       "an injected failure: the K-th kernel execution (counted from 0) and every later one throw "
       "a device failure (work packages reroute around it)",
       "never"},
      cores,
  };
  switch (kind) {
    case DeviceKind::cpu:
      return cpu;
    case DeviceKind::cuda:
      return cuda;
    case DeviceKind::emu:
      return emu;
  }
  static const std::vector<ParamInfo> none;
  return none;
}

DeviceParams DeviceParams::of(const DeviceBinding& b) {
  DeviceParams p;
  for (const auto& [key, value] : b.params) {
    if (key == "mem") {
      p.mem = parse_bytes(value);
    } else if (key == "bw") {
      p.bw = parse_bandwidth(value);
    } else if (key == "slowdown") {
      p.slowdown = SlowdownProfile::parse(value);
    } else if (key == "change") {
      p.change = SpeedChange::parse(value);
    } else if (key == "cores") {
      int n = 0;
      if (!parse_count(value, n) || n <= 0) {
        throw Error(ErrorKind::parse,
                    fmt::format("cores={} is not a positive number of cores", value));
      }
      p.cores = n;
    } else if (key == "clock") {
      if (value != "wall" && value != "cpu") {
        throw Error(ErrorKind::parse, fmt::format("clock={} is not wall or cpu", value));
      }
      p.cpu_clock = value == "cpu";
    } else if (key == "fail") {
      p.fail_after = parse_fail_after(value);
    }
  }
  return p;
}

// ---- bindings ----------------------------------------------------------------------------------

std::string_view device_spec_grammar() {
  return "spec = item[,item...]; item = kind[:index][(key=value[,key=value...])][*count]; "
         "kind = cpu|cuda|emu; keys: cpu and cuda (cores), emu (mem, bw, slowdown, change, clock, "
         "fail, cores); "
         "e.g. cuda:0*3,cuda:1 or emu:0(slowdown=4,mem=512MiB)*2,cpu*2";
}

std::string DeviceBinding::str() const {
  std::string out(to_string(kind));
  if (index != any_index) out += ":" + std::to_string(index);
  if (!params.empty()) {
    out += '(';
    bool first = true;
    for (const auto& [k, v] : params) {
      if (!first) out += ',';
      out += k + "=" + v;
      first = false;
    }
    out += ')';
  }
  return out;
}

namespace {

class SpecParser {
 public:
  explicit SpecParser(std::string_view original)
      : original_(original), text_(strip_spaces(original)) {}

  std::vector<std::pair<DeviceBinding, int>> items() {
    if (text_.empty()) throw syntax("the spec is empty");
    std::vector<std::pair<DeviceBinding, int>> out;
    for (;;) {
      out.push_back(item());
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ',') throw syntax(fmt::format("unexpected '{}'", text_[pos_]));
      ++pos_;
      if (pos_ == text_.size()) throw syntax("nothing after the last ','");
    }
    return out;
  }

  Error syntax(const std::string& what) const {
    return Error(ErrorKind::parse, fmt::format("malformed device spec '{}': {} at character {} "
                                               "(grammar: {})",
                                               original_, what, pos_ + 1, device_spec_grammar()));
  }

  Error value_error(const std::string& what) const {
    return Error(ErrorKind::parse, fmt::format("device spec '{}': {} (grammar: {})", original_,
                                               what, device_spec_grammar()));
  }

 private:
  std::pair<DeviceBinding, int> item() {
    DeviceBinding b;
    const std::string kind = word();
    if (kind.empty()) {
      throw syntax(pos_ < text_.size()
                       ? fmt::format("expected a device kind, found '{}'", text_[pos_])
                       : std::string("expected a device kind"));
    }
    const std::optional<DeviceKind> known = parse_device_kind(kind);
    if (!known) {
      throw Error(ErrorKind::device,
                  fmt::format("device spec '{}': unknown device kind '{}' (known kinds: cpu, cuda, "
                              "emu; grammar: {})",
                              original_, kind, device_spec_grammar()));
    }
    b.kind = *known;
    b.index = DeviceBinding::any_index;
    if (peek(':')) {
      ++pos_;
      const std::string digits = number();
      int index = 0;
      if (!parse_count(digits, index))
        throw syntax("expected a device index (0, 1, ...) after ':'");
      b.index = index;
    }
    if (peek('(')) {
      ++pos_;
      params(b);
    }
    int count = 1;
    if (peek('*')) {
      ++pos_;
      const std::string digits = number();
      if (!parse_count(digits, count) || count < 1) {
        throw syntax("expected a positive count after '*'");
      }
    }
    return {std::move(b), count};
  }

  void params(DeviceBinding& b) {
    const auto& allowed = device_params(b.kind);
    for (;;) {
      const auto close = text_.find_first_of(",)", pos_);
      if (close == std::string::npos) throw syntax("missing ')'");
      const std::string token = text_.substr(pos_, close - pos_);
      const auto eq = token.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == token.size()) {
        throw syntax(fmt::format("expected key=value, found '{}'", token));
      }
      const std::string key = token.substr(0, eq);
      const std::string value = token.substr(eq + 1);
      const bool known = std::any_of(allowed.begin(), allowed.end(),
                                     [&](const ParamInfo& p) { return p.key == key; });
      if (!known) {
        std::string list;
        for (const auto& p : allowed) list += (list.empty() ? "" : ", ") + p.key;
        throw value_error(fmt::format("device kind '{}' has no parameter '{}' (allowed: {})",
                                      to_string(b.kind), key, list));
      }
      if (b.params.count(key) != 0)
        throw value_error(fmt::format("parameter '{}' given twice", key));
      b.params[key] = canonical_value(key, value);
      pos_ = close + 1;
      if (text_[close] == ')') return;
    }
  }

  // Validates a value and returns its canonical text, so equal devices print equally.
  std::string canonical_value(const std::string& key, const std::string& value) const {
    try {
      if (key == "mem") {
        const auto bytes = parse_bytes(value);
        if (bytes == 0) throw Error(ErrorKind::parse, "a capacity must be positive");
        return format_bytes(bytes);
      }
      if (key == "bw") return format_bandwidth(parse_bandwidth(value));
      if (key == "slowdown") return SlowdownProfile::parse(value).str();
      if (key == "change") return SpeedChange::parse(value).str();
      if (key == "cores") {
        int n = 0;
        if (!parse_count(value, n) || n <= 0) {
          throw Error(ErrorKind::parse, "expected a positive number of cores");
        }
        return std::to_string(n);
      }
      if (key == "clock" && value != "wall" && value != "cpu") {
        throw Error(ErrorKind::parse, "expected wall or cpu");
      }
      if (key == "fail") return std::to_string(parse_fail_after(value));
    } catch (const Error& e) {
      throw value_error(fmt::format("{}={} is not valid: {}", key, value, e.what()));
    }
    return value;
  }

  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  std::string word() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_])) != 0)
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::string number() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0)
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::string original_;
  std::string text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<DeviceBinding> parse_device_spec(std::string_view spec, int procs) {
  if (procs < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("a device spec binds at least one process, asked for {}", procs));
  }
  SpecParser parser(spec);
  const auto items = parser.items();
  // One item without a count stands for every rank.
  if (items.size() == 1 && strip_spaces(spec).find('*') == std::string::npos) {
    return std::vector<DeviceBinding>(static_cast<std::size_t>(procs), items.front().first);
  }
  long long total = 0;
  for (const auto& [b, count] : items) total += count;
  if (total != procs) {
    throw Error(ErrorKind::device,
                fmt::format("device spec '{}' binds {} process{} but the run has {} (give one item "
                            "per rank, use *count, or a single item without a count for all; "
                            "grammar: {})",
                            spec, total, total == 1 ? "" : "es", procs, device_spec_grammar()));
  }
  std::vector<DeviceBinding> out;
  out.reserve(static_cast<std::size_t>(procs));
  for (const auto& [b, count] : items) out.insert(out.end(), static_cast<std::size_t>(count), b);
  return out;
}

std::string format_device_spec(const std::vector<DeviceBinding>& bindings) {
  std::string out;
  for (std::size_t i = 0; i < bindings.size();) {
    std::size_t j = i + 1;
    while (j < bindings.size() && bindings[j] == bindings[i]) ++j;
    if (!out.empty()) out += ',';
    out += bindings[i].str();
    if (j - i > 1) out += "*" + std::to_string(j - i);
    i = j;
  }
  return out;
}

}  // namespace hit
