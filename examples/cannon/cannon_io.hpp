#pragma once
// Everything of hit-cannon around the algorithm (cannon.cpp): which layout combinations Cannon
// can use, the input matrices (generated or read), the --check against a serial product, the
// result file and the report.

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/harness.hpp"
#include "../common/matrix_product.hpp"
#include "cannon.hpp"
#include "hit/hit.hpp"

namespace hit::cannon {

// Cannon is correct only when the blocks line up: A's row blocks are C's, B's column blocks are
// C's, A's column blocks are B's row blocks, and every process of the active grid holds all
// three. Also draws the layouts (--svg). Errors are the same on every rank (layouts are).
inline void check_and_draw(Environment& env, const Options& o, const Layout& a, const Layout& b,
                           const Layout& c) {
  const Topology& topo = c.topology();
  const int side = topo.dims()[0];
  const int ext[6] = {a.active_extent(0), a.active_extent(1), b.active_extent(0),
                      b.active_extent(1), c.active_extent(0), c.active_extent(1)};
  for (int e : ext) {
    if (e != ext[0]) {
      throw Error(ErrorKind::shape,
                  "Cannon needs every process of the active grid to hold a block of A, B and C; "
                  "with n=" +
                      std::to_string(o.n) + " m=" + std::to_string(o.m) +
                      " k=" + std::to_string(o.k) + " on a " + std::to_string(side) + "x" +
                      std::to_string(side) +
                      " grid the layouts leave some without (use fewer processes or larger sizes)");
    }
  }
  for (const Layout* l : {&a, &b, &c}) {
    for (int p = 0; p < topo.grid_size(); ++p) {
      if (l->blocks(p).size() > 1) {
        throw Error(ErrorKind::invalid_argument,
                    "Cannon needs layouts with one block per process; '" + l->spec() +
                        "' gives rank " + std::to_string(p) + " " +
                        std::to_string(l->blocks(p).size()) + " blocks");
      }
    }
  }
  const auto mismatch = [](const std::string& what, const std::string& x, const std::string& y) {
    return Error(ErrorKind::shape, "Cannon needs " + what + ": " + x + " vs " + y);
  };
  for (int p = 0; p < topo.grid_size(); ++p) {
    if (!c.active(p)) continue;
    const Shape bc = c.block(p);
    const Shape ba = a.block(p);
    const Shape bb = b.block(p);
    const std::string r = " (rank " + std::to_string(p) + ")";
    if (!(ba[0] == bc[0])) {
      throw mismatch("A's row blocks to equal C's",
                     "A " + ba.str() + r + ", layout '" + a.spec() + "'",
                     "C " + bc.str() + ", layout '" + c.spec() + "'");
    }
    if (!(bb[1] == bc[1])) {
      throw mismatch("B's column blocks to equal C's",
                     "B " + bb.str() + r + ", layout '" + b.spec() + "'",
                     "C " + bc.str() + ", layout '" + c.spec() + "'");
    }
    // A(i, j) and B(j, i) hold the same slice of the inner dimension.
    const Index coords = topo.coords(p);
    const int q = topo.proc_at(Index{coords[1], coords[0]});
    if (!(ba[1] == b.block(q)[0])) {
      throw mismatch(
          "A's column blocks to equal B's row blocks",
          "A " + ba.str() + r + ", layout '" + a.spec() + "'",
          "B " + b.block(q).str() + " (rank " + std::to_string(q) + "), layout '" + b.spec() + "'");
    }
  }
  app::draw_product_layouts(env, o.run.svg, a, b, c);
}

// The input blocks of this process, kept to start every repetition from them (the shifts move
// the blocks around).
template <class T>
class Inputs {
 public:
  Inputs(Environment& env, const Options& o, const Layout& la, const Layout& lb, Resident<T>& a,
         Resident<T>& b) {
    app::load_matrix(env, o.a_file, la.shape(), a.host(), o.run.seed, "A (--a)");
    app::load_matrix(env, o.b_file, lb.shape(), b.host(), o.run.seed + 1, "B (--b)");
    a0_ = a.host().clone();
    b0_ = b.host().clone();
  }
  // Whole padded buffers: after the shifts the padding holds other blocks' wider data.
  void restore(Resident<T>& a, Resident<T>& b) const {
    a.host().padded().copy_from(a0_.padded());
    b.host().padded().copy_from(b0_.padded());
    a.modified_on_host();
    b.modified_on_host();
  }

 private:
  Tile<T> a0_;
  Tile<T> b0_;
};

// The result file, the check and the report.
template <class T>
int finish(Environment& env, const Options& o, app::Harness& harness, const Layout& la,
           const Layout& lb, const Layout& lc, const Partition& part, Tile<T>& c) {
  const Topology& grid = lc.topology();
  char headline[256];
  std::snprintf(headline, sizeof headline,
                "hit-cannon: C(%ldx%ld) = A(%ldx%ld) * B(%ldx%ld), %s, %d ranks on a %dx%d grid",
                o.n, o.k, o.n, o.m, o.m, o.k, o.run.type.c_str(), env.size(), grid.dims()[0],
                grid.dims()[1]);
  return app::finish_product(env, o, harness, la, lb, lc, part, c,
                             {{"app", "cannon"}, {"grid", {grid.dims()[0], grid.dims()[1]}}},
                             headline);
}

}  // namespace hit::cannon
