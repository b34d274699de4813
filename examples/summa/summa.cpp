// SUMMA with hitmap++: layouts by name, panels fetched from their owners, the look-ahead.
#include "summa.hpp"

#include <algorithm>
#include <vector>

#include "hit/hit.hpp"
#include "summa_io.hpp"

namespace hit::summa {
namespace {

// Whether process `rank` holds all of `region` of the array `l` lays out, in one block.
bool holds(const Layout& l, int rank, const Shape& region) {
  const Shape own = l.part(rank).block();
  return !own.is_null() && own.includes(region);
}

// One panel of the inner dimension: this process's slices of A's and B's panels (views of its own
// blocks where it holds them, else of a reused buffer relabelled to the panel's indices) and the
// communication that fills them.
template <class T>
struct Panel {
  Tile<T> a;
  Tile<T> b;
  Comm get_a;
  Comm get_b;
};

template <class T>
int multiply(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  // The three matrices, laid on the processes by the layouts chosen by name.
  const Topology procs = topology(o.topology);
  const Layout la = layout(o.layout_a, procs, Shape::extents({o.n, o.m}), "a");
  const Layout lb = layout(o.layout_b, procs, Shape::extents({o.m, o.k}), "b");
  const Layout lc = layout(o.layout_c, procs, Shape::extents({o.n, o.k}), "c");
  check_and_draw(env, o, la, lb, lc);

  // This process's blocks. C stays on its device; A and B stay where they are: panels of them
  // travel.
  Tile<T> a = Tile<T>::of(la);
  Tile<T> b = Tile<T>::of(lb);
  Resident<T> c = Resident<T>::of(lc);
  app::load_matrix(env, o.a_file, la.shape(), a, o.run.seed, "A (--a)");
  app::load_matrix(env, o.b_file, lb.shape(), b, o.run.seed + 1, "B (--b)");

  // Panels of `width` columns of A (rows of B). Each process receives A's panel over its rows of
  // C and B's over its columns, into one of lookahead + 1 buffers: panels j + 1 .. j + lookahead
  // arrive in the others while panel j is multiplied. One panel ahead is enough when the processes
  // keep step; with more processes than cores one is often a step behind, and its panels would
  // reach the others only when it catches up.
  const Shape mine = lc.local().block();
  const index_t width = std::min<index_t>(o.panel, o.m);
  const index_t steps = (o.m + width - 1) / width;
  const auto depth = static_cast<std::size_t>(std::clamp<index_t>(o.lookahead, 1, steps));
  std::vector<Tile<T>> buffer_a(depth + 1), buffer_b(depth + 1);
  for (std::size_t i = 0; i <= depth && !mine.is_null(); ++i) {
    buffer_a[i] = Tile<T>(Shape{mine[0], Sig(0, width)});
    buffer_b[i] = Tile<T>(Shape{Sig(0, width), mine[1]});
  }
  std::vector<Panel<T>> panels;
  for (index_t k0 = 0; k0 < o.m; k0 += width) {
    const Sig inner(k0, std::min<index_t>(k0 + width, o.m));
    const std::size_t buffer = panels.size() % (depth + 1);
    Panel<T> p;
    // What every process wants of this panel: its rows of C of A's panel, its columns of B's.
    // A process that holds what it wants multiplies it where it lies: nothing is copied, and it
    // wants nothing (every process computes the same lists from the layouts).
    std::vector<Shape> want_a(static_cast<std::size_t>(env.size()));
    std::vector<Shape> want_b(want_a.size());
    bool local_a = false, local_b = false;
    for (int r = 0; r < env.size(); ++r) {
      const Shape theirs = lc.part(r).block();
      if (theirs.is_null()) continue;
      const auto u = static_cast<std::size_t>(r);
      want_a[u] = Shape{theirs[0], inner};
      want_b[u] = Shape{inner, theirs[1]};
      if (holds(la, r, want_a[u])) {
        want_a[u] = Shape();
        local_a = local_a || r == env.rank();
      }
      if (holds(lb, r, want_b[u])) {
        want_b[u] = Shape();
        local_b = local_b || r == env.rank();
      }
    }
    if (!mine.is_null()) {
      const index_t rows = mine.extent(0), cols = mine.extent(1), w = inner.size();
      p.a = local_a ? a.select(Shape{mine[0], inner})
                    : buffer_a[buffer]
                          .select_tile(Shape::extents({rows, w}))
                          .relabel(Shape{mine[0], inner});
      p.b = local_b ? b.select(Shape{inner, mine[1]})
                    : buffer_b[buffer]
                          .select_tile(Shape::extents({w, cols}))
                          .relabel(Shape{inner, mine[1]});
    }
    p.get_a = fetch_regions(la, a, want_a, p.a);
    p.get_b = fetch_regions(lb, b, want_b, p.b);
    panels.push_back(std::move(p));
  }

  // The local update C += A_panel · B_panel on the process's device.
  const auto gemm = gemm_accumulate<T>();
  const Partition part = partition(o.run.partition, mine, gemm.access(), {}, "c");

  harness.repeat(
      [&](int) {
        c.host().fill(T(0));
        c.modified_on_host();
      },
      [&](app::Clock& clock) {
        clock.comm([&] {
          for (std::size_t j = 0; j < depth && j < panels.size(); ++j) {
            panels[j].get_a.start();
            panels[j].get_b.start();
          }
        });
        for (std::size_t j = 0; j < panels.size(); ++j) {
          clock.comm([&] {
            panels[j].get_a.wait();
            panels[j].get_b.wait();
            // Look-ahead: panel j + depth goes into the buffer panel j - 1 left.
            if (j + depth < panels.size()) {
              panels[j + depth].get_a.start();
              panels[j + depth].get_b.start();
            }
          });
          clock.compute(launch(gemm, part, in(panels[j].a), in(panels[j].b), inout(c)));
        }
        c.sync_to_host();
      });
  return finish(env, o, harness, la, lb, lc, part, c.host());
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return multiply<T>(env, o); });
}

}  // namespace hit::summa
