#pragma once
// The MPI datatype of an element type, for tiles and reductions.

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace hit {

template <class T>
MPI_Datatype mpi_type() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, std::int32_t>)
    return MPI_INT32_T;
  else if constexpr (std::is_same_v<U, std::int64_t>)
    return MPI_INT64_T;
  else if constexpr (std::is_same_v<U, std::uint32_t>)
    return MPI_UINT32_T;
  else if constexpr (std::is_same_v<U, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<U, std::int8_t>)
    return MPI_INT8_T;
  else if constexpr (std::is_same_v<U, std::uint8_t>)
    return MPI_UINT8_T;
  else if constexpr (std::is_same_v<U, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<U, std::complex<double>>)
    return MPI_C_DOUBLE_COMPLEX;
  else if constexpr (std::is_same_v<U, std::complex<float>>)
    return MPI_C_FLOAT_COMPLEX;
  else
    static_assert(sizeof(U) == 0, "hit::mpi_type: no MPI datatype for this element type");
}

}  // namespace hit
