#pragma once
// The tile arguments of a launch: hit::in(A), hit::out(B), hit::inout(C) of a Tile, a Resident
// (hit/resident.hpp: the kernel sees its whole allocation) or host memory given as a View, with
// the Intent that says which way the launch moves it.

#include <memory>
#include <string_view>
#include <type_traits>

#include "hit/device.hpp"
#include "hit/resident.hpp"
#include "hit/shape.hpp"
#include "hit/tile.hpp"
#include "hit/view.hpp"

namespace hit {

enum class Intent { in, out, inout };
std::string_view to_string(Intent intent) noexcept;

// [[nodiscard]]: an argument made and dropped is a tile the launch never sees.
template <class T>
struct [[nodiscard]] TileArg {
  using element_type = T;
  Intent intent = Intent::in;
  detail::Region host;
  Shape own;
  std::shared_ptr<detail::ResidentState> resident;
};

template <class T>
TileArg<T> in(const Tile<T>& t) {
  return {Intent::in, detail::region_of(t), t.shape(), nullptr};
}
template <class T>
TileArg<T> out(const Tile<T>& t) {
  return {Intent::out, detail::region_of(t), t.shape(), nullptr};
}
template <class T>
TileArg<T> inout(const Tile<T>& t) {
  return {Intent::inout, detail::region_of(t), t.shape(), nullptr};
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
// The memory a view addresses: its positions 0 .. extent-1 on the array indices it names.
template <class T>
Region region_of(const View<T>& v) {
  Region r;
  r.data = const_cast<std::remove_const_t<T>*>(v.data);
  r.element_size = sizeof(T);
  r.shape = view_shape(v);
  for (int k = 0; k < v.rank; ++k) r.steps[static_cast<std::size_t>(k)] = v.stride[k];
  return r;
}
}  // namespace detail

template <class T>
TileArg<T> in(const View<T>& v) {
  return {Intent::in, detail::region_of(v), view_shape(v), nullptr};
}
template <class T>
TileArg<T> out(const View<T>& v) {
  return {Intent::out, detail::region_of(v), view_shape(v), nullptr};
}
template <class T>
TileArg<T> inout(const View<T>& v) {
  return {Intent::inout, detail::region_of(v), view_shape(v), nullptr};
}

}  // namespace hit
