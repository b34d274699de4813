#pragma once
// Small helpers of the example programs and the references in bench/ref: deterministic input
// data, medians, labels gathered on rank 0, SVG pictures side by side, the --check verdict and
// the one-line JSON output. The timing and report harness is harness.hpp.

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "hit/core/collective.hpp"
#include "hit/core/environment.hpp"
#include "hit/core/error.hpp"
#include "values.hpp"

namespace hit::app {

// Every rank's `mine` one after the other, on rank 0 (empty elsewhere); `type` is V's MPI type.
template <class V>
std::vector<V> gather_to_root(const std::vector<V>& mine, MPI_Datatype type, MPI_Comm comm,
                              std::vector<int>* counts_out = nullptr) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<V> all(static_cast<std::size_t>(rank == 0 ? total : 0));
  MPI_Gatherv(mine.data(), n, type, all.data(), counts.data(), offsets.data(), type, 0, comm);
  if (counts_out != nullptr) *counts_out = counts;
  return all;
}

// The same for records of any trivially copyable type (a struct of ids and times), moved as bytes
// between the ranks of one program (one binary, one layout of V).
template <class V>
std::vector<V> gather_records_to_root(const std::vector<V>& mine, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<V>, "records are moved as bytes");
  collectively(comm, [&] {
    if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) / sizeof(V)) {
      throw Error(ErrorKind::invalid_argument,
                  std::to_string(mine.size()) + " records are too many to gather in one message");
    }
  });
  const auto* first = reinterpret_cast<const unsigned char*>(mine.data());
  const std::vector<unsigned char> bytes(first, first + mine.size() * sizeof(V));
  const std::vector<unsigned char> all = gather_to_root(bytes, MPI_BYTE, comm);
  std::vector<V> out(all.size() / sizeof(V));
  if (!out.empty()) std::memcpy(out.data(), all.data(), out.size() * sizeof(V));
  return out;
}

// Every rank's string (a device label), in rank order (the callers use it on rank 0).
inline std::vector<std::string> gather_labels(const std::string& mine, MPI_Comm comm) {
  return allgather(mine, comm);
}

// Several SVG documents side by side in one picture (each keeps its own size).
inline std::string side_by_side_svg(const std::vector<std::string>& documents) {
  auto attribute = [](const std::string& doc, const std::string& name) {
    const auto at = doc.find(name + "=\"");
    if (at == std::string::npos) return 0.0;
    return std::atof(doc.c_str() + at + name.size() + 2);
  };
  double width = 0;
  double height = 0;
  std::string body;
  for (const std::string& doc : documents) {
    const auto root = doc.find("<svg");
    if (root == std::string::npos) continue;
    const double w = attribute(doc.substr(root), "width");
    const double h = attribute(doc.substr(root), "height");
    body += "<g transform=\"translate(" + std::to_string(width) + ",0)\">" + doc.substr(root) +
            "</g>\n";
    width += w + 20;
    height = std::max(height, h);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
         "width=\"" +
         std::to_string(width) + "\" height=\"" + std::to_string(height) + "\">\n" + body +
         "</svg>\n";
}

struct CheckResult {
  bool ran = false;
  bool passed = false;
  double max_rel_error = 0;
  std::string summary;  // the human summary's line
  nlohmann::json json() const {
    return {{"ran", ran}, {"passed", passed}, {"max_rel_error", max_rel_error}};
  }
};

// `body.template operator()<T>()` with T the element type --type names ("double" or "float",
// which the option's check allows): the one place a program turns the flag into a type.
template <class F>
int with_element_type(const std::string& type, F&& body) {
  if (type == "float") return body.template operator()<float>();
  if (type == "double") return body.template operator()<double>();
  throw Error(ErrorKind::invalid_argument,
              "--type '" + type + "' is not an element type (double or float)");
}

// Prints the JSON object as exactly one line on stdout (rank 0 only).
inline void print_json(const nlohmann::json& result) {
  const std::string line = result.dump();
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace hit::app
