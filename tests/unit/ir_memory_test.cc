// The IR must stay compact: a parsed module may hold at most 10x the bytes of its text.
// Live heap bytes are counted by replacing the global allocation functions for this test
// binary (malloc_usable_size gives the real block size, allocator rounding included).
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace {
std::atomic<int64_t> g_live_bytes{0};
}  // namespace

// These replacements pair malloc with free by design; GCC cannot see that through the
// replaced operators.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  g_live_bytes += static_cast<int64_t>(malloc_usable_size(p));
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  if (!p) return;
  g_live_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
#pragma GCC diagnostic pop

namespace hlowb {
namespace {

namespace fs = std::filesystem;

int64_t LiveBytesOfModule(const std::string& text) {
  int64_t before = g_live_bytes.load();
  auto module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  int64_t after = g_live_bytes.load();
  return after - before;
}

TEST(IrMemory, CountingWorks) {
  int64_t before = g_live_bytes.load();
  auto* block = new std::vector<char>(1 << 20);
  EXPECT_GE(g_live_bytes.load() - before, 1 << 20);
  delete block;
  EXPECT_LT(g_live_bytes.load() - before, 1024);
}

TEST(IrMemory, AtMostTenTimesTheText) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(HLOWB_CORPUS_DIR, ec)) {
    if (e.is_regular_file() && e.file_size() > 20000 && e.path().extension() == ".hlo") {
      files.push_back(e.path());
    }
  }
  if (files.empty()) GTEST_SKIP() << "no corpus modules above 20 kB at " << HLOWB_CORPUS_DIR;
  for (const fs::path& f : files) {
    auto text = ReadFileToString(f.string());
    ASSERT_TRUE(text.ok());
    int64_t bytes = LiveBytesOfModule(*text);
    double ratio = static_cast<double>(bytes) / static_cast<double>(text->size());
    std::printf("%s: text %zu bytes, IR %lld bytes, %.2fx\n", f.filename().c_str(), text->size(),
                static_cast<long long>(bytes), ratio);
    EXPECT_LE(ratio, 10.0) << f;
  }
}

}  // namespace
}  // namespace hlowb
