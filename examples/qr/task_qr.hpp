#pragma once
// hit-qr's tasks on the task runtime (docs/runtime.md): the tile QR in the right-looking order
// (per tile column k: geqrt of the diagonal tile, larfb of the tiles right of it, then down the
// column tsqrt of each tile below it and ssrfb of the tiles right of that one), the right-hand
// side as one more tile column, the back substitution, and the forming of Q. Every process
// submits every task; each runs those that write its tiles (an ssrfb that updates two tile rows
// held by two processes runs where the lower one lives, and the upper tile travels to it and
// back), and a tile another process reads reaches it once, in a message, as soon as it is
// written. On host cores or an accelerator with the host's other cores: app::TileTaskRunner.

#include <optional>
#include <string>
#include <vector>

#include "../common/tile_tasks.hpp"
#include "hit/core/environment.hpp"
#include "hit/layout.hpp"
#include "hit/runtime/process_flow.hpp"
#include "hit/tile.hpp"
#include "tile_kernels.hpp"

namespace hit::qr {

// The tiles of the factorisation: rows cut wherever a block of the layout begins on either axis
// (within the first n rows) or on axis 0 (below them), columns wherever a block begins on
// either axis within the n columns. Every tile lies inside one block, and the diagonal tiles
// (k < columns()) are square.
class QrTiling {
 public:
  explicit QrTiling(const Layout& lay);
  int rows() const noexcept { return static_cast<int>(row_cuts_.size()) - 1; }
  int columns() const noexcept { return static_cast<int>(col_cuts_.size()) - 1; }
  Sig row_range(int i) const;
  Sig col_range(int j) const;
  index_t height(int i) const { return row_range(i).size(); }
  index_t width(int j) const { return col_range(j).size(); }
  Shape tile(int i, int j) const { return Shape{row_range(i), col_range(j)}; }
  index_t max_width() const;

 private:
  std::vector<index_t> row_cuts_;
  std::vector<index_t> col_cuts_;
};

// Per tile row, the process that holds b's rows there: the holder of the row's last tile.
std::vector<int> rhs_owners(const QrTiling& tiling, const Layout& lay);

// This process's share of one factorisation: views of its tiles in its blocks, the T tiles of
// the tiles it holds, its part of b, and the graph of every task.
template <class T>
class TaskQr {
 public:
  // `rhs`: this process's part of b (per tile row it holds in the last tile column: the rows
  // there), solved for after the factorisation; null when there is no right-hand side.
  // `tiny`: a diagonal element of R of at most this magnitude makes A rank-deficient (the solve
  // refuses it, naming the column).
  TaskQr(const QrTiling& tiling, std::vector<Tile<T>>& blocks, std::vector<Tile<T>>* rhs, T tiny,
         Device& device, const Layout& lay, Environment& env);
  // Factorises the blocks in place (R above the diagonal, the reflectors below) and, with b,
  // overwrites b's first n rows with x. Collective.
  runtime::ExecutionReport run();
  // Q (m×n), formed into `q` (blocks of the same layout) from the factorisation. Collective.
  void form_q(std::vector<Tile<T>>& q);

  std::size_t tasks() const noexcept { return flow_.tasks(); }
  const runtime::MessageCounters& messages() const noexcept { return flow_.counters(); }
  const app::TileTaskRunner& runner() const noexcept { return runner_; }
  // The flops of this process's tile kernels (each task's cost is its kernel's flops).
  double flops() const;
  // For the timeline (--svg), by task of this process's graph.
  std::string kind_name(runtime::TaskId t) const;
  std::string describe(runtime::TaskId t) const;
  std::vector<std::string> place_names() const { return runner_.place_names(); }

 private:
  enum class Kind : unsigned char { geqrt, tsqrt, larfb, ssrfb, trsv, gemv };
  static constexpr int kinds = 6;
  // A task: geqrt of (k, k); tsqrt of (i, k) under (k, k); larfb of (k, j) with (k, k); ssrfb
  // of (k, j) and (i, j) with (i, k); trsv of b's rows k with R_kk; gemv of b's rows i with
  // R_ik and x_k. Column j == columns() is b's.
  struct Step {
    Kind kind;
    int i, j, k;
  };
  // The runtime's tiles: A's (i, j) for j <= columns() (the last, b's), then the T tiles
  // (i, k), then Q's (i, j).
  runtime::TileId a_id(int i, int j) const;
  runtime::TileId t_id(int i, int k) const;
  runtime::TileId q_id(int i, int j) const;
  Shape shape_of(runtime::TileId g) const;
  // Per runtime tile (A's, b's, T's, Q's), the process that holds it.
  std::vector<int> owners() const;
  // Every tile's rows: this process's where they are (Q's from `q`, none without), the others'
  // sizes only.
  std::vector<runtime::HostRows> rows(std::vector<Tile<T>>* q);
  // The same after allocating this process's T tiles.
  std::vector<runtime::HostRows> rows_with_factors();
  // A step's tiles, in the order its body takes them, and its flops. `apply`: q_transposed
  // while factorising (updates write A and b), q while forming Q (updates write Q).
  std::vector<runtime::TileAccess> accesses(const Step& s, Apply apply) const;
  double cost(const Step& s) const;
  void submit(runtime::ProcessFlow& flow, std::vector<Step>& steps, const Step& s,
              Apply apply) const;
  void submit_factorisation();
  static const Step& step(const runtime::ProcessFlow& flow, const std::vector<Step>& steps,
                          runtime::TaskId t);
  app::TileTaskBodies bodies(const runtime::ProcessFlow& flow, const std::vector<Step>& steps,
                             Apply apply) const;
  void body(const runtime::ProcessFlow& flow, const Step& s, Apply apply, runtime::TaskId t,
            runtime::DeviceTiles* copies) const;
  // x := R⁻¹x on a diagonal tile (Error naming the column when R is rank-deficient), and
  // y := y − R·x.
  void solve_diagonal(const View<const T>& r, const View<T>& x, int k) const;
  void subtract_product(const View<const T>& r, const View<const T>& x, const View<T>& y) const;

  const QrTiling& tiling_;
  Device& device_;
  MPI_Comm comm_;
  const Layout& lay_;
  bool has_rhs_;
  T tiny_;
  app::TileTaskRunner runner_;
  std::vector<int> owner_;               // owners(), at each runtime tile
  std::vector<Tile<T>> tiles_;           // A's, at a_id; null: another's
  std::vector<std::vector<T>> factors_;  // T tiles, at t_id - t_id(0, 0); empty: another's
  std::vector<Tile<T>>* rhs_;
  runtime::ProcessFlow flow_;
  std::vector<Step> steps_;  // per global task of flow_
  Kernel<View<T>, View<T>> geqrt_ = geqrt<T>();
  Kernel<View<T>, View<T>, View<T>> tsqrt_ = tsqrt<T>();
  Kernel<View<const T>, View<const T>, View<T>, Apply> larfb_ = larfb<T>();
  Kernel<View<const T>, View<const T>, View<T>, View<T>, Apply> ssrfb_ = ssrfb<T>();
};

}  // namespace hit::qr
