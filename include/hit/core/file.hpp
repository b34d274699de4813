#pragma once
// Files the programs write. Writing a whole file so that a failure never leaves a partial file
// under the final name: the text goes to `<path>.tmp.<pid>` and is renamed to `path` on success
// (DESIGN §8, §9).

#include <string>
#include <string_view>

namespace hit {

// Error(io) naming the path and the reason on failure; the temporary is removed.
void write_file_atomically(const std::string& path, const std::string& text);

// Text escaped for XML/SVG content and attribute values (&, <, >, ").
std::string xml_escape(std::string_view text);

}  // namespace hit
