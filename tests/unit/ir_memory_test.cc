// The IR must stay compact: a parsed module may hold at most 10x the bytes of its text.
// Live heap bytes are counted by replacing the global allocation functions for this test
// binary (malloc_usable_size gives the real block size, allocator rounding included).
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <vector>

#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace {
std::atomic<int64_t> g_live_bytes{0};
}  // namespace

// Every form of the global allocation functions is replaced (plain, array, nothrow, aligned,
// sized), all on malloc/posix_memalign and free, so that whatever form the standard library or
// a sanitizer's runtime picks, an allocation and its release meet the same pair. Replacing only
// some forms lets, e.g., a `new (std::nothrow)` buffer reach the replaced `delete`, which
// AddressSanitizer rightly reports as a new/free mismatch.
// The replacements pair malloc with free by design; GCC cannot see that through them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
void* CountedAlloc(size_t n, size_t align) noexcept {
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n ? n : 1);
  } else if (posix_memalign(&p, align, n ? n : 1) != 0) {
    p = nullptr;
  }
  if (p) g_live_bytes += static_cast<int64_t>(malloc_usable_size(p));
  return p;
}
void CountedFree(void* p) noexcept {
  if (!p) return;
  g_live_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}
void* CountedAllocOrThrow(size_t n, size_t align) {
  void* p = CountedAlloc(n, align);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(size_t n) { return CountedAllocOrThrow(n, 0); }
void* operator new[](size_t n) { return CountedAllocOrThrow(n, 0); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return CountedAlloc(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return CountedAlloc(n, 0); }
void* operator new(size_t n, std::align_val_t a) {
  return CountedAllocOrThrow(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return CountedAllocOrThrow(n, static_cast<size_t>(a));
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return CountedAlloc(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return CountedAlloc(n, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  CountedFree(p);
}
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

// Every allocation form is counted and released through the same pair: what std::stable_sort's
// nothrow buffer and over-aligned objects use included.
TEST(IrMemory, EveryAllocationFormIsCountedAndReleased) {
  struct alignas(256) Wide {
    char bytes[256];
  };
  const int64_t before = g_live_bytes.load();
  char* nothrow = new (std::nothrow) char[4096];
  ASSERT_NE(nothrow, nullptr);
  Wide* wide = new Wide;
  Wide* wides = new Wide[4];
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wides) % 256, 0u);
  EXPECT_GE(g_live_bytes.load() - before, 4096 + 256 + 4 * 256);
  delete[] nothrow;
  delete wide;
  delete[] wides;
  std::vector<int> v(10000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>((i * 7919) % 10000);
  std::stable_sort(v.begin(), v.end());  // takes a temporary buffer with nothrow new
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  v.clear();
  v.shrink_to_fit();
  EXPECT_LT(g_live_bytes.load() - before, 1024);
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
