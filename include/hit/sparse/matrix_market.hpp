#pragma once
// Sparse matrices in Matrix Market files, and vectors in raw binary files, read and written by
// every process of a communicator together (docs/sparse.md, "Files").
//
// Reading is collective and no process reads or holds the whole file: rank 0 reads the banner and
// the size line and tells the others; then each process parses the lines that start in its own
// byte range of the data (an equal share of the bytes, split at line boundaries) and sends every
// entry to the process that owns its row under the block-rows distribution (hit::block_range:
// process p of P holds rows [first, last), the first N mod P processes one row more), in one
// all-to-all. Line numbers in messages are global: each process counts the lines of its range,
// and a prefix sum places them.
//
// Accepted: `%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric>` (case
// does not matter), comment lines (first non-blank character '%') and blank lines anywhere after
// the banner, a size line `rows columns entries`, then one `row column [value]` line per entry,
// 1-based, in any order. A pattern file's values are 1. A symmetric file lists the lower triangle
// (column <= row) and is expanded: (i, j) also gives (j, i).
//
// Every malformed file is one hit::Error thrown on every process (agreed before the next
// collective step, so nobody waits for a process that failed), naming the file and the line:
// Error(parse) for a missing or bad banner (array, complex, hermitian and skew-symmetric files are
// refused, saying so), a bad size line, fewer or more entries than the size line says, an index
// out of range, a duplicate entry, an entry above the diagonal of a symmetric file, a value that
// is NaN, infinite (or too large for T) or not a number; Error(io) for a file that cannot be
// opened or read.

#include <mpi.h>

#include <span>
#include <string>
#include <vector>

#include "hit/shape.hpp"
#include "hit/sparse/csr_rows.hpp"

namespace hit {

// Collective over `comm`: this process's block rows of the matrix in `path`, rows ascending
// (every row of the block listed, empty ones too), columns ascending within a row; check() holds.
template <class T>
[[nodiscard]] CsrRows<T> read_matrix_market(const std::string& path, MPI_Comm comm);

struct MatrixMarketWrite {
  // Banner `symmetric`, and only the entries with column <= row written: the caller vouches for
  // the symmetry (checking it would need the transpose, a second all-to-all of the matrix).
  bool symmetric = false;
  bool pattern = false;  // banner `pattern`, no values
  // Significant digits of each value: 17 reads a double back exactly, 9 a float. 0 writes the
  // shortest text that reads back to the same T.
  int precision = 17;
};

// Collective over `comm`: writes the matrix whose rows the processes hold (any rows on any
// process, each global row on one process; all processes agree on the global extents). Each
// process formats its own rows (1-based, in the order held: the format does not ask for order),
// places them after those of lower ranks by a prefix sum of byte counts, and writes them with
// MPI_File_write_at_all into a temporary beside `path`, renamed to `path` by rank 0 once all
// succeeded: a failure leaves no partial file under either name. Error(io) naming the path,
// Error(invalid_argument) for malformed rows, extents that differ between processes, NaN or
// infinite values, a symmetric write of a non-square matrix. The output reads back with
// read_matrix_market.
template <class T>
void write_matrix_market(const std::string& path, const CsrRows<T>& mine, MPI_Comm comm,
                         MatrixMarketWrite options = {});

// Vectors: a raw file of n values of T, native byte order, no header (numpy's np.fromfile reads
// them), or an HDF5 dataset of n values named FILE.h5:/path (hit::read, hit/tile_io.hpp).
// Collective: this process's block-rows part (the values of rows block_range(n, P, p)).
// Error(io) naming the file when it cannot be read or its size is not n·sizeof(T) bytes;
// Error(invalid_argument) naming the file and the index of the first NaN or infinite value.
template <class T>
[[nodiscard]] std::vector<T> read_vector(const std::string& path, index_t n, MPI_Comm comm);

// Collective: each process writes its block-rows part (block_part.size() must be its block's
// size, else Error(invalid_argument) on every process) at its offset, into a temporary renamed
// to `path` on success, as write_matrix_market does.
template <class T>
void write_vector(const std::string& path, index_t n, std::span<const T> block_part, MPI_Comm comm);

}  // namespace hit
