// The matrix generators (hit/sparse/generate.hpp) against a dense matrix built here from the grid
// definition, point by point; the permutation against a second implementation written from its
// definition in docs/sparse.md, and the permuted matrix against the natural one entry by entry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "error_text.hpp"
#include "hit/sparse/generate.hpp"

namespace {

using hit::CsrRows;
using hit::GeneratorKind;
using hit::GeneratorSpec;
using hit::index_t;
using ::testing::HasSubstr;

using Dense = std::vector<std::vector<double>>;

// The 5- or 7-point Laplacian of a k^d grid, from the grid points and their neighbours.
Dense brute_force(int dims, index_t k) {
  const index_t n = dims == 2 ? k * k : k * k * k;
  Dense a(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
  const index_t zs = dims == 2 ? 1 : k;
  for (index_t z = 0; z < zs; ++z) {
    for (index_t y = 0; y < k; ++y) {
      for (index_t x = 0; x < k; ++x) {
        const index_t u = (z * k + y) * k + x;
        a[u][u] = 2.0 * dims;
        const index_t p[3] = {x, y, z};
        for (int axis = 0; axis < dims; ++axis) {
          for (const int step : {-1, 1}) {
            index_t q[3] = {p[0], p[1], p[2]};
            q[axis] += step;
            if (q[axis] < 0 || q[axis] >= k) continue;
            a[u][(q[2] * k + q[1]) * k + q[0]] = -1.0;
          }
        }
      }
    }
  }
  return a;
}

template <class T>
Dense dense_of(const CsrRows<T>& rows) {
  Dense a(static_cast<std::size_t>(rows.global_rows),
          std::vector<double>(static_cast<std::size_t>(rows.global_cols), 0.0));
  for (index_t r = 0; r < rows.rows(); ++r) {
    const auto cols = rows.columns(r);
    const auto values = rows.row_values(r);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      a[rows.names[r]][cols[k]] = static_cast<double>(values[k]);
    }
  }
  return a;
}

// The permutation, written again from its definition (SplitMix64, Fisher-Yates from the end).
std::vector<index_t> reference_permutation(index_t n, std::uint64_t seed) {
  std::vector<index_t> pi(n);
  for (index_t i = 0; i < n; ++i) pi[i] = i;
  std::uint64_t state = seed;
  for (index_t i = n - 1; i >= 1; --i) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    std::swap(pi[i], pi[z % static_cast<std::uint64_t>(i + 1)]);
  }
  return pi;
}

TEST(Generate, Poisson2dMatchesTheStencil) {
  for (index_t k = 1; k <= 6; ++k) {
    const auto spec = GeneratorSpec::parse("poisson2d:n=" + std::to_string(k));
    ASSERT_EQ(hit::generated_rows(spec), k * k);
    const auto rows = hit::generate_rows<double>(spec, 0, k * k);
    rows.check("poisson2d");
    EXPECT_EQ(dense_of(rows), brute_force(2, k)) << "k=" << k;
  }
}

TEST(Generate, Poisson3dMatchesTheStencil) {
  for (index_t k = 1; k <= 4; ++k) {
    const auto spec = GeneratorSpec::parse("poisson3d:n=" + std::to_string(k));
    ASSERT_EQ(hit::generated_rows(spec), k * k * k);
    const auto rows = hit::generate_rows<float>(spec, 0, k * k * k);
    rows.check("poisson3d");
    EXPECT_EQ(dense_of(rows), brute_force(3, k)) << "k=" << k;
  }
}

TEST(Generate, SmallKnownCase) {
  // n=2: four unknowns 0 1 / 2 3, each with two neighbours.
  const auto rows = hit::generate_rows<double>(GeneratorSpec::parse("poisson2d:n=2"), 0, 4);
  EXPECT_EQ(rows.names, (std::vector<index_t>{0, 1, 2, 3}));
  EXPECT_EQ(rows.row_ptr, (std::vector<index_t>{0, 3, 6, 9, 12}));
  EXPECT_EQ(rows.cols, (std::vector<index_t>{0, 1, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3}));
  EXPECT_EQ(rows.values, (std::vector<double>{4, -1, -1, -1, 4, -1, -1, 4, -1, -1, -1, 4}));
  EXPECT_EQ(hit::rhs_ones_product(rows), (std::vector<double>{2, 2, 2, 2}));
}

TEST(Generate, SymmetricAndRowSums) {
  for (const char* text :
       {"poisson2d:n=5", "poisson3d:n=3", "poisson2d:n=5,permute=3", "poisson3d:n=3,permute"}) {
    const auto spec = GeneratorSpec::parse(text);
    const index_t n = hit::generated_rows(spec);
    const auto rows = hit::generate_rows<double>(spec, 0, n);
    const Dense a = dense_of(rows);
    const auto b = hit::rhs_ones_product(rows);
    ASSERT_EQ(b.size(), static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {
      double sum = 0;
      for (index_t j = 0; j < n; ++j) {
        EXPECT_EQ(a[i][j], a[j][i]) << text << " (" << i << ", " << j << ")";
        sum += a[i][j];
      }
      EXPECT_EQ(b[i], sum) << text << " row " << i;
    }
  }
}

TEST(Generate, PermutationIsTheDefinedBijection) {
  for (const index_t n : {0, 1, 2, 3, 10, 1000}) {
    for (const std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xFFFFFFFFFFFFFFFFULL}) {
      const auto pi = hit::permutation(n, seed);
      EXPECT_EQ(pi, reference_permutation(n, seed)) << "n=" << n << " seed=" << seed;
      auto sorted = pi;
      std::sort(sorted.begin(), sorted.end());
      std::vector<index_t> identity(n);
      std::iota(identity.begin(), identity.end(), index_t{0});
      EXPECT_EQ(sorted, identity) << "n=" << n << " seed=" << seed;
    }
  }
  // SplitMix64 from state 0 first returns 0xE220A8397B1DCDAF: 0x...AF % 3 = 1 for n = 3.
  EXPECT_EQ(0xE220A8397B1DCDAFULL % 3, 1U);
  EXPECT_EQ(hit::permutation(3, 0)[2], 1);
  EXPECT_NE(hit::permutation(100, 1), hit::permutation(100, 2));
}

TEST(Generate, PermutedEntriesMapAsDefined) {
  for (const char* text :
       {"poisson2d:n=4,permute=7", "poisson3d:n=3,permute", "poisson2d:n=6,permute=0"}) {
    const auto spec = GeneratorSpec::parse(text);
    auto natural_spec = spec;
    natural_spec.permute_seed.reset();
    const index_t n = hit::generated_rows(spec);
    const auto pi = reference_permutation(n, *spec.permute_seed);
    const Dense a = dense_of(hit::generate_rows<double>(natural_spec, 0, n));
    const auto permuted = hit::generate_rows<double>(spec, 0, n);
    permuted.check(text);
    const Dense p = dense_of(permuted);
    for (index_t u = 0; u < n; ++u) {
      for (index_t v = 0; v < n; ++v) EXPECT_EQ(p[pi[u]][pi[v]], a[u][v]) << text;
    }
    EXPECT_NE(p, a) << text;  // renumbered for real
  }
}

TEST(Generate, RangesAndTheCommunicatorBlock) {
  const auto spec = GeneratorSpec::parse("poisson2d:n=7,permute=5");
  const auto whole = hit::generate_rows<double>(spec, 0, 49);
  const auto part = hit::generate_rows<double>(spec, 10, 20);
  EXPECT_EQ(part.names.front(), 10);
  ASSERT_EQ(part.rows(), 10);
  for (index_t r = 0; r < part.rows(); ++r) {
    EXPECT_EQ(std::vector<index_t>(part.columns(r).begin(), part.columns(r).end()),
              std::vector<index_t>(whole.columns(10 + r).begin(), whole.columns(10 + r).end()));
  }
  const auto self = hit::generate_rows<double>(spec, MPI_COMM_SELF);
  EXPECT_EQ(self.cols, whole.cols);
  EXPECT_EQ(self.values, whole.values);
  EXPECT_EQ(hit::generate_rows<double>(spec, 49, 49).rows(), 0);
  EXPECT_THROW((void)hit::generate_rows<double>(spec, 5, 50), hit::Error);
  EXPECT_THROW((void)hit::generate_rows<double>(spec, 5, 4), hit::Error);
}

// A generated problem larger than the host is refused with its figures before it is allocated;
// HIT_HOST_MEMORY stands for the node's memory when smaller, so the bound is the same anywhere.
TEST(Generate, RefusesBlockRowsLargerThanTheHost) {
  ::setenv("HIT_HOST_MEMORY", "1MiB", 1);
  // 2500 rows: 40 KB of names and offsets and 12 500 entries of 16 bytes, 240 KB in all.
  EXPECT_EQ(
      hit::generate_rows<double>(GeneratorSpec::parse("poisson2d:n=50"), MPI_COMM_SELF).rows(),
      2500);
  const std::string e = hit_test::error_of([] {
    (void)hit::generate_rows<double>(GeneratorSpec::parse("poisson2d:n=300"), MPI_COMM_SELF);
  });
  EXPECT_THAT(e, HasSubstr("generate poisson2d:n=300: its 90000 rows (90000 on the largest of 1 "
                           "processes) need at least 8.24 MiB on a process, more than the 1.00 "
                           "MiB of host memory a process has (a node of 1.00 MiB, 1 process"));
  // With the permutation (and its inverse) that every process holds: 230 KB, still in.
  EXPECT_EQ(hit::generate_rows<float>(GeneratorSpec::parse("poisson2d:n=50,permute"), MPI_COMM_SELF)
                .rows(),
            2500);
  ::setenv("HIT_HOST_MEMORY", "0", 1);
  EXPECT_THAT(hit_test::error_of([] {
                (void)hit::generate_rows<double>(GeneratorSpec::parse("poisson2d:n=2"),
                                                 MPI_COMM_SELF);
              }),
              HasSubstr("HIT_HOST_MEMORY) is 0"));
  ::unsetenv("HIT_HOST_MEMORY");
}

TEST(Generate, GridPositions) {
  const auto natural = GeneratorSpec::parse("poisson2d:n=5");
  EXPECT_EQ(hit::grid_position(natural, 7), (std::pair<index_t, index_t>{2, 1}));
  const auto spec = GeneratorSpec::parse("poisson2d:n=5,permute=9");
  const auto pi = reference_permutation(25, 9);
  const auto all = hit::grid_positions(spec);
  ASSERT_EQ(all.size(), 25U);
  for (index_t u = 0; u < 25; ++u) {
    const std::pair<index_t, index_t> where{u % 5, u / 5};
    EXPECT_EQ(hit::grid_position(spec, pi[u]), where);
    EXPECT_EQ(all[pi[u]], where);
  }
  EXPECT_EQ(hit::grid_position(GeneratorSpec::parse("poisson3d:n=3"), 4), std::nullopt);
  EXPECT_TRUE(hit::grid_positions(GeneratorSpec::parse("poisson3d:n=3")).empty());
  EXPECT_THROW((void)hit::grid_position(spec, 25), hit::Error);
  EXPECT_THROW((void)hit::grid_position(spec, -1), hit::Error);
}

TEST(Generate, ParsesTheForms) {
  auto s = GeneratorSpec::parse("poisson2d:n=1024,permute");
  EXPECT_EQ(s.kind, GeneratorKind::poisson2d);
  EXPECT_EQ(s.n, 1024);
  EXPECT_EQ(s.permute_seed, 1U);
  s = GeneratorSpec::parse(" poisson3d : n = 64 ");
  EXPECT_EQ(s.kind, GeneratorKind::poisson3d);
  EXPECT_EQ(s.n, 64);
  EXPECT_FALSE(s.permute_seed);
  s = GeneratorSpec::parse("poisson3d:permute=18446744073709551615,n=2");
  EXPECT_EQ(s.permute_seed, 18446744073709551615ULL);
  EXPECT_EQ(s.n, 2);
  EXPECT_EQ(GeneratorSpec::parse("poisson2d:n=3,permute=0").permute_seed, 0U);
  for (const char* text : {"poisson2d:n=3", "poisson3d:n=8,permute=77"}) {
    EXPECT_EQ(GeneratorSpec::parse(text).str(), text);
    EXPECT_EQ(GeneratorSpec::parse(GeneratorSpec::parse(text).str()), GeneratorSpec::parse(text));
  }
}

TEST(Generate, RefusesMalformedSpecs) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"poisson4d:n=3", "unknown generator 'poisson4d'"},
      {"laplace:n=3", "unknown generator"},
      {"poisson2d", "n=K is missing"},
      {"poisson2d:", "empty parameter"},
      {"poisson2d:permute", "n=K is missing"},
      {"poisson2d:n=0", "not a positive integer"},
      {"poisson2d:n=-4", "not a positive integer"},
      {"poisson2d:n=abc", "not a positive integer"},
      {"poisson2d:n=3.5", "not a positive integer"},
      {"poisson2d:n", "n needs a value"},
      {"poisson2d:n=3,n=4", "n given twice"},
      {"poisson2d:n=3,permute=-1", "not an unsigned 64-bit seed"},
      {"poisson2d:n=3,permute=x", "not an unsigned 64-bit seed"},
      {"poisson2d:n=3,permute=18446744073709551616", "not an unsigned 64-bit seed"},
      {"poisson2d:n=3,permute,permute=2", "permute given twice"},
      {"poisson2d:n=3,size=4", "unknown parameter 'size=4'"},
      {"poisson3d:n=3000000", "too large"},
      {"poisson2d:n=4000000000", "too large"},
      {"poisson2d:n=9223372036854775807", "too large"},
      {"poisson2d:n=99999999999999999999", "not a positive integer"},
  };
  for (const auto& [text, why] : cases) {
    try {
      (void)GeneratorSpec::parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const hit::Error& e) {
      EXPECT_EQ(e.kind(), hit::ErrorKind::parse) << text;
      EXPECT_THAT(e.what(), HasSubstr(why)) << text;
      EXPECT_THAT(e.what(), HasSubstr(text)) << text;
    }
  }
  // N = n^2 fits a 64-bit count but its 5 N nonzeros do not: refused too.
  EXPECT_THAT(hit_test::error_of([] { (void)GeneratorSpec::parse("poisson2d:n=3037000499"); }),
              HasSubstr("nonzero count"));
  EXPECT_EQ(hit::generated_rows(GeneratorSpec::parse("poisson2d:n=1000000000")),
            index_t{1000000000} * 1000000000);
}

}  // namespace
