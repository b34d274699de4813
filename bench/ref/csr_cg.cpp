// ref-csr-cg: a plain, hand-written MPI conjugate gradient on a CSR matrix, the floor hit-cg is
// measured against. No hitmap++: block rows (the first N mod P processes one row more),
// each process generates its own rows of the 5- or 7-point Laplacian (optionally with the unknowns
// renumbered by the generators' seeded permutation; csr_problem.hpp), renumbers its columns locally in
// 32 bits (interior rows first, then the rows that touch a ghost; ghosts after the held rows,
// ascending by global index), and refreshes the ghosts while the interior rows multiply. CG
// without preconditioner, b = A·1, x0 = 0, stops at ||r||/||b|| <= tol or after --max-iters.
//   mpiexec.mpich -n 4 ref-csr-cg --generate poisson3d:n=64 [--tol 1e-8] [--max-iters 10000]
//                 [--reps 3] [--warmup 1] [--exchange p2p|neighbor] [--check] [--json]
// The exchange: persistent point-to-point requests (MPI_Send_init/MPI_Recv_init, MPI_Startall),
// by default, or --exchange neighbor, MPI_Ineighbor_alltoallv on a distributed-graph communicator.
// Both receive straight into the ghost slice of the vector. Measured alone (MPICH 4.0.2 ch4:ucx,
// 2 processes), the persistent requests were faster for small halos (9.0 against 9.7 us with 4096
// ghosts, 28 against 30 us with 16 101) and equal within noise for a 4 MB one (1.5-1.6 ms both):
// MPICH builds the neighbourhood collective as a schedule of the same sends and receives on every
// call, the persistent requests are set up once.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "csr_problem.hpp"

namespace {

using csr_ref::gidx;
using lidx = std::int32_t;  // local column numbers: held rows, then ghosts
using csr_ref::block_begin;
using csr_ref::block_owner;
using csr_ref::generate;
using csr_ref::GlobalRows;
using csr_ref::parse_spec;
using csr_ref::Spec;

// ---- the local system and its ghost exchange --------------------------------------------------

enum class Exchange { p2p, neighbor };

// Local rows in the order interior (no ghost column) then boundary, each ascending by global row;
// columns in 32 bits: a held row's local index, or n + its place among the ghosts.
struct Local {
  lidx n = 0;
  lidx interior = 0;
  std::vector<gidx> global;  // local row -> global row
  std::vector<gidx> ptr;
  std::vector<lidx> col;
  std::vector<double> val;
  std::vector<gidx> ghosts;  // ascending; ghost i is local column n + i
  // Neighbours: those this process receives ghosts from, and those it sends held values to. Counts
  // and offsets in doubles, int as MPI takes them.
  std::vector<int> recv_from, recv_count, recv_offset;
  std::vector<int> send_to, send_count, send_offset;
  std::vector<lidx> send_index;  // held rows packed, neighbour after neighbour
};

// A limit met on one process only: the others wait in a collective, so the run stops at once.
[[noreturn]] void abort_run(const char* why, MPI_Comm comm) {
  std::fprintf(stderr, "ref-csr-cg: error: %s\n", why);
  MPI_Abort(comm, 2);
  std::abort();
}

Local localize(const GlobalRows& g, gidx n_global, MPI_Comm comm) {
  int procs = 1;
  MPI_Comm_size(comm, &procs);
  const gidx held = g.last - g.first;
  if (held > std::numeric_limits<lidx>::max())
    abort_run("too many rows on one process for 32-bit local columns", comm);
  Local a;
  a.n = static_cast<lidx>(held);
  auto own = [&](gidx c) { return c >= g.first && c < g.last; };
  for (gidx c : g.col)
    if (!own(c)) a.ghosts.push_back(c);
  std::sort(a.ghosts.begin(), a.ghosts.end());
  a.ghosts.erase(std::unique(a.ghosts.begin(), a.ghosts.end()), a.ghosts.end());
  if (held + static_cast<gidx>(a.ghosts.size()) > std::numeric_limits<lidx>::max())
    abort_run("rows and ghosts of one process exceed 32-bit local columns", comm);
  // Interior rows first, then boundary rows: the interior multiplies while the halo travels.
  std::vector<char> boundary(static_cast<std::size_t>(held), 0);
  for (gidx i = 0; i < held; ++i)
    for (gidx e = g.ptr[i]; e < g.ptr[i + 1]; ++e)
      if (!own(g.col[e])) boundary[i] = 1;
  std::vector<lidx> pos(static_cast<std::size_t>(held));
  lidx next = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (gidx i = 0; i < held; ++i)
      if (boundary[i] == pass) {
        pos[i] = next++;
        a.global.push_back(g.first + i);
      }
    if (pass == 0) a.interior = next;
  }
  a.ptr.assign(1, 0);
  for (lidx r = 0; r < a.n; ++r) {
    const gidx i = a.global[r] - g.first;
    for (gidx e = g.ptr[i]; e < g.ptr[i + 1]; ++e) {
      const gidx c = g.col[e];
      const auto ghost = std::lower_bound(a.ghosts.begin(), a.ghosts.end(), c) - a.ghosts.begin();
      a.col.push_back(own(c) ? pos[c - g.first] : static_cast<lidx>(a.n + ghost));
      a.val.push_back(g.val[e]);
    }
    a.ptr.push_back(static_cast<gidx>(a.col.size()));
  }
  // Ghosts ascending are grouped by owner: each owner sends one contiguous run of them.
  std::vector<int> need(procs, 0), give(procs, 0);
  for (gidx c : a.ghosts) ++need[block_owner(n_global, procs, c)];
  MPI_Alltoall(need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm);
  std::vector<int> need_off(procs, 0), give_off(procs, 0);
  for (int q = 1; q < procs; ++q) {
    need_off[q] = need_off[q - 1] + need[q - 1];
    give_off[q] = give_off[q - 1] + give[q - 1];
  }
  std::vector<gidx> asked(static_cast<std::size_t>(give_off[procs - 1] + give[procs - 1]));
  MPI_Alltoallv(a.ghosts.data(), need.data(), need_off.data(), MPI_INT64_T, asked.data(),
                give.data(), give_off.data(), MPI_INT64_T, comm);
  for (gidx c : asked) a.send_index.push_back(pos[c - g.first]);
  for (int q = 0; q < procs; ++q) {
    if (need[q] > 0) {
      a.recv_from.push_back(q);
      a.recv_count.push_back(need[q]);
      a.recv_offset.push_back(need_off[q]);
    }
    if (give[q] > 0) {
      a.send_to.push_back(q);
      a.send_count.push_back(give[q]);
      a.send_offset.push_back(give_off[q]);
    }
  }
  return a;
}

// Refreshes the ghost part of one vector (p, bound at construction) from the held parts of the
// owners: start() packs and posts, wait() completes.
class Halo {
 public:
  Halo(const Local& a, double* p, Exchange kind, MPI_Comm comm)
      : a_(a), p_(p), kind_(kind), send_(a.send_index.size()) {
    if (kind == Exchange::p2p) {
      for (std::size_t i = 0; i < a.recv_from.size(); ++i) {
        reqs_.emplace_back();
        MPI_Recv_init(p + a.n + a.recv_offset[i], a.recv_count[i], MPI_DOUBLE, a.recv_from[i], 0,
                      comm, &reqs_.back());
      }
      for (std::size_t i = 0; i < a.send_to.size(); ++i) {
        reqs_.emplace_back();
        MPI_Send_init(send_.data() + a.send_offset[i], a.send_count[i], MPI_DOUBLE, a.send_to[i], 0,
                      comm, &reqs_.back());
      }
    } else {
      MPI_Dist_graph_create_adjacent(comm, static_cast<int>(a.recv_from.size()), a.recv_from.data(),
                                     MPI_UNWEIGHTED, static_cast<int>(a.send_to.size()),
                                     a.send_to.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph_);
      reqs_.assign(1, MPI_REQUEST_NULL);
    }
  }
  Halo(const Halo&) = delete;
  Halo& operator=(const Halo&) = delete;
  ~Halo() {
    if (kind_ == Exchange::p2p)
      for (MPI_Request& r : reqs_) MPI_Request_free(&r);
    else
      MPI_Comm_free(&graph_);
  }
  void start() {
    const lidx* __restrict idx = a_.send_index.data();
    double* __restrict out = send_.data();
    for (std::size_t i = 0; i < send_.size(); ++i) out[i] = p_[idx[i]];
    if (kind_ == Exchange::p2p) {
      if (!reqs_.empty()) MPI_Startall(static_cast<int>(reqs_.size()), reqs_.data());
    } else {
      MPI_Ineighbor_alltoallv(send_.data(), a_.send_count.data(), a_.send_offset.data(), MPI_DOUBLE,
                              p_ + a_.n, a_.recv_count.data(), a_.recv_offset.data(), MPI_DOUBLE,
                              graph_, reqs_.data());
    }
  }
  void wait() { MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE); }

 private:
  const Local& a_;
  double* p_;
  Exchange kind_;
  std::vector<double> send_;
  std::vector<MPI_Request> reqs_;
  MPI_Comm graph_ = MPI_COMM_NULL;
};

// ---- CG -----------------------------------------------------------------------------------------

// q = A p on local rows [lo, hi); returns the partial p·q (fused: p is read there anyway). Kept out
// of line: inlined into the solver loop, GCC spilled the dot sum and the column pointer to the
// stack, and the permuted 2-D case ran 10-15 % slower than PETSc's MatMult.
[[gnu::noinline]] double spmv(const Local& a, lidx lo, lidx hi, const double* __restrict p,
                              double* __restrict q) {
  const gidx* __restrict ptr = a.ptr.data();
  const lidx* __restrict col = a.col.data();
  const double* __restrict val = a.val.data();
  double dot = 0.0;
  for (lidx i = lo; i < hi; ++i) {
    double s = 0.0;
    for (gidx e = ptr[i]; e < ptr[i + 1]; ++e) s += val[e] * p[col[e]];
    q[i] = s;
    dot += p[i] * s;
  }
  return dot;
}

double allsum(double v, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, comm);
  return v;
}

struct Solve {
  int iterations = 0;
  double relative = 0.0;
  bool converged = false;
  bool breakdown = false;  // p·Ap <= 0: the matrix is not positive definite
};

struct Vectors {
  std::vector<double> x, r, p, q;  // p has room for the ghosts
};

Solve cg(const Local& a, const std::vector<double>& b, Vectors& v, Halo& halo, double tol,
         int max_iters, MPI_Comm comm) {
  const lidx n = a.n;
  std::fill(v.x.begin(), v.x.end(), 0.0);
  std::copy(b.begin(), b.end(), v.r.begin());
  std::copy(b.begin(), b.end(), v.p.begin());
  double* __restrict x = v.x.data();
  double* __restrict r = v.r.data();
  double* __restrict p = v.p.data();
  double* __restrict q = v.q.data();
  double rr = 0.0;
  for (lidx i = 0; i < n; ++i) rr += r[i] * r[i];
  rr = allsum(rr, comm);
  const double bnorm = std::sqrt(rr);
  Solve s;
  if (bnorm == 0.0) {  // x = 0 solves it
    s.converged = true;
    return s;
  }
  const double stop = tol * bnorm;
  while (!(std::sqrt(rr) <= stop) && s.iterations < max_iters) {
    halo.start();
    double pq = spmv(a, 0, a.interior, p, q);
    halo.wait();
    pq = allsum(pq + spmv(a, a.interior, n, p, q), comm);
    if (!(pq > 0.0)) {
      s.breakdown = true;
      break;
    }
    const double alpha = rr / pq;
    double rr_new = 0.0;
    for (lidx i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr_new += r[i] * r[i];
    }
    rr_new = allsum(rr_new, comm);
    const double beta = rr_new / rr;
    for (lidx i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
    rr = rr_new;
    ++s.iterations;
  }
  s.relative = std::sqrt(rr) / bnorm;
  s.converged = std::sqrt(rr) <= stop;
  return s;
}

// The residual b - A x recomputed without the solver's matrix, numbering or exchange: x gathered
// whole, every held row generated again from the spec, b again as its row sums.
struct Check {
  double relative = 0.0;  // ||b - A x|| / ||b||
  double error = 0.0;     // max |x_i - 1| (the exact solution is all ones)
};

Check check_residual(const Spec& s, const Local& a, const std::vector<double>& x, gidx first,
                     MPI_Comm comm) {
  int procs = 1;
  MPI_Comm_size(comm, &procs);
  const gidx n = s.rows();
  std::vector<double> mine(static_cast<std::size_t>(a.n));
  for (lidx i = 0; i < a.n; ++i) mine[static_cast<std::size_t>(a.global[i] - first)] = x[i];
  std::vector<int> counts(procs), offsets(procs);
  for (int q = 0; q < procs; ++q) {
    offsets[q] = static_cast<int>(block_begin(n, procs, q));
    counts[q] = static_cast<int>(block_begin(n, procs, q + 1) - offsets[q]);
  }
  std::vector<double> whole(static_cast<std::size_t>(n));
  MPI_Allgatherv(mine.data(), a.n, MPI_DOUBLE, whole.data(), counts.data(), offsets.data(),
                 MPI_DOUBLE, comm);
  const GlobalRows g = generate(s, first, first + a.n);
  double sums[2] = {0.0, 0.0};  // ||r||^2, ||b||^2
  Check c;
  for (gidx i = 0; i < a.n; ++i) {
    double bi = 0.0, ax = 0.0;
    for (gidx e = g.ptr[i]; e < g.ptr[i + 1]; ++e) {
      bi += g.val[e];
      ax += g.val[e] * whole[static_cast<std::size_t>(g.col[e])];
    }
    sums[0] += (bi - ax) * (bi - ax);
    sums[1] += bi * bi;
    c.error = std::max(c.error, std::abs(whole[static_cast<std::size_t>(first + i)] - 1.0));
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, &c.error, 1, MPI_DOUBLE, MPI_MAX, comm);
  c.relative = sums[1] > 0.0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
  return c;
}

// ---- the program --------------------------------------------------------------------------------

struct Args {
  std::string generate = "poisson3d:n=32";
  double tol = 1e-8;
  int max_iters = 10000;
  int reps = 3;
  int warmup = 1;
  Exchange exchange = Exchange::p2p;
  bool check = false;
  bool json = false;
};

long parse_int(const std::string& flag, const char* text, long lo) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > 1000000000)
    throw std::runtime_error(flag + " must be a whole number from " + std::to_string(lo) +
                             ", got '" + text + "'");
  return v;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--generate") {
      a.generate = value();
    } else if (k == "--tol") {
      const char* t = value();
      char* end = nullptr;
      a.tol = std::strtod(t, &end);
      if (*t == '\0' || *end != '\0' || !(a.tol > 0.0) || !std::isfinite(a.tol))
        throw std::runtime_error(std::string("--tol must be a number > 0, got '") + t + "'");
    } else if (k == "--max-iters") {
      a.max_iters = static_cast<int>(parse_int(k, value(), 0));
    } else if (k == "--reps") {
      a.reps = static_cast<int>(parse_int(k, value(), 1));
    } else if (k == "--warmup") {
      a.warmup = static_cast<int>(parse_int(k, value(), 0));
    } else if (k == "--exchange") {
      const std::string e = value();
      if (e != "p2p" && e != "neighbor")
        throw std::runtime_error("--exchange must be p2p or neighbor, got '" + e + "'");
      a.exchange = e == "p2p" ? Exchange::p2p : Exchange::neighbor;
    } else if (k == "--check") {
      a.check = true;
    } else if (k == "--json") {
      a.json = true;
    } else {
      throw std::runtime_error("unknown option '" + k + "'");
    }
  }
  return a;
}

double max_over(double v, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, comm);
  return v;
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const std::size_t m = t.size() / 2;
  return t.size() % 2 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

int run(const Args& args, const Spec& spec, MPI_Comm comm) {
  int procs = 1, rank = 0;
  MPI_Comm_size(comm, &procs);
  MPI_Comm_rank(comm, &rank);
  const gidx n = spec.rows();
  const gidx first = block_begin(n, procs, rank);
  const gidx last = block_begin(n, procs, rank + 1);

  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  const Local a = localize(generate(spec, first, last), n, comm);
  Vectors v;
  v.x.assign(a.n, 0.0);
  v.r.assign(a.n, 0.0);
  v.q.assign(a.n, 0.0);
  v.p.assign(a.n + a.ghosts.size(), 0.0);
  Halo halo(a, v.p.data(), args.exchange, comm);
  std::vector<double> b(a.n, 0.0);  // b = A·1: the row sums
  for (lidx i = 0; i < a.n; ++i)
    for (gidx e = a.ptr[i]; e < a.ptr[i + 1]; ++e) b[i] += a.val[e];
  const double setup = max_over(MPI_Wtime() - t0, comm);

  Solve s;
  std::vector<double> times;
  for (int rep = 0; rep < args.warmup + args.reps; ++rep) {
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    s = cg(a, b, v, halo, args.tol, args.max_iters, comm);
    const double t = max_over(MPI_Wtime() - t0, comm);
    if (rep >= args.warmup) times.push_back(t);
  }
  if (s.breakdown) {
    if (rank == 0)
      std::fprintf(stderr,
                   "ref-csr-cg: error: CG broke down at iteration %d (p·Ap <= 0): the "
                   "matrix is not symmetric positive definite\n",
                   s.iterations + 1);
    return 1;
  }
  const gidx nnz_local = static_cast<gidx>(a.col.size());
  gidx nnz = 0;
  MPI_Allreduce(&nnz_local, &nnz, 1, MPI_INT64_T, MPI_SUM, comm);
  const gidx ghosts_local = static_cast<gidx>(a.ghosts.size());
  std::vector<gidx> ghosts(procs);
  MPI_Gather(&ghosts_local, 1, MPI_INT64_T, ghosts.data(), 1, MPI_INT64_T, 0, comm);
  Check c;
  bool passed = true;
  if (args.check) {
    c = check_residual(spec, a, v.x, first, comm);
    passed = s.converged && c.relative <= 10.0 * args.tol;
  }
  if (rank != 0) return passed ? 0 : 1;
  const double med = median(times);
  const double per_it = s.iterations > 0 ? med / s.iterations : 0.0;
  const char* exch = args.exchange == Exchange::p2p ? "p2p" : "neighbor";
  if (args.json) {
    std::printf(
        "{\"program\":\"ref-csr-cg\",\"generate\":\"%s\",\"procs\":%d,\"rows\":%lld,"
        "\"nonzeros\":%lld,\"iterations\":%d,\"relative_residual\":%.6e,\"converged\":%s,"
        "\"tol\":%g,\"reps\":%d,\"time_s\":%.6e,\"time_min_s\":%.6e,\"time_max_s\":%.6e,"
        "\"time_per_iteration_s\":%.6e,\"setup_s\":%.6e,\"exchange\":\"%s\","
        "\"ghosts\":[",
        spec.text.c_str(), procs, static_cast<long long>(n), static_cast<long long>(nnz),
        s.iterations, s.relative, s.converged ? "true" : "false", args.tol, args.reps, med,
        *std::min_element(times.begin(), times.end()),
        *std::max_element(times.begin(), times.end()), per_it, setup, exch);
    for (int q = 0; q < procs; ++q)
      std::printf("%s%lld", q ? "," : "", static_cast<long long>(ghosts[q]));
    std::printf("]");
    if (args.check)
      std::printf(",\"check\":{\"passed\":%s,\"relative_residual\":%.6e,\"max_error\":%.6e}",
                  passed ? "true" : "false", c.relative, c.error);
    std::printf("}\n");
  } else {
    std::printf("ref-csr-cg: %s, %lld rows, %lld nonzeros, %d processes, exchange %s\n",
                spec.text.c_str(), static_cast<long long>(n), static_cast<long long>(nnz), procs,
                exch);
    std::printf(
        "iterations %d, relative residual %.3e (%s), solve %.4g s (median of %d), "
        "%.4g s per iteration, set-up %.4g s\n",
        s.iterations, s.relative, s.converged ? "converged" : "NOT converged", med, args.reps,
        per_it, setup);
  }
  if (args.check)
    std::fprintf(
        args.json ? stderr : stdout,
        "check: %s (||b - A x||/||b|| = %.3e recomputed, limit %.1e; max |x - 1| = %.3e)\n",
        passed ? "passed" : "FAILED", c.relative, 10.0 * args.tol, c.error);
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  // Bad options are found alike on every process (same arguments), so all of them stop here.
  try {
    const Args args = parse_args(argc, argv);
    const Spec spec = parse_spec(args.generate);
    status = run(args, spec, MPI_COMM_WORLD);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "ref-csr-cg: error: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
