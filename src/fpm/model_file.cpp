#include "hit/fpm/model_file.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "hit/core/error.hpp"

#include "text_fields.hpp"

namespace hit::fpm {
namespace {

using detail::parse_double;
using detail::parse_int;
using detail::split_fields;
using detail::trim;

class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw Error(ErrorKind::model, fmt::format("model file '{}', line {}: {}", name_, line, what));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::model, fmt::format("model file '{}': {}", name_, what));
  }

 private:
  std::string_view name_;
};

void parse_comment(const Reader& reader, int line, std::string_view body, Model& model,
                   int& capacity_line) {
  const auto colon = body.find(':');
  const std::string_view key = trim(body.substr(0, colon));
  std::string lowered(key);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // `# capacity: N`; `# capacity N` and `# capacity=N` are typos of it, not free comments.
  bool capacity_typo = false;
  if (colon == body.npos) {
    std::istringstream words{std::string(lowered)};
    std::string first, second, third;
    words >> first >> second >> third;
    capacity_typo = (first == "capacity" && third.empty()) || first.rfind("capacity=", 0) == 0;
  }
  if (lowered == "capacity" || capacity_typo) {
    const std::string_view value = colon == body.npos ? "" : trim(body.substr(colon + 1));
    std::int64_t cap = 0;
    if (colon == body.npos || !parse_int(value, cap) || cap < 0) {
      reader.fail(line, fmt::format("malformed capacity line '#{}': expected '# capacity: N' with "
                                    "N a whole number of units >= 0",
                                    excerpt(body)));
    }
    if (capacity_line != 0) {
      reader.fail(line,
                  fmt::format("a second capacity line (the first is line {})", capacity_line));
    }
    capacity_line = line;
    model.set_capacity(cap);
    return;
  }
  // `# key: value` annotations with a one-word key; other comments are free text.
  if (colon == body.npos || key.empty()) return;
  const bool word = std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
  if (word) model.set_info(std::string(key), std::string(trim(body.substr(colon + 1))));
}

// The columns of the header line `line` (d and t, optionally reps and ci, in any order).
std::vector<std::string> parse_header(const Reader& reader, int line_no, std::string_view line,
                                      const std::vector<std::string_view>& fields) {
  std::vector<std::string> header;
  double probe = 0;
  if (parse_double(fields.front(), probe)) {
    reader.fail(line_no, fmt::format("expected the header 'd,t' (optionally with columns reps "
                                     "and ci) before the points, got '{}'",
                                     excerpt(line)));
  }
  for (std::string_view f : fields) {
    std::string col(f);
    std::transform(col.begin(), col.end(), col.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (col != "d" && col != "t" && col != "reps" && col != "ci") {
      reader.fail(line_no, fmt::format("unknown column '{}' in the header (columns: d, t, "
                                       "reps, ci)",
                                       excerpt(f)));
    }
    if (std::find(header.begin(), header.end(), col) != header.end()) {
      reader.fail(line_no, fmt::format("column '{}' appears twice in the header", excerpt(col)));
    }
    header.push_back(col);
  }
  if (std::find(header.begin(), header.end(), "d") == header.end() ||
      std::find(header.begin(), header.end(), "t") == header.end()) {
    reader.fail(line_no,
                fmt::format("the header '{}' lacks column d or t (expected 'd,t')", excerpt(line)));
  }
  return header;
}

// The point of a data line whose fields follow `header`.
Point parse_point(const Reader& reader, int line_no, const std::vector<std::string>& header,
                  const std::vector<std::string_view>& fields) {
  Point p;
  for (std::size_t c = 0; c < header.size(); ++c) {
    const std::string& col = header[c];
    const std::string_view v = fields[c];
    if (col == "d") {
      if (!parse_int(v, p.d)) {
        reader.fail(line_no, fmt::format("d = '{}' is not a whole number of units", excerpt(v)));
      }
      if (p.d < 1) {
        reader.fail(line_no, fmt::format("d = {} must be >= 1 (the point d = 0, t = 0 is "
                                         "implicit)",
                                         p.d));
      }
    } else if (col == "t") {
      if (!parse_double(v, p.t) || !std::isfinite(p.t)) {
        reader.fail(line_no, fmt::format("t = '{}' is not a number of seconds", excerpt(v)));
      }
      if (p.t <= 0) reader.fail(line_no, fmt::format("t = {} must be > 0 seconds", excerpt(v)));
    } else if (col == "reps") {
      std::int64_t reps = 0;
      if (!parse_int(v, reps) || reps < 0 || reps > 1'000'000'000) {
        reader.fail(line_no, fmt::format("reps = '{}' is not a whole number >= 0", excerpt(v)));
      }
      p.reps = static_cast<int>(reps);
    } else {
      if (!parse_double(v, p.ci) || !std::isfinite(p.ci) || p.ci < 0) {
        reader.fail(line_no, fmt::format("ci = '{}' is not a number of seconds >= 0", excerpt(v)));
      }
    }
  }
  return p;
}

}  // namespace

Model parse_model(std::string_view text, std::string_view name, ModelKind kind) {
  const Reader reader(name);
  Model model(kind);
  std::vector<std::string> header;
  int header_line = 0;
  int capacity_line = 0;
  std::vector<Point> points;
  std::vector<int> point_lines;

  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto nl = text.find('\n', pos);
    const std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {
      parse_comment(reader, line_no, line.substr(1), model, capacity_line);
      continue;
    }
    const auto fields = split_fields(line);
    if (header.empty()) {
      header = parse_header(reader, line_no, line, fields);
      header_line = line_no;
      continue;
    }
    if (fields.size() != header.size()) {
      reader.fail(line_no, fmt::format("{} fields, but the header (line {}) has {} columns",
                                       fields.size(), header_line, header.size()));
    }
    const Point p = parse_point(reader, line_no, header, fields);
    if (!points.empty() && p.d <= points.back().d) {
      if (p.d == points.back().d) {
        reader.fail(line_no, fmt::format("d = {} repeats the d of line {} (one point per size)",
                                         p.d, point_lines.back()));
      }
      reader.fail(line_no, fmt::format("d = {} is smaller than the d = {} of line {} (points must "
                                       "be sorted by increasing d)",
                                       p.d, points.back().d, point_lines.back()));
    }
    points.push_back(p);
    point_lines.push_back(line_no);
  }

  // `# capacity: 0` and no points: a device that can take nothing (partitioners give it 0 units).
  if (points.empty() && capacity_line != 0 && model.capacity() == 0) return model;
  if (points.empty()) {
    reader.fail(header.empty() ? "no points: the file is empty (expected a header line 'd,t' and "
                                 "one line 'd,t' per measured point, or '# capacity: 0' for a "
                                 "device that takes nothing)"
                               : "no points after the header (expected one line 'd,t' per "
                                 "measured point, or '# capacity: 0' for a device that takes "
                                 "nothing)");
  }
  if (points.back().d > model.capacity()) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (points[i].d > model.capacity()) {
        reader.fail(point_lines[i], fmt::format("d = {} is beyond the declared capacity of {} "
                                                "units (line {})",
                                                points[i].d, model.capacity(), capacity_line));
      }
    }
  }
  Model out(std::move(points), kind, model.capacity());
  for (const auto& [k, v] : model.info()) out.set_info(k, v);
  return out;
}

Model load_model(const std::string& path, ModelKind kind) {
  std::error_code folder_check;
  if (std::filesystem::is_directory(path, folder_check)) {
    throw Error(ErrorKind::io,
                fmt::format("cannot read model file '{}': it is a folder, not a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::io,
                fmt::format("cannot read model file '{}': {}", path,
                            std::error_code(errno, std::generic_category()).message()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::io, fmt::format("cannot read model file '{}'", path));
  return parse_model(text.str(), path, kind);
}

std::string format_model(const Model& model) {
  std::string out =
      "# hitmap++ performance model: time of d computation units, interpolated "
      "linearly from (0, 0)\n";
  for (const auto& [k, v] : model.info()) out += fmt::format("# {}: {}\n", k, v);
  if (model.capacity() != unlimited) out += fmt::format("# capacity: {}\n", model.capacity());
  out += "d,t,reps,ci\n";
  for (const Point& p : model.points()) {
    out += fmt::format("{},{},{},{}\n", p.d, p.t, p.reps, p.ci);
  }
  return out;
}

void save_model(const std::string& path, const Model& model) {
  write_file_atomically(path, format_model(model));
}

}  // namespace hit::fpm
