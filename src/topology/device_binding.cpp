// The `--devices` / HIT_DEVICES grammar: parsing a spec into one binding per rank, and the
// canonical text of bindings (docs/devices.md §2).

#include "hit/topology/device_binding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "hit/core/error.hpp"
#include "hit/topology/device_params.hpp"
#include "topology/param_text.hpp"

namespace hit {

using detail::parse_count;
using detail::strip_spaces;

std::string_view device_spec_grammar() {
  return "spec = item[,item...]; item = kind[:index][(key=value[,key=value...])][*count]; "
         "kind = cpu|cuda|emu; keys: cpu and cuda (cores), emu (mem, bw, slowdown, change, clock, "
         "fail, stall, cores); "
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

  std::string canonical_value(const std::string& key, const std::string& value) const {
    try {
      return detail::canonical_param_value(key, value);
    } catch (const Error& e) {
      throw value_error(fmt::format("{}={} is not valid: {}", key, value, e.what()));
    }
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
