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
// Values (scalars) are passed to every launch unchanged. The kernel is an ordinary hit::Kernel:
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

enum class PackagePolicy { partitioned_in, replicated_in, partitioned_out, reduced_out };

// Built by the functions below; dropping one is a bug (the array takes no part).
template <class T>
struct [[nodiscard]] PackageArg {
  using element_type = T;
  PackagePolicy policy = PackagePolicy::partitioned_in;
  Tile<T> tile;
};

// This rank's rows of an input laid out by rows (null on a rank holding none).
template <class T>
PackageArg<T> partitioned_in(const Tile<T>& block) {
  return {PackagePolicy::partitioned_in, block};
}
// An input every rank holds whole.
template <class T>
PackageArg<T> replicated_in(const Tile<T>& whole) {
  return {PackagePolicy::replicated_in, whole};
}
// This rank's rows of the output, laid out by rows (null on a rank holding none).
template <class T>
PackageArg<T> partitioned_out(const Tile<T>& block) {
  return {PackagePolicy::partitioned_out, block};
}
// An output every rank holds whole, the sum of every package's contributions (a kernel adds into
// it). A launch's blocks must not run at once on the host (partition `single` on cpu and emu
// devices): they would add into the same elements.
template <class T>
PackageArg<T> reduced_out(const Tile<T>& whole) {
  return {PackagePolicy::reduced_out, whole};
}

// One package computed: which, where and when (seconds from the start of the run, on a clock the
// ranks share after a barrier).
// One launch: packages id .. id + packages - 1 (consecutive rows).
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
    Device& dev = device(env_);
    const auto* body = kernel.body(dev.kind());
    if (body == nullptr)
      detail::throw_missing_implementation(kernel.name(), dev, kernel.implementations());
    std::vector<detail::PackageArray> arrays;
    std::size_t param = 0;
    const auto collect = [&](const auto& a) {
      using A = std::decay_t<decltype(a)>;
      static_assert(!detail::is_tile<A>::value && !detail::is_tile_arg<A>::value,
                    "pass tiles as hit::partitioned_in, hit::replicated_in, "
                    "hit::partitioned_out or hit::reduced_out");
      if constexpr (is_package_arg<A>::value) {
        detail::PackageArray arr;
        arr.policy = a.policy;
        if (!a.tile.is_null()) arr.block = detail::region_of(a.tile, a.tile.shape());
        arr.element_size = sizeof(typename A::element_type);
        arr.reads = &kernel.param_reads(param);
        if constexpr (std::is_arithmetic_v<typename A::element_type>) {
          if (a.policy == PackagePolicy::reduced_out) {
            arr.add = &detail::add_elements<typename A::element_type>;
            arr.mpi = mpi_type<typename A::element_type>();
          }
        }
        arrays.push_back(arr);
      }
      ++param;
    };
    (collect(args), ...);
    // The body binds views by parameter type: a TileArg<T> of the same T stands for each array.
    const auto held = std::make_tuple(as_launch_arg(args)...);
    const detail::PackageLaunch launch_one = [&](const Partition& p,
                                                 std::vector<detail::LaunchArg> tiles) {
      return detail::run_launch(
          env_, kernel.name(), kernel.cost(), p, std::move(tiles),
          [&](const KernelContext& ctx, const std::vector<detail::RawView>& views) {
            detail::call_body<std::tuple<Params...>>(*body, ctx, held, views,
                                                     std::index_sequence_for<Args...>{});
          });
    };
    return run_erased(kernel.name(), kernel.access(), std::move(arrays), launch_one);
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

  PackageReport run_erased(const std::string& kernel, const AccessPattern& access,
                           std::vector<detail::PackageArray> arrays,
                           const detail::PackageLaunch& launch_one);

  Environment& env_;
  std::unique_ptr<detail::PackageEngine> engine_;
};

}  // namespace hit
