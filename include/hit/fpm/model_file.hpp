#pragma once
// Model files (docs/fpm.md): CSV with a header `d,t` (optional columns `reps`, `ci`), one measured
// point per line, d strictly increasing integers >= 1, t > 0 seconds. Lines starting with `#` are
// comments; `# key: value` comments are kept as annotations (Model::info), and `# capacity: N`
// declares the most units the device can hold.

#include <string>
#include <string_view>

#include "hit/core/file.hpp"

#include "hit/fpm/model.hpp"

namespace hit::fpm {

// Reads a model file. Every problem is an Error naming the file and, for content, the line:
// Error(io) when the file cannot be read, Error(model) when it is malformed (empty, non-numeric,
// unsorted or repeated d, t <= 0, a bad capacity line, a point beyond the capacity).
Model load_model(const std::string& path, ModelKind kind = ModelKind::piecewise);
// The same from text; `name` stands for the file in messages.
Model parse_model(std::string_view text, std::string_view name,
                  ModelKind kind = ModelKind::piecewise);

// Writes `model` with its annotations and capacity, to a temporary name in the same folder that is
// renamed over `path` on success (a failed write never leaves a truncated model). Error(io).
void save_model(const std::string& path, const Model& model);
std::string format_model(const Model& model);

using hit::write_file_atomically;  // hit/core/file.hpp

}  // namespace hit::fpm
