#pragma once
// fmt-style logging for the library's own sources and its tools: log::debug("{} nodes", n).
//
// Private, because fmt is a private dependency of the library: the installed hit/core/log.hpp
// takes finished text only. These overloads format the text, and only when its level is enabled,
// then hand it to those functions. A call without arguments goes to the text overloads of
// log.hpp directly (the templates need at least one argument).

#include <fmt/format.h>

#include <utility>

#include "hit/core/log.hpp"

namespace hit::log {

template <class... Args>
requires(sizeof...(Args) > 0) void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::warn)) write(Level::warn, true, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
requires(sizeof...(Args) > 0) void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::info)) write(Level::info, true, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
requires(sizeof...(Args) > 0) void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::debug)) write(Level::debug, true, fmt::format(f, std::forward<Args>(args)...));
}
// Every rank logs, prefixed with `[rank r/P]`.
template <class... Args>
requires(sizeof...(Args) > 0) void rank(Level at, fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(at)) write(at, false, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace hit::log
