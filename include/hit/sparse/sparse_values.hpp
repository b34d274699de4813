#pragma once
// Values over a process's sparse shape (docs/sparse.md, "Values"): a SparseVector holds one value
// per local vertex (held rows, then ghosts: what a halo refreshes), a SparseMatrix one value per
// nonzero in the shape's order (its local column numbering). Both keep their values in a 1-D tile
// from 0, so they go to the sparse kernels as they are, or into a hit::Resident that keeps them
// on the device (Resident<T>(v.tile()) shares the host memory). The shape is shared, not copied:
// a vector, a matrix and the halo of one part all refer to one CsrShape.

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "hit/core/error.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/tile.hpp"

namespace hit {

namespace detail {
// A 1-D tile from 0 of `size` elements (at least `minimum` when size is 0 and minimum is 1), set
// to `fill`; the null tile for no elements.
template <class T>
Tile<T> sparse_values_tile(index_t size, index_t minimum, T fill) {
  const index_t n = std::max(size, minimum);
  if (n == 0) return Tile<T>();
  Tile<T> t(Shape{Sig(0, n)});
  std::fill(t.data(), t.data() + n, fill);
  return t;
}
}  // namespace detail

// One value per local vertex of a shape.
template <class T>
class SparseVector {
 public:
  SparseVector() = default;
  explicit SparseVector(std::shared_ptr<const CsrShape> shape, T fill = T{})
      : shape_(std::move(shape)) {
    if (!shape_) shape_ = std::make_shared<const CsrShape>();
    tile_ = detail::sparse_values_tile<T>(shape_->vertices(), 0, fill);
  }

  [[nodiscard]] const CsrShape& shape() const noexcept { return *shape_; }
  [[nodiscard]] const std::shared_ptr<const CsrShape>& shape_ptr() const noexcept { return shape_; }
  [[nodiscard]] index_t size() const noexcept { return shape_ ? shape_->vertices() : 0; }

  // Every local vertex, the held rows' and the ghosts'.
  [[nodiscard]] std::span<T> values() noexcept { return {tile_.data(), count(size())}; }
  [[nodiscard]] std::span<const T> values() const noexcept { return {tile_.data(), count(size())}; }
  // The held rows' values (what this process computes) and the ghosts' (what a halo refreshes).
  [[nodiscard]] std::span<T> held() noexcept { return values().first(count(rows())); }
  [[nodiscard]] std::span<const T> held() const noexcept { return values().first(count(rows())); }
  [[nodiscard]] std::span<T> ghosts() noexcept { return values().subspan(count(rows())); }
  [[nodiscard]] std::span<const T> ghosts() const noexcept {
    return values().subspan(count(rows()));
  }

  // By local index, unchecked and checked (Error(invalid_argument) outside [0, size())).
  T& operator[](index_t local) noexcept { return tile_.data()[local]; }
  const T& operator[](index_t local) const noexcept { return tile_.data()[local]; }
  T& at(index_t local) { return tile_.data()[checked(local)]; }
  const T& at(index_t local) const { return tile_.data()[checked(local)]; }
  // By global vertex name: Error(invalid_argument) when this part does not hold the vertex.
  T& global(index_t name) { return tile_.data()[local_of(name)]; }
  const T& global(index_t name) const { return tile_.data()[local_of(name)]; }

  // The values as a 1-D tile from 0 (the null tile for no vertices): for launches and Residents.
  [[nodiscard]] Tile<T>& tile() noexcept { return tile_; }
  [[nodiscard]] const Tile<T>& tile() const noexcept { return tile_; }

 private:
  index_t rows() const noexcept { return shape_ ? shape_->rows() : 0; }
  static std::size_t count(index_t n) noexcept { return static_cast<std::size_t>(n); }
  index_t checked(index_t local) const {
    if (local < 0 || local >= size()) {
      throw Error(ErrorKind::invalid_argument, "SparseVector: local index " +
                                                   std::to_string(local) + " outside [0, " +
                                                   std::to_string(size()) + ")");
    }
    return local;
  }
  index_t local_of(index_t name) const {
    const index_t local = shape_ ? shape_->to_local(name) : -1;
    if (local < 0) {
      throw Error(ErrorKind::invalid_argument,
                  "SparseVector: vertex " + std::to_string(name) + " is not held by this part");
    }
    return local;
  }

  std::shared_ptr<const CsrShape> shape_ = std::make_shared<const CsrShape>();
  Tile<T> tile_;
};

// One value per nonzero of a shape, in its order: row r's values are
// values()[row_ptr[r] .. row_ptr[r+1]), matching shape().row(r)'s local columns.
template <class T>
class SparseMatrix {
 public:
  SparseMatrix() = default;
  // Zeros, or the given values (Error(invalid_argument) unless one per nonzero).
  explicit SparseMatrix(std::shared_ptr<const CsrShape> shape) : shape_(std::move(shape)) {
    if (!shape_) shape_ = std::make_shared<const CsrShape>();
    // A part that holds rows holds at least one element, even when every row is empty: the
    // kernels take the null tile as "no rows".
    tile_ = detail::sparse_values_tile<T>(nonzeros(), shape_->rows() > 0 ? 1 : 0, T{});
  }
  SparseMatrix(std::shared_ptr<const CsrShape> shape, std::span<const T> values)
      : SparseMatrix(std::move(shape)) {
    if (static_cast<index_t>(values.size()) != nonzeros()) {
      throw Error(ErrorKind::invalid_argument, "SparseMatrix: " + std::to_string(values.size()) +
                                                   " values for " + std::to_string(nonzeros()) +
                                                   " nonzeros");
    }
    std::copy(values.begin(), values.end(), tile_.data());
  }

  [[nodiscard]] const CsrShape& shape() const noexcept { return *shape_; }
  [[nodiscard]] const std::shared_ptr<const CsrShape>& shape_ptr() const noexcept { return shape_; }
  [[nodiscard]] index_t nonzeros() const noexcept { return shape_ ? shape_->nonzeros() : 0; }

  [[nodiscard]] std::span<T> values() noexcept {
    return {tile_.data(), static_cast<std::size_t>(nonzeros())};
  }
  [[nodiscard]] std::span<const T> values() const noexcept {
    return {tile_.data(), static_cast<std::size_t>(nonzeros())};
  }
  // Row r's values (0 <= r < shape().rows(); Error(invalid_argument) otherwise).
  [[nodiscard]] std::span<T> row_values(index_t r) { return values().subspan(first(r), length(r)); }
  [[nodiscard]] std::span<const T> row_values(index_t r) const {
    return values().subspan(first(r), length(r));
  }

  // The values as a 1-D tile from 0, for launches and Residents.
  [[nodiscard]] Tile<T>& tile() noexcept { return tile_; }
  [[nodiscard]] const Tile<T>& tile() const noexcept { return tile_; }

 private:
  std::size_t first(index_t r) const {
    (void)shape_->row(r);  // checks r
    return static_cast<std::size_t>(shape_->row_ptr()[static_cast<std::size_t>(r)]);
  }
  std::size_t length(index_t r) const { return shape_->row(r).size(); }

  std::shared_ptr<const CsrShape> shape_ = std::make_shared<const CsrShape>();
  Tile<T> tile_;
};

// The structure of a shape as the sparse kernels take it: row offsets (rows + 1) and local
// columns (at least one element when the shape has rows, as SparseMatrix's values).
inline Tile<index_t> row_ptr_tile(const CsrShape& shape) {
  Tile<index_t> t = detail::sparse_values_tile<index_t>(shape.rows() + 1, 0, 0);
  std::copy(shape.row_ptr().begin(), shape.row_ptr().end(), t.data());
  return t;
}
inline Tile<local_index_t> cols_tile(const CsrShape& shape) {
  Tile<local_index_t> t =
      detail::sparse_values_tile<local_index_t>(shape.nonzeros(), shape.rows() > 0 ? 1 : 0, 0);
  std::copy(shape.cols().begin(), shape.cols().end(), t.data());
  return t;
}

}  // namespace hit
