// Conjugate gradients with hitmap++: a sparse layout by name, interior rows computed while the
// halo refreshes the ghosts of p, the matrix and vectors resident on the device, two reductions
// per iteration (as PETSc's unpreconditioned CG), optional re-partitioning by measured speeds.
#include "cg.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../common/balance_flags.hpp"
#include "../common/sparse_setup.hpp"
#include "cg_balance.hpp"
#include "cg_check.hpp"
#include "cg_ops.hpp"
#include "hit/comm.hpp"
#include "hit/hit.hpp"

namespace hit::cg {
namespace {

struct Outcome {
  long iterations = 0;
  double relative_residual = 0;
  bool converged = false;
  int rebalances = 0;
  double move_s = 0;  // seconds spent moving rows
};

double sum_over_ranks(double local, app::Clock& clock) {
  clock.comm([&] { local = allreduce(local, ReduceOp::sum); });
  return local;
}

// Every process sees the same reduced value, so the breakdown is known everywhere at once.
void require_positive_curvature(double pq, long iteration) {
  if (!(pq > 0) || !std::isfinite(pq)) {
    throw Error::everywhere(
        ErrorKind::invalid_argument,
        "CG broke down at iteration " + std::to_string(iteration) +
            ": p·Ap = " + std::to_string(pq) +
            " is not positive, so the matrix is not symmetric positive definite");
  }
}

template <class T>
Outcome iterate(const Options& o, app::SparseSystem<T>& sys, CgOps<T>& ops, std::span<const T> b,
                double tol, app::Clock& clock, CgBalancer<T>* balancer) {
  Outcome out;
  ops.load(b);
  const double bb = sum_over_ranks(ops.dot_rr(), clock);
  // The advisor's dry run computes no value: it is priced as a run of --max-iters iterations on
  // the layout it starts with (no re-partitioning).
  const bool dry = dry_running(Environment::current());
  if (bb == 0 && !dry) {  // b = 0: x = 0 solves it exactly
    out.converged = true;
    return out;
  }
  double rr = bb;
  for (long k = 0; k < o.max_iters; ++k) {
    const double before = ops.compute_seconds();
    clock.comm([&] { sys.halo->start(ops.p()); });
    double my_pq = ops.spmv(0, sys.interior);
    clock.comm([&] { sys.halo->wait(); });
    my_pq += ops.spmv(sys.interior, sys.shape().rows());
    const double pq = sum_over_ranks(my_pq, clock);
    if (!dry) require_positive_curvature(pq, k + 1);
    const double alpha = rr / pq;
    const double rr_new = sum_over_ranks(ops.update_xr(static_cast<T>(alpha)), clock);
    out.iterations = k + 1;
    out.relative_residual = std::sqrt(rr_new / bb);
    if (out.relative_residual <= tol && !dry) {
      out.converged = true;
      break;
    }
    ops.update_p(static_cast<T>(rr_new / rr));
    rr = rr_new;
    if (balancer != nullptr && !dry &&
        balancer->after_iteration(k, ops.compute_seconds() - before, out.relative_residual, sys,
                                  ops)) {
      ++out.rebalances;
    }
  }
  clock.compute_seconds_add(ops.compute_seconds());
  if (balancer != nullptr) out.move_s = balancer->move_seconds();
  return out;
}

template <class T>
int solve(Environment& env, const Options& o) {
  app::Harness harness(env, o.run);
  const double tol = o.tol > 0 ? o.tol : default_tolerance<T>();
  const Timer input_timer;
  const CsrRows<T> block = o.input.load<T>(env, "--matrix");
  const double input_s = input_timer.seconds();
  app::require_square(block, "CG", o.input.name());
  require_positive_diagonal(env, block, o.input.name());
  check_outputs(env, o);
  const index_t n = block.global_rows;
  const std::vector<fpm::Model> stored =
      app::load_balance_models(env, o.balance_models, o.balance != "off");
  // With stored models the layout is their partition's; without, the resolved --layout (an
  // error in an overriding spec names what set it).
  const Setting spec = starting_spec(o, n, stored);
  app::SparseSystem<T> sys = app::distribute(env, block, spec);
  sys.input_s = input_s;
  app::draw_sparse_layout(env, o.run.svg, o.input, sys.layout, "hit-cg");
  std::vector<index_t> initial_rows;
  for (int p = 0; p < env.size(); ++p) initial_rows.push_back(sys.layout.row_count(p));
  // b in the order of this process's rows: A·1 by default (so x = 1 is the solution).
  const std::vector<T> b = right_hand_side(env, o, block, sys);
  std::optional<CgOps<T>> ops;
  std::optional<CgBalancer<T>> balancer;
  Outcome outcome;
  bool moved = false;
  harness.repeat(
      [&](int) {
        // Every repetition solves the same system from the initial layout: after a run that
        // moved rows, the set-up is made again (untimed).
        if (moved) {
          sys = app::distribute(env, block, spec);
          sys.input_s = input_s;
        }
        ops.emplace(sys, o.run.partition);
        if (o.balance != "off") balancer.emplace(env, o, n, tol, sys, stored);
      },
      [&](app::Clock& clock) {
        outcome = iterate(o, sys, *ops, std::span<const T>(b), tol, clock,
                          balancer ? &*balancer : nullptr);
        moved = outcome.rebalances > 0;
      });
  harness.set_work(static_cast<double>(sys.shape().nonzeros()) * 2.0 *
                   static_cast<double>(std::max(outcome.iterations, 1L)));
  const std::vector<T> x = ops->x_host();
  if (!o.x_out.empty()) app::write_vector_from<T>(env, o.x_out, n, sys.row_names(), x);
  app::CheckResult check;
  if (o.run.check) check = check_solution(env, o, block, sys, x, tol);
  return report(env, o, harness, sys, outcome.iterations, outcome.relative_residual,
                outcome.converged, {outcome.rebalances, outcome.move_s, initial_rows}, tol, check);
}

}  // namespace

int run(Environment& env, const Options& o) {
  return app::with_element_type(o.run.type, [&]<class T>() { return solve<T>(env, o); });
}

}  // namespace hit::cg
