#include "hit/core/wait_policy.hpp"

#include "hit/core/config.hpp"
#include "hit/core/error.hpp"

namespace hit {

WaitPolicy parse_wait_policy(std::string_view text) {
  if (text == "auto") return WaitPolicy::automatic;
  if (text == "spin") return WaitPolicy::spin;
  if (text == "sleep") return WaitPolicy::sleep;
  throw Error(ErrorKind::invalid_argument,
              Config::env_name("wait") + " '" + std::string(text) +
                  "' is not a wait policy (policies: auto, spin, sleep)");
}

std::string to_string(WaitPolicy policy) {
  switch (policy) {
    case WaitPolicy::spin:
      return "spin";
    case WaitPolicy::sleep:
      return "sleep";
    case WaitPolicy::automatic:
      break;
  }
  return "auto";
}

}  // namespace hit
