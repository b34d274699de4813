#pragma once
// The command-line parsing every hitmap++ program shares (CLI11). Header-only, for programs only:
// the library itself does not depend on CLI11. tools/common is not a program.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "hit/core/error.hpp"

namespace hit::cli {

// Parses the command line. Returns false when help was asked for (printed by rank 0 only): the
// program then exits 0. A malformed command line is an Error(parse) that points to --help, thrown
// on every rank alike (all ranks parse the same arguments).
inline bool parse(CLI::App& app, int argc, char** argv, int rank, const std::string& program) {
  try {
    app.parse(argc, argv);
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

}  // namespace hit::cli
