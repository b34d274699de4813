// The steps of a work-package run of several kernels (hit/work_packages.hpp, docs/packages.md,
// "Several kernels over the same packages"): which arrays the steps share, the rules that keep a
// package's steps on one device without a barrier, and the steps' launches over one package.

#include <fmt/format.h>

#include <algorithm>

#include "hit/core/error.hpp"
#include "hit/work_packages.hpp"

namespace hit::detail {

namespace {

std::string_view policy_name(PackagePolicy p) {
  switch (p) {
    case PackagePolicy::partitioned_in:
      return "a partitioned input";
    case PackagePolicy::replicated_in:
      return "a replicated input";
    case PackagePolicy::partitioned_out:
      return "a partitioned output";
    case PackagePolicy::reduced_out:
      return "a reduced output";
    case PackagePolicy::local:
      return "a package-local array";
  }
  return "an array";
}

bool is_output(PackagePolicy p) {
  return p == PackagePolicy::partitioned_out || p == PackagePolicy::reduced_out;
}

// Whether pattern `a` reads at least the rows `b` reads around a row (first axis).
bool reaches_as_far(const AccessPattern* a, const AccessPattern* b) {
  const AccessPattern::Axis x = a->axis(0);
  const AccessPattern::Axis y = b->axis(0);
  return x.whole || (!y.whole && x.before >= y.before && x.after >= y.after);
}

[[noreturn]] void refuse(std::size_t step, const std::string& why) {
  throw Error(ErrorKind::invalid_argument, fmt::format("work packages: step {}: {}", step, why));
}

}  // namespace

void add_step_array(std::vector<PackageArray>& arrays, std::vector<const void*>& sources,
                    StepLaunch& step, std::size_t step_index, PackageArray array,
                    const void* source, bool writes) {
  const bool local = array.policy == PackagePolicy::local;
  const Intent intent = local ? (writes ? Intent::out : Intent::in)
                              : (is_output(array.policy) ? Intent::out : Intent::in);
  if (local) {
    const AccessPattern::Axis rows = array.reads->axis(0);
    if (rows.whole || rows.before != 0 || rows.after != 0) {
      refuse(step_index, fmt::format("its kernel {} reads package-local array {} around a row "
                                     "(access pattern {}), but a package holds only its own rows "
                                     "of it: read the neighbours' rows in a second run",
                                     step.kernel, array.block.shape.str(), array.reads->str()));
    }
  }
  std::size_t at = arrays.size();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (source != nullptr && sources[i] == source) at = i;
  }
  if (at == arrays.size()) {
    arrays.push_back(array);
    sources.push_back(source);
  } else {
    PackageArray& shared = arrays[at];
    if (shared.policy != array.policy) {
      refuse(step_index,
             fmt::format("array {} of the run is {} in an earlier step and {} in this one: a step "
                         "reads what another writes only through a package-local array "
                         "(hit::PackageLocal), or in a second run",
                         at, policy_name(shared.policy), policy_name(array.policy)));
    }
    if (is_output(array.policy)) {
      refuse(step_index, fmt::format("{} (array {} of the run) is written by one step only",
                                     policy_name(array.policy), at));
    }
    if (array.policy == PackagePolicy::partitioned_in &&
        !reaches_as_far(shared.reads, array.reads)) {
      if (!reaches_as_far(array.reads, shared.reads)) {
        refuse(step_index,
               fmt::format("the steps read partitioned input {} of the run around a row in "
                           "patterns neither of which holds the other's rows ({} and {})",
                           at, shared.reads->str(), array.reads->str()));
      }
      shared.reads = array.reads;  // its halo rows serve both
    }
  }
  step.arrays.push_back(at);
  step.intents.push_back(intent);
  step.reads.push_back(array.reads);
}

void check_steps(const std::vector<PackageArray>& arrays, const std::vector<StepLaunch>& steps) {
  std::vector<int> written(arrays.size(), -1);  // the step that writes a local array
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const StepLaunch& step = steps[s];
    for (std::size_t k = 0; k < step.arrays.size(); ++k) {
      const std::size_t a = step.arrays[k];
      if (arrays[a].policy != PackagePolicy::local) continue;
      if (step.intents[k] == Intent::out) {
        if (written[a] >= 0) {
          refuse(s, fmt::format("package-local array {} of the run is written by step {} "
                                "already: one step writes it",
                                a, written[a]));
        }
        written[a] = static_cast<int>(s);
      } else if (written[a] < 0 || written[a] == static_cast<int>(s)) {
        refuse(s, fmt::format("package-local array {} of the run is read before a step wrote "
                              "it: an earlier step passes it as hit::local_out",
                              a));
      }
    }
  }
}

LaunchRecord run_steps(const std::vector<StepLaunch>& steps, const Partition& partition,
                       const std::vector<LaunchArg>& args) {
  LaunchRecord total;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const StepLaunch& step = steps[s];
    std::vector<LaunchArg> mine;
    mine.reserve(step.arrays.size());
    for (std::size_t k = 0; k < step.arrays.size(); ++k) {
      LaunchArg a = args[step.arrays[k]];
      a.intent = step.intents[k];
      a.reads = step.reads[k];
      mine.push_back(std::move(a));
    }
    // The first step's partition is the one the run was given; the others cut the same rows
    // with the same plug-in by their own kernel's pattern.
    const LaunchRecord r = s == 0 ? step.launch(partition, std::move(mine))
                                  : step.launch(hit::partition(partition.spec(), partition.domain(),
                                                               {.access = step.access}),
                                                std::move(mine));
    if (s == 0) {
      total = r;
      continue;
    }
    total.kernel += "+" + r.kernel;
    total.seconds += r.seconds;
    total.wait_seconds += r.wait_seconds;
    total.kernel_seconds += r.kernel_seconds;
    total.host_kernel_seconds += r.host_kernel_seconds;
    total.bytes_in += r.bytes_in;
    total.bytes_out += r.bytes_out;
    total.copies_in += r.copies_in;
    total.copies_out += r.copies_out;
    total.problem_bytes = std::max(total.problem_bytes, r.problem_bytes);
    total.chunks = std::max(total.chunks, r.chunks);
    total.lock_released = r.lock_released;
  }
  return total;
}

}  // namespace hit::detail
