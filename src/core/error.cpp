#include "hit/core/error.hpp"

namespace hit {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_argument:
      return "invalid argument";
    case ErrorKind::parse:
      return "parse error";
    case ErrorKind::shape:
      return "shape error";
    case ErrorKind::topology:
      return "topology error";
    case ErrorKind::plugin:
      return "plug-in error";
    case ErrorKind::io:
      return "I/O error";
    case ErrorKind::device:
      return "device error";
    case ErrorKind::out_of_memory:
      return "device out of memory";
    case ErrorKind::model:
      return "model error";
    case ErrorKind::mpi:
      return "MPI error";
    case ErrorKind::internal:
      return "internal error";
  }
  return "error";
}

}  // namespace hit
