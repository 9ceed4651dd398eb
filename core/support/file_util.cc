#include "core/support/file_util.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>

#include "core/support/strings.h"

namespace hlowb {

absl::StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes) {
  if (path == "-") {
    std::string s((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return s;
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat(path, ": is a directory, expected a file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::ResourceExhaustedError(
        StrCat(path, ": file is ", st.st_size, " bytes, above the limit of ", max_bytes));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return absl::NotFoundError(StrCat(path, ": cannot open: ", std::strerror(errno)));
  std::string s;
  s.resize(static_cast<size_t>(st.st_size));
  size_t n = s.empty() ? 0 : std::fread(s.data(), 1, s.size(), f);
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) return absl::DataLossError(StrCat(path, ": read error"));
  s.resize(n);
  return s;
}

absl::Status WriteStringToFile(const std::string& path, const std::string& contents) {
  if (path == "-") {
    std::fwrite(contents.data(), 1, contents.size(), stdout);
    std::fflush(stdout);
    return absl::OkStatus();
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // Devices and pipes (/dev/null, /dev/stdout) cannot be replaced by a rename.
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return absl::PermissionDeniedError(StrCat(path, ": cannot write: ", std::strerror(errno)));
    size_t n = std::fwrite(contents.data(), 1, contents.size(), f);
    bool ok = n == contents.size() && std::fclose(f) == 0;
    if (!ok) return absl::DataLossError(StrCat(path, ": write failed"));
    return absl::OkStatus();
  }
  std::string tmp = path + ".tmp-hlowb";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return absl::PermissionDeniedError(StrCat(path, ": cannot write: ", std::strerror(errno)));
  size_t n = std::fwrite(contents.data(), 1, contents.size(), f);
  bool ok = n == contents.size() && std::fflush(f) == 0;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::DataLossError(StrCat(path, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace hlowb
