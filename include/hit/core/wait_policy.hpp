#pragma once
// How a process waits for messages (hit::wait_all): polling all the time, or sleeping between
// polls. With more processes on a machine than it has cores, a polling process holds a core that
// the process it waits for needs, until the scheduler takes it away a time slice later.

#include <string>
#include <string_view>

namespace hit {

enum class WaitPolicy {
  automatic,  // sleep when the processes on this machine outnumber its cores, else spin
  spin,       // poll without pause (after a while, yield the core to the scheduler); the default
  sleep,      // poll for a moment, then sleep a few microseconds between polls
};

// "auto", "spin" or "sleep" (the `wait` setting, HIT_WAIT); Error(parse) naming the choices.
WaitPolicy parse_wait_policy(std::string_view text);
std::string to_string(WaitPolicy policy);

}  // namespace hit
