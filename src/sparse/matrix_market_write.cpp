// Collective writing of Matrix Market files, and raw vector files read and written by block rows
// (hit/sparse/matrix_market.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>

#include "hit/core/checked.hpp"
#include "hit/core/collective.hpp"
#include "hit/sparse/matrix_market.hpp"
#include "hit/tile_io.hpp"
#include "sparse/csr_block_rows.hpp"
#include "sparse/matrix_market_file.hpp"

namespace hit {
namespace {

using detail::Failure;

void append_index(std::string& out, index_t value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

template <class T>
void append_value(std::string& out, T value, int precision) {
  char buffer[64];
  const auto end = precision > 0 ? std::to_chars(buffer, buffer + sizeof buffer, value,
                                                 std::chars_format::general, precision)
                                       .ptr
                                 : std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

// The problems of this process's rows that make the write impossible, before anything is written.
template <class T>
void check_rows(const std::string& path, const CsrRows<T>& mine, const MatrixMarketWrite& options) {
  const std::string what = "cannot write Matrix Market file '" + path + "'";
  mine.check(what);
  require(options.precision >= 0 && options.precision <= 40, ErrorKind::invalid_argument,
          what + ": precision " + std::to_string(options.precision) +
              " is outside 0..40 (0: the shortest text that reads back exactly)");
  require(!options.symmetric || mine.global_rows == mine.global_cols, ErrorKind::invalid_argument,
          what + ": a symmetric file needs a square matrix, not " +
              std::to_string(mine.global_rows) + " x " + std::to_string(mine.global_cols));
  if (options.pattern) return;
  for (index_t r = 0; r < mine.rows(); ++r) {
    const auto values = mine.row_values(r);
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (!std::isfinite(values[k])) {
        throw Error(ErrorKind::invalid_argument,
                    what + ": entry (" + std::to_string(mine.names[static_cast<std::size_t>(r)]) +
                        ", " + std::to_string(mine.columns(r)[k]) + ") (0-based) is " +
                        (std::isnan(values[k]) ? "NaN" : "infinite") + ", which a reader refuses");
      }
    }
  }
}

// This process's entry lines, 1-based; `count` gets how many.
template <class T>
std::string format_rows(const CsrRows<T>& mine, const MatrixMarketWrite& options,
                        std::int64_t& count) {
  std::string out;
  out.reserve(static_cast<std::size_t>(mine.nonzeros()) * (options.pattern ? 16 : 40));
  count = 0;
  for (index_t r = 0; r < mine.rows(); ++r) {
    const index_t row = mine.names[static_cast<std::size_t>(r)];
    const auto cols = mine.columns(r);
    const auto values = mine.row_values(r);
    for (std::size_t k = 0; k < cols.size(); ++k) {
      if (options.symmetric && cols[k] > row) break;  // columns ascend: the rest are above too
      append_index(out, row + 1);
      out.push_back(' ');
      append_index(out, cols[k] + 1);
      if (!options.pattern) {
        out.push_back(' ');
        append_value(out, values[k], options.precision);
      }
      out.push_back('\n');
      ++count;
    }
  }
  return out;
}

struct Extents {
  index_t rows;
  index_t cols;
};

}  // namespace

template <class T>
void write_matrix_market(const std::string& path, const CsrRows<T>& mine, MPI_Comm comm,
                         MatrixMarketWrite options) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  std::int64_t count = 0;
  std::optional<Failure> failure;
  try {
    check_rows(path, mine, options);
    text = format_rows(mine, options, count);
  } catch (...) {
    failure = detail::failure_of(std::current_exception());
  }
  detail::agree_first(comm, failure);
  const auto extents = allgather(Extents{mine.global_rows, mine.global_cols}, comm);
  for (const Extents& e : extents) {
    if (e.rows != extents[0].rows || e.cols != extents[0].cols) {
      throw Error::everywhere(ErrorKind::invalid_argument,
                              "cannot write Matrix Market file '" + path +
                                  "': the processes disagree on the global extents (" +
                                  std::to_string(extents[0].rows) + " x " +
                                  std::to_string(extents[0].cols) + " and " +
                                  std::to_string(e.rows) + " x " + std::to_string(e.cols) + ")");
    }
  }
  std::int64_t entries = count;
  allreduce_in_place(&entries, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) {
    const std::string header =
        std::string("%%MatrixMarket matrix coordinate ") + (options.pattern ? "pattern" : "real") +
        (options.symmetric ? " symmetric" : " general") + "\n% written by hitmap++\n" +
        std::to_string(mine.global_rows) + " " + std::to_string(mine.global_cols) + " " +
        std::to_string(entries) + "\n";
    text.insert(0, header);
  }
  auto bytes = static_cast<std::int64_t>(text.size());
  std::int64_t offset = 0;
  check_mpi(MPI_Exscan(&bytes, &offset, 1, MPI_INT64_T, MPI_SUM, comm),
            "MPI_Exscan of byte counts");
  if (rank == 0) offset = 0;  // MPI_Exscan leaves rank 0's result undefined
  detail::write_pieces(path, "Matrix Market file", offset, text.data(), text.size(), comm);
}

namespace {

// This process's block-rows part of a vector of n values, as a region of `values`.
template <class T>
detail::Region block_region(index_t first, std::span<const T> values) {
  detail::Region r;
  r.data = const_cast<T*>(values.data());
  r.element_size = sizeof(T);
  r.shape = first < first + static_cast<index_t>(values.size())
                ? Shape{Sig(first, first + static_cast<index_t>(values.size()))}
                : Shape{};
  r.steps[0] = 1;
  return r;
}

// A NaN or infinity would surface much later as a wrong diagnosis (a solver blaming its matrix,
// a sweep printing nan): name the value where it is.
template <class T>
void require_finite(const std::string& path, std::string_view what, index_t first,
                    const std::vector<T>& values) {
  const auto bad =
      std::find_if(values.begin(), values.end(), [](T v) { return !std::isfinite(v); });
  if (bad != values.end()) {
    throw Error(ErrorKind::invalid_argument, std::string(what) + " '" + path + "' holds " +
                                                 (std::isnan(*bad) ? "NaN" : "an infinity") +
                                                 " at index " +
                                                 std::to_string(first + (bad - values.begin())) +
                                                 " (0-based): every value must be finite");
  }
}

template <class T>
std::vector<T> read_hdf5_vector(const std::string& path, index_t n, MPI_Comm comm) {
  std::vector<T> out;
  index_t first = 0;
  collectively(comm, [&] {
    require(n >= 0, ErrorKind::invalid_argument,
            "cannot read the vector '" + path + "' of " + std::to_string(n) + " values");
    const auto range = detail::block_rows(n, comm);
    first = range.first;
    out.resize(static_cast<std::size_t>(range.second - range.first));
  });
  detail::read_hdf5_blocks(path, Shape::extents({n}),
                           {block_region<T>(first, std::span<const T>(out))},
                           detail::raw_element<T>(), comm);
  collectively(comm, [&] { require_finite(path, "vector", first, out); });
  return out;
}

}  // namespace

template <class T>
std::vector<T> read_vector(const std::string& path, index_t n, MPI_Comm comm) {
  bool hdf5 = false;
  collectively(comm, [&] { hdf5 = detail::hdf5_dataset(path).has_value(); });
  if (hdf5) return read_hdf5_vector<T>(path, n, comm);
  std::vector<T> out;
  std::optional<Failure> failure;
  try {
    require(n >= 0, ErrorKind::invalid_argument,
            "cannot read raw vector file '" + path + "' of " + std::to_string(n) + " values");
    const auto [first, last] = detail::block_rows(n, comm);
    const index_t bytes = checked_mul(n, static_cast<index_t>(sizeof(T)), "the raw vector's bytes");
    const detail::ReadOnlyFile file(path, "raw vector file");
    if (file.size() != bytes) {
      throw Error(ErrorKind::io, "raw vector file '" + path + "' has " +
                                     std::to_string(file.size()) + " bytes, expected " +
                                     std::to_string(bytes) + " (" + std::to_string(n) +
                                     " values of " + std::to_string(sizeof(T)) + " bytes)");
    }
    out.resize(static_cast<std::size_t>(last - first));
    const std::size_t want = out.size() * sizeof(T);
    const std::size_t got = file.read_at(first * static_cast<index_t>(sizeof(T)),
                                         reinterpret_cast<char*>(out.data()), want);
    require(got == want, ErrorKind::io,
            "cannot read raw vector file '" + path + "': it shrank while being read");
    require_finite(path, "raw vector file", first, out);
  } catch (...) {
    failure = detail::failure_of(std::current_exception());
  }
  detail::agree_first(comm, failure);
  return out;
}

template <class T>
void write_vector(const std::string& path, index_t n, std::span<const T> block_part,
                  MPI_Comm comm) {
  bool hdf5 = false;
  collectively(comm, [&] { hdf5 = detail::hdf5_dataset(path).has_value(); });
  std::optional<Failure> failure;
  index_t first = 0;
  try {
    require(n >= 0, ErrorKind::invalid_argument,
            "cannot write raw vector file '" + path + "' of " + std::to_string(n) + " values");
    (void)checked_mul(n, static_cast<index_t>(sizeof(T)), "the raw vector's bytes");
    const auto range = detail::block_rows(n, comm);
    first = range.first;
    require(static_cast<index_t>(block_part.size()) == range.second - range.first,
            ErrorKind::invalid_argument,
            "cannot write raw vector file '" + path + "': this process passes " +
                std::to_string(block_part.size()) + " values for its block rows [" +
                std::to_string(range.first) + ", " + std::to_string(range.second) + ") of " +
                std::to_string(n));
  } catch (...) {
    failure = detail::failure_of(std::current_exception());
  }
  detail::agree_first(comm, failure);
  if (hdf5) {
    detail::write_hdf5_blocks(path, Shape::extents({n}), {block_region<T>(first, block_part)},
                              detail::raw_element<T>(), comm);
    return;
  }
  detail::write_pieces(path, "raw vector file", first * static_cast<index_t>(sizeof(T)),
                       reinterpret_cast<const char*>(block_part.data()),
                       block_part.size() * sizeof(T), comm);
}

template void write_matrix_market<float>(const std::string&, const CsrRows<float>&, MPI_Comm,
                                         MatrixMarketWrite);
template void write_matrix_market<double>(const std::string&, const CsrRows<double>&, MPI_Comm,
                                          MatrixMarketWrite);
template std::vector<float> read_vector<float>(const std::string&, index_t, MPI_Comm);
template std::vector<double> read_vector<double>(const std::string&, index_t, MPI_Comm);
template void write_vector<float>(const std::string&, index_t, std::span<const float>, MPI_Comm);
template void write_vector<double>(const std::string&, index_t, std::span<const double>, MPI_Comm);

}  // namespace hit
