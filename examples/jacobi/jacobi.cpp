// 2-D Jacobi with hitmap++: the grid's layout by name, two device-resident copies of this
// process's block, halos that exchange the faces only, and the library's jacobi5 kernel.
#include "jacobi.hpp"

#include <optional>
#include <string>
#include <vector>

#include "hit/devices/builtin_kernels.hpp"
#include "hit/hit.hpp"
#include "jacobi_io.hpp"

namespace hit::jacobi {
namespace {

// This process's sweep in two parts: the points whose stencil stays inside the block (or reaches
// only the fixed boundary of the grid) and the faces next to a neighbour's block, which wait for
// the halo. One process alone has no faces: its sweep is one launch, as without overlap.
struct SplitSweep {
  Partition inner;
  std::vector<Partition> faces;

  template <class K>
  SplitSweep(const Setting& spec, const Layout& l, const Shape& interior, const K& sweep) {
    const Shape block = l.local().block();
    const Shape domain = block.intersect(interior);
    if (domain.is_null() || domain.empty()) return;
    const Shape& grid = l.shape();
    Shape own = block;
    for (int k = 0; k < block.rank(); ++k) {
      const index_t below = block[k].begin() == grid[k].begin() ? 0 : -1;
      const index_t above = block[k].last() == grid[k].last() ? 0 : -1;
      own = own.expand(k, below, above);
    }
    const Shape reads_no_ghost = domain.intersect(own);
    inner = partition(spec, reads_no_ghost, {.access = sweep.access()});
    for (const Shape& face : domain.subtract(reads_no_ghost)) {
      faces.push_back(partition(spec, face, {.access = sweep.access()}));
    }
  }
};

template <class T>
int solve(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  // The grid, laid on a virtual topology of processes by the layout chosen by name.
  Layout lay = layout(o.layout, topology(o.topology), Shape::extents({o.n, o.n}));
  // With --balance, the rows move between the processes as their measured speeds ask (and start
  // from the partition of stored models, when given).
  std::optional<RowBalancer> balancer;
  if (o.balance.mode != BalanceMode::off) {
    balancer.emplace(env, lay, o.balance, o.iters);
    lay = balancer->layout();
  }
  check_and_draw(env, o, lay);

  // Two copies of this process's block with a ghost cell around, kept on its device: each
  // iteration reads one and writes the other.
  // A balancer allocates them with rows to spare, so that its first moves happen in place.
  const auto grid = [&] {
    return balancer ? balancer->resident<T>(1) : Resident<T>::of(lay, {.ghost = 1});
  };
  Resident<T> u = grid();
  Resident<T> v = grid();
  // Before a copy is read, its ghost cells receive the neighbours' faces.
  Comm halo_u = halo(lay, u);
  Comm halo_v = halo(lay, v);

  // The sweep updates the interior points of the block; the boundary ring never changes. The
  // points next to a neighbour's block read ghost cells; the others ("inner") are updated while
  // the halos travel, the faces once they have arrived.
  const auto sweep = jacobi5<T>();
  const Shape interior = Shape::extents({o.n - 2, o.n - 2}).displace(Index{1, 1});
  const auto split = [&](const Layout& l) {
    return SplitSweep(o.run.partition, l, interior, sweep);
  };
  SplitSweep parts = split(lay);
  // The host waits for the device only where it needs its data (a halo's faces, the result at the
  // end): the sweeps are queued. The balancer times every iteration, so it waits for each.
  const Completion completion = balancer ? Completion::wait : Completion::queued;

  harness.repeat(
      [&](int) {
        // Each repetition starts from the layout the last one left; the report covers the last.
        if (balancer) balancer->restart_report();
        initialise(u.host(), o.n);
        initialise(v.host(), o.n);
        u.modified_on_host();
        v.modified_on_host();
      },
      [&](app::Clock& clock) {
        for (int it = 0; it < o.iters; ++it) {
          const bool even = it % 2 == 0;
          Comm& halo_in = even ? halo_u : halo_v;
          Resident<T>& from = even ? u : v;
          Resident<T>& to = even ? v : u;
          clock.comm([&] { halo_in.start(); });
          // INOUT, not OUT: the boundary ring of the copy written must be on the device too.
          LaunchRecord step = launch(completion, sweep, parts.inner, in(from), inout(to));
          clock.compute(step);
          clock.comm([&] { halo_in.wait(); });
          for (const Partition& face : parts.faces) {
            const LaunchRecord f = launch(completion, sweep, face, in(from), inout(to));
            clock.compute(f);
            step.seconds += f.seconds;
          }
          if (balancer && balancer->after_iteration(it, step.seconds)) {
            // The rows moved: both copies follow, ghosts included, and the patterns are rebuilt.
            lay = balancer->layout();
            balancer->move(u, 1);
            balancer->move(v, 1);
            halo_u = halo(lay, u);
            halo_v = halo(lay, v);
            parts = split(lay);
          }
        }
        clock.wait_for_device();
        (o.iters % 2 == 0 ? u : v).sync_to_host();
      });
  return finish(env, o, harness, lay, parts.inner, o.iters % 2 == 0 ? u : v,
                o.iters % 2 == 0 ? v : u, balancer ? &*balancer : nullptr);
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return solve<T>(env, o); });
}

}  // namespace hit::jacobi
