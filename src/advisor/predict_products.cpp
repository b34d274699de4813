// Predictions of the dense matrix products: Cannon and SUMMA (docs/advisor.md).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "costs.hpp"
#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"

namespace hit::advisor {
namespace {

using detail::StepMax;

// The rows and columns a process holds of a 2-D layout whose blocks form a grid (every product
// layout): the sizes of its distinct pieces along each axis, summed.
struct Extent2 {
  double rows = 0;
  double cols = 0;
};

Extent2 held(const Layout& layout, int proc) {
  std::set<std::pair<index_t, index_t>> rows, cols;
  for (const Shape& b : layout.blocks(proc)) {
    rows.emplace(b.sig(0).begin(), b.sig(0).size());
    cols.emplace(b.sig(1).begin(), b.sig(1).size());
  }
  Extent2 e;
  for (const auto& r : rows) e.rows += double(r.second);
  for (const auto& c : cols) e.cols += double(c.second);
  return e;
}

// The contiguous runs `piece` takes in the row-major storage of `within` (both 2-D, in array
// indices, `piece` inside `within`): one where it is whole rows of consecutive storage, a run a
// row where its columns lie side by side there, else one an element.
double contiguous_runs(const Shape& piece, const Shape& within) {
  const Sig& cols = piece[1];
  if (cols.size() > 1 && cols.stride() != within[1].stride()) return double(piece.size());
  const bool whole_rows = cols.size() == within[1].size();
  const bool rows_adjacent = piece[0].size() <= 1 || piece[0].stride() == within[0].stride();
  return whole_rows && rows_adjacent ? 1.0 : double(piece[0].size());
}

void require_matrix_layouts(std::string_view app, const Layout& a, const Layout& b,
                            const Layout& c) {
  for (const Layout* l : {&a, &b, &c}) {
    if (l->shape().rank() != 2) {
      throw Error(ErrorKind::shape, fmt::format("{} multiplies matrices: the layout '{}' is of a "
                                                "{}-D shape",
                                                app, l->spec(), l->shape().rank()));
    }
  }
  if (!(a.topology() == c.topology()) || !(b.topology() == c.topology())) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: the layouts of A, B and C must share one topology", app));
  }
}

std::uint64_t bytes_of(double elements, const RunShape& run) {
  return static_cast<std::uint64_t>(elements * double(run.element_bytes));
}

// What hit-cannon requires: one block per process of each matrix, A's row blocks are C's, B's
// column blocks are C's, and A(i, j) and B(j, i) hold the same slice of the inner dimension (a
// layout that splits the rows of A unevenly splits the rows of B too, not A's columns).
void require_cannon_blocks(const Layout& a, const Layout& b, const Layout& c) {
  const Topology& topo = c.topology();
  for (const Layout* l : {&a, &b, &c}) {
    for (int p = 0; p < topo.grid_size(); ++p) {
      if (l->blocks(p).size() != 1) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("cannon shifts one block per process: layout '{}' gives process "
                                "{} {} blocks",
                                l->spec(), p, l->blocks(p).size()));
      }
    }
  }
  for (int p = 0; p < topo.grid_size(); ++p) {
    const Index ij = topo.coords(p);
    const int t = topo.proc_at(Index{ij[1], ij[0]});
    if (!(a.block(p).sig(0) == c.block(p).sig(0)) || !(b.block(p).sig(1) == c.block(p).sig(1)) ||
        !(a.block(p).sig(1) == b.block(t).sig(0))) {
      throw Error(
          ErrorKind::shape,
          fmt::format("cannon needs A's column blocks to equal B's row blocks and their "
                      "row and column blocks to equal C's: layout '{}' gives A {} on "
                      "process {}, B {} on process {} and C {}",
                      c.spec(), a.block(p).str(), p, b.block(t).str(), t, c.block(p).str()));
    }
  }
}

}  // namespace

Prediction predict_cannon(const Layout& a, const Layout& b, const Layout& c, const Machine& machine,
                          const RunShape& run) {
  require_matrix_layouts("cannon", a, b, c);
  const Topology& topo = c.topology();
  if (topo.axes() != 2 || topo.dim(0) != topo.dim(1)) {
    throw Error(ErrorKind::topology,
                fmt::format("cannon runs on a square grid of processes, not {}", topo.str()));
  }
  const int q = topo.dim(0);
  const int procs = topo.procs();
  require_cannon_blocks(a, b, c);
  // Rank at (i, j), and each process's block extents, once: the steps only index them.
  std::vector<int> at(static_cast<std::size_t>(q) * q);
  std::vector<int> row_of(procs, 0), col_of(procs, 0);
  for (int p = 0; p < topo.grid_size(); ++p) {
    const Index ij = topo.coords(p);
    row_of[p] = static_cast<int>(ij[0]);
    col_of[p] = static_cast<int>(ij[1]);
    at[static_cast<std::size_t>(ij[0] * q + ij[1])] = p;
  }
  const auto rank = [&](int i, int j) { return at[static_cast<std::size_t>(i * q + j)]; };
  std::vector<double> rows(procs, 0), cols(procs, 0), width(procs, 0), height(procs, 0);
  for (int p = 0; p < topo.grid_size(); ++p) {
    rows[p] = double(c.block(p).extent(0));
    cols[p] = double(c.block(p).extent(1));
    width[p] = double(a.block(p).extent(1));
    height[p] = double(b.block(p).extent(0));
  }
  const double a_bytes = double(a.max_extents().size()) * double(run.element_bytes);
  const double b_bytes = double(b.max_extents().size()) * double(run.element_bytes);

  Prediction out;
  out.procs.resize(static_cast<std::size_t>(procs));
  // The alignment: block row i of A moves i places left, block column j of B j places up.
  StepMax align;
  for (int p = 0; p < topo.grid_size(); ++p) {
    const int i = row_of[p], j = col_of[p];
    double m = machine.message_seconds(rank(i, (j + i) % q), p, 1, a_bytes) +
               machine.message_seconds(rank((i + j) % q, j), p, 1, b_bytes) +
               machine.staging_seconds(
                   p, a_bytes + b_bytes + rows[p] * cols[p] * double(run.element_bytes));
    out.procs[static_cast<std::size_t>(p)].comm_s += m;
    align.add(0, m);
  }
  out.comm_s = align.comm;
  out.predicted_s = align.comm;
  // A step's shifts are the same at every step (the padded blocks, the same neighbours). A
  // block larger than MPI's eager messages moves in a rendezvous, which advances in MPI calls
  // only: after the product, not during it.
  std::vector<double> shift(procs, 0.0), serial(procs, 0.0);
  for (int p = 0; p < topo.grid_size(); ++p) {
    const int i = row_of[p], j = col_of[p];
    const double from_a = machine.message_seconds(rank(i, (j + 1) % q), p, 1, a_bytes);
    const double from_b = machine.message_seconds(rank((i + 1) % q, j), p, 1, b_bytes);
    shift[p] = from_a + from_b + machine.staging_seconds(p, a_bytes + b_bytes);
    serial[p] = (a_bytes > eager_message_bytes ? from_a : 0.0) +
                (b_bytes > eager_message_bytes ? from_b : 0.0);
  }
  std::vector<double> last_inner(procs, -1.0), last_compute(procs, 0.0);
  std::vector<std::uint64_t> last_problem(procs, 0);
  for (int s = 0; s < q; ++s) {
    StepMax step, after;
    for (int p = 0; p < topo.grid_size(); ++p) {
      const int i = row_of[p], j = col_of[p];
      const int kk = (i + j + s) % q;
      const double inner = std::max(width[rank(i, kk)], height[rank(kk, j)]);
      const double flops = 2 * rows[p] * inner * cols[p];
      // A process's products differ only where the inner width does (one or two widths on
      // most layouts): the last one's time is kept.
      if (inner != last_inner[p]) {
        last_problem[p] = bytes_of(rows[p] * inner + inner * cols[p] + rows[p] * cols[p], run);
        last_inner[p] = inner;
        last_compute[p] = machine.own_seconds(p, Kernel::gemm, flops, last_problem[p]);
      }
      const double comm = s + 1 < q ? shift[p] : 0.0;  // the next blocks travel meanwhile
      step.parts.push_back({.proc = p,
                            .kernel = last_compute[p],
                            .launch = machine.launch_seconds(p),  // one product a step
                            .comm = comm - (s + 1 < q ? serial[p] : 0.0),
                            .flops = flops,
                            .problem_bytes = last_problem[p]});
      if (s + 1 < q) {
        out.procs[static_cast<std::size_t>(p)].comm_s += serial[p];
        after.add(0, serial[p]);
      }
    }
    step.close(machine, out.procs);
    out.compute_s += step.compute;
    out.comm_s += step.comm + after.comm;
    out.predicted_s += std::max(step.compute, step.comm) + after.comm;
  }
  for (int p = 0; p < topo.grid_size(); ++p) {
    out.procs[static_cast<std::size_t>(p)].bytes =
        static_cast<std::uint64_t>(2 * (a_bytes + b_bytes)) +
        bytes_of(rows[p] * cols[p], run);  // A and B double-buffered
  }
  detail::finish(out, machine);
  return out;
}

namespace {

// One SUMMA step's per-process figures: the product and the packing (its CPU does both), what
// it receives and sends of the panels, and the part of that a rendezvous carries.
struct SummaStep {
  std::vector<double> kernel, launch, flops, transfer, rendezvous;
  std::vector<std::uint64_t> problem;
  explicit SummaStep(int procs)
      : kernel(procs),
        launch(procs),
        flops(procs),
        transfer(procs),
        rendezvous(procs),
        problem(procs) {}

  // Process p fetches `want` of `layout` from its owners, as hit-summa does: one message per
  // owner (none where p holds it all), packed where the piece lies in several runs.
  void fetch(const Machine& machine, const Layout& layout, int p, const Shape& want, double eb) {
    if (layout.active(p) && layout.block(p).includes(want)) return;
    double received = 0;
    for (const int q : layout.procs_meeting(want)) {
      const Shape& from = layout.block(q);
      const Shape piece = want.intersect(from);
      if (piece.empty()) continue;
      const double bytes = double(piece.size()) * eb;
      // Within a node the receiver copies the message (MPICH's single copy); between nodes
      // the owner's link carries each of its messages in turn.
      const double t = machine.message_seconds(q, p, 1, bytes);
      const bool sender_busy = machine.node_of(q) != machine.node_of(p);
      transfer[p] += t;
      if (sender_busy) transfer[q] += t;
      if (bytes > eager_message_bytes) {
        rendezvous[p] += t;
        if (sender_busy) rendezvous[q] += t;
      }
      kernel[p] += machine.gather_seconds(p, contiguous_runs(piece, want), bytes);
      kernel[q] += machine.gather_seconds(q, contiguous_runs(piece, from), bytes);
      if (q != p) received += bytes;
    }
    transfer[p] += machine.staging_seconds(p, received);
  }
};

}  // namespace

Prediction predict_summa(const Layout& a, const Layout& b, const Layout& c, const Machine& machine,
                         const RunShape& run) {
  require_matrix_layouts("summa", a, b, c);
  if (run.panel < 1) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("summa: panel {}: the width must be >= 1", run.panel));
  }
  const Topology& topo = c.topology();
  const int procs = topo.procs();
  const index_t m = a.shape().extent(1);
  for (const Layout* l : {&a, &b, &c}) {
    for (int p = 0; p < topo.grid_size(); ++p) {
      if (l->blocks(p).size() > 1) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("summa needs at most one block per process: layout '{}' gives "
                                "process {} {} blocks",
                                l->spec(), p, l->blocks(p).size()));
      }
    }
  }
  std::vector<Extent2> mine(static_cast<std::size_t>(procs));
  std::vector<Shape> c_block(static_cast<std::size_t>(procs));
  for (int p = 0; p < topo.grid_size(); ++p) {
    mine[static_cast<std::size_t>(p)] = held(c, p);
    if (c.active(p)) c_block[static_cast<std::size_t>(p)] = c.block(p);
  }
  Prediction out;
  out.procs.resize(static_cast<std::size_t>(procs));
  const index_t steps = (m + run.panel - 1) / run.panel;
  const double eb = double(run.element_bytes);
  std::vector<StepMax> overlapped(static_cast<std::size_t>(steps)),
      serial(static_cast<std::size_t>(steps));
  for (index_t s = 0; s < steps; ++s) {
    const index_t k0 = s * run.panel;
    const Sig inner(k0, std::min(k0 + run.panel, m));
    const double w = double(inner.size());
    SummaStep now(procs);
    for (int p = 0; p < topo.grid_size(); ++p) {
      const Extent2& e = mine[static_cast<std::size_t>(p)];
      if (e.rows == 0) continue;
      const Shape& own = c_block[static_cast<std::size_t>(p)];
      now.flops[p] = 2 * e.rows * w * e.cols;
      now.launch[p] = machine.launch_seconds(p);  // one product a step
      now.problem[p] = bytes_of(e.rows * w + w * e.cols + e.rows * e.cols, run);
      now.kernel[p] += machine.own_seconds(p, Kernel::gemm, now.flops[p], now.problem[p]);
      // A's panel over its rows of C, B's over its columns.
      now.fetch(machine, a, p, Shape{own[0], inner}, eb);
      now.fetch(machine, b, p, Shape{inner, own[1]}, eb);
    }
    StepMax& step = overlapped[std::size_t(s)];
    for (int p = 0; p < topo.grid_size(); ++p) {
      if (now.kernel[p] > 0 || now.transfer[p] > 0) {
        step.parts.push_back({.proc = p,
                              .kernel = now.kernel[p],
                              .launch = now.launch[p],
                              .comm = now.transfer[p] - now.rendezvous[p],
                              .flops = now.flops[p],
                              .problem_bytes = now.problem[p]});
      }
      out.procs[static_cast<std::size_t>(p)].comm_s += now.rendezvous[p];
      serial[std::size_t(s)].add(0, now.rendezvous[p]);
    }
    step.close(machine, out.procs);
    out.compute_s += overlapped[std::size_t(s)].compute;
    out.comm_s += overlapped[std::size_t(s)].comm + serial[std::size_t(s)].comm;
  }
  // With lookahead the panels of step s+1 travel during the product of step s, those of them
  // that MPI delivers eagerly; a rendezvous waits for the next MPI call.
  for (std::size_t s = 0; s < overlapped.size(); ++s) {
    const StepMax& now = overlapped[s];
    if (run.lookahead) {
      const double next = s + 1 < overlapped.size() ? overlapped[s + 1].comm : 0.0;
      out.predicted_s += (s == 0 ? now.comm : 0.0) + std::max(now.compute, next) + serial[s].comm;
    } else {
      out.predicted_s += now.compute + std::max(now.comm, serial[s].comm);
    }
  }
  const double lookahead_buffers = run.lookahead ? 2.0 : 1.0;
  for (int p = 0; p < topo.grid_size(); ++p) {
    const Extent2& e = mine[static_cast<std::size_t>(p)];
    out.procs[static_cast<std::size_t>(p)].bytes =
        bytes_of(double(a.elements(p) + b.elements(p) + c.elements(p)) +
                     lookahead_buffers * double(run.panel) * (e.rows + e.cols),
                 run);
  }
  detail::finish(out, machine);
  return out;
}

}  // namespace hit::advisor
