// Shared by the cuda tests: where the corpus and ptxas are, the options that run the cuda
// platform on a GPU or, where there is none (CI), on the host's GPU emulator, and the skip for
// tests that need a real GPU.
#ifndef HLOWB_TESTS_UNIT_CUDA_CUDA_TEST_UTIL_H_
#define HLOWB_TESTS_UNIT_CUDA_CUDA_TEST_UTIL_H_

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

#include "replay/backends/cuda/cuda_backend.h"
#include "tests/unit/cpu/agreement.h"

namespace hlowb::testing {

// $HLOWB_CORPUS_DIR (the GPU machine's unpacked copy), else the build's corpus path.
inline std::string CudaCorpusDir() {
  if (const char* p = std::getenv("HLOWB_CORPUS_DIR"); p != nullptr && *p != 0) return p;
#ifdef HLOWB_CORPUS_DIR
  return HLOWB_CORPUS_DIR;
#else
  return "";
#endif
}

// ptxas from the CUDA toolkit ($CUDA_PATH/bin, /usr/local/cuda/bin), or "".
inline std::string FindPtxas() {
  for (const char* env : {"CUDA_PATH", "CUDA_HOME"}) {
    if (const char* p = std::getenv(env); p != nullptr && *p != 0) {
      std::string path = std::string(p) + "/bin/ptxas";
      if (std::filesystem::exists(path)) return path;
    }
  }
  for (const char* path : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

// Calls fn(label, module) for every module of `files` that parses, has an entry and verifies
// ("file.hlo", or "file.hlo#N" for the parts of a split file).
inline void ForEachVerifiedModule(const std::vector<std::string>& files,
                                  const std::function<void(const std::string&, const Module&)>& fn) {
  for (const std::string& path : files) {
    auto text = ReadFileToString(path);
    ASSERT_TRUE(text.ok()) << path;
    std::vector<std::string_view> parts = SplitInputFile(*text);
    for (size_t p = 0; p < parts.size(); ++p) {
      const std::string label = std::filesystem::path(path).filename().string() +
                                (parts.size() > 1 ? "#" + std::to_string(p) : "");
      auto module = ParseModule(parts[p]);
      if (!module.ok() || (*module)->entry() == nullptr) continue;
      if (CountErrors(VerifyModule(**module)) > 0) continue;
      fn(label, **module);
    }
  }
}

// Whether the cuda tests run on the GPU emulator here (no driver or GPU).
inline bool CudaOnEmulator() { return !CudaAvailable().ok(); }

// Compile options for the cuda tests: the GPU where there is one, the emulator otherwise.
inline CudaCompileOptions CudaTestOptions() {
  CudaCompileOptions o;
  o.emulate = CudaOnEmulator();
  return o;
}

inline CpuTolerance CudaElementTolerance(PrimitiveType t) {
  CudaTolerance c = CudaToleranceFor(t, /*dot=*/true);
  return {c.relative, c.absolute};
}

}  // namespace hlowb::testing

// Skips the test, saying why, where the cuda platform cannot run.
#define HLOWB_REQUIRE_CUDA()                                                        \
  do {                                                                              \
    absl::Status cuda_status = ::hlowb::CudaAvailable();                            \
    if (!cuda_status.ok()) GTEST_SKIP() << "no GPU here: " << cuda_status.message(); \
  } while (0)

#endif  // HLOWB_TESTS_UNIT_CUDA_CUDA_TEST_UTIL_H_
