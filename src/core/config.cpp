#include "hit/core/config.hpp"

#include <cctype>
#include <cstdlib>
#include <utility>

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

Setting Config::resolve(const std::string& key, std::string code, std::string name) const {
  Setting s(std::move(code));
  s.name = std::move(name);
  if (auto value = get(key)) {
    s.value = *value;
    s.source = source(key).value_or(env_name(key));
  }
  return s;
}

}  // namespace hit
