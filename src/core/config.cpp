#include "hit/core/config.hpp"

#include <cctype>
#include <cstdlib>

namespace hit {

std::string Config::env_name(const std::string& key) {
  std::string out = "HIT_";
  for (char c : key) {
    out += (c == '-' || c == '.') ? '_'
                                  : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<std::string> Config::get(const std::string& key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second.value;
  if (const char* v = std::getenv(env_name(key).c_str()); v != nullptr && *v != '\0') {
    return std::string(v);
  }
  return std::nullopt;
}

std::optional<std::string> Config::source(const std::string& key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second.flag;
  if (const char* v = std::getenv(env_name(key).c_str()); v != nullptr && *v != '\0') {
    return env_name(key);
  }
  return std::nullopt;
}

}  // namespace hit
