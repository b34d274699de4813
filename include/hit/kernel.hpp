#pragma once
// Kernels and hit::launch (docs/devices.md §6–§7; Hitmap's kernelLaunch, Torres et al. §4).
//
// A Kernel has a name and one body per device kind, all of one signature
//   void body(const hit::KernelContext&, Params...)
// where each Param is a View<T> (or View<const T>) for a tile argument, or a plain value.
//   cpu:  a C++ callable (may call BLAS);
//   cuda: a host function, compiled by nvcc, that launches CUDA work on ctx.cuda_stream with the
//         device Views it gets (may call cuBLAS through ctx.cublas);
//   emu:  the cpu body unless one is given, run on the emulated device's copies.
//
//   hit::launch(kernel, partition, hit::in(A), hit::in(B), hit::inout(C), alpha);
// picks the body for the device the rank is bound to, takes the inter-process device lock (ranks
// sharing a device take turns), stages IN and INOUT tiles (with their ghost cells, rows padded as
// the partition asks) into device memory, runs the partition's blocks, copies OUT and INOUT tiles
// back where they meet the partition's domain, synchronises, frees what it staged, and records the
// launch (LaunchLog). On a cpu device nothing is staged: bodies see the tiles' own memory.
// An OUT tile is not sent: its device copy starts zero-filled, and the kernel is expected to write
// the part of it inside the domain.
//
// Residency: a Resident<T> (hit/resident.hpp) keeps a tile on the device across launches and
// communications: a launch sends it only when the host copy was marked modified, and OUT/INOUT
// launches leave the result on the device until sync_to_host().
//
// An empty partition (the domain of an inactive process) makes a launch do nothing: it returns
// an empty record without looking at its arguments, which may then be null tiles.
//
// Out-of-core: with an `outOfCore` partition the domain runs chunk by chunk; tile arguments whose
// first axis runs with the domain are cut with it (plus the rows the kernel reads around, from
// its access patterns), the others are staged whole once; two buffers per cut tile let the copies
// of the next chunk overlap the compute of this one (streams 0 and 1 of the device).

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/device.hpp"
#include "hit/partition.hpp"
#include "hit/resident.hpp"
#include "hit/tile.hpp"
#include "hit/view.hpp"

namespace hit {

enum class Intent { in, out, inout };
std::string_view to_string(Intent intent) noexcept;

// ---- plain data <-> Shape ----------------------------------------------------------------------

Box to_box(const Shape& shape);
Shape to_shape(const Box& box);

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
template <class P>
struct is_view : std::false_type {};
template <class T>
struct is_view<View<T>> : std::true_type {};
}  // namespace detail

template <class... Params>
class Kernel {
 public:
  using Body = std::function<void(const KernelContext&, Params...)>;

  explicit Kernel(std::string name) : name_(std::move(name)) {}

  Kernel& cpu(Body body) { return on(DeviceKind::cpu, std::move(body)); }
  Kernel& cuda(Body body) { return on(DeviceKind::cuda, std::move(body)); }
  Kernel& emu(Body body) { return on(DeviceKind::emu, std::move(body)); }
  Kernel& on(DeviceKind kind, Body body) {
    bodies_[kind] = std::move(body);
    return *this;
  }
  // What each parameter reads around the index being computed (one pattern per parameter; unknown
  // for values). Shapes the blocks of a partition (access()) and, out of core, which tiles are cut
  // with the domain (a pattern reading a whole first axis keeps the tile whole) and their halo.
  // One pattern per parameter in order, at least up to the last tile (View) parameter (plain values
  // after it may be left out); any other length is an error: a list cut short or too long would
  // shape the blocks and the out-of-core cuts by another parameter's pattern.
  Kernel& reads(std::vector<AccessPattern> per_param) {
    if (per_param.size() < tiles_through() || per_param.size() > sizeof...(Params)) {
      throw Error(ErrorKind::invalid_argument,
                  "kernel '" + name_ + "': reads() got " + std::to_string(per_param.size()) +
                      " access patterns for " + std::to_string(sizeof...(Params)) +
                      " parameters: give one per parameter, at least through the last tile "
                      "parameter (parameter " +
                      std::to_string(tiles_through()) + ")");
    }
    access_ = std::move(per_param);
    access_.resize(sizeof...(Params));
    return *this;
  }

  const std::string& name() const noexcept { return name_; }
  // The body for `kind`: its own, or for emu the cpu body; null when there is none.
  const Body* body(DeviceKind kind) const {
    auto it = bodies_.find(kind);
    if (it == bodies_.end() && kind == DeviceKind::emu) it = bodies_.find(DeviceKind::cpu);
    return it == bodies_.end() ? nullptr : &it->second;
  }
  // The device kinds it can run on ("cpu", "cuda", "emu"), for messages.
  std::vector<std::string> implementations() const {
    std::vector<std::string> out;
    for (const auto& [kind, b] : bodies_) out.emplace_back(to_string(kind));
    if (bodies_.count(DeviceKind::cpu) != 0 && bodies_.count(DeviceKind::emu) == 0) {
      out.emplace_back("emu (the cpu body)");
    }
    return out;
  }
  const AccessPattern& param_reads(std::size_t param) const {
    static const AccessPattern unknown;
    return param < access_.size() ? access_[param] : unknown;
  }
  // The union of the parameters' patterns, for hit::partition.
  AccessPattern access() const {
    AccessPattern all;
    for (const auto& a : access_) all = all.merge(a);
    return all;
  }

 private:
  // How many parameters there are up to and including the last View.
  static constexpr std::size_t tiles_through() {
    constexpr bool views[] = {detail::is_view<Params>::value..., false};
    std::size_t n = 0;
    for (std::size_t k = 0; k < sizeof...(Params); ++k) {
      if (views[k]) n = k + 1;
    }
    return n;
  }
  std::string name_;
  std::map<DeviceKind, Body> bodies_;
  std::vector<AccessPattern> access_;
};

// ---- arguments ---------------------------------------------------------------------------------

// [[nodiscard]]: an argument made and dropped is a tile the launch never sees.
template <class T>
struct [[nodiscard]] TileArg {
  using element_type = T;
  Intent intent = Intent::in;
  detail::HostRegion host;
  Shape own;
  std::shared_ptr<detail::ResidentState> resident;
};

template <class T>
TileArg<T> in(const Tile<T>& t) {
  return {Intent::in, detail::host_region(t), t.shape(), nullptr};
}
template <class T>
TileArg<T> out(const Tile<T>& t) {
  return {Intent::out, detail::host_region(t), t.shape(), nullptr};
}
template <class T>
TileArg<T> inout(const Tile<T>& t) {
  return {Intent::inout, detail::host_region(t), t.shape(), nullptr};
}
namespace detail {
template <class T>
TileArg<T> resident_arg(Intent intent, const Resident<T>& r) {
  if (!resident_state(r)) return {intent, {}, Shape(), nullptr};  // the null Resident
  // A tile its device could not hold is staged by each launch, as a host tile is.
  const auto& state = resident_state(r)->spilled ? nullptr : resident_state(r);
  return {intent, resident_state(r)->host, resident_state(r)->own, state};
}
}  // namespace detail
// A Resident argument: the kernel sees the tile's whole allocation (padding and ghost cells).
template <class T>
TileArg<T> in(const Resident<T>& r) {
  return detail::resident_arg(Intent::in, r);
}
template <class T>
TileArg<T> out(const Resident<T>& r) {
  return detail::resident_arg(Intent::out, r);
}
template <class T>
TileArg<T> inout(const Resident<T>& r) {
  return detail::resident_arg(Intent::inout, r);
}
// Host memory that is not a tile, given as a View (tests, foreign buffers).
namespace detail {
template <class T>
HostRegion host_region(const View<T>& v) {
  HostRegion r;
  r.data = const_cast<std::remove_const_t<T>*>(v.data);
  r.element_size = sizeof(T);
  r.shape = view_shape(v);
  for (int k = 0; k < v.rank; ++k) r.steps[static_cast<std::size_t>(k)] = v.stride[k];
  return r;
}
}  // namespace detail

template <class T>
TileArg<T> in(const View<T>& v) {
  return {Intent::in, detail::host_region(v), view_shape(v), nullptr};
}
template <class T>
TileArg<T> out(const View<T>& v) {
  return {Intent::out, detail::host_region(v), view_shape(v), nullptr};
}
template <class T>
TileArg<T> inout(const View<T>& v) {
  return {Intent::inout, detail::host_region(v), view_shape(v), nullptr};
}

// ---- launch records ----------------------------------------------------------------------------

// One launch, as the FPM layer and reports use it. Times in seconds; lock times on the machine's
// monotonic clock (comparable between the processes of one machine).
struct LaunchRecord {
  std::string kernel;
  std::string device;              // label of the device
  std::string partition;           // spec of the partition
  index_t elements = 0;            // indices of the partition's domain
  double seconds = 0;              // the whole launch, lock wait excluded
  double wait_seconds = 0;         // waiting for the device lock
  double kernel_seconds = 0;       // execution on the device (with an emulated slowdown)
  double host_kernel_seconds = 0;  // on emu: the real cpu body's time (kernel_seconds / slowdown)
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t copies_in = 0;
  std::uint64_t copies_out = 0;
  std::uint64_t problem_bytes = 0;  // device memory the launch used
  std::size_t chunks = 0;           // out-of-core chunks (0: not out of core)
  double lock_acquired = 0;
  double lock_released = 0;
};

// The launches of a run (per Environment). Keeps the most recent records (at most `capacity()`,
// at least half of it once that many were made) and totals per kernel over all of them.
class LaunchLog {
 public:
  explicit LaunchLog(Environment&) {}
  struct Totals {
    std::uint64_t launches = 0;
    double seconds = 0;
    double kernel_seconds = 0;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
  };
  void add(LaunchRecord record);
  const std::vector<LaunchRecord>& records() const noexcept { return records_; }
  const LaunchRecord& last() const;
  Totals totals(const std::string& kernel) const;
  const std::map<std::string, Totals>& all_totals() const noexcept { return totals_; }
  void clear();
  std::size_t capacity() const noexcept { return capacity_; }
  void set_capacity(std::size_t n) { capacity_ = n; }

 private:
  std::vector<LaunchRecord> records_;
  std::map<std::string, Totals> totals_;
  std::size_t capacity_ = 10000;
};

LaunchLog& launch_log(Environment& env);
LaunchLog& launch_log();  // Environment::current()

// ---- launch ------------------------------------------------------------------------------------

namespace detail {

// A tile argument without its element type.
struct LaunchArg {
  Intent intent = Intent::in;
  HostRegion host;
  Shape own;
  std::shared_ptr<ResidentState> resident;
  const AccessPattern* reads = nullptr;  // the kernel's (it outlives the launch); never null
};

// A device-side view without its element type (strides in elements).
using RawView = View<unsigned char>;

// Runs a launch: `invoke` calls the body with a context and one RawView per tile argument.
LaunchRecord run_launch(
    Environment& env, const std::string& kernel, const Partition& partition,
    std::vector<LaunchArg> args,
    const std::function<void(const KernelContext&, const std::vector<RawView>&)>& invoke);

[[noreturn]] void throw_missing_implementation(const std::string& kernel, const Device& device,
                                               const std::vector<std::string>& implementations);

template <class A>
struct is_tile : std::false_type {};
template <class T>
struct is_tile<Tile<T>> : std::true_type {};

template <class A>
struct is_tile_arg : std::false_type {};
template <class T>
struct is_tile_arg<TileArg<T>> : std::true_type {};

template <class P, class A>
P make_param(const A& arg, const std::vector<RawView>& views, std::size_t& next) {
  if constexpr (is_tile_arg<A>::value) {
    using T = typename A::element_type;
    static_assert(std::is_same_v<P, View<T>> || std::is_same_v<P, View<const T>>,
                  "a tile of T binds to a kernel parameter View<T> or View<const T>");
    const RawView& raw = views[next++];
    P v;
    v.data = reinterpret_cast<typename P::value_type*>(raw.data);
    v.rank = raw.rank;
    for (int k = 0; k < raw.rank; ++k) {
      v.extent[k] = raw.extent[k];
      v.stride[k] = raw.stride[k];
      v.origin[k] = raw.origin[k];
      v.step[k] = raw.step[k];
    }
    return v;
  } else {
    return P(arg);
  }
}

// Calls `body(ctx, params...)` with parameter I made from argument I.
template <class ParamTuple, class Body, class ArgTuple, std::size_t... I>
void call_body(const Body& body, const KernelContext& ctx, const ArgTuple& args,
               const std::vector<RawView>& views, std::index_sequence<I...>) {
  std::size_t next = 0;
  // Braced initialisation evaluates left to right, so tile views are taken in order.
  ParamTuple params{
      make_param<std::tuple_element_t<I, ParamTuple>>(std::get<I>(args), views, next)...};
  std::apply([&](auto&... p) { body(ctx, p...); }, params);
}

// hit::launch on the device of `env`.
template <class... Params, class... Args>
LaunchRecord launch_on(Environment& env, const Kernel<Params...>& kernel,
                       const Partition& partition, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "hit::launch needs one argument per kernel parameter");
  Device& dev = device(env);
  const auto* body = kernel.body(dev.kind());
  if (body == nullptr)
    detail::throw_missing_implementation(kernel.name(), dev, kernel.implementations());
  std::vector<detail::LaunchArg> tiles;
  tiles.reserve(sizeof...(Args));
  std::size_t param = 0;
  const auto collect = [&](const auto& a) {
    using A = std::decay_t<decltype(a)>;
    static_assert(!detail::is_tile<A>::value,
                  "pass tiles as hit::in(tile), hit::out(tile) or hit::inout(tile)");
    if constexpr (detail::is_tile_arg<A>::value) {
      tiles.push_back(
          detail::LaunchArg{a.intent, a.host, a.own, a.resident, &kernel.param_reads(param)});
    }
    ++param;
  };
  (collect(args), ...);
  const auto held = std::forward_as_tuple(args...);
  return detail::run_launch(
      env, kernel.name(), partition, std::move(tiles),
      [&](const KernelContext& ctx, const std::vector<detail::RawView>& views) {
        detail::call_body<std::tuple<Params...>>(*body, ctx, held, views,
                                                 std::index_sequence_for<Args...>{});
      });
}

}  // namespace detail

template <class... Params, class... Args>
LaunchRecord launch(const Kernel<Params...>& kernel, const Partition& partition, Args&&... args) {
  return detail::launch_on(Environment::current(), kernel, partition, std::forward<Args>(args)...);
}

// ---- built-in kernels --------------------------------------------------------------------------

// C += A * B on row-major tiles, by positions: for the rows r and columns c of C inside the
// domain, C[r][c] += sum_k A[r][k] * B[k][c], with k over A's columns (== B's rows). cpu: CBLAS
// (OpenBLAS) gemm per block; cuda: cuBLAS. For double and float.
template <class T>
[[nodiscard]] Kernel<View<const T>, View<const T>, View<T>> gemm_accumulate();

// One 5-point Jacobi sweep: out(i,j) = 0.25 * (in(i-1,j) + in(i+1,j) + in(i,j-1) + in(i,j+1)) for
// every (i,j) of the domain (array indices; `in` must hold the domain and its 4 neighbours, e.g.
// through its ghost cells). cpu: rows of a block, two at a time where they are unit-stride; cuda:
// one thread per index. Both add up, down, left, right in that order. double and float.
template <class T>
[[nodiscard]] Kernel<View<const T>, View<T>> jacobi5();

}  // namespace hit
