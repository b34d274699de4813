// SUMMA with hitmap++: layouts by name, panels fetched from their owners, the look-ahead.
#include "summa.hpp"

#include <algorithm>
#include <vector>

#include "hit/devices/builtin_kernels.hpp"
#include "hit/hit.hpp"
#include "summa_io.hpp"

namespace hit::summa {
namespace {

// Whether this process holds all of `region` of the array `l` lays out, in one block.
bool holds(const Layout& l, const Shape& region) {
  const Shape own = l.local().block();
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

// The panels of `width` columns of A (rows of B), built once. This process wants A's panel over
// its rows of C and B's over its columns, received into one of `buffers` buffers (panels
// j + 1 .. j + buffers - 1 arrive in the others while panel j is multiplied). Where it holds what
// it wants it multiplies it where it lies: nothing is copied, and it wants nothing.
template <class T>
std::vector<Panel<T>> plan_panels(const Layout& la, Tile<T>& a, const Layout& lb, Tile<T>& b,
                                  const Shape& mine, index_t width, std::size_t buffers) {
  const index_t m = la.shape().extent(1);
  std::vector<Tile<T>> buffer_a(buffers), buffer_b(buffers);
  for (std::size_t i = 0; i < buffers && !mine.is_null(); ++i) {
    buffer_a[i] = Tile<T>(Shape{mine[0], Sig(0, width)});
    buffer_b[i] = Tile<T>(Shape{Sig(0, width), mine[1]});
  }
  std::vector<Panel<T>> panels;
  for (index_t k0 = 0; k0 < m; k0 += width) {
    const Sig inner(k0, std::min<index_t>(k0 + width, m));
    const std::size_t buffer = panels.size() % buffers;
    Panel<T> p;
    Shape want_a, want_b;
    if (!mine.is_null()) {
      const index_t rows = mine.extent(0), cols = mine.extent(1), w = inner.size();
      want_a = Shape{mine[0], inner};
      want_b = Shape{inner, mine[1]};
      const bool local_a = holds(la, want_a), local_b = holds(lb, want_b);
      p.a = local_a ? a.select(want_a)
                    : buffer_a[buffer].select_tile(Shape::extents({rows, w})).relabel(want_a);
      p.b = local_b ? b.select(want_b)
                    : buffer_b[buffer].select_tile(Shape::extents({w, cols})).relabel(want_b);
      if (local_a) want_a = Shape();
      if (local_b) want_b = Shape();
    }
    p.get_a = fetch(la, a, want_a, p.a);
    p.get_b = fetch(lb, b, want_b, p.b);
    panels.push_back(std::move(p));
  }
  return panels;
}

template <class T>
int multiply(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  // The three matrices, laid on the processes by the layouts chosen by name.
  const Topology procs = topology(o.topology);
  const Layout la = layout(o.layout_a, procs, Shape::extents({o.n, o.m}));
  const Layout lb = layout(o.layout_b, procs, Shape::extents({o.m, o.k}));
  const Layout lc = layout(o.layout_c, procs, Shape::extents({o.n, o.k}));
  check_and_draw(env, o, la, lb, lc);

  // This process's blocks. C stays on its device; A and B stay where they are: panels of them
  // travel.
  Tile<T> a = Tile<T>::of(la);
  Tile<T> b = Tile<T>::of(lb);
  Resident<T> c = Resident<T>::of(lc);
  app::load_matrix(env, o.a_file, la.shape(), a, o.run.seed, "A (--a)");
  app::load_matrix(env, o.b_file, lb.shape(), b, o.run.seed + 1, "B (--b)");

  // One panel ahead is enough when the processes keep step; with more processes than cores one is
  // often a step behind, and its panels would reach the others only when it catches up.
  const Shape mine = lc.local().block();
  const index_t width = std::min<index_t>(o.panel, o.m);
  const index_t steps = (o.m + width - 1) / width;
  const auto depth = static_cast<std::size_t>(std::clamp<index_t>(o.lookahead, 1, steps));
  std::vector<Panel<T>> panels = plan_panels(la, a, lb, b, mine, width, depth + 1);

  // The local update C += A_panel · B_panel on the process's device.
  const auto gemm = gemm_accumulate<T>();
  const Partition part = partition(o.run.partition, mine, {.access = gemm.access()});

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
