#include "hit/core/collective.hpp"

#include <string>
#include <vector>

namespace hit {

void agree(MPI_Comm comm, const std::exception_ptr& failure) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = failure ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;

  int kind = static_cast<int>(ErrorKind::internal);
  std::string message;
  if (rank == first) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error& e) {
      kind = static_cast<int>(e.kind());
      message = e.what();
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown failure";
    }
  }
  int header[2] = {kind, static_cast<int>(message.size())};
  MPI_Bcast(header, 2, MPI_INT, first, comm);
  message.resize(static_cast<std::size_t>(header[1]));
  MPI_Bcast(message.data(), header[1], MPI_CHAR, first, comm);
  if (size > 1 && first != 0) message = "rank " + std::to_string(first) + ": " + message;
  throw Error(static_cast<ErrorKind>(header[0]), message);
}

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw Error(ErrorKind::mpi,
              std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

}  // namespace hit
