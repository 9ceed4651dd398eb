// XLA FFI custom calls in our replay (`hlowb replay --custom_call_library=`): handlers built the
// way users build them (tests/ffi/), against jaxlib's FFI headers. The modules here are written
// by hand for what only a hand-written module pins down (layouts, futures, errors, versions);
// FfiCustomCall.ReplayAgreesWithJax runs a JAX program calling the handlers and checks that our
// replay of XLA's snapshot gives XLA's result.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::RunCommand;
using testing::RunHlowb;

class FfiCustomCall : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = HLOWB_FFI_TEST_LIBRARY;
    if (library_.empty()) {
      GTEST_SKIP() << "this build has no XLA FFI support: the FFI headers come with jaxlib "
                      "(scripts/setup installs it into .venv; reconfigure afterwards)";
    }
    dir_ = fs::temp_directory_path() /
           ("hlowb_ffi_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  // Replays `hlo` with the test handlers, `map` naming target=symbol pairs.
  testing::CommandResult Replay(const std::string& hlo, const std::string& map,
                                const std::string& extra = "--print_literals") {
    return RunHlowb("replay " + Write("m.hlo", hlo) + " --custom_call_library=" + library_ +
                    (map.empty() ? "" : "," + map) + " " + extra);
  }

  std::string library_;
  fs::path dir_;
};

// A handler that returns before its work is done and completes a future from another thread.
TEST_F(FfiCustomCall, AsyncHandlerIsWaitedFor) {
  auto r = Replay(R"(HloModule m
ENTRY e {
  c = f32[4] constant({1, 2, 3, 4})
  ROOT r = f32[4] custom-call(c), custom_call_target="add_one", api_version=API_VERSION_TYPED_FFI
})",
                  "add_one=HlowbTestAsyncAddOne");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("custom call \"add_one\" runs HlowbTestAsyncAddOne"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("result: f32[4] {2, 3, 4, 5}"), std::string::npos) << r.out;
}

// Buffers are handed over in the layout the HLO declares, and results read back from it: with
// a column-major f32[2,3]{0,1}, `mix` (out[i] = x[i] * weights[i % 3] by memory position) sees
// 1 4 2 5 3 6 and scales them by 1 10 100 1 10 100.
TEST_F(FfiCustomCall, BuffersUseTheDeclaredLayout) {
  auto r = Replay(R"(HloModule m
ENTRY e {
  c = f32[2,3]{0,1} constant({{1, 2, 3}, {4, 5, 6}})
  i = s32[2] constant({7, -1})
  ROOT r = (f32[2,3]{0,1}, s32[2]) custom-call(c, i), custom_call_target="mix", api_version=API_VERSION_TYPED_FFI, backend_config={mode = "increment", negate = false, offset = 0 : i64, weights = array<i64: 1, 10, 100>}
})",
                  "mix=HlowbTestMix");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("{ 1, 200, 30 }"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{ 40, 5, 600 }"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s32[2] {8, 0}"), std::string::npos) << r.out;
}

TEST_F(FfiCustomCall, HandlerErrorsReachTheUser) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  c = f32[3] constant({1, 2, 3})
  ROOT r = f32[3] custom-call(c), custom_call_target="t", api_version=API_VERSION_TYPED_FFI
})";
  auto refused = Replay(hlo, "t=HlowbTestFail");
  EXPECT_NE(refused.code, 0) << refused.out;
  EXPECT_NE(refused.out.find("the handler refused on purpose"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("HlowbTestFail"), std::string::npos) << refused.out;

  auto async = Replay(hlo, "t=HlowbTestAsyncFail");
  EXPECT_NE(async.code, 0) << async.out;
  EXPECT_NE(async.out.find("the asynchronous work failed on purpose"), std::string::npos)
      << async.out;

  // The binding's own check: mix wants two operands and four attributes.
  auto wrong = Replay(hlo, "t=HlowbTestMix");
  EXPECT_NE(wrong.code, 0) << wrong.out;
  EXPECT_NE(wrong.out.find("HlowbTestMix"), std::string::npos) << wrong.out;
}

TEST_F(FfiCustomCall, IncompatibleHandlersAreRefusedBeforeRunning) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  c = f32[3] constant({1, 2, 3})
  ROOT r = f32[3] custom-call(c), custom_call_target="t", api_version=API_VERSION_TYPED_FFI
})";
  auto newer = Replay(hlo, "t=HlowbTestFutureVersion");
  EXPECT_NE(newer.code, 0) << newer.out;
  EXPECT_NE(newer.out.find("was built against XLA FFI API"), std::string::npos) << newer.out;
  EXPECT_NE(newer.out.find("rebuild"), std::string::npos) << newer.out;
  EXPECT_EQ(newer.out.find("must not run"), std::string::npos) << newer.out;

  auto major = Replay(hlo, "t=HlowbTestOtherMajor");
  EXPECT_NE(major.code, 0) << major.out;
  EXPECT_NE(major.out.find("was built against XLA FFI API"), std::string::npos) << major.out;

  auto silent = Replay(hlo, "t=HlowbTestNoMetadata");
  EXPECT_NE(silent.code, 0) << silent.out;
  EXPECT_NE(silent.out.find("did not report its FFI API version"), std::string::npos)
      << silent.out;
}

TEST_F(FfiCustomCall, BadLibrariesMapsAndConfigsAreClearErrors) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  c = f32[3] constant({1, 2, 3})
  ROOT r = f32[3] custom-call(c), custom_call_target="t", api_version=API_VERSION_TYPED_FFI, backend_config={eps = 1.0 : f32}
})";
  auto missing_symbol = Replay(hlo, "t=NoSuchSymbol");
  EXPECT_NE(missing_symbol.code, 0);
  EXPECT_NE(missing_symbol.out.find("has no symbol 'NoSuchSymbol'"), std::string::npos)
      << missing_symbol.out;

  auto unmapped = Replay(hlo, "");
  EXPECT_NE(unmapped.code, 0);
  EXPECT_NE(unmapped.out.find("exports no handler"), std::string::npos) << unmapped.out;

  auto unknown_target = Replay(hlo, "other=HlowbTestRmsNorm");
  EXPECT_NE(unknown_target.code, 0);
  EXPECT_NE(unknown_target.out.find("no typed-FFI custom call to 'other'"), std::string::npos)
      << unknown_target.out;

  auto bad_map = Replay(hlo, "t");
  EXPECT_EQ(bad_map.code, 2) << bad_map.out;
  EXPECT_NE(bad_map.out.find("target=symbol"), std::string::npos) << bad_map.out;

  auto no_file = RunHlowb("replay " + Write("m.hlo", hlo) +
                          " --custom_call_library=" + (dir_ / "absent.so").string());
  EXPECT_NE(no_file.code, 0);
  EXPECT_NE(no_file.out.find("cannot load FFI handler library"), std::string::npos) << no_file.out;

  auto bad_config = RunHlowb(
      "replay " +
      Write("bad.hlo", R"(HloModule m
ENTRY e {
  c = f32[3] constant({1, 2, 3})
  ROOT r = f32[3] custom-call(c), custom_call_target="t", api_version=API_VERSION_TYPED_FFI, backend_config="{eps = 1.0 : f32"
})") +
      " --custom_call_library=" + library_ + ",t=HlowbTestRmsNorm");
  EXPECT_NE(bad_config.code, 0);
  EXPECT_NE(bad_config.out.find("backend_config: FFI attributes, offset"), std::string::npos)
      << bad_config.out;
}

// The whole path: a JAX program calls the handlers (registered with jax.ffi), XLA records a
// snapshot with its result, and our interpreter, calling the same handlers, agrees with it.
TEST_F(FfiCustomCall, ReplayAgreesWithJax) {
  const std::string python = std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python";
  if (access(python.c_str(), X_OK) != 0 || RunCommand(python + " -c 'import jax'").code != 0) {
    GTEST_SKIP() << "needs the pinned jax in " << HLOWB_SOURCE_DIR
                 << "/.venv (scripts/setup creates it)";
  }
  const fs::path dump = dir_ / "dump";
  auto ran = RunCommand("env JAX_PLATFORMS=cpu JAX_ENABLE_COMPILATION_CACHE=false XLA_FLAGS='"
                        "--xla_dump_to=" + dump.string() +
                        " --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"
                        " --xla_dump_hlo_snapshots --xla_dump_hlo_module_re=jit_ffi_prog' " +
                        python + " " + HLOWB_SOURCE_DIR + "/tests/ffi/ffi_program.py " + library_ +
                        " " + (dir_ / "out.npz").string());
  ASSERT_EQ(ran.code, 0) << ran.out;
  std::string snapshot, text;
  for (const auto& entry : fs::directory_iterator(dump)) {
    const std::string name = entry.path().filename().string();
    if (name.find("jit_ffi_prog.snapshot.") != std::string::npos) snapshot = entry.path().string();
    if (name.find("jit_ffi_prog.before_optimizations.txt") != std::string::npos) {
      text = entry.path().string();
    }
  }
  ASSERT_FALSE(snapshot.empty()) << "XLA wrote no snapshot of jit_ffi_prog";
  ASSERT_FALSE(text.empty());
  const std::string map = ",hlowb_rms_norm=HlowbTestRmsNorm,hlowb_mix=HlowbTestMix,"
                          "hlowb_dict_scale=HlowbTestDictScale";

  auto replay = RunHlowb("replay " + snapshot + " --custom_call_library=" + library_ + map);
  ASSERT_EQ(replay.code, 0) << replay.out;
  EXPECT_NE(replay.out.find("comparison with snapshot result: OK: 3 outputs"), std::string::npos)
      << replay.out;
  for (const char* target : {"hlowb_rms_norm", "hlowb_mix", "hlowb_dict_scale"}) {
    EXPECT_NE(replay.out.find(std::string("custom call \"") + target + "\" runs"),
              std::string::npos)
        << replay.out;
  }

  // XLA itself, in the xla-cpu helper, runs the same handlers and agrees.
  auto against_xla = RunHlowb("replay " + snapshot + " --reference_platform=xla-cpu" +
                              " --custom_call_library=" + library_ + map);
  ASSERT_EQ(against_xla.code, 0) << against_xla.out;
  EXPECT_NE(against_xla.out.find("comparison with reference platform xla-cpu: OK: 3 outputs"),
            std::string::npos)
      << against_xla.out;

  // Without the library the same replay cannot compute the calls.
  auto without = RunHlowb("replay " + snapshot);
  EXPECT_NE(without.code, 0) << without.out;
  EXPECT_NE(without.out.find("no handler computes"), std::string::npos) << without.out;

  // With zeros in place of one handler the result no longer matches XLA's.
  auto zeros = RunHlowb("replay " + snapshot + " --custom_call_library=" + library_ +
                        ",hlowb_rms_norm=HlowbTestRmsNorm,hlowb_mix=HlowbTestMix"
                        " --custom_call_fallback=zeros");
  EXPECT_NE(zeros.out.find("comparison with snapshot result: MISMATCH"), std::string::npos)
      << zeros.out;
}

}  // namespace
}  // namespace hlowb
