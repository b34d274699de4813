#pragma once
// Run-time configuration: values set from a program's command line win over HIT_* environment
// variables. Read through the Environment, so no module calls getenv on its own.

#include <map>
#include <optional>
#include <string>

#include "hit/core/setting.hpp"

namespace hit {

class Config {
 public:
  // Records a value given on the command line: `key` as in `--key` (e.g. "devices"); `flag`, the
  // option that gave it where the program names it otherwise (hit-cg's --layout sets
  // "layout-matrix"), so that messages send the user to an option that exists.
  void set(const std::string& key, const std::string& value, const std::string& flag = {}) {
    values_[key] = {value, flag.empty() ? "--" + key : flag};
  }

  // Forgets the command-line value of `key` (HIT_<KEY> applies again).
  void unset(const std::string& key) { values_.erase(key); }

  // The command-line value of `key`, else the environment variable HIT_<KEY> (upper case, '-' and
  // '.' as '_'), else nothing.
  std::optional<std::string> get(const std::string& key) const;

  // Where get(key) comes from: the command-line option that set it, else the environment
  // variable; nothing when neither is set.
  std::optional<std::string> source(const std::string& key) const;

  // The setting `key` resolved where a program starts: the command-line value, else HIT_<KEY>,
  // else `code` (the program's own choice), with what set it; `name` says what it sets, for
  // messages ("layout of 'a'").
  Setting resolve(const std::string& key, std::string code, std::string name) const;

  // Name of the environment variable that configures `key`.
  static std::string env_name(const std::string& key);

 private:
  struct Given {
    std::string value;
    std::string flag;
  };
  std::map<std::string, Given> values_;
};

}  // namespace hit
