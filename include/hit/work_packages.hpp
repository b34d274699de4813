#pragma once
// Work packages (docs/packages.md; Raca and Mehofer, clusterCL): balance by dispatch instead of
// by model. The first axis of a domain is cut into packages of the same number of rows, many more
// than the devices; every rank takes packages on demand, first from its own queue (the packages
// whose rows it owns), then from the queues of the others (one-sided MPI: a queue is a counter in
// its rank's window, so no rank serves everyone); faster devices simply take more, and a device
// takes a package only if it would finish it before any other device could (placement by
// expected finish time: a fast device beside slow ones is not slower than alone). With
// batch=auto (and size=auto) a package is sized for the slow devices and a faster device launches
// several neighbouring packages at once.
//
//   hit::WorkPackages packages(env, domain, hit::PackageOptions::parse("workPackages:size=64"),
//                              hit::partition("blocks", domain));
//   auto report = packages.run(kernel, hit::partitioned_in(a_block), hit::replicated_in(x),
//                              hit::partitioned_out(y_block), alpha);
//
// Arrays take part by policy: a partitioned input is an ordinary layout's block on each rank (by
// rows, whole rows); the rows of a package move from their owner to the rank that computes it.
// A replicated input is whole on every rank and stays on the device across packages. A
// partitioned output is an ordinary layout's block too: results go back to the owner of their
// rows, so after run() the output is an ordinary distributed tile the rest of the framework uses.
// A reduced output (clusterCL's input partitioning) is whole on every rank: each package's launch
// sees it whole and zero, and adds its rows' contributions to it; after run() every rank's tile
// holds the sum over all packages (in an order that depends on who computed what, so floating-
// point sums may differ in their last bits from run to run). A partitioned input whose kernel
// reads neighbouring rows (its access pattern's first axis, e.g. "-1:1,-1:1") comes with those
// halo rows where the array has them, fetched from their owners with the package's own rows.
// Values (scalars) are passed to every launch unchanged. Several kernels run over the same packages
// as the steps of one run (hit::step): a package runs them one after another on its device, and a
// package-local array (hit::PackageLocal) carries its rows from one step to the next there. The
// kernel is an ordinary hit::Kernel:
// each package is one hit::launch over the package's rows of the domain, partitioned by the
// plug-in and parameters of the domain's Partition (as hit::launch takes it; default single).
//
// Prefetching: each rank keeps up to `depth` packages ahead of the one computing (fewer when its
// measured transfer and compute times need fewer, none on a much slower device), their rows
// fetched and (on an accelerator) copied to the device on its second stream while the current one
// computes. Rerouting: a launch that throws Error(device_failed) (an emulated device's fail=K, a
// GPU error) takes the device out; the packages it held but did not finish are dispatched again
// to the other devices, and its queue is served to them. Every package is computed exactly once.
// A whole process dying is out of scope: MPI without fault-tolerance extensions cannot survive it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/core/mpi_type.hpp"
#include "hit/launch.hpp"
#include "hit/partition.hpp"
#include "hit/shape.hpp"
#include "hit/tile.hpp"

namespace hit {

// The runtime policy `workPackages[:size=G|auto][,depth=D][,batch=auto|1]` (spec grammar as for
// plug-ins).
struct PackageOptions {
  index_t size = 0;  // rows of the domain's first axis per package; 0 (auto): tuned at first run
  int depth = 2;     // launches held ahead of the one computing, per rank (>= 1)
  // Packages a device launches at once: 1, every device one; 0 (auto, with size=auto only),
  // each device its own number, so that a device's launches have the rows the size tuner finds
  // best for it alone (a faster device launches several neighbouring packages at once).
  int batch = 1;

  // Error(parse) or Error(plugin) naming the text, the keys and their ranges.
  [[nodiscard]] static PackageOptions parse(std::string_view spec);
  [[nodiscard]] std::string spec() const;
};

enum class PackagePolicy { partitioned_in, replicated_in, partitioned_out, reduced_out, local };

// Built by the functions below; dropping one is a bug (the array takes no part).
template <class T>
struct [[nodiscard]] PackageArg {
  using element_type = T;
  PackagePolicy policy = PackagePolicy::partitioned_in;
  Tile<T> tile;
  // The array passed (the Tile or PackageLocal object): the steps of one run that pass the same
  // one share it.
  const void* source = nullptr;
  Shape local_shape;    // a package-local array's whole shape
  bool writes = false;  // a package-local array: this step writes it (else reads it)
};

namespace detail {
template <class T>
PackageArg<T> package_arg(PackagePolicy policy, const Tile<T>& tile, const void* source) {
  PackageArg<T> a;
  a.policy = policy;
  a.tile = tile;
  a.source = source;
  return a;
}
}  // namespace detail

// This rank's rows of an input laid out by rows (null on a rank holding none).
template <class T>
PackageArg<T> partitioned_in(const Tile<T>& block) {
  return detail::package_arg(PackagePolicy::partitioned_in, block, &block);
}
// An input every rank holds whole.
template <class T>
PackageArg<T> replicated_in(const Tile<T>& whole) {
  return detail::package_arg(PackagePolicy::replicated_in, whole, &whole);
}
// This rank's rows of the output, laid out by rows (null on a rank holding none).
template <class T>
PackageArg<T> partitioned_out(const Tile<T>& block) {
  return detail::package_arg(PackagePolicy::partitioned_out, block, &block);
}
// An output every rank holds whole, the sum of every package's contributions (a kernel adds into
// it). A launch's blocks must not run at once on the host (partition `single` on cpu and emu
// devices): they would add into the same elements.
template <class T>
PackageArg<T> reduced_out(const Tile<T>& whole) {
  return detail::package_arg(PackagePolicy::reduced_out, whole, &whole);
}

// An array that lives only inside each package, on the device computing it, between the steps of
// one run (WorkPackages::run(hit::step(...), hit::step(...))): one step writes a package's rows
// of it (hit::local_out), later steps read those rows (hit::local_in), and they never reach the
// host or another device. `whole`: its shape, its first axis the domain's. A step reads only the
// package's own rows of it (a stencil over it needs the rows of other packages: a second run).
// Its identity is its address: pass the same object to every step.
template <class T>
class PackageLocal {
 public:
  explicit PackageLocal(Shape whole) : whole_(std::move(whole)) {}
  PackageLocal(const PackageLocal&) = delete;
  PackageLocal& operator=(const PackageLocal&) = delete;
  const Shape& shape() const noexcept { return whole_; }

 private:
  Shape whole_;
};
namespace detail {
template <class T>
PackageArg<T> local_arg(const PackageLocal<T>& local, bool writes) {
  PackageArg<T> a;
  a.policy = PackagePolicy::local;
  a.source = &local;
  a.local_shape = local.shape();
  a.writes = writes;
  return a;
}
}  // namespace detail
template <class T>
PackageArg<T> local_out(const PackageLocal<T>& local) {
  return detail::local_arg(local, true);
}
template <class T>
PackageArg<T> local_in(const PackageLocal<T>& local) {
  return detail::local_arg(local, false);
}

// One kernel of a run of several (WorkPackages::run(step(k1, ...), step(k2, ...))): its arguments
// as for WorkPackages::run(kernel, ...).
template <class K, class... Args>
struct [[nodiscard]] PackageStep {
  const K& kernel;
  std::tuple<Args...> args;
};
template <class... Params, class... Args>
PackageStep<Kernel<Params...>, std::decay_t<Args>...> step(const Kernel<Params...>& kernel,
                                                           Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "hit::step needs one argument per kernel "
                "parameter");
  return {kernel, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
}

// One launch: packages id .. id + packages - 1 (consecutive rows), where and when (seconds from the
// start of the run, on a clock the ranks share after a barrier).
struct PackageRecord {
  index_t id = 0;
  int rank = 0;
  double start_s = 0;
  double end_s = 0;
  bool rerouted = false;  // another device had it and failed
  index_t packages = 1;   // packages launched at once (the device's batch, fewer at the end)
};

// What this rank did in one run.
struct PackageReport {
  index_t size = 0;          // rows per package
  index_t count = 0;         // packages in the domain
  index_t batch = 1;         // packages this rank's device launches at once (at most)
  int depth = 0;             // most launches held ahead by measured times (<= asked; 0: a slow
                             // device)
  int max_ahead = 0;         // most launches held ahead of the one computing (<= depth)
  int rounds = 0;            // dispatch rounds (1 + one per round of rerouting)
  double wall_s = 0;         // the run, from its starting barrier to this rank's last package
  double busy_s = 0;         // launches (the device computing, staging and copying back)
  double idle_s = 0;         // wall_s - busy_s: waiting for a package or its data
  std::uint64_t stolen = 0;  // packages taken from other ranks' queues
  std::uint64_t bytes_fetched = 0;   // input rows received from other ranks
  std::uint64_t bytes_returned = 0;  // output rows sent to their owners on other ranks
  std::uint64_t overlapped = 0;      // packages whose inputs reached the device during a launch
  std::uint64_t h2d_bytes = 0;       // host -> device (prefetches and launches)
  std::uint64_t d2h_bytes = 0;
  std::uint64_t evictions = 0;  // resident copies given up for ranks sharing the device
  std::uint64_t evicted_bytes = 0;
  bool device_failed = false;  // this rank's device failed (now or in an earlier run)
  std::string failure;         // its message
  bool withdrawn = false;      // its packages kept missing (far beyond its measured time): it took
                               // no more in this run, and the next run measures the devices again
  std::vector<index_t> abandoned;  // packages this rank held when its device failed or withdrew
  std::vector<PackageRecord> computed;  // in the order computed here
};

namespace detail {

// Adds `count` elements of `from` to `into` (a reduced output's partial sums).
using AddElements = void (*)(void* into, const void* from, std::size_t count);
template <class T>
void add_elements(void* into, const void* from, std::size_t count) {
  T* to = static_cast<T*>(into);
  const T* by = static_cast<const T*>(from);
  for (std::size_t i = 0; i < count; ++i) to[i] += by[i];
}

// One array of a run, without its element type.
struct PackageArray {
  PackagePolicy policy = PackagePolicy::partitioned_in;
  Region block;  // the whole tile (shape() only, no ghost cells); null shape: none here
  std::size_t element_size = 0;
  const AccessPattern* reads = nullptr;
  // A reduced output's element arithmetic: summed here, then over the ranks.
  AddElements add = nullptr;
  MPI_Datatype mpi = MPI_DATATYPE_NULL;
};

// Runs one package's launch: the partition of its rows and one LaunchArg per array.
using PackageLaunch = std::function<LaunchRecord(const Partition&, std::vector<LaunchArg>)>;

// One step of a run: which of the run's arrays each of its tile parameters is, how it uses it,
// and its launch over them.
struct StepLaunch {
  std::string kernel;
  AccessPattern access;                     // the kernel's (its partition's blocks)
  std::vector<std::size_t> arrays;          // per tile parameter: the run's array
  std::vector<Intent> intents;              // per tile parameter
  std::vector<const AccessPattern*> reads;  // per tile parameter: the kernel's pattern
  PackageLaunch launch;
};

// Adds one step's tile parameter to the run's arrays (`sources`: each array's PackageArg::source),
// sharing an array another step passed; Error(invalid_argument) where steps cannot share it.
void add_step_array(std::vector<PackageArray>& arrays, std::vector<const void*>& sources,
                    StepLaunch& step, std::size_t step_index, PackageArray array,
                    const void* source, bool writes);
// Error(invalid_argument) for a package-local array read before a step wrote it.
void check_steps(const std::vector<PackageArray>& arrays, const std::vector<StepLaunch>& steps);
// The steps' launches over one package, one after another on its device: `partition` is the
// first step's; the others take its plug-in and parameters with their own access pattern.
LaunchRecord run_steps(const std::vector<StepLaunch>& steps, const Partition& partition,
                       const std::vector<LaunchArg>& args);

class PackageEngine;

}  // namespace detail

class WorkPackages {
 public:
  // `domain`: the indices the kernel computes (its first axis is cut into packages); `partition`:
  // a partition of `domain`, built as for hit::launch (hit::partition(spec, domain,
  // {.access = ...}), its spec perhaps a partition_setting() that HIT_PARTITION_<LABEL> replaced):
  // each package's launch uses its plug-in and parameters over the package's rows.
  // Error(invalid_argument) when it is not a partition of `domain`. Without one, each launch's
  // partition is `single`.
  WorkPackages(Environment& env, Shape domain, PackageOptions options);
  WorkPackages(Environment& env, Shape domain, PackageOptions options, Partition partition);
  ~WorkPackages();
  WorkPackages(const WorkPackages&) = delete;
  WorkPackages& operator=(const WorkPackages&) = delete;

  const Shape& domain() const noexcept;
  // Rows per package (0 until the first run when it is tuned).
  index_t size() const noexcept;
  index_t count() const noexcept;
  // Packages this rank's device launches at once (tuned with size=auto, batch=auto: 1 until the
  // first run).
  index_t batch() const noexcept;
  [[nodiscard]] Shape package(index_t id) const;
  // The rows one launch computed (its packages, consecutive).
  [[nodiscard]] Shape rows(const PackageRecord& launch) const;
  // The tuner's measurement (after a run with size=auto): seconds per package and per row.
  double tuned_overhead_s() const noexcept;
  double tuned_row_s() const noexcept;
  // Whether this rank's device failed in a run (it computes nothing from then on).
  bool device_failed() const noexcept;

  // Computes every package once, collectively. Arguments in the kernel's parameter order: a
  // PackageArg for each View parameter, a value for each other one. Errors other than a device
  // failure are agreed by every rank; every device failing is an Error on every rank.
  template <class... Params, class... Args>
  PackageReport run(const Kernel<Params...>& kernel, Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args),
                  "WorkPackages::run needs one argument per kernel parameter");
    return run(step(kernel, std::forward<Args>(args)...));
  }

  // Several kernels over the same packages: each package runs the steps one after another on the
  // device that claimed it, so what one step writes to a package-local array (hit::PackageLocal)
  // the next reads there, with no copy to the host. An array passed to several steps is one array
  // of the run (its rows fetched once); a partitioned or reduced output is written by one step,
  // and no step reads what another writes but through a package-local array (the results go back
  // to their owners after the package's last step). A barrier between kernels, where a kernel
  // reads rows other packages computed, is a second run.
  template <class K, class... Args, class... Steps>
  PackageReport run(const PackageStep<K, Args...>& first, const Steps&... rest) {
    std::vector<detail::PackageArray> arrays;
    std::vector<const void*> sources;
    std::vector<detail::StepLaunch> steps;
    add_step(first, arrays, sources, steps);
    (add_step(rest, arrays, sources, steps), ...);
    detail::check_steps(arrays, steps);
    std::string name = steps.front().kernel;
    for (std::size_t i = 1; i < steps.size(); ++i) name += "+" + steps[i].kernel;
    const detail::PackageLaunch launch_all = [&steps](const Partition& p,
                                                      std::vector<detail::LaunchArg> tiles) {
      return detail::run_steps(steps, p, tiles);
    };
    return run_erased(name, steps.front().access, std::move(arrays), launch_all);
  }

 private:
  template <class A>
  struct is_package_arg : std::false_type {};
  template <class T>
  struct is_package_arg<PackageArg<T>> : std::true_type {};

  template <class A>
  static auto as_launch_arg(const A& a) {
    using D = std::decay_t<A>;
    if constexpr (is_package_arg<D>::value) {
      return TileArg<typename D::element_type>{};
    } else {
      return D(a);
    }
  }

  template <class... Params, class... Args>
  void add_step(const PackageStep<Kernel<Params...>, Args...>& s,
                std::vector<detail::PackageArray>& arrays, std::vector<const void*>& sources,
                std::vector<detail::StepLaunch>& steps) const {
    Device& dev = device(env_);
    const Kernel<Params...>& kernel = s.kernel;
    const auto* body = kernel.body(dev.kind());
    if (body == nullptr)
      detail::throw_missing_implementation(kernel.name(), dev, kernel.implementations());
    detail::StepLaunch step_launch;
    step_launch.kernel = kernel.name();
    step_launch.access = kernel.access();
    std::size_t param = 0;
    const auto collect = [&](const auto& a) {
      using A = std::decay_t<decltype(a)>;
      static_assert(!detail::is_tile<A>::value && !detail::is_tile_arg<A>::value,
                    "pass tiles as hit::partitioned_in, hit::replicated_in, "
                    "hit::partitioned_out, hit::reduced_out, hit::local_out or hit::local_in");
      if constexpr (is_package_arg<A>::value) {
        using T = typename A::element_type;
        detail::PackageArray arr;
        arr.policy = a.policy;
        if (!a.tile.is_null()) arr.block = detail::region_of(a.tile, a.tile.shape());
        if (a.policy == PackagePolicy::local)
          arr.block = {nullptr, sizeof(T), a.local_shape, detail::dense_steps(a.local_shape)};
        arr.element_size = sizeof(T);
        arr.reads = &kernel.param_reads(param);
        if constexpr (std::is_arithmetic_v<T>) {
          if (a.policy == PackagePolicy::reduced_out) {
            arr.add = &detail::add_elements<T>;
            arr.mpi = mpi_type<T>();
          }
        }
        detail::add_step_array(arrays, sources, step_launch, steps.size(), arr, a.source, a.writes);
      }
      ++param;
    };
    std::apply([&](const auto&... a) { (collect(a), ...); }, s.args);
    // The body binds views by parameter type: a TileArg<T> of the same T stands for each array.
    auto held =
        std::apply([](const auto&... a) { return std::make_tuple(as_launch_arg(a)...); }, s.args);
    step_launch.launch = [this, &kernel, body, held](const Partition& p,
                                                     std::vector<detail::LaunchArg> tiles) {
      return detail::run_launch(
          env_, kernel.name(), kernel.cost(), p, std::move(tiles),
          [&](const KernelContext& ctx, const std::vector<detail::RawView>& views) {
            detail::call_body<std::tuple<Params...>>(*body, ctx, held, views,
                                                     std::index_sequence_for<Args...>{});
          });
    };
    steps.push_back(std::move(step_launch));
  }

  PackageReport run_erased(const std::string& kernel, const AccessPattern& access,
                           std::vector<detail::PackageArray> arrays,
                           const detail::PackageLaunch& launch_one);

  Environment& env_;
  std::unique_ptr<detail::PackageEngine> engine_;
};

}  // namespace hit
