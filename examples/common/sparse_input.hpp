#pragma once
// The input of the sparse programs (hit-cg, hit-heat): a Matrix Market file read collectively or
// a generated Laplacian, as this process's block rows, and the raw vectors that go with it
// (right-hand side, initial values, result), moved between block rows and a layout's rows.

#include <CLI/CLI.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/file.hpp"
#include "hit/layout.hpp"
#include "hit/sparse/csr_rows.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/matrix_market.hpp"
#include "hit/sparse/sparse_redistribute.hpp"

namespace hit::app {

struct SparseInput {
  std::string file;      // --matrix / --graph
  std::string generate;  // --generate

  void add_to(CLI::App& cli, const std::string& file_flag, const std::string& file_help) {
    auto* f = cli.add_option(file_flag, file, file_help);
    auto* g = cli.add_option("--generate", generate,
                             "generate the matrix instead: poisson2d:n=K[,permute[=SEED]] or "
                             "poisson3d:n=K[,permute[=SEED]] (5- and 7-point Laplacians)");
    f->excludes(g);
    g->excludes(f);
  }
  // The text that names the input in reports.
  std::string name() const { return file.empty() ? generate : file; }

  // This process's block rows (hit::block_range of the rows over the processes).
  template <class T>
  CsrRows<T> load(Environment& env, const std::string& file_flag) const {
    if (file.empty() && generate.empty()) {
      throw Error(ErrorKind::invalid_argument,
                  "give the matrix: " + file_flag + " FILE.mtx or --generate SPEC");
    }
    if (!generate.empty()) {
      const GeneratorSpec spec = GeneratorSpec::parse(generate);
      return generate_rows<T>(spec, env.comm());
    }
    return read_matrix_market<T>(file, env.comm());
  }
};

// The rows [first, last) of block rows of `n` on this process.
inline std::pair<index_t, index_t> my_block_rows(const Environment& env, index_t n) {
  return block_range(n, env.size(), env.rank());
}

// The names of this process's block rows, ascending.
inline std::vector<index_t> block_names(const Environment& env, index_t n) {
  const auto [first, last] = my_block_rows(env, n);
  std::vector<index_t> names;
  names.reserve(static_cast<std::size_t>(last - first));
  for (index_t r = first; r < last; ++r) names.push_back(r);
  return names;
}

// The owner of every row under block rows (to send values back to their block for writing).
inline std::vector<std::int32_t> block_owners(const Environment& env, index_t n) {
  std::vector<std::int32_t> owners(static_cast<std::size_t>(n));
  for (int p = 0; p < env.size(); ++p) {
    const auto [first, last] = block_range(n, env.size(), p);
    for (index_t r = first; r < last; ++r) owners[static_cast<std::size_t>(r)] = p;
  }
  return owners;
}

// A raw vector of n values of T read as block rows, then moved to the rows `names` this process
// holds (in that order) under `owners`.
template <class T>
std::vector<T> read_vector_for(Environment& env, const std::string& path, index_t n,
                               std::span<const index_t> names,
                               std::span<const std::int32_t> owners) {
  const std::vector<T> block = read_vector<T>(path, n, env.comm());
  const std::vector<index_t> mine = block_names(env, n);
  return redistribute_values<T>(mine, block, owners, names, env.comm());
}

// Writes the values of the rows `names` (this process's, in that order) as one raw file of n
// values in row order, collectively, through a temporary renamed on success.
template <class T>
void write_vector_from(Environment& env, const std::string& path, index_t n,
                       std::span<const index_t> names, std::span<const T> values) {
  const std::vector<std::int32_t> owners = block_owners(env, n);
  const std::vector<index_t> mine = block_names(env, n);
  const std::vector<T> block = redistribute_values<T>(names, values, owners, mine, env.comm());
  write_vector<T>(path, n, block, env.comm());
}

// Refuses a matrix that is not square, on every process alike: `user` says who needs it to be
// ("CG", "a graph"), `name` the input.
template <class T>
void require_square(const CsrRows<T>& block, const std::string& user, const std::string& name) {
  if (block.global_rows != block.global_cols) {
    throw Error::everywhere(ErrorKind::invalid_argument,
                            user + " needs a square matrix: " + name + " is " +
                                std::to_string(block.global_rows) + " x " +
                                std::to_string(block.global_cols));
  }
}

}  // namespace hit::app
