#pragma once
// Run-time configuration: values set from a program's command line win over HIT_* environment
// variables. Read through the Environment, so no module calls getenv on its own.

#include <map>
#include <optional>
#include <string>

namespace hit {

class Config {
 public:
  // Records a value given on the command line (`key` as in `--key`, e.g. "devices").
  void set(const std::string& key, const std::string& value) { values_[key] = value; }

  // The command-line value of `key`, else the environment variable HIT_<KEY> (upper case, '-' and
  // '.' as '_'), else nothing.
  std::optional<std::string> get(const std::string& key) const;

  // Name of the environment variable that configures `key`.
  static std::string env_name(const std::string& key);

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace hit
