// Predictions of the grid applications: Jacobi's stencil and the tiled Cholesky factorisation
// (docs/advisor.md).
#include <fmt/format.h>

#include <algorithm>

#include "costs.hpp"
#include "hit/core/error.hpp"

namespace hit::advisor {
namespace {

using detail::StepMax;

// Cells of `block` strictly inside `shape` (the boundary is fixed, never updated).
double interior_cells(const Shape& block, const Shape& shape) {
  double cells = 1;
  for (int k = 0; k < block.rank(); ++k) {
    const index_t lo = std::max(block.sig(k).begin(), shape.sig(k).begin() + 1);
    const index_t hi = std::min(block.sig(k).begin() + block.sig(k).size(),
                                shape.sig(k).begin() + shape.sig(k).size() - 1);
    cells *= double(std::max<index_t>(0, hi - lo));
  }
  return cells;
}

// The contiguous runs of a face of `elements` between `block` and its neighbour `peer` in the
// row-major storage of `block`: the face lies across the first axis on which the two blocks do
// not overlap, and a run spans the axes after it.
double face_runs(const Shape& block, const Shape& peer, index_t elements) {
  if (elements <= 0) return 0;
  double runs = 1;
  for (int k = 0; k < block.rank(); ++k) {
    if (block.sig(k).intersect(peer.sig(k)).empty()) break;
    runs *= double(block.sig(k).size());
  }
  return std::min(runs, double(elements));
}

}  // namespace

Prediction predict_jacobi(const Layout& grid, const Machine& machine, const RunShape& run) {
  if (run.iterations < 0) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("jacobi: {} iterations: the count must be >= 0", run.iterations));
  }
  const int procs = grid.procs();
  const double eb = double(run.element_bytes);
  Prediction out;
  out.procs.resize(static_cast<std::size_t>(procs));
  StepMax iteration;
  for (int p = 0; p < procs; ++p) {
    if (!grid.active(p)) continue;
    // halo_traffic refuses what hit::halo refuses (several or strided blocks, misaligned
    // neighbours): a layout Jacobi cannot run on is not predicted.
    const std::vector<PeerTraffic> halo = halo_traffic(grid, p);
    const Shape block = grid.block(p);
    Shape ghosted = block;
    double with_ghosts = 1;
    for (int k = 0; k < block.rank(); ++k) with_ghosts *= double(ghosted.sig(k).size() + 2);
    double comm = 0, faces = 0, neighbours = 0, packing = 0, strided_rows = 0;
    for (const PeerTraffic& t : halo) {
      if (t.peer == p) continue;
      comm += machine.message_seconds(t.peer, p, 1, double(t.received) * eb);
      faces += double(t.received + t.sent) * eb;
      if (t.received > 0) ++neighbours;
      // The sweep of the face next to the peer: strided across a later axis, a row at a time.
      const double face_rows = face_runs(block, grid.block(t.peer), t.received);
      if (face_rows > 1) strided_rows += face_rows;
      // Sent from the block's edge and received into its ghosts, by the process's CPU: a face
      // across a later axis is strided there.
      packing += machine.gather_seconds(p, face_runs(block, grid.block(t.peer), t.sent),
                                        double(t.sent) * eb) +
                 machine.gather_seconds(p, face_runs(block, grid.block(t.peer), t.received),
                                        double(t.received) * eb);
    }
    // A strided face's rows are priced as the stencil flops a host core sweeps in that time, so
    // that they run at the process's speed (an emulated device's slowdown multiplies them too).
    const double flops =
        4 * interior_cells(block, grid.shape()) +
        strided_rows * default_strided_row_seconds() * machine.host_flops(Kernel::stencil);
    // A sweep is one launch for the points that need no ghost and one for each face next to a
    // neighbour (hit-jacobi overlaps the halo with the first).
    const double launch = (1 + neighbours) * machine.launch_seconds(p);
    const auto problem = static_cast<std::uint64_t>(2 * with_ghosts * eb);
    const double kernel = machine.own_seconds(p, Kernel::stencil, flops, problem) + packing;
    // The faces leave and enter the device's copy of the grid every iteration.
    comm += machine.staging_seconds(p, faces);
    out.procs[static_cast<std::size_t>(p)].bytes = problem;  // two grids, ghosts included
    iteration.parts.push_back({.proc = p,
                               .kernel = kernel,
                               .launch = launch,
                               .comm = comm,
                               .flops = flops,
                               .problem_bytes = problem});
  }
  iteration.close(machine, out.procs, double(run.iterations));
  out.compute_s = iteration.compute * run.iterations;
  out.comm_s = iteration.comm * run.iterations;
  out.predicted_s = std::max(iteration.compute, iteration.comm) * run.iterations;
  detail::finish(out, machine);
  return out;
}

namespace {

// The cuts of a tiled factorisation: every block's first row and column, and the order.
std::vector<index_t> tile_cuts(const Layout& a) {
  std::vector<index_t> cuts{a.shape().extent(0)};
  for (int p = 0; p < a.procs(); ++p) {
    for (const Shape& b : a.blocks(p)) {
      if (b.sig(0).stride() != 1 || b.sig(1).stride() != 1) {
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("cholesky factorises tiles: layout '{}' gives process {} a "
                                "strided block {}",
                                a.spec(), p, b.str()));
      }
      cuts.push_back(b.sig(0).begin());
      cuts.push_back(b.sig(1).begin());
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

// The per-panel figures of a tiled factorisation.
struct Panel {
  double factor = 0;  // the diagonal tile's factorisation and the slowest solver below it
  double comm = 0;    // the slowest process's receipt of the panel's tiles
  double update = 0;  // the slowest process's trailing update
};

}  // namespace

Prediction predict_cholesky(const Layout& a, const Machine& machine, const RunShape& run) {
  if (a.shape().rank() != 2 || a.shape().extent(0) != a.shape().extent(1)) {
    throw Error(ErrorKind::shape,
                fmt::format("cholesky factorises a square matrix, not {}", a.shape().str()));
  }
  const std::vector<index_t> cuts = tile_cuts(a);
  const int tiles = static_cast<int>(cuts.size()) - 1;
  const int procs = a.procs();
  const double eb = double(run.element_bytes);
  const auto size = [&](int t) { return double(cuts[t + 1] - cuts[t]); };
  std::vector<int> owner(static_cast<std::size_t>(tiles) * tiles, -1);
  const auto own = [&](int i, int j) -> int& { return owner[std::size_t(i) * tiles + j]; };
  for (int i = 0; i < tiles; ++i) {
    for (int j = 0; j <= i; ++j) own(i, j) = a.owner(Index{cuts[i], cuts[j]});
  }
  Prediction out;
  out.procs.resize(static_cast<std::size_t>(procs));
  // One launch per tile kernel.
  const auto work = [&](int p, double flops, double rows, double cols) {
    const double launch = machine.launch_seconds(p);
    const double s = machine.compute_seconds(p, Kernel::gemm, flops,
                                             static_cast<std::uint64_t>(3 * rows * cols * eb)) +
                     launch;
    out.procs[std::size_t(p)].flops += flops;
    out.procs[std::size_t(p)].compute_s += s;
    out.procs[std::size_t(p)].launch_s += launch;
    return s;
  };
  std::vector<double> trsm(procs), recv(procs), update(procs);
  std::vector<int> stamp(procs, -1);
  std::vector<Panel> panels(static_cast<std::size_t>(tiles));
  for (int k = 0; k < tiles; ++k) {
    std::fill(trsm.begin(), trsm.end(), 0.0);
    std::fill(recv.begin(), recv.end(), 0.0);
    std::fill(update.begin(), update.end(), 0.0);
    const double tk = size(k);
    Panel& panel = panels[std::size_t(k)];
    panel.factor = work(own(k, k), tk * tk * tk / 3, tk, tk);
    for (int i = k + 1; i < tiles; ++i) {
      const double ti = size(i);
      trsm[own(i, k)] += work(own(i, k), ti * tk * tk, ti, tk);
      // Tile (i, k) goes to the owners of row i's and column i's trailing tiles.
      const int stamp_value = k * tiles + i;
      const auto deliver = [&](int p) {
        if (p == own(i, k) || stamp[p] == stamp_value) return;
        stamp[p] = stamp_value;
        const double s = machine.message_seconds(own(i, k), p, 1, ti * tk * eb) +
                         machine.staging_seconds(p, ti * tk * eb);
        recv[p] += s;
        out.procs[std::size_t(p)].comm_s += s;
      };
      for (int j = k + 1; j <= i; ++j) deliver(own(i, j));
      for (int j = i; j < tiles; ++j) deliver(own(j, i));
      for (int j = k + 1; j <= i; ++j) {
        const double tj = size(j);
        const double flops = j == i ? ti * ti * tk : 2 * ti * tj * tk;
        update[own(i, j)] += work(own(i, j), flops, ti, tj);
      }
    }
    panel.factor += *std::max_element(trsm.begin(), trsm.end());
    panel.comm = *std::max_element(recv.begin(), recv.end());
    panel.update = *std::max_element(update.begin(), update.end());
  }
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const Panel& p = panels[k];
    out.compute_s += p.factor + p.update;
    out.comm_s += p.comm;
    if (run.lookahead) {
      // Panel k+1 is factorised and travels while the rest of update k runs.
      const double next = k + 1 < panels.size() ? panels[k + 1].factor + panels[k + 1].comm : 0;
      out.predicted_s += (k == 0 ? p.factor + p.comm : 0.0) + std::max(p.update, next);
    } else {
      out.predicted_s += p.factor + p.comm + p.update;
    }
  }
  for (int p = 0; p < procs; ++p) {
    out.procs[std::size_t(p)].bytes = static_cast<std::uint64_t>(double(a.elements(p)) * eb);
  }
  detail::finish(out, machine);
  return out;
}

}  // namespace hit::advisor
