#pragma once
// The arrays of one process's part of CG, kept on its device (hit::Resident), and the operations
// of an iteration as launches of the sparse kernels: q = A·p over a range of rows, p·q, the fused
// update of x and r with its r·r, and p = r + beta·p. The halo refreshes p's ghosts; nothing else
// crosses between host and device inside the loop. Reductions are local: the caller sums them
// over the processes.

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "../common/sparse_setup.hpp"
#include "hit/core/timer.hpp"
#include "hit/partition.hpp"
#include "hit/resident.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/sparse/sparse_values.hpp"
#include "hit/tile.hpp"

namespace hit::cg {

template <class T>
class CgOps {
 public:
  CgOps(const app::SparseSystem<T>& sys, const Setting& partition_spec)
      : partition_spec_(partition_spec) {
    bind(sys);
  }

  // x = 0, r = p = b (b over this process's rows, in their local order).
  void load(std::span<const T> b) {
    x_ = make({});
    r_ = make(b);
    p_ = make(b);
    q_ = make({});
  }

  // The vectors after a re-partition: x, r and p over the new rows (p's ghosts follow from the
  // next halo update).
  void reload(const app::SparseSystem<T>& sys, std::span<const T> x, std::span<const T> r,
              std::span<const T> p) {
    bind(sys);
    x_ = make(x);
    r_ = make(r);
    p_ = make(p);
    q_ = make({});
  }

  Resident<T>& p() noexcept { return p_; }

  // q = A·p over rows [first, last); returns the local p·q over those rows (fused: one pass).
  double spmv(index_t first, index_t last) {
    if (first == last) return 0;
    return timed([&] {
      return double(hit::spmv_dot(rows_part_, row_ptr_, cols_, values_, p_, q_, first, last));
    });
  }
  double dot_rr() {
    return timed([&] { return double(hit::dot(rows_part_, r_, r_)); });
  }
  // x += alpha·p, r -= alpha·q; returns the local r·r.
  double update_xr(T alpha) {
    return timed([&] { return double(hit::cg_update(rows_part_, alpha, p_, q_, x_, r_)); });
  }
  // p = r + beta·p.
  void update_p(T beta) {
    timed([&] {
      hit::xpay(rows_part_, r_, beta, p_);
      return 0.0;
    });
  }

  std::vector<T> x_host() { return rows_of(x_); }
  std::vector<T> r_host() { return rows_of(r_); }
  std::vector<T> p_host() { return rows_of(p_); }

  // Seconds spent in the kernels since the object was made (this process's compute time).
  double compute_seconds() const noexcept { return compute_s_; }

 private:
  void bind(const app::SparseSystem<T>& sys) {
    rows_ = sys.shape().rows();
    vertices_ = sys.shape().vertices();
    rows_part_ = partition(partition_spec_, Shape{Sig(0, rows_)});
    shape_ = sys.matrix.shape_ptr();
    row_ptr_ = Resident<index_t>(row_ptr_tile(*shape_));
    cols_ = Resident<local_index_t>(cols_tile(*shape_));
    values_ = Resident<T>(sys.matrix.tile());
  }

  // A vector over the local vertices, `v` on the first of them, zero after.
  Resident<T> make(std::span<const T> v) {
    SparseVector<T> vec(shape_);
    std::copy(v.begin(), v.end(), vec.values().begin());
    return Resident<T>(vec.tile());
  }

  std::vector<T> rows_of(Resident<T>& v) {
    if (v.is_null()) return {};
    v.sync_to_host();
    return std::vector<T>(v.host().data(), v.host().data() + rows_);
  }

  template <class F>
  double timed(F&& f) {
    const Timer t;
    const double result = f();
    compute_s_ += t.seconds();
    return result;
  }

  Setting partition_spec_;
  index_t rows_ = 0;
  index_t vertices_ = 0;
  Partition rows_part_;
  std::shared_ptr<const CsrShape> shape_;
  Resident<index_t> row_ptr_;
  Resident<local_index_t> cols_;
  Resident<T> values_;
  Resident<T> x_, r_, p_, q_;
  double compute_s_ = 0;
};

}  // namespace hit::cg
