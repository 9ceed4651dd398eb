// The shared corpus as the offscreen tests use it.
#ifndef HLOWB_TESTS_GUI_CORPUS_UTIL_H_
#define HLOWB_TESTS_GUI_CORPUS_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace hlowb::testing {

// The path of the largest file with one of `extensions` under HLOWB_CORPUS_DIR (the module the
// latency tests measure); empty when the corpus is not there.
inline std::string LargestCorpusFile(const std::vector<std::string>& extensions = {".hlo"}) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path largest;
  uintmax_t size = 0;
  const fs::path corpus(HLOWB_CORPUS_DIR);
  if (!fs::is_directory(corpus, ec)) return {};
  for (auto it = fs::recursive_directory_iterator(corpus, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string ext = it->path().extension().string();
    const bool wanted = std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
    if (it->is_regular_file() && wanted && it->file_size() > size) {
      size = it->file_size();
      largest = it->path();
    }
  }
  return largest.string();
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_GUI_CORPUS_UTIL_H_
