#pragma once
// Logging: rank-0 messages for the run as a whole, per-rank messages prefixed with the rank.
// The level comes from HIT_LOG_LEVEL (error, warn, info, debug; default warn; `warning` is taken
// as warn, as the lines name it). Any other value is an error when the Environment starts.
//
// The functions take finished text, so this header needs nothing but the standard library: a
// program that logs with the installed package formats its message the way it likes first
// (std::format, a stream, fmt in its own build). Text is written only when its level is enabled;
// check enabled() first when making the text is costly.

#include <string_view>

namespace hit::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3 };

// The level a HIT_LOG_LEVEL value names; a hit::Error(invalid_argument) listing the valid levels
// for any other text.
Level parse_level(std::string_view text);
Level level();
bool enabled(Level at);
// Writes one line to stderr, "hit <level>: text": from rank 0 only when `root_only`, else from
// every rank with a `[rank r/P]` prefix. Writes whatever the level; the functions below filter.
void write(Level at, bool root_only, std::string_view text);

// From rank 0, when the level is enabled.
inline void warn(std::string_view text) {
  if (enabled(Level::warn)) write(Level::warn, true, text);
}
inline void info(std::string_view text) {
  if (enabled(Level::info)) write(Level::info, true, text);
}
inline void debug(std::string_view text) {
  if (enabled(Level::debug)) write(Level::debug, true, text);
}
// From every rank, prefixed with `[rank r/P]`, when `at` is enabled.
inline void rank(Level at, std::string_view text) {
  if (enabled(at)) write(at, false, text);
}

}  // namespace hit::log
