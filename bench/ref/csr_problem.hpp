// The problem of ref-csr-cg (hitmap++'s generators (docs/sparse.md)): the 5- and 7-point Laplacians, the seeded
// permutation of their unknowns, block rows, and a process's rows of the matrix in global CSR.
// Stands alone like ref-csr-cg itself (the C++ standard library only).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace csr_ref {

using gidx = std::int64_t;  // global row and column numbers

struct Spec {
  std::string text;
  int dims = 0;  // 2 or 3
  gidx k = 0;    // grid side
  bool permute = false;
  std::uint64_t seed = 1;
  gidx rows() const { return dims == 2 ? k * k : k * k * k; }
};

inline std::uint64_t parse_unsigned(const std::string& what, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error(what + " must be a whole number >= 0, got '" + text + "'");
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) throw std::runtime_error(what + " is too large: '" + text + "'");
  return v;
}

// "poisson2d:n=K[,permute[=SEED]]" or "poisson3d:n=K[,permute[=SEED]]".
inline Spec parse_spec(const std::string& text) {
  Spec s;
  s.text = text;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  if (kind == "poisson2d")
    s.dims = 2;
  else if (kind == "poisson3d")
    s.dims = 3;
  else
    throw std::runtime_error("--generate: unknown generator '" + kind +
                             "' (poisson2d or poisson3d)");
  std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "n" && eq != std::string::npos) {
      const std::uint64_t k = parse_unsigned("--generate n", value);
      const std::uint64_t limit = s.dims == 2 ? 3037000499ULL : 2097151ULL;  // k^dims < 2^63
      if (k < 1 || k > limit)
        throw std::runtime_error("--generate n must be from 1 to " + std::to_string(limit));
      s.k = static_cast<gidx>(k);
    } else if (key == "permute") {
      s.permute = true;
      s.seed = eq == std::string::npos ? 1 : parse_unsigned("--generate permute", value);
    } else {
      throw std::runtime_error("--generate: unknown parameter '" + item + "' in '" + text + "'");
    }
  }
  if (s.k == 0) throw std::runtime_error("--generate '" + text + "' needs n=K");
  return s;
}

// Natural row u of the Laplacian, columns ascending (Dirichlet: neighbours outside the grid are
// left out). Returns the number of entries written to cols/vals (at most 7).
inline int natural_row(const Spec& s, gidx u, gidx* cols, double* vals) {
  const gidx k = s.k;
  int n = 0;
  auto put = [&](gidx c, double v) {
    cols[n] = c;
    vals[n] = v;
    ++n;
  };
  const gidx x = u % k;
  const gidx y = (u / k) % k;
  const gidx z = s.dims == 3 ? u / (k * k) : 0;
  if (z > 0) put(u - k * k, -1.0);
  if (y > 0) put(u - k, -1.0);
  if (x > 0) put(u - 1, -1.0);
  put(u, s.dims == 2 ? 4.0 : 6.0);
  if (x + 1 < k) put(u + 1, -1.0);
  if (y + 1 < k) put(u + k, -1.0);
  if (s.dims == 3 && z + 1 < k) put(u + k * k, -1.0);
  return n;
}

// The seeded Fisher-Yates permutation (splitmix64 steps) every sparse program uses.
inline std::vector<gidx> permutation(gidx n, std::uint64_t seed) {
  std::vector<gidx> pi(static_cast<std::size_t>(n));
  std::iota(pi.begin(), pi.end(), gidx{0});
  std::uint64_t state = seed;
  for (gidx i = n - 1; i >= 1; --i) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const auto j = static_cast<gidx>(z % static_cast<std::uint64_t>(i + 1));
    std::swap(pi[static_cast<std::size_t>(i)], pi[static_cast<std::size_t>(j)]);
  }
  return pi;
}

// Block rows: [begin(p), begin(p+1)), the first N mod P processes one row more.
inline gidx block_begin(gidx n, int procs, int p) {
  return p * (n / procs) + std::min<gidx>(p, n % procs);
}
inline int block_owner(gidx n, int procs, gidx g) {
  const gidx base = n / procs;
  const gidx extra = n % procs;
  const gidx split = extra * (base + 1);
  return static_cast<int>(g < split ? g / (base + 1) : extra + (g - split) / base);
}

// Rows [first, last) of the (permuted) matrix, global columns ascending within each row.
struct GlobalRows {
  gidx first = 0, last = 0;
  std::vector<gidx> ptr{0};
  std::vector<gidx> col;
  std::vector<double> val;
};

inline GlobalRows generate(const Spec& s, gidx first, gidx last) {
  GlobalRows g;
  g.first = first;
  g.last = last;
  const gidx held = last - first;
  // Permuted: row R = pi[u] holds (pi[u], pi[v]) for each entry (u, v) of natural row u.
  std::vector<gidx> pi;
  std::vector<gidx> natural(static_cast<std::size_t>(held));
  std::iota(natural.begin(), natural.end(), first);
  if (s.permute) {
    pi = permutation(s.rows(), s.seed);
    for (gidx u = 0; u < s.rows(); ++u) {
      const gidx r = pi[static_cast<std::size_t>(u)];
      if (r >= first && r < last) natural[static_cast<std::size_t>(r - first)] = u;
    }
  }
  g.ptr.reserve(static_cast<std::size_t>(held) + 1);
  g.col.reserve(static_cast<std::size_t>(held) * (s.dims == 2 ? 5 : 7));
  g.val.reserve(g.col.capacity());
  gidx cols[7];
  double vals[7];
  for (gidx i = 0; i < held; ++i) {
    const int n = natural_row(s, natural[static_cast<std::size_t>(i)], cols, vals);
    if (s.permute) {
      for (int e = 0; e < n; ++e) cols[e] = pi[static_cast<std::size_t>(cols[e])];
      for (int e = 1; e < n; ++e) {  // insertion sort of at most 7 entries
        for (int f = e; f > 0 && cols[f - 1] > cols[f]; --f) {
          std::swap(cols[f - 1], cols[f]);
          std::swap(vals[f - 1], vals[f]);
        }
      }
    }
    g.col.insert(g.col.end(), cols, cols + n);
    g.val.insert(g.val.end(), vals, vals + n);
    g.ptr.push_back(static_cast<gidx>(g.col.size()));
  }
  return g;
}

}  // namespace csr_ref
