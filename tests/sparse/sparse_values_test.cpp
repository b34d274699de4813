// SparseVector and SparseMatrix: values laid over a shape's local numbering, by local index and by
// global name, the tiles the kernels take, and the checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hit/core/error.hpp"
#include "hit/resident.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/sparse/sparse_kernels.hpp"
#include "hit/sparse/sparse_values.hpp"

namespace {

using hit::index_t;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Rows 7 and 3 of a 10-vertex graph: 7 -> {3, 7, 9}, 3 -> {1, 3}, held in that order; ghosts 1, 9.
std::shared_ptr<const hit::CsrShape> two_rows() {
  hit::CsrPattern p;
  p.global_rows = p.global_cols = 10;
  p.names = {7, 3};
  p.cols = {3, 7, 9, 1, 3};
  p.row_ptr = {0, 3, 5};
  return std::make_shared<const hit::CsrShape>(p);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const hit::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SparseVector, HeldRowsThenGhostsByLocalIndexAndByName) {
  hit::SparseVector<double> v(two_rows(), -1.0);
  ASSERT_EQ(v.size(), 4);
  EXPECT_EQ(v.held().size(), 2u);
  EXPECT_EQ(v.ghosts().size(), 2u);
  for (const index_t name : {7, 3, 1, 9}) v.global(name) = static_cast<double>(name) * 10;
  // Held rows in the given order, then the ghosts ascending.
  EXPECT_THAT(v.values(), ElementsAre(70, 30, 10, 90));
  EXPECT_THAT(v.ghosts(), ElementsAre(10, 90));
  v.at(1) = 5;
  EXPECT_EQ(v.global(3), 5);
  // The tile is the same memory, 1-D from 0.
  EXPECT_EQ(v.tile().size(), 4);
  EXPECT_EQ(v.tile().data()[1], 5);
  EXPECT_THAT(error_of([&] { (void)v.global(4); }), HasSubstr("vertex 4 is not held"));
  EXPECT_THAT(error_of([&] { (void)v.at(4); }), HasSubstr("local index 4 outside [0, 4)"));
}

TEST(SparseVector, AnInactivePartHasNoValuesAndTheNullTile) {
  hit::SparseVector<float> v(std::make_shared<const hit::CsrShape>());
  EXPECT_EQ(v.size(), 0);
  EXPECT_TRUE(v.values().empty());
  EXPECT_TRUE(v.tile().is_null());
  const hit::SparseVector<float> none;
  EXPECT_EQ(none.size(), 0);
}

TEST(SparseMatrix, RowValuesFollowTheShapesColumns) {
  const auto shape = two_rows();
  const std::vector<double> vals = {1, 2, 3, 4, 5};
  hit::SparseMatrix<double> a(shape, vals);
  EXPECT_THAT(a.row_values(0), ElementsAre(1, 2, 3));
  EXPECT_THAT(a.row_values(1), ElementsAre(4, 5));
  a.row_values(1)[0] = 40;
  EXPECT_EQ(a.values()[3], 40);
  EXPECT_THAT(error_of([&] { (void)a.row_values(2); }), HasSubstr("2"));
  EXPECT_THAT(error_of([&] { hit::SparseMatrix<double>(shape, std::vector<double>(4)); }),
              HasSubstr("4 values for 5 nonzeros"));
}

TEST(SparseMatrix, ProductThroughTheKernelsWithResidents) {
  const auto shape = two_rows();
  const std::vector<double> vals = {1, 2, 3, 4, 5};
  const hit::SparseMatrix<double> a(shape, vals);
  hit::SparseVector<double> x(shape);
  for (const index_t name : {7, 3, 1, 9}) x.global(name) = static_cast<double>(name);
  hit::SparseVector<double> y(shape, 0.0);
  hit::Resident<double> yr(y.tile());
  const auto part = hit::partition("threads:threads=2", hit::Shape{hit::Sig(0, 2)});
  hit::spmv(part, hit::Resident<index_t>(hit::row_ptr_tile(*shape)),
            hit::Resident<hit::local_index_t>(hit::cols_tile(*shape)),
            hit::Resident<double>(a.tile()), hit::Resident<double>(x.tile()), yr, 0, 2);
  yr.sync_to_host();
  // Row 7: 1*x3 + 2*x7 + 3*x9 = 3 + 14 + 27; row 3: 4*x1 + 5*x3 = 4 + 15. The Resident shares
  // the vector's memory.
  EXPECT_THAT(y.held(), ElementsAre(44, 19));
}

TEST(SparseMatrix, AllEmptyRowsStillGiveTheKernelsATile) {
  hit::CsrPattern p;
  p.global_rows = p.global_cols = 3;
  p.names = {0, 2};
  p.row_ptr = {0, 0, 0};
  const auto shape = std::make_shared<const hit::CsrShape>(p);
  const hit::SparseMatrix<float> a(shape);
  EXPECT_EQ(a.nonzeros(), 0);
  EXPECT_TRUE(a.values().empty());
  EXPECT_FALSE(a.tile().is_null());
  EXPECT_FALSE(hit::cols_tile(*shape).is_null());
  EXPECT_EQ(hit::row_ptr_tile(*shape).size(), 3);
}

}  // namespace
