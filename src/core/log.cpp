#include "hit/core/log.hpp"

#include <cstdio>
#include <string>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"

namespace hit::log {

Level parse_level(std::string_view text) {
  if (text == "error") return Level::error;
  if (text == "warn" || text == "warning") return Level::warn;
  if (text == "info") return Level::info;
  if (text == "debug") return Level::debug;
  throw Error(ErrorKind::invalid_argument,
              "HIT_LOG_LEVEL '" + excerpt(text) +
                  "' is not a log level (levels: error, warn, info, debug)");
}

Level level() {
  if (!Environment::exists()) return Level::warn;
  const auto v = Environment::current().config().get("log-level");
  if (!v) return Level::warn;
  // Checked when the Environment starts; a value set later by a program that is not a level
  // leaves the default.
  try {
    return parse_level(*v);
  } catch (const Error&) {
    return Level::warn;
  }
}

bool enabled(Level at) {
  return static_cast<int>(at) <= static_cast<int>(level());
}

void write(Level at, bool root_only, std::string_view text) {
  int rank = 0;
  int size = 1;
  if (Environment::exists()) {
    rank = Environment::current().rank();
    size = Environment::current().size();
  }
  if (root_only && rank != 0) return;
  static constexpr const char* names[] = {"error", "warning", "info", "debug"};
  std::string line = std::string("hit ") + names[static_cast<int>(at)] + ": ";
  if (!root_only) line += "[rank " + std::to_string(rank) + "/" + std::to_string(size) + "] ";
  line.append(text);
  line += '\n';
  std::fputs(line.c_str(), stderr);
}

}  // namespace hit::log
