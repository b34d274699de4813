#pragma once
// View<T>: the typed window on device (or host) memory that kernel bodies receive, and
// KernelContext, what else a body gets. Plain C++17 with no other hitmap++ header, so CUDA sources
// (nvcc) can include it and pass Views by value to __global__ kernels.

#include <cassert>
#include <cstdint>

#if defined(__CUDACC__)
#define HIT_HOST_DEVICE __host__ __device__
#else
#define HIT_HOST_DEVICE
#endif

namespace hit {

using index_t = std::int64_t;  // as in shape.hpp
inline constexpr int view_max_rank = 8;

struct Box;

// `rank` axes of `extent` elements, `stride` elements apart; the first element is the array index
// `origin` and array indices advance by `step` per axis. Trivially copyable.
//
// Element access, as on hit::Tile (docs/tiles.md):
//   v.local(i, j)    tile positions 0 .. extent-1: a multiply-add per axis, what kernel loops use;
//   v(gi, gj)        array (global) indices: a subtraction and a division per axis on top, for
//                    occasional use;
//   v.around(block)  the view re-based on a block of the launch (ctx.block): its local(0, 0) is
//                    the block's first point and local(-1, 0) the point before it, so a body loops
//                    over the block's positions with no index conversion.
// All are checked with assert() in debug builds (NDEBUG unset), on the host and on the device;
// release builds check nothing. There is no always-checked at(): View cannot throw hit::Error.
template <class T>
struct View {
  using value_type = T;
  T* data = nullptr;
  int rank = 0;
  index_t extent[view_max_rank] = {};
  index_t stride[view_max_rank] = {};
  index_t origin[view_max_rank] = {};
  index_t step[view_max_rank] = {};
  // Positions -below[k] .. -1 of axis k are the view's too: the points before the block of a
  // view made by around(). 0 for a view of a whole tile.
  index_t below[view_max_rank] = {};

  HIT_HOST_DEVICE index_t size() const noexcept {
    index_t n = rank > 0 ? 1 : 0;
    for (int k = 0; k < rank; ++k) n *= extent[k];
    return n;
  }
  HIT_HOST_DEVICE index_t rows() const noexcept { return rank >= 2 ? extent[rank - 2] : 1; }
  HIT_HOST_DEVICE index_t cols() const noexcept { return rank >= 1 ? extent[rank - 1] : 0; }
  // Elements from one row to the next (the leading dimension for BLAS).
  HIT_HOST_DEVICE index_t pitch() const noexcept {
    return rank >= 2 ? stride[rank - 2] : (rank == 1 ? extent[0] : 0);
  }

  // ---- by tile positions (0 .. extent-1 per axis) -------------------------------------------
  HIT_HOST_DEVICE T& local(index_t i) const noexcept {
    assert(rank == 1 && holds_position(0, i));
    return data[i * stride[0]];
  }
  HIT_HOST_DEVICE T& local(index_t i, index_t j) const noexcept {
    assert(rank == 2 && holds_position(0, i) && holds_position(1, j));
    return data[i * stride[0] + j * stride[1]];
  }
  HIT_HOST_DEVICE T& local(index_t i, index_t j, index_t k) const noexcept {
    assert(rank == 3 && holds_position(0, i) && holds_position(1, j) && holds_position(2, k));
    return data[i * stride[0] + j * stride[1] + k * stride[2]];
  }

  // ---- by array (global) indices ------------------------------------------------------------
  HIT_HOST_DEVICE T& operator()(index_t gi) const noexcept { return local(position(0, gi)); }
  HIT_HOST_DEVICE T& operator()(index_t gi, index_t gj) const noexcept {
    return local(position(0, gi), position(1, gj));
  }
  HIT_HOST_DEVICE T& operator()(index_t gi, index_t gj, index_t gk) const noexcept {
    return local(position(0, gi), position(1, gj), position(2, gk));
  }
  // The tile position of array index `gi` on `axis` (gi must be one of the view's indices).
  HIT_HOST_DEVICE index_t position(int axis, index_t gi) const noexcept {
    assert(axis >= 0 && axis < rank && holds_index(axis, gi));
    return (gi - origin[axis]) / step[axis];
  }
  // Whether the array index is inside the view (axes 0 and 1).
  HIT_HOST_DEVICE bool contains(index_t gi, index_t gj) const noexcept {
    return holds_index(0, gi) && holds_index(1, gj);
  }

  // ---- re-based on a block ------------------------------------------------------------------
  // The same memory with position 0 of every axis at the first index of `block` (a block of the
  // launch, normally ctx.block) and positions advancing by the block's step: around(b).local(r, c)
  // is the block's point (r, c), around(b).local(-1, c) the view's point one block step before it
  // (a stencil's neighbour, a ghost cell), up to the view's own ends on both sides. A body that
  // loops r over 0 .. b.extent(0)-1 needs no position() for any of its views, whatever their
  // origins and ghost rings. The block's steps must be multiples of the view's and its first
  // index one of the view's; an empty block gives an empty view.
  HIT_HOST_DEVICE View around(const Box& block) const noexcept;

 private:
  HIT_HOST_DEVICE bool holds_position(int axis, index_t p) const noexcept {
    return p >= -below[axis] && p < extent[axis];
  }
  HIT_HOST_DEVICE bool holds_index(int axis, index_t gi) const noexcept {
    const index_t d = gi - origin[axis];
    return d % step[axis] == 0 && holds_position(axis, d / step[axis]);
  }
};

// A rectangular (possibly strided) box of array indices as plain data: what a Shape is, for code
// that nvcc compiles. Axis k holds begin[k], begin[k] + step[k], ... < end[k].
struct Box {
  int rank = 0;
  index_t begin[view_max_rank] = {};
  index_t end[view_max_rank] = {};
  index_t step[view_max_rank] = {};

  HIT_HOST_DEVICE index_t extent(int k) const noexcept {
    return end[k] <= begin[k] ? 0 : (end[k] - begin[k] + step[k] - 1) / step[k];
  }
  HIT_HOST_DEVICE index_t size() const noexcept {
    index_t n = rank > 0 ? 1 : 0;
    for (int k = 0; k < rank; ++k) n *= extent(k);
    return n;
  }
};

template <class T>
HIT_HOST_DEVICE View<T> View<T>::around(const Box& block) const noexcept {
  assert(block.rank == rank);
  View out = *this;
  if (block.size() == 0) {
    for (int k = 0; k < rank; ++k) out.extent[k] = out.below[k] = 0;
    return out;
  }
  index_t offset = 0;
  for (int k = 0; k < rank; ++k) {
    assert(block.step[k] > 0 && block.step[k] % step[k] == 0);
    const index_t p = position(k, block.begin[k]);
    const index_t ratio = block.step[k] / step[k];
    offset += p * stride[k];
    out.origin[k] = block.begin[k];
    out.step[k] = block.step[k];
    out.stride[k] = stride[k] * ratio;
    out.extent[k] = (extent[k] - 1 - p) / ratio + 1;
    out.below[k] = (below[k] + p) / ratio;
  }
  out.data = data + offset;
  return out;
}

// What a kernel body gets besides its arguments (docs/devices.md §6).
//   cpu, emu: the body is called once per block of the partition (blocks run on `threads` host
//             threads at once); `block` is the block to compute, `threads` the cores this call
//             may use itself (e.g. for BLAS).
//   cuda:     the body (a host function) is called once with `block` == `domain`; it launches its
//             CUDA work on `cuda_stream` with the partition's geometry `grid` x `threads_per_block`
//             (x along the last axis), and may use the cuBLAS handle `cublas`.
struct KernelContext {
  Box domain;
  Box block;
  std::int64_t block_index = 0;
  std::int64_t grid[3] = {1, 1, 1};
  std::int64_t threads_per_block[3] = {1, 1, 1};
  int threads = 1;
  void* cuda_stream = nullptr;  // cudaStream_t
  void* cublas = nullptr;       // cublasHandle_t
};

}  // namespace hit
