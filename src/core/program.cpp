#include "hit/core/program.hpp"

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/error.hpp"

namespace hit {
namespace {

// Takes `--hit-advise` and `--hit-advise=VALUE` out of the arguments (the program never sees
// them) into the configuration's "advise", where HIT_ADVISE would put it.
std::vector<char*> take_advise_flag(Environment& env, int argc, char** argv) {
  std::vector<char*> kept;
  const std::string_view flag = "--hit-advise";
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i > 0 && arg == flag) {
      env.config().set("advise", "1", std::string(flag));
    } else if (i > 0 && arg.substr(0, flag.size() + 1) == std::string(flag) + "=") {
      env.config().set("advise", std::string(arg.substr(flag.size() + 1)), std::string(flag));
    } else {
      kept.push_back(argv[i]);
    }
  }
  kept.push_back(nullptr);
  return kept;
}

bool advise_requested(const Environment& env) {
  const auto v = env.config().get("advise");
  return v && !v->empty() && *v != "0" && *v != "false" && *v != "no";
}

}  // namespace

int run_program(int argc, char** argv, std::string_view program, const ProgramBody& body,
                ProgramAdvisor advisor) {
  try {
    Environment env(argc, argv);
    // The failure of this process, or the one another process announced: printed once, by
    // rank 0 (which learns of a failure elsewhere from its announcement).
    const auto fail = [&](const std::exception& e, bool internal) {
      env.announce_failure(e);
      if (env.rank() == 0) {
        std::fprintf(stderr, "%.*s: %serror: %s\n", static_cast<int>(program.size()),
                     program.data(), internal ? "internal " : "", e.what());
      }
      return exit_error;
    };
    int status = exit_ok;
    try {
      std::vector<char*> args = take_advise_flag(env, argc, argv);
      const int count = static_cast<int>(args.size()) - 1;
      if (advise_requested(env)) {
        if (advisor == nullptr) {
          throw Error::everywhere(ErrorKind::invalid_argument,
                                  std::string(program) +
                                      " cannot be advised: it was built without the advisor "
                                      "(hit/program.hpp's run_program)");
        }
        status = advisor(env, program, count, args.data(), body);
      } else {
        status = body(env, count, args.data());
      }
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
