#pragma once
// Files the programs write. A whole file is written so that a failure never leaves a partial file
// under the final name: the data goes to a temporary beside it, renamed to the final name on
// success. Output paths are checked before any computation, so a typo costs seconds, not a run.

#include <string>
#include <string_view>

namespace hit {

// Error(io) naming the path and the reason on failure (a read-only existing file is not replaced:
// check_not_read_only); the temporary is removed, and stale
// temporaries of `path` (see remove_stale_temporaries) are removed on success.
void write_file_atomically(const std::string& path, const std::string& text);

// Error(io) when `path` cannot be an output file: an empty name, a folder that does not exist or
// is not a folder, a folder in the file's place, an existing file that is read-only (see
// check_not_read_only), a place where this process cannot create a file (it creates and removes a
// probe file beside `path`). `what` says which output it is ("C output (--c-out)").
void check_output_path(const std::string& path, std::string_view what = "output file");

// Error(io) when `path` is an existing file that must not be replaced: one this process may not
// write, or one whose owner took every write permission away (mode bits, so that root, whom
// access() lets write anything, keeps a file the user made read-only too). Renaming a temporary
// over a file needs only the folder's permission, so writers check this first.
void check_not_read_only(const std::string& path, std::string_view what = "output file");

// The suffix of this process's temporaries: `.tmp-<host>.<pid>.<random>` (host as 8 hex digits
// of a hash of its name), so a later writer can tell a temporary of a dead process from one being
// written.
std::string temporary_suffix();

// Removes `<path>.tmp-*` temporaries left by writers that were killed: those made on this host by
// a process that no longer exists. Others (other hosts, live writers, foreign names) stay.
// Returns how many were removed; never throws.
int remove_stale_temporaries(const std::string& path) noexcept;

// The last step of a write through a temporary: `temporary` renamed to `path` unless `path` was
// made read-only meanwhile (check_not_read_only, with `what`), then the stale temporaries of
// `path` removed. Error(io) "<cannot>: cannot rename '<temporary>' to it: <reason>" when the
// rename fails; the temporary is then the caller's to remove.
void rename_into_place(const std::string& temporary, const std::string& path, std::string_view what,
                       const std::string& cannot);

// Text escaped for XML/SVG content and attribute values (&, <, >, ").
std::string xml_escape(std::string_view text);

}  // namespace hit
