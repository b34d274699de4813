/* petsc-cg: PETSc's conjugate gradient on the matrices of hit-cg and ref-csr-cg, the
 * library hit-cg is measured against. Same generators (5- and 7-point Laplacians, the same seeded
 * permutation), each process generates its own rows of PETSc's default ownership ranges (N/P rows,
 * the first N mod P processes one more: the same as hit::block_range; the JSON says whether they
 * were), MatCreateAIJ with exact preallocation, b = A·1, x0 = 0, KSPCG with -pc_type none and the
 * unpreconditioned norm, stopping at ||r||/||b|| <= tol (rtol = tol, atol = 0). PETSc options on
 * the command line override these (-ksp_type, -pc_type, -ksp_norm_type, -ksp_monitor, -log_view).
 * Only KSPSolve is timed: one warm-up solve, then the median of --reps.
 * Not part of the CMake build (PETSc is Debian's Open MPI build): bench/ref/build_petsc_cg.sh.
 *   mpiexec.openmpi -n 4 petsc-cg --generate poisson3d:n=64 [--tol 1e-8] [--max-iters 10000]
 *                   [--reps 3] [--warmup 1] [--check] [--json] [PETSc options]
 */
#include <errno.h>
#include <math.h>
#include <petscksp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char text[256];
  int dims; /* 2 or 3 */
  PetscInt k;
  int permute;
  uint64_t seed;
} Spec;

typedef struct {
  Spec spec;
  double tol;
  long max_iters, reps, warmup;
  int check, json;
  char error[512]; /* non-empty: the options are wrong */
} Args;

static PetscInt spec_rows(const Spec* s) {
  return s->dims == 2 ? s->k * s->k : s->k * s->k * s->k;
}

static int parse_u64(const char* text, uint64_t* out) {
  char* end = NULL;
  if (*text == '\0' || strspn(text, "0123456789") != strlen(text)) return 0;
  errno = 0;
  *out = strtoull(text, &end, 10);
  return errno != ERANGE;
}

/* "poisson2d:n=K[,permute[=SEED]]" or "poisson3d:n=K[,permute[=SEED]]"; 0 and a message if bad. */
static int parse_spec(const char* text, Spec* s, char* error, size_t len) {
  char buf[256];
  memset(s, 0, sizeof *s);
  s->seed = 1;
  if (strlen(text) >= sizeof buf) return snprintf(error, len, "--generate: spec too long"), 0;
  strcpy(s->text, text);
  strcpy(buf, text);
  char* rest = strchr(buf, ':');
  if (rest) *rest++ = '\0';
  if (strcmp(buf, "poisson2d") == 0)
    s->dims = 2;
  else if (strcmp(buf, "poisson3d") == 0)
    s->dims = 3;
  else
    return snprintf(error, len, "--generate: unknown generator '%s' (poisson2d or poisson3d)", buf),
           0;
  for (char* item = rest ? strtok(rest, ",") : NULL; item; item = strtok(NULL, ",")) {
    char* value = strchr(item, '=');
    if (value) *value++ = '\0';
    uint64_t v = 0;
    if (strcmp(item, "n") == 0 && value) {
      /* PETSc's indices are 32-bit here: N = n^dims must fit. */
      const uint64_t limit = s->dims == 2 ? 46340 : 1290;
      if (!parse_u64(value, &v) || v < 1 || v > limit)
        return snprintf(error, len, "--generate n must be from 1 to %llu (32-bit PetscInt)",
                        (unsigned long long)limit),
               0;
      s->k = (PetscInt)v;
    } else if (strcmp(item, "permute") == 0) {
      s->permute = 1;
      if (value && !parse_u64(value, &s->seed))
        return snprintf(error, len, "--generate permute must be a whole number >= 0"), 0;
    } else {
      return snprintf(error, len, "--generate: unknown parameter '%s' in '%s'", item, text), 0;
    }
  }
  if (s->k == 0) return snprintf(error, len, "--generate '%s' needs n=K", text), 0;
  return 1;
}

static int parse_long(const char* flag, const char* text, long lo, long* out, char* error,
                      size_t len) {
  char* end = NULL;
  errno = 0;
  *out = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno == ERANGE || *out < lo || *out > 1000000000)
    return snprintf(error, len, "%s must be a whole number from %ld, got '%s'", flag, lo, text), 0;
  return 1;
}

/* Our own options ("--x") are taken out of argv; everything else is left to PETSc. */
static void parse_args(int* argc, char** argv, Args* a) {
  const char* generate = "poisson3d:n=32";
  int kept = 1;
  a->tol = 1e-8;
  a->max_iters = 10000;
  a->reps = 3;
  a->warmup = 1;
  a->check = a->json = 0;
  a->error[0] = '\0';
  const size_t len = sizeof a->error;
  for (int i = 1; i < *argc; ++i) {
    const char* k = argv[i];
    if (strncmp(k, "--", 2) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    int needs_value = strcmp(k, "--check") != 0 && strcmp(k, "--json") != 0;
    if (needs_value && i + 1 >= *argc) {
      snprintf(a->error, len, "%s needs a value", k);
      break;
    }
    const char* v = needs_value ? argv[++i] : "";
    char* end = NULL;
    int ok = 1;
    if (strcmp(k, "--generate") == 0) {
      generate = v;
    } else if (strcmp(k, "--tol") == 0) {
      a->tol = strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(a->tol > 0.0) || !isfinite(a->tol))
        ok = 0, snprintf(a->error, len, "--tol must be a number > 0, got '%s'", v);
    } else if (strcmp(k, "--max-iters") == 0) {
      ok = parse_long(k, v, 0, &a->max_iters, a->error, len);
    } else if (strcmp(k, "--reps") == 0) {
      ok = parse_long(k, v, 1, &a->reps, a->error, len);
    } else if (strcmp(k, "--warmup") == 0) {
      ok = parse_long(k, v, 0, &a->warmup, a->error, len);
    } else if (strcmp(k, "--check") == 0) {
      a->check = 1;
    } else if (strcmp(k, "--json") == 0) {
      a->json = 1;
    } else {
      ok = 0, snprintf(a->error, len, "unknown option '%s' (PETSc's own options take one dash)", k);
    }
    if (!ok) break;
  }
  *argc = kept;
  argv[kept] = NULL;
  if (a->error[0] == '\0') parse_spec(generate, &a->spec, a->error, len);
}

static void put(PetscInt* cols, PetscScalar* vals, int* n, PetscInt c, PetscScalar v) {
  cols[*n] = c;
  vals[*n] = v;
  ++*n;
}

/* Natural row u, columns ascending (Dirichlet); returns the number of entries (<= 7). */
static int natural_row(const Spec* s, PetscInt u, PetscInt* cols, PetscScalar* vals) {
  const PetscInt k = s->k, x = u % k, y = (u / k) % k, z = s->dims == 3 ? u / (k * k) : 0;
  int n = 0;
  if (z > 0) put(cols, vals, &n, u - k * k, -1.0);
  if (y > 0) put(cols, vals, &n, u - k, -1.0);
  if (x > 0) put(cols, vals, &n, u - 1, -1.0);
  put(cols, vals, &n, u, s->dims == 2 ? 4.0 : 6.0);
  if (x + 1 < k) put(cols, vals, &n, u + 1, -1.0);
  if (y + 1 < k) put(cols, vals, &n, u + k, -1.0);
  if (s->dims == 3 && z + 1 < k) put(cols, vals, &n, u + k * k, -1.0);
  return n;
}

/* The seeded Fisher-Yates permutation (splitmix64 steps) of hitmap++'s generators (docs/sparse.md). */
static PetscInt* permutation(PetscInt n, uint64_t seed) {
  PetscInt* pi = (PetscInt*)malloc(sizeof(PetscInt) * (size_t)(n > 0 ? n : 1));
  uint64_t state = seed;
  for (PetscInt i = 0; i < n; ++i) pi[i] = i;
  for (PetscInt i = n - 1; i >= 1; --i) {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const PetscInt j = (PetscInt)(z % (uint64_t)(i + 1)), t = pi[i];
    pi[i] = pi[j];
    pi[j] = t;
  }
  return pi;
}

/* Rows [first, last) in global numbering, columns ascending: CSR. */
typedef struct {
  PetscInt first, last, *ptr, *col;
  PetscScalar* val;
} Rows;

static Rows generate(const Spec* s, PetscInt first, PetscInt last) {
  const PetscInt held = last - first, n = spec_rows(s), width = s->dims == 2 ? 5 : 7;
  Rows g = {first, last, NULL, NULL, NULL};
  g.ptr = (PetscInt*)malloc(sizeof(PetscInt) * (size_t)(held + 1));
  g.col = (PetscInt*)malloc(sizeof(PetscInt) * (size_t)(held * width + 1));
  g.val = (PetscScalar*)malloc(sizeof(PetscScalar) * (size_t)(held * width + 1));
  PetscInt* natural = (PetscInt*)malloc(sizeof(PetscInt) * (size_t)(held + 1));
  PetscInt* pi = NULL;
  for (PetscInt i = 0; i < held; ++i) natural[i] = first + i;
  if (s->permute) { /* row R = pi[u] holds (pi[u], pi[v]) for each entry (u, v) of row u */
    pi = permutation(n, s->seed);
    for (PetscInt u = 0; u < n; ++u)
      if (pi[u] >= first && pi[u] < last) natural[pi[u] - first] = u;
  }
  g.ptr[0] = 0;
  for (PetscInt i = 0; i < held; ++i) {
    PetscInt* c = g.col + g.ptr[i];
    PetscScalar* v = g.val + g.ptr[i];
    const int m = natural_row(s, natural[i], c, v);
    if (pi) {
      for (int e = 0; e < m; ++e) c[e] = pi[c[e]];
      for (int e = 1; e < m; ++e) /* insertion sort of at most 7 entries */
        for (int f = e; f > 0 && c[f - 1] > c[f]; --f) {
          const PetscInt tc = c[f - 1];
          const PetscScalar tv = v[f - 1];
          c[f - 1] = c[f], v[f - 1] = v[f], c[f] = tc, v[f] = tv;
        }
    }
    g.ptr[i + 1] = g.ptr[i] + m;
  }
  free(natural);
  free(pi);
  return g;
}

static void free_rows(Rows* g) {
  free(g->ptr);
  free(g->col);
  free(g->val);
}

/* The matrix over PETSc's default ownership ranges, preallocated exactly. */
static PetscErrorCode build_matrix(const Spec* s, Mat* A, Rows* g) {
  PetscInt n = spec_rows(s), m = PETSC_DECIDE, first = 0;
  PetscFunctionBeginUser;
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &m, &n));
  PetscCallMPI(MPI_Scan(&m, &first, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  first -= m;
  *g = generate(s, first, first + m);
  PetscInt *d_nnz, *o_nnz;
  PetscCall(PetscMalloc2(m + 1, &d_nnz, m + 1, &o_nnz));
  for (PetscInt i = 0; i < m; ++i) {
    d_nnz[i] = o_nnz[i] = 0;
    for (PetscInt e = g->ptr[i]; e < g->ptr[i + 1]; ++e) {
      if (g->col[e] >= first && g->col[e] < first + m)
        ++d_nnz[i];
      else
        ++o_nnz[i];
    }
  }
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, m, m, n, n, 0, d_nnz, 0, o_nnz, A));
  PetscCall(PetscFree2(d_nnz, o_nnz));
  for (PetscInt i = 0; i < m; ++i) {
    const PetscInt row = first + i;
    PetscCall(MatSetValues(*A, 1, &row, g->ptr[i + 1] - g->ptr[i], g->col + g->ptr[i],
                           g->val + g->ptr[i], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* ||b - A x|| / ||b|| and max |x - 1| without PETSc's matrix: x gathered whole, the held rows as
 * generated (g), b again as their row sums. */
static PetscErrorCode check_residual(const Rows* g, Vec x, double* relative, double* error) {
  VecScatter scatter;
  Vec whole;
  const PetscScalar* w;
  double sums[2] = {0.0, 0.0}, err = 0.0;
  PetscFunctionBeginUser;
  PetscCall(VecScatterCreateToAll(x, &scatter, &whole));
  PetscCall(VecScatterBegin(scatter, x, whole, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, x, whole, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(whole, &w));
  for (PetscInt i = 0; i < g->last - g->first; ++i) {
    double bi = 0.0, ax = 0.0;
    for (PetscInt e = g->ptr[i]; e < g->ptr[i + 1]; ++e) {
      bi += g->val[e];
      ax += g->val[e] * w[g->col[e]];
    }
    sums[0] += (bi - ax) * (bi - ax);
    sums[1] += bi * bi;
    err = fmax(err, fabs(w[g->first + i] - 1.0));
  }
  PetscCall(VecRestoreArrayRead(whole, &w));
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&whole));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(&err, error, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  *relative = sums[1] > 0.0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
  PetscFunctionReturn(0);
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double max_over(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return v;
}

typedef struct {
  PetscInt iterations;
  KSPConvergedReason reason;
  double relative, median, tmin, tmax, setup, check_relative, check_error;
  int block_range; /* PETSc's ranges are hit::block_range's on every process */
  long long nonzeros;
  char ksp[64], pc[64], norm[64];
} Result;

static PetscErrorCode print_result(const Args* a, const Result* r, int procs) {
  const int converged = r->reason > 0;
  const int passed = converged && r->check_relative <= 10.0 * a->tol;
  const double per_it = r->iterations > 0 ? r->median / (double)r->iterations : 0.0;
  const long long n = (long long)spec_rows(&a->spec);
  PetscFunctionBeginUser;
  if (a->json) {
    PetscCall(PetscPrintf(
        PETSC_COMM_WORLD,
        "{\"program\":\"petsc-cg\",\"generate\":\"%s\",\"procs\":%d,\"rows\":%lld,\"nonzeros\":%"
        "lld,"
        "\"iterations\":%d,\"relative_residual\":%.6e,\"converged\":%s,\"reason\":\"%s\","
        "\"tol\":%g,\"reps\":%ld,\"time_s\":%.6e,\"time_min_s\":%.6e,\"time_max_s\":%.6e,"
        "\"time_per_iteration_s\":%.6e,\"setup_s\":%.6e,\"ksp_type\":\"%s\",\"pc_type\":\"%s\","
        "\"norm_type\":\"%s\",\"ownership\":\"petsc-default\",\"ownership_is_block_range\":%s",
        a->spec.text, procs, n, r->nonzeros, (int)r->iterations, r->relative,
        converged ? "true" : "false", KSPConvergedReasons[r->reason], a->tol, a->reps, r->median,
        r->tmin, r->tmax, per_it, r->setup, r->ksp, r->pc, r->norm,
        r->block_range ? "true" : "false"));
    if (a->check)
      PetscCall(
          PetscPrintf(PETSC_COMM_WORLD,
                      ",\"check\":{\"passed\":%s,\"relative_residual\":%.6e,\"max_error\":%.6e}",
                      passed ? "true" : "false", r->check_relative, r->check_error));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "}\n"));
  } else {
    PetscCall(PetscPrintf(
        PETSC_COMM_WORLD,
        "petsc-cg: %s, %lld rows, %lld nonzeros, %d processes, %s/%s, %s norm\n"
        "iterations %d, relative residual %.3e (%s), solve %.4g s (median of %ld), %.4g s per "
        "iteration, set-up %.4g s\n",
        a->spec.text, n, r->nonzeros, procs, r->ksp, r->pc, r->norm, (int)r->iterations,
        r->relative, KSPConvergedReasons[r->reason], r->median, a->reps, per_it, r->setup));
  }
  if (a->check)
    PetscCall(PetscFPrintf(
        PETSC_COMM_WORLD, a->json ? PETSC_STDERR : PETSC_STDOUT,
        "check: %s (||b - A x||/||b|| = %.3e recomputed, limit %.1e; max |x - 1| = %.3e)\n",
        passed ? "passed" : "FAILED", r->check_relative, 10.0 * a->tol, r->check_error));
  PetscFunctionReturn(0);
}

static PetscErrorCode make_ksp(const Args* a, Mat A, KSP* ksp) {
  PC pc;
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, ksp));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, KSPCG));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetNormType(*ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(*ksp, a->tol, 0.0, PETSC_DEFAULT, (PetscInt)a->max_iters));
  PetscCall(KSPSetInitialGuessNonzero(*ksp, PETSC_FALSE));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscCall(KSPSetUp(*ksp));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(const Args* a, int* passed) {
  Mat A;
  Vec x, b;
  KSP ksp;
  Rows g = {0, 0, NULL, NULL, NULL};
  Result r;
  int procs = 1, rank = 0;
  PetscFunctionBeginUser;
  memset(&r, 0, sizeof r);
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &procs));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  double t0 = MPI_Wtime();
  PetscCall(build_matrix(&a->spec, &A, &g));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, b)); /* b = A·1 */
  PetscCall(make_ksp(a, A, &ksp));
  r.setup = max_over(MPI_Wtime() - t0);
  const PetscInt n = spec_rows(&a->spec);
  const int block = g.first == rank * (n / procs) + PetscMin(rank, n % procs) &&
                    g.last - g.first == n / procs + (rank < n % procs);
  PetscCallMPI(MPI_Allreduce(&block, &r.block_range, 1, MPI_INT, MPI_LAND, PETSC_COMM_WORLD));
  long long nnz = (long long)g.ptr[g.last - g.first];
  PetscCallMPI(MPI_Allreduce(&nnz, &r.nonzeros, 1, MPI_LONG_LONG, MPI_SUM, PETSC_COMM_WORLD));

  double* times = (double*)malloc(sizeof(double) * (size_t)a->reps);
  for (long rep = 0; rep < a->warmup + a->reps; ++rep) {
    PetscCall(VecSet(x, 0.0));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    t0 = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    const double t = max_over(MPI_Wtime() - t0);
    if (rep >= a->warmup) times[rep - a->warmup] = t;
  }
  qsort(times, (size_t)a->reps, sizeof(double), compare_doubles);
  r.tmin = times[0];
  r.tmax = times[a->reps - 1];
  r.median = a->reps % 2 ? times[a->reps / 2] : 0.5 * (times[a->reps / 2 - 1] + times[a->reps / 2]);
  free(times);

  PetscReal rnorm, bnorm;
  KSPType kt;
  PCType pt;
  KSPNormType nt;
  PC pc;
  PetscCall(KSPGetIterationNumber(ksp, &r.iterations));
  PetscCall(KSPGetConvergedReason(ksp, &r.reason));
  PetscCall(KSPGetResidualNorm(ksp, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  r.relative = bnorm > 0 ? rnorm / bnorm : rnorm;
  PetscCall(KSPGetType(ksp, &kt));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pt));
  PetscCall(KSPGetNormType(ksp, &nt));
  snprintf(r.ksp, sizeof r.ksp, "%s", kt);
  snprintf(r.pc, sizeof r.pc, "%s", pt);
  snprintf(r.norm, sizeof r.norm, "%s", KSPNormTypes[nt]);
  if (a->check) PetscCall(check_residual(&g, x, &r.check_relative, &r.check_error));
  *passed = !a->check || (r.reason > 0 && r.check_relative <= 10.0 * a->tol);
  PetscCall(print_result(a, &r, procs));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  free_rows(&g);
  PetscFunctionReturn(0);
}

int main(int argc, char** argv) {
  Args a;
  int passed = 1;
  parse_args(&argc, argv, &a);
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  /* Bad options are found alike on every process (same arguments): all stop here. */
  if (a.error[0] != '\0') {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR, "petsc-cg: error: %s\n", a.error));
    PetscCall(PetscFinalize());
    return 2;
  }
  PetscCall(run(&a, &passed));
  PetscCall(PetscFinalize());
  return passed ? 0 : 1;
}
