// Entry point of the serial unit tests: an Environment (a 1-process MPI run) around GoogleTest.
#include <gtest/gtest.h>

#include "hit/core/environment.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  hit::Environment env(argc, argv);
  return RUN_ALL_TESTS();
}
