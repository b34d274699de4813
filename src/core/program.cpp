#include "hit/core/program.hpp"

#include <cstdio>
#include <new>
#include <string>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"

namespace hit {

int run_program(int argc, char** argv, std::string_view program,
                const std::function<int(Environment&, int, char**)>& body) {
  try {
    Environment env(argc, argv);
    // The failure of this process, or the one another process announced: printed once, by
    // rank 0 (which learns of a failure elsewhere from its announcement).
    const auto fail = [&](const std::exception& e, bool internal) {
      const auto* error = dynamic_cast<const Error*>(&e);
      if (error == nullptr || !error->everywhere()) {
        env.announce_failure(error != nullptr ? error->kind() : ErrorKind::internal, e.what());
      }
      if (env.rank() == 0) {
        std::fprintf(stderr, "%.*s: %serror: %s\n", static_cast<int>(program.size()),
                     program.data(), internal ? "internal " : "", e.what());
      }
      return exit_error;
    };
    int status = exit_ok;
    try {
      status = body(env, argc, argv);
      // Every process ends with the same verdict: one that succeeded learns here of a failure
      // announced elsewhere (the others' exit statuses are agreed too).
      int worst = status;
      allreduce_in_place(&worst, 1, MPI_INT, MPI_MAX, env.comm());
      return worst;
    } catch (const Error& e) {
      return fail(e, false);
    } catch (const std::bad_alloc&) {
      // Where no estimate refused the problem first: still the user's answer, not a crash.
      return fail(Error(ErrorKind::out_of_memory,
                        "the host ran out of memory (an allocation failed): the problem is too "
                        "large for the memory of this node's processes; run a smaller one, or "
                        "spread it over more nodes"),
                  false);
    } catch (const std::exception& e) {
      return fail(e, true);
    }
  } catch (const StartError& e) {
    // The Environment could not start; the failure is agreed unless only this process saw it.
    if (e.rank() == 0 || !e.everywhere()) {
      std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(),
                   e.what());
    }
    return exit_error;
  } catch (const std::exception& e) {
    // The Environment itself failed before it knew its rank.
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(),
                 e.what());
    return exit_error;
  }
}

}  // namespace hit
