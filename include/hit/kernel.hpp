#pragma once
// Kernel: a name and one body per device kind, all of one signature
//   void body(const hit::KernelContext&, Params...)
// where each Param is a View<T> (or View<const T>) for a tile argument, or a plain value.
//   cpu:  a C++ callable (may call BLAS);
//   cuda: a host function, compiled by nvcc, that launches CUDA work on ctx.cuda_stream with the
//         device Views it gets (may call cuBLAS through ctx.cublas);
//   emu:  the cpu body unless one is given, run on the emulated device's copies.
// and what each parameter reads around the index computed (its access patterns). hit::launch
// (hit/launch.hpp) runs it; hit/devices/builtin_kernels.hpp has the library's own.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/partition.hpp"
#include "hit/topology/device_kind.hpp"
#include "hit/view.hpp"

namespace hit {

// What a kernel computes, for the advisor's dry run (docs/advisor.md): it prices a launch as its
// flops at its device's speed for kernels of that kind. Dense products are bound by the device's
// arithmetic, stencils and sparse products by its memory bandwidth, and a device's speeds for the
// two differ by orders of magnitude.
struct KernelCost {
  // The flops of a launch: `flops(domain, tiles)` where given (`tiles`: the shapes of its tile
  // arguments, in order: a product's inner extent is one of them), else the domain's points
  // times `flops_per_point`.
  double flops_per_point = 1;
  bool compute_bound = false;
  // Reads through an index (a sparse product's gathers): bound by memory latency rather than
  // bandwidth, priced at the sparse product's speed.
  bool irregular = false;
  std::function<double(const Shape& domain, const std::vector<Shape>& tiles)> flops{};
};

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

  // What it computes per point (the advisor prices launches by it); Error(invalid_argument) for
  // flops that are not a finite number >= 0.
  Kernel& cost(KernelCost cost) {
    if (!(cost.flops_per_point >= 0) || cost.flops_per_point > 1e300) {
      throw Error(ErrorKind::invalid_argument, "kernel '" + name_ + "': cost() got " +
                                                   std::to_string(cost.flops_per_point) +
                                                   " flops per point: give a finite number >= 0");
    }
    cost_ = cost;
    return *this;
  }
  const KernelCost& cost() const noexcept { return cost_; }

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
  KernelCost cost_;
};

}  // namespace hit
