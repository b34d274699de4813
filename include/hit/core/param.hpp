#pragma once
// What a plug-in parameter accepts (docs/plugins.md, "Parameters"): its type, its range and
// whether it is required. The registry checks a spec against these declarations before the
// plug-in runs, and hit-layout --list prints them, so a plug-in reads values known to be valid and
// checks only what depends on the run (the processes, the axes of the shape or the topology).
//
//   ParamInfo::integer("B", "top-level tile size").at_least(1).required("the tile size B")
//   ParamInfo::integer("g", "granularity of bh", "b").at_least("b").at_most("B")
//   ParamInfo::reals("w", "speeds, one per process").above(0).named("weight")
//   ParamInfo::choice("inner", "partition of each chunk", {"single", "threads", "blocks"})
//
// A plain aggregate `{key, description, default}` is an untyped text parameter.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hit {

class Spec;

enum class ParamType {
  text,      // any value (a file, a spec, a list the plug-in parses itself)
  integer,   // one 64-bit integer
  real,      // one finite number
  choice,    // one of the names in `choices`
  integers,  // a comma-separated list of integers
  reals,     // a comma-separated list of finite numbers
};

// One end of a numeric range: a number, or the value of another integer parameter declared
// before (skipped when that one is absent and has no numeric default).
struct ParamBound {
  double value = 0;
  std::string key = {};  // non-empty: the value of that parameter
  bool strict = false;   // the end itself is excluded
};

// A parameter a plug-in accepts, for validation, `--list` and error messages.
struct ParamInfo {
  std::string key;
  std::string description;
  std::string default_value = {};  // shown by --list; empty: required or no default
  ParamType type = ParamType::text;
  std::optional<ParamBound> min = {};  // of the value, or of every item of a list
  std::optional<ParamBound> max = {};
  std::vector<std::string> choices = {};  // ParamType::choice
  // How a message names a value ("block size b=0", "weight 0 (position 1 of w)"); empty: by key.
  std::string noun = {};
  // The range in words, replacing the one made of min and max ("a fraction strictly between 0
  // and 1"); empty: from min and max.
  std::string range_words = {};
  // Non-empty: the parameter is required, and a spec without it is an error saying it needs this
  // ("the block size b (e.g. blockCyclic:b=4)").
  std::string needed = {};

  [[nodiscard]] static ParamInfo text(std::string key, std::string description,
                                      std::string default_value = {});
  [[nodiscard]] static ParamInfo integer(std::string key, std::string description,
                                         std::string default_value = {});
  [[nodiscard]] static ParamInfo real(std::string key, std::string description,
                                      std::string default_value = {});
  [[nodiscard]] static ParamInfo integers(std::string key, std::string description,
                                          std::string default_value = {});
  [[nodiscard]] static ParamInfo reals(std::string key, std::string description,
                                       std::string default_value = {});
  [[nodiscard]] static ParamInfo choice(std::string key, std::string description,
                                        std::vector<std::string> choices,
                                        std::string default_value = {});

  // Range ends: at_least/at_most include the end, above/below exclude it; a key names another
  // integer parameter.
  [[nodiscard]] ParamInfo at_least(double v) &&;
  [[nodiscard]] ParamInfo at_least(std::string other_key) &&;
  [[nodiscard]] ParamInfo above(double v) &&;
  [[nodiscard]] ParamInfo at_most(double v) &&;
  [[nodiscard]] ParamInfo at_most(std::string other_key) &&;
  [[nodiscard]] ParamInfo below(double v) &&;
  [[nodiscard]] ParamInfo between(double lo, double hi) && {
    return std::move(*this).at_least(lo).at_most(hi);
  }
  [[nodiscard]] ParamInfo required(std::string what_is_needed = {}) &&;
  [[nodiscard]] ParamInfo named(std::string value_noun) &&;
  [[nodiscard]] ParamInfo range_in_words(std::string words) &&;

  bool is_required() const noexcept { return !needed.empty(); }
  // "integer >= 1", "reals > 0", "one of log, angle, linear", "text"; with ", required".
  [[nodiscard]] std::string type_text() const;
};

// Checks `spec` against `params`: no unknown key (Spec::check_keys), every required one given, and
// each value of its type and within its range. Throws Error(plugin) naming `kind` and the spec
// ("layout 'blocksLB:factor=1.5'"), the parameter, its value and what is allowed.
void check_params(const Spec& spec, const std::vector<ParamInfo>& params, std::string_view kind);

}  // namespace hit
