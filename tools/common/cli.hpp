#pragma once
// The command-line parsing every hitmap++ program shares (CLI11). Header-only, for programs only:
// the library itself does not depend on CLI11. tools/common is not a program.

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include "hit/core/error.hpp"
#include "hit/core/version.hpp"

namespace hit::cli {

// Parses the command line, with --version. Returns false when help or the version was asked for
// (printed by rank 0 only): the program then exits 0. A malformed command line is an Error(parse)
// that points to --help, thrown on every rank alike (all ranks parse the same arguments).
inline bool parse(CLI::App& app, int argc, char** argv, int rank, const std::string& program) {
  app.set_version_flag("--version", program + " (hitmap++ " + std::string(hit::version()) + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    if (rank == 0) std::printf("%s\n", e.what());
    return false;
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    return false;
  } catch (const CLI::CallForAllHelp&) {
    if (rank == 0) std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    throw Error(ErrorKind::parse, std::string(e.what()) + " (see " + program + " --help)");
  }
  return true;
}

// The text of an option's value as an error message shows it (long values cut).
inline std::string shown_value(const std::string& text) {
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// A whole number from `least` to the largest 64-bit count, checked on the text as typed (CLI11's
// own conversion clamps a value too large for the type, and its range checks print both limits as
// long reals): "--n: '0' is not a whole number from 1 to 9223372036854775807".
// `most`: the largest value the option's variable holds.
inline CLI::Validator count(long long least,
                            long long most = std::numeric_limits<long long>::max()) {
  return CLI::Validator(
      [least, most](std::string& text) -> std::string {
        const std::string shown = shown_value(text);
        const std::string allowed =
            "is not a whole number from " + std::to_string(least) + " to " + std::to_string(most);
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > most)) {
          return "'" + shown + "' " + allowed + " (too large)";
        }
        if (ec != std::errc() || ptr != end || value < least) return "'" + shown + "' " + allowed;
        return {};
      },
      "COUNT>=" + std::to_string(least));
}

inline std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A validator of real numbers: `accept(value)` for a value that parses whole, else the message
// "'<text>' <allowed>".
template <class Accept>
CLI::Validator real_validator(Accept accept, std::string allowed, std::string description) {
  return CLI::Validator(
      [accept, allowed](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end || !accept(value)) {
          return "'" + shown_value(text) + "' " + allowed;
        }
        return {};
      },
      std::move(description));
}

// A real number above `above` (and at most `most`): "--precision: '0' is not a number above 0".
inline CLI::Validator real_above(double above, double most = std::numeric_limits<double>::max()) {
  std::string allowed = "is not a number above " + number_text(above);
  if (most < std::numeric_limits<double>::max()) allowed += " and at most " + number_text(most);
  return real_validator([above, most](double v) { return v > above && v <= most; },
                        std::move(allowed), "NUMBER>" + number_text(above));
}

// A finite real number of at least `least`: "--balance-reserve: '-1' is not a number of at least
// 0".
inline CLI::Validator real_at_least(double least) {
  return real_validator([least](double v) { return v >= least && std::isfinite(v); },
                        "is not a number of at least " + number_text(least),
                        "NUMBER>=" + number_text(least));
}

// A file name: not empty (an empty --c-out would silently write nothing).
// `text` with every `what` replaced by `with`: file-name patterns ({rank}, {device}).
inline std::string replace_all(std::string text, const std::string& what, const std::string& with) {
  for (auto pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + with.size())) {
    text.replace(pos, what.size(), with);
  }
  return text;
}

inline CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? std::string("the file name is empty") : std::string();
      },
      "FILE");
}

}  // namespace hit::cli
