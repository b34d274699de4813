#pragma once
// Everything of hit-summa around the algorithm (summa.cpp): which layouts it can use, the
// pictures, the result file, the check and the report.

#include <algorithm>
#include <cstdio>
#include <string>

#include "../common/matrix_product.hpp"
#include "hit/hit.hpp"
#include "summa.hpp"

namespace hit::summa {

// SUMMA works with any layouts that give every process at most one block of each matrix (its
// panels are derived from block intersections, so the blocks need not line up). Also draws the
// layouts (--svg). Errors are the same on every rank (layouts are).
inline void check_and_draw(Environment& env, const Options& o, const Layout& a, const Layout& b,
                           const Layout& c) {
  const char* names[3] = {"A", "B", "C"};
  const Layout* layouts[3] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i) {
    const Layout& l = *layouts[i];
    for (int p = 0; p < l.procs(); ++p) {
      if (l.blocks(p).size() > 1) {
        throw Error(ErrorKind::invalid_argument,
                    std::string("hit-summa needs layouts with at most one block per process; ") +
                        names[i] + "'s layout '" + l.spec() + "' gives rank " + std::to_string(p) +
                        " " + std::to_string(l.blocks(p).size()) + " blocks");
      }
    }
  }
  app::draw_product_layouts(env, o.run.svg, a, b, c);
}

// The result file, the check and the report.
template <class T>
int finish(Environment& env, const Options& o, app::Harness& harness, const Layout& la,
           const Layout& lb, const Layout& lc, const Partition& part, Tile<T>& c) {
  const Topology& procs = lc.topology();
  const long panel = std::min(o.panel, o.m);
  char headline[320];
  std::snprintf(
      headline, sizeof headline,
      "hit-summa: C(%ldx%ld) = A(%ldx%ld) * B(%ldx%ld), %s, %d ranks on %s, panels of %ld", o.n,
      o.k, o.n, o.m, o.m, o.k, o.run.type.c_str(), env.size(), procs.str().c_str(), panel);
  return app::finish_product(env, o, harness, la, lb, lc, part, c,
                             {{"app", "summa"},
                              {"panel", panel},
                              {"lookahead", o.lookahead},
                              {"topology", {{"name", procs.name()}, {"dims", procs.dims()}}}},
                             headline);
}

}  // namespace hit::summa
