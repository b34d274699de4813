#pragma once
// hit::Error: the one exception type for every failure a user can cause (docs/architecture.md).

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace hit {

// What went wrong, so callers (and tests) can react to a class of failures without parsing text.
enum class ErrorKind {
  invalid_argument,  // a value outside what is allowed (sizes, strides, counts)
  parse,             // text that could not be parsed (shapes, specs, numbers)
  shape,             // shapes that do not fit together (rank mismatch, not a subset)
  topology,          // process counts or grids that do not fit a topology
  plugin,            // unknown plug-in names, bad plug-in parameters, failed plug-in loads
  io,                // files that cannot be read or written, or have the wrong size
  device,            // device binding, missing kernel implementations
  out_of_memory,     // a device cannot hold what it was asked to hold
  device_failed,     // a device stopped working during a run (work packages reroute around it)
  model,             // malformed or unusable performance models
  mpi,               // an MPI call failed
  internal,          // a broken invariant inside hitmap++ (a bug, please report it)
};

std::string_view to_string(ErrorKind kind) noexcept;

// Input quoted in a message, cut to its first `most` characters when longer (with its length),
// so a malformed 40 MiB file does not become a 40 MiB error line.
std::string excerpt(std::string_view text, std::size_t most = 60);

namespace detail {
// A message longer than a screenful is cut the same way: the last guard against quoted input.
std::string bounded_message(const std::string& message);
}  // namespace detail

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(detail::bounded_message(message)), kind_(kind) {}

  ErrorKind kind() const noexcept { return kind_; }
  // Every process throws this Error (it was agreed, or announced by the process that failed):
  // nobody needs to be told of it.
  bool everywhere() const noexcept { return everywhere_; }
  static Error everywhere(ErrorKind kind, const std::string& message) {
    Error e(kind, message);
    e.everywhere_ = true;
    return e;
  }

 private:
  ErrorKind kind_;
  bool everywhere_ = false;
};

// Throws an Error of `kind` when `condition` is false. For argument checks that read as sentences.
inline void require(bool condition, ErrorKind kind, const std::string& message) {
  if (!condition) throw Error(kind, message);
}

// The same, with the message made only when the check fails: for checks in loops over rows or
// nonzeros, where building the sentence every time cost more than the work it guards (the
// column check of a sparse shape spent 60 ns a nonzero on it).
// (A trait, not a concept: CUDA sources include this header too.)
template <class Message, class = std::enable_if_t<std::is_invocable_v<Message>>>
void require(bool condition, ErrorKind kind, Message&& message) {
  if (!condition) throw Error(kind, std::string(std::forward<Message>(message)()));
}

}  // namespace hit
