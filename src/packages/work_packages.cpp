// hit::WorkPackages (hit/work_packages.hpp, docs/packages.md): the runtime policy's options and
// the public class, a handle on the engine (src/packages/engine.hpp) that plans the arrays,
// dispatches the packages and reroutes around a failed device.

#include "hit/work_packages.hpp"

#include <fmt/format.h>

#include "hit/core/error.hpp"
#include "hit/core/spec.hpp"
#include "packages/engine.hpp"

namespace hit {

// ---- options -----------------------------------------------------------------------------------

namespace {

const std::vector<ParamInfo>& package_params() {
  static const std::vector<ParamInfo> params = {
      {"size", "rows of the domain's first axis per package, or auto (tuned by a measurement)",
       "auto"},
      {"depth", "launches each rank holds ahead of the one computing (prefetched), >= 1", "2"},
      {"batch",
       "packages a device launches at once: 1, or auto (size=auto only: each device the rows the "
       "tuner finds best for it)",
       "1"},
  };
  return params;
}

}  // namespace

PackageOptions PackageOptions::parse(std::string_view text) {
  const Spec spec = Spec::parse(text);
  if (spec.name() != "workPackages") {
    throw Error(ErrorKind::plugin,
                fmt::format("'{}' is not a work-package spec: expected "
                            "workPackages[:size=G|auto][,depth=D][,batch=auto|1]",
                            excerpt(text)));
  }
  spec.check_keys(package_params());
  PackageOptions o;
  const std::string size = spec.get_string("size", "auto");
  if (size != "auto") {
    o.size = spec.get_int("size", 0);
    if (o.size <= 0) {
      throw Error(
          ErrorKind::invalid_argument,
          fmt::format("work packages: size={} is not a positive number of rows (or auto)", size));
    }
  }
  const std::int64_t depth = spec.get_int("depth", 2);
  if (depth < 1 || depth > 1024) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: depth={} is outside 1..1024 (packages held ahead "
                            "of the one computing)",
                            depth));
  }
  o.depth = static_cast<int>(depth);
  const std::string batch = spec.get_string("batch", "1");
  if (batch == "auto") {
    o.batch = 0;
  } else if (batch != "1") {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: batch={} is neither auto nor 1 (packages a device "
                            "launches at once)",
                            batch));
  }
  if (o.batch == 0 && o.size != 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("work packages: batch=auto needs size=auto (each device's batch comes "
                            "from the size tuner's measurement), not size={}",
                            o.size));
  }
  return o;
}

std::string PackageOptions::spec() const {
  return fmt::format("workPackages:size={},depth={}{}", size > 0 ? std::to_string(size) : "auto",
                     depth, size == 0 && batch == 0 ? ",batch=auto" : "");
}

// ---- WorkPackages -------------------------------------------------------------------------------

WorkPackages::WorkPackages(Environment& env, Shape domain, PackageOptions options)
    : WorkPackages(env, domain, options, partition("single", domain)) {}

WorkPackages::WorkPackages(Environment& env, Shape domain, PackageOptions options,
                           Partition partition)
    : env_(env),
      engine_(std::make_unique<detail::PackageEngine>(env, std::move(domain), options,
                                                      std::move(partition))) {}
WorkPackages::~WorkPackages() = default;

const Shape& WorkPackages::domain() const noexcept {
  return engine_->domain();
}
index_t WorkPackages::size() const noexcept {
  return engine_->size();
}
index_t WorkPackages::count() const noexcept {
  return engine_->count();
}
index_t WorkPackages::batch() const noexcept {
  return engine_->batch();
}
Shape WorkPackages::package(index_t id) const {
  return engine_->package(id);
}
Shape WorkPackages::rows(const PackageRecord& launch) const {
  return engine_->packages(launch.id, launch.packages);
}
double WorkPackages::tuned_overhead_s() const noexcept {
  return engine_->overhead_s();
}
double WorkPackages::tuned_row_s() const noexcept {
  return engine_->row_s();
}
bool WorkPackages::device_failed() const noexcept {
  return engine_->failed();
}

PackageReport WorkPackages::run_erased(const std::string& kernel, const AccessPattern& access,
                                       std::vector<detail::PackageArray> arrays,
                                       const detail::PackageLaunch& launch_one) {
  return engine_->run(kernel, detail::KernelCall{access, launch_one}, std::move(arrays));
}

}  // namespace hit
