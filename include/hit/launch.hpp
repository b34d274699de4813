#pragma once
// hit::launch (docs/devices.md §6–§7; Hitmap's kernelLaunch, Torres et al. §4): runs a Kernel
// (hit/kernel.hpp) over a Partition with its tile arguments (hit/devices/launch_args.hpp) and
// records the launch (hit/devices/launch_log.hpp).
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
// Queued launches: hit::launch(hit::Completion::queued, kernel, partition, args...) returns once
// the kernel is queued on the device, when nothing of the launch is left for the host to do: every
// tile argument resident, a device with memory of its own that no other process shares, not out
// of core. The host then waits only where it needs the device's data (a resident's sync_to_host
// or fetch, a halo's faces, a launch that stages) or its time (Device::synchronize). Otherwise the
// launch completes as a plain one; the record says which (LaunchRecord::queued).
//
// Out-of-core: with an `outOfCore` partition the domain runs chunk by chunk; tile arguments whose
// first axis runs with the domain are cut with it (plus the rows the kernel reads around, from
// its access patterns), the others are staged whole once; two buffers per cut tile let the copies
// of the next chunk overlap the compute of this one (streams 0 and 1 of the device).

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/device.hpp"
#include "hit/devices/launch_args.hpp"
#include "hit/devices/launch_log.hpp"
#include "hit/kernel.hpp"
#include "hit/partition.hpp"
#include "hit/view.hpp"

namespace hit {

// When hit::launch returns (see above).
enum class Completion {
  wait,    // once the results are where the arguments say (the default)
  queued,  // once the kernel is queued, where nothing else is left to the host
};

namespace detail {

// A tile argument without its element type.
struct LaunchArg {
  Intent intent = Intent::in;
  Region host;
  Shape own;
  std::shared_ptr<ResidentState> resident;
  const AccessPattern* reads = nullptr;  // the kernel's (it outlives the launch); never null
  // Written anywhere by every block (a reduction's partial sums): staged and copied back whole,
  // never cut into out-of-core chunks nor trimmed to the launch's domain.
  bool copied_back_whole = false;
};

// A device-side view without its element type (strides in elements).
using RawView = View<unsigned char>;

// Runs a launch: `invoke` calls the body with a context and one RawView per tile argument. In a
// dry run (Environment::trace()) the launch is checked and recorded at `cost`, and nothing runs.
// With Completion::queued, `invoke` must own what it uses: the kernel may run after the call.
LaunchRecord run_launch(
    Environment& env, const std::string& kernel, const KernelCost& cost, const Partition& partition,
    std::vector<LaunchArg> args,
    const std::function<void(const KernelContext&, const std::vector<RawView>&)>& invoke,
    Completion completion = Completion::wait);

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

// hit::launch on the device of `env`, priced at `cost` in a dry run (the kernel's, or what this
// call computes where the kernel's work depends on its scalar arguments: a range of sparse rows).
// A queued launch's body holds its own copies of the kernel's body and of the arguments (tile
// arguments are handles), since it may run after this call returns.
template <class... Params, class... Args>
LaunchRecord launch_on(Environment& env, Completion completion, const Kernel<Params...>& kernel,
                       const KernelCost& cost, const Partition& partition, Args&&... args) {
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
  if (completion == Completion::queued) {
    return detail::run_launch(
        env, kernel.name(), cost, partition, std::move(tiles),
        [owned = *body, held = std::tuple<std::decay_t<Args>...>(args...)](
            const KernelContext& ctx, const std::vector<detail::RawView>& views) {
          detail::call_body<std::tuple<Params...>>(owned, ctx, held, views,
                                                   std::index_sequence_for<Args...>{});
        },
        Completion::queued);
  }
  const auto held = std::forward_as_tuple(args...);
  return detail::run_launch(
      env, kernel.name(), cost, partition, std::move(tiles),
      [&](const KernelContext& ctx, const std::vector<detail::RawView>& views) {
        detail::call_body<std::tuple<Params...>>(*body, ctx, held, views,
                                                 std::index_sequence_for<Args...>{});
      });
}

template <class... Params, class... Args>
LaunchRecord launch_on(Environment& env, const Kernel<Params...>& kernel, const KernelCost& cost,
                       const Partition& partition, Args&&... args) {
  return launch_on(env, Completion::wait, kernel, cost, partition, std::forward<Args>(args)...);
}

}  // namespace detail

template <class... Params, class... Args>
LaunchRecord launch(const Kernel<Params...>& kernel, const Partition& partition, Args&&... args) {
  return detail::launch_on(Environment::current(), kernel, kernel.cost(), partition,
                           std::forward<Args>(args)...);
}

template <class... Params, class... Args>
LaunchRecord launch(Completion completion, const Kernel<Params...>& kernel,
                    const Partition& partition, Args&&... args) {
  return detail::launch_on(Environment::current(), completion, kernel, kernel.cost(), partition,
                           std::forward<Args>(args)...);
}

}  // namespace hit
