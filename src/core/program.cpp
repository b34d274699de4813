#include "hit/core/program.hpp"

#include <cstdio>
#include <string>

#include "hit/core/error.hpp"

namespace hit {

int run_program(int argc, char** argv, std::string_view program,
                const std::function<int(Environment&, int, char**)>& body) {
  try {
    Environment env(argc, argv);
    try {
      return body(env, argc, argv);
    } catch (const Error& e) {
      if (env.rank() == 0) {
        std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(),
                     e.what());
      }
      return exit_error;
    } catch (const std::exception& e) {
      if (env.rank() == 0) {
        std::fprintf(stderr, "%.*s: internal error: %s\n", static_cast<int>(program.size()),
                     program.data(), e.what());
      }
      return exit_error;
    }
  } catch (const std::exception& e) {
    // The Environment itself failed (a plug-in that does not load, say).
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(),
                 e.what());
    return exit_error;
  }
}

}  // namespace hit
