#pragma once
// Logging: rank-0 messages for the run as a whole, per-rank messages prefixed with the rank.
// The level comes from HIT_LOG_LEVEL (error, warn, info, debug; default warn).

#include <fmt/format.h>

#include <string_view>

namespace hit::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

Level level();
bool enabled(Level at);
// Writes one line to stderr: from rank 0 only when `root_only`, else from every rank with a prefix.
void write(Level at, bool root_only, std::string_view text);

template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::info)) write(Level::info, true, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::warn)) write(Level::warn, true, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::debug)) write(Level::debug, true, fmt::format(f, std::forward<Args>(args)...));
}
// Every rank logs, prefixed with `[rank r/P]`.
template <class... Args>
void rank(Level at, fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(at)) write(at, false, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace hit::log
