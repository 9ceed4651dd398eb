// Whole-file reading and writing with errors that name the path and the reason.
#ifndef HLOWB_CORE_SUPPORT_FILE_UTIL_H_
#define HLOWB_CORE_SUPPORT_FILE_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hlowb {

// Reads a file ("-" = standard input). Refuses directories and files above `max_bytes`.
absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             uint64_t max_bytes = uint64_t{8} << 30);
// Writes atomically (temporary file + rename) so a failed write never leaves half a file.
absl::Status WriteStringToFile(const std::string& path, const std::string& contents);

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_FILE_UTIL_H_
