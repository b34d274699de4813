#pragma once
// The arrays of one process's part of Heat, kept on its device (hit::Resident): the graph's rows
// and two value vectors over the local vertices (held, then ghosts), one read and one written by
// each step. The halo refreshes the ghosts of the one read; nothing else crosses between host and
// device inside the loop.

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../common/sparse_setup.hpp"
#include "hit/core/timer.hpp"
#include "hit/partition.hpp"
#include "hit/resident.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/sparse/sparse_values.hpp"

namespace hit::heat {

template <class T>
class HeatOps {
 public:
  HeatOps(const app::SparseSystem<T>& sys, const Setting& partition_spec)
      : rows_(sys.shape().rows()), vertices_(sys.shape().vertices()) {
    rows_part_ = partition(partition_spec, Shape{Sig(0, rows_)});
    shape_ = sys.matrix.shape_ptr();
    row_ptr_ = Resident<index_t>(row_ptr_tile(*shape_));
    cols_ = Resident<local_index_t>(cols_tile(*shape_));
  }

  // Both vectors start from `start` (this process's vertices in local row order).
  void load(std::span<const T> start) {
    current_ = Resident<T>(values_from(start).tile());
    next_ = Resident<T>(values_from(start).tile());
  }

  // The vector the next step reads (its ghosts are what the halo refreshes).
  Resident<T>& current() noexcept { return current_; }

  // next = the mean of each vertex's neighbours in current, over rows [first, last).
  void step(index_t first, index_t last) {
    if (first == last) return;
    const Timer t;
    heat_step(rows_part_, row_ptr_, cols_, current_, next_, first, last);
    compute_s_ += t.seconds();
  }
  void swap() noexcept { std::swap(current_, next_); }

  std::vector<T> values_host() {
    if (current_.is_null()) return {};
    current_.sync_to_host();
    return std::vector<T>(current_.host().data(), current_.host().data() + rows_);
  }

  // The kernels' seconds since the last call.
  double take_compute_seconds() noexcept { return std::exchange(compute_s_, 0.0); }

 private:
  // Over the local vertices: the held rows' values from `held`, the ghosts' 0 until a halo update.
  SparseVector<T> values_from(std::span<const T> held) const {
    SparseVector<T> v(shape_);
    std::copy(held.begin(), held.end(), v.held().begin());
    return v;
  }

  std::shared_ptr<const CsrShape> shape_;
  index_t rows_ = 0;
  index_t vertices_ = 0;
  Partition rows_part_;
  Resident<index_t> row_ptr_;
  Resident<local_index_t> cols_;
  Resident<T> current_, next_;
  double compute_s_ = 0;
};

}  // namespace hit::heat
