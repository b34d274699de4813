#include "hit/sparse/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <numeric>

#include "hit/core/checked.hpp"
#include "hit/core/error.hpp"
#include "hit/core/host_memory_budget.hpp"
#include "sparse/csr_block_rows.hpp"

namespace hit {
namespace {

constexpr std::string_view generator_forms =
    "poisson2d:n=K[,permute[=SEED]] or poisson3d:n=K[,permute[=SEED]]";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A whole token as an integer of type I (no sign for unsigned types, nothing left over).
template <class I>
std::optional<I> parse_integer(std::string_view token) {
  I value{};
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size() || token.empty()) return std::nullopt;
  return value;
}

int dimensions(GeneratorKind kind) {
  return kind == GeneratorKind::poisson2d ? 2 : 3;
}

// N = n^dims and the nonzeros (at most 2·dims + 1 a row) fit 64-bit counts, or Error(parse).
void check_sizes(const GeneratorSpec& spec, std::string_view text) {
  try {
    index_t rows = 1;
    for (int d = 0; d < dimensions(spec.kind); ++d) rows = checked_mul(rows, spec.n, "N");
    (void)checked_mul(rows, 2 * dimensions(spec.kind) + 1, "the nonzero count");
  } catch (const Error& e) {
    throw Error(ErrorKind::parse, "matrix generator '" + excerpt(text) + "': n=" +
                                      std::to_string(spec.n) + " is too large (" + e.what() + ")");
  }
}

// The entries of natural row u (columns ascending): diagonal 2·dims, -1 for each grid neighbour.
template <class T>
int natural_row(GeneratorKind kind, index_t k, index_t u,
                std::array<std::pair<index_t, T>, 7>& out) {
  int count = 0;
  auto add = [&](index_t col, T value) { out[static_cast<std::size_t>(count++)] = {col, value}; };
  const index_t x = u % k;
  const index_t y = (u / k) % k;
  if (kind == GeneratorKind::poisson2d) {
    if (y > 0) add(u - k, T(-1));
    if (x > 0) add(u - 1, T(-1));
    add(u, T(4));
    if (x < k - 1) add(u + 1, T(-1));
    if (y < k - 1) add(u + k, T(-1));
    return count;
  }
  const index_t z = u / (k * k);
  if (z > 0) add(u - k * k, T(-1));
  if (y > 0) add(u - k, T(-1));
  if (x > 0) add(u - 1, T(-1));
  add(u, T(6));
  if (x < k - 1) add(u + 1, T(-1));
  if (y < k - 1) add(u + k, T(-1));
  if (z < k - 1) add(u + k * k, T(-1));
  return count;
}

}  // namespace

GeneratorSpec GeneratorSpec::parse(std::string_view text) {
  auto fail = [&](const std::string& why) {
    return Error(ErrorKind::parse, "matrix generator '" + excerpt(text) + "': " + why +
                                       " (expected " + std::string(generator_forms) + ")");
  };
  const auto colon = text.find(':');
  const std::string_view name = trim(text.substr(0, colon));
  GeneratorSpec spec;
  if (name == "poisson2d") {
    spec.kind = GeneratorKind::poisson2d;
  } else if (name == "poisson3d") {
    spec.kind = GeneratorKind::poisson3d;
  } else {
    throw fail("unknown generator '" + excerpt(name) + "'");
  }
  bool have_n = false;
  std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const auto comma = rest.find(',');
    const std::string_view token = trim(rest.substr(0, comma));
    const auto eq = token.find('=');
    const std::string_view key = trim(token.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? "" : trim(token.substr(eq + 1));
    if (key == "n") {
      if (have_n) throw fail("n given twice");
      if (eq == std::string_view::npos) throw fail("n needs a value (n=K)");
      const auto n = parse_integer<index_t>(value);
      if (!n || *n <= 0) throw fail("n='" + excerpt(value) + "' is not a positive integer");
      spec.n = *n;
      have_n = true;
    } else if (key == "permute") {
      if (spec.permute_seed) throw fail("permute given twice");
      const auto seed = eq == std::string_view::npos ? std::optional<std::uint64_t>(1)
                                                     : parse_integer<std::uint64_t>(value);
      if (!seed) throw fail("permute='" + excerpt(value) + "' is not an unsigned 64-bit seed");
      spec.permute_seed = seed;
    } else {
      throw fail(token.empty() ? std::string("an empty parameter")
                               : "unknown parameter '" + excerpt(token) + "'");
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (!have_n) throw fail("n=K is missing");
  check_sizes(spec, text);
  return spec;
}

std::string GeneratorSpec::str() const {
  std::string out = kind == GeneratorKind::poisson2d ? "poisson2d" : "poisson3d";
  out += ":n=" + std::to_string(n);
  if (permute_seed) out += ",permute=" + std::to_string(*permute_seed);
  return out;
}

index_t generated_rows(const GeneratorSpec& spec) {
  index_t rows = 1;
  for (int d = 0; d < dimensions(spec.kind); ++d) rows = checked_mul(rows, spec.n, "N");
  return rows;
}

std::vector<index_t> permutation(index_t n, std::uint64_t seed) {
  require(n >= 0, ErrorKind::invalid_argument,
          "permutation of " + std::to_string(n) + " elements: the count must be >= 0");
  std::vector<index_t> pi(static_cast<std::size_t>(n));
  std::iota(pi.begin(), pi.end(), index_t{0});
  std::uint64_t state = seed;
  auto next = [&state] {  // SplitMix64
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  for (index_t i = n - 1; i >= 1; --i) {
    const auto j = static_cast<index_t>(next() % static_cast<std::uint64_t>(i + 1));
    std::swap(pi[static_cast<std::size_t>(i)], pi[static_cast<std::size_t>(j)]);
  }
  return pi;
}

template <class T>
CsrRows<T> generate_rows(const GeneratorSpec& spec, index_t first, index_t last) {
  const index_t n = generated_rows(spec);
  require(0 <= first && first <= last && last <= n, ErrorKind::invalid_argument,
          "generate " + spec.str() + ": rows [" + std::to_string(first) + ", " +
              std::to_string(last) + ") are not inside [0, " + std::to_string(n) + ")");
  CsrRows<T> out;
  out.global_rows = n;
  out.global_cols = n;
  const auto held = static_cast<std::size_t>(last - first);
  const std::size_t most = held * static_cast<std::size_t>(2 * dimensions(spec.kind) + 1);
  out.names.reserve(held);
  out.row_ptr.reserve(held + 1);
  out.cols.reserve(most);
  out.values.reserve(most);
  std::vector<index_t> pi;
  std::vector<index_t> inverse;
  if (spec.permute_seed) {
    pi = permutation(n, *spec.permute_seed);
    inverse.resize(pi.size());
    for (std::size_t u = 0; u < pi.size(); ++u) inverse[static_cast<std::size_t>(pi[u])] = u;
  }
  std::array<std::pair<index_t, T>, 7> row{};
  for (index_t r = first; r < last; ++r) {
    const index_t u = pi.empty() ? r : inverse[static_cast<std::size_t>(r)];
    const int count = natural_row<T>(spec.kind, spec.n, u, row);
    if (!pi.empty()) {
      for (int e = 0; e < count; ++e) {
        auto& entry = row[static_cast<std::size_t>(e)];
        entry.first = pi[static_cast<std::size_t>(entry.first)];
      }
      std::sort(row.begin(), row.begin() + count,
                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out.names.push_back(r);
    for (int e = 0; e < count; ++e) {
      out.cols.push_back(row[static_cast<std::size_t>(e)].first);
      out.values.push_back(row[static_cast<std::size_t>(e)].second);
    }
    out.row_ptr.push_back(static_cast<index_t>(out.cols.size()));
  }
  return out;
}

template <class T>
CsrRows<T> generate_rows(const GeneratorSpec& spec, MPI_Comm comm) {
  const index_t n = generated_rows(spec);
  const auto [first, last] = detail::block_rows(n, comm);
  int procs = 1;
  MPI_Comm_size(comm, &procs);
  // The largest block, and the whole permutation and its inverse on every process when permuted.
  const double rows = std::ceil(double(n) / procs);
  const double entries = rows * double(2 * dimensions(spec.kind) + 1);
  const double bytes = detail::block_rows_bytes(rows, entries, sizeof(T)) +
                       (spec.permute_seed ? double(n) * 16 : 0.0);
  require_host_memory(bytes,
                      fmt::format("generate {}: its {} rows ({} on the largest of {} processes)",
                                  spec.str(), n, static_cast<index_t>(rows), procs),
                      comm);
  return generate_rows<T>(spec, first, last);
}

std::optional<std::pair<index_t, index_t>> grid_position(const GeneratorSpec& spec,
                                                         index_t vertex) {
  const index_t n = generated_rows(spec);
  require(vertex >= 0 && vertex < n, ErrorKind::invalid_argument, [&] {
    return "grid position in " + spec.str() + ": vertex " + std::to_string(vertex) +
           " is not in [0, " + std::to_string(n) + ")";
  });
  if (spec.kind != GeneratorKind::poisson2d) return std::nullopt;
  index_t u = vertex;
  if (spec.permute_seed) {
    const auto pi = permutation(n, *spec.permute_seed);
    u = std::find(pi.begin(), pi.end(), vertex) - pi.begin();
  }
  return std::pair{u % spec.n, u / spec.n};
}

std::vector<std::pair<index_t, index_t>> grid_positions(const GeneratorSpec& spec) {
  if (spec.kind != GeneratorKind::poisson2d) return {};
  const index_t n = generated_rows(spec);
  std::vector<std::pair<index_t, index_t>> out(static_cast<std::size_t>(n));
  const auto pi = spec.permute_seed ? permutation(n, *spec.permute_seed) : std::vector<index_t>{};
  for (index_t u = 0; u < n; ++u) {
    const index_t v = pi.empty() ? u : pi[static_cast<std::size_t>(u)];
    out[static_cast<std::size_t>(v)] = {u % spec.n, u / spec.n};
  }
  return out;
}

template <class T>
std::vector<T> rhs_ones_product(const CsrRows<T>& rows) {
  std::vector<T> b(static_cast<std::size_t>(rows.rows()));
  for (index_t r = 0; r < rows.rows(); ++r) {
    T sum{};
    for (const T v : rows.row_values(r)) sum += v;
    b[static_cast<std::size_t>(r)] = sum;
  }
  return b;
}

template CsrRows<float> generate_rows<float>(const GeneratorSpec&, index_t, index_t);
template CsrRows<double> generate_rows<double>(const GeneratorSpec&, index_t, index_t);
template CsrRows<float> generate_rows<float>(const GeneratorSpec&, MPI_Comm);
template CsrRows<double> generate_rows<double>(const GeneratorSpec&, MPI_Comm);
template std::vector<float> rhs_ones_product<float>(const CsrRows<float>&);
template std::vector<double> rhs_ones_product<double>(const CsrRows<double>&);

}  // namespace hit
