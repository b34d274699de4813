#include "hit/core/error.hpp"

namespace hit {

std::string excerpt(std::string_view text, std::size_t most) {
  if (text.size() <= most) return std::string(text);
  return std::string(text.substr(0, most)) + "... (" + std::to_string(text.size()) + " characters)";
}

namespace detail {

std::string bounded_message(const std::string& message) {
  constexpr std::size_t most = 2000;
  if (message.size() <= most) return message;
  return message.substr(0, most) + "... (message of " + std::to_string(message.size()) +
         " characters cut)";
}

}  // namespace detail

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
    case ErrorKind::device_failed:
      return "device failure";
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
