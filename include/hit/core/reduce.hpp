#pragma once
// Typed reductions over every process of a run: the element type gives the MPI datatype and the
// operation is named, so a program reduces a value as it would add it up locally, without
// datatypes, counts or communicators. They wait as every collective of the library does
// (hit/core/collective.hpp: a failure another process announces ends the wait).

#include <mpi.h>

#include <limits>
#include <span>
#include <type_traits>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "hit/core/mpi_type.hpp"

namespace hit {

enum class Reduce : unsigned char { sum, min, max };

namespace detail {
inline MPI_Op mpi_op(Reduce op) {
  switch (op) {
    case Reduce::sum:
      return MPI_SUM;
    case Reduce::min:
      return MPI_MIN;
    case Reduce::max:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}
}  // namespace detail

// Every element of `values` replaced, on every process of `comm`, by `op` of that element over
// the processes. Collective; the processes pass the same count.
template <class T>
void all_reduce(std::span<T> values, Reduce op, MPI_Comm comm) {
  static_assert(std::is_arithmetic_v<T>, "hit::all_reduce: T must be a number");
  if (values.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(ErrorKind::invalid_argument, "all_reduce: more than 2^31-1 values");
  }
  allreduce_in_place(values.data(), static_cast<int>(values.size()), mpi_type<T>(),
                     detail::mpi_op(op), comm);
}

// `op` of `value` over the processes of `comm`, on every one of them. Collective.
template <class T>
[[nodiscard]] T all_reduce(T value, Reduce op, MPI_Comm comm) {
  all_reduce(std::span<T>(&value, 1), op, comm);
  return value;
}

// The same over every process of the run.
template <class T>
void all_reduce(std::span<T> values, Reduce op, const Environment& env) {
  all_reduce(values, op, env.comm());
}
template <class T>
[[nodiscard]] T all_reduce(T value, Reduce op, const Environment& env) {
  return all_reduce(value, op, env.comm());
}

}  // namespace hit
