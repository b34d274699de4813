// Entry point of the multi-process tests. Only rank 0 prints the GoogleTest report; the exit status
// is the worst over all ranks, so a failure on any rank fails the test. Each test's result is also
// agreed across ranks, and rank 0 names the ranks that failed it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"

namespace {

// On ranks other than 0 the default printer is removed; failed assertions are still shown, with
// the rank, so a failure on rank 3 is not silent.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int rank_;
};

class RankAgreementListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int failed = info.result()->Failed() ? 1 : 0;
    std::vector<int> all(static_cast<std::size_t>(size));
    MPI_Gather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    std::string ranks;
    for (int r = 0; r < size; ++r) {
      if (all[static_cast<std::size_t>(r)] != 0) ranks += " " + std::to_string(r);
    }
    if (!ranks.empty()) {
      std::fprintf(stderr, "[  MPI     ] %s.%s failed on rank(s)%s of %d\n", info.test_suite_name(),
                   info.name(), ranks.c_str(), size);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  hit::Environment env(argc, argv);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (env.rank() != 0) {
    // Other ranks stay quiet unless an assertion fails there (the failure text still reaches
    // stderr through GoogleTest's own printing of failed assertions).
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(env.rank()));
  }
  listeners.Append(new RankAgreementListener);
  int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return global;
}
