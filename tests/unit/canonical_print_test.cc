// XLA's canonical and fingerprint forms (`hlowb print --format=canonical|fingerprint`):
// structure checks that run everywhere, and, when the pinned jax is installed, the text
// compared byte for byte with what the installed XLA prints for the same files (the corpus and
// a pass-by-pass dump of real JAX programs).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dump/dump_names.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

std::string Print(const std::string& text, const PrintOptions& options) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? PrintModule(**m, options) : "";
}

std::vector<std::string> InstructionNames(const Computation& comp) {
  std::vector<std::string> names;
  for (const Instruction* i : XlaInstructionPostOrder(comp)) names.push_back(i->name());
  return names;
}

TEST(XlaPostOrder, ControlPredecessorsThenOperandsFirstToLast) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  k = s32[] parameter(1)
  p = f32[4] parameter(0)
  dead = f32[4] negate(p)
  f = f32[4] exponential(p)
  r = f32[4] sine(p)
  c = f32[4] add(k2, r), control-predecessors={f}
  k2 = f32[4] broadcast(k), dimensions={}
  ROOT t = (f32[4], f32[4]) tuple(c, f)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  // Walks start at instructions without users, in the computation's order: `dead` first.
  // Inside a walk, control predecessors come before operands, operands first to last.
  EXPECT_EQ(InstructionNames(*(*m)->entry()),
            (std::vector<std::string>{"p", "dead", "f", "k", "k2", "r", "c", "t"}));
}

TEST(XlaPostOrder, CollectivesFollowTheirOperandsOnly) {
  auto m = ParseModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  first = f32[4] all-reduce(p), channel_id=7, replica_groups={}, to_apply=add
  q = f32[4] negate(p)
  second = f32[4] all-reduce(q), channel_id=7, replica_groups={}, to_apply=add
  ROOT t = (f32[4], f32[4]) tuple(second, first)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  // No ordering by channel: `second`, the root's first operand, comes before `first` (as the
  // installed XLA prints it; CanonicalPrint.HandWrittenModulesMatchXla checks this module).
  EXPECT_EQ(InstructionNames(*(*m)->entry()),
            (std::vector<std::string>{"p", "q", "second", "first", "t"}));
}

TEST(XlaPostOrder, ComputationsAfterWhatTheyCallBodyBeforeCondition) {
  auto m = ParseModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  v = f32[4] get-tuple-element(p), index=1
  z = f32[] constant(0)
  r = f32[] reduce(v, z), dimensions={0}, to_apply=add
  i = s32[] get-tuple-element(p), index=0
  ROOT t = (s32[], f32[4]) tuple(i, v)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, x)
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body
})");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> names;
  for (const Computation* c : XlaComputationPostOrder(**m)) names.push_back(c->name());
  EXPECT_EQ(names, (std::vector<std::string>{"add", "body", "cond", "e"}));
}

// The text XLA 0.10 writes for this module with HloPrintOptions::Canonical() (checked against
// the installed XLA in CanonicalPrint.HandWrittenModulesMatchXla).
constexpr char kReduceModule[] = R"(HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[]}

add.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main.7 {
  p0 = f32[4]{0} parameter(0), metadata={op_name="x"}
  p1 = f32[4]{0} parameter(1)
  m = f32[4]{0} multiply(p0, p1)
  c = f32[] constant(0)
  c2 = f32[4] constant({1.5, 2, 3, 4})
  m2 = f32[4] add(m, c2)
  ROOT r = f32[] reduce(m2, c), dimensions={0}, to_apply=add.1
}
)";

TEST(CanonicalPrint, NamesOrderBodiesAndLayouts) {
  EXPECT_EQ(Print(kReduceModule, PrintOptions::CanonicalForm()),
            R"(HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[]}

add.1 {
  tmp_0 = f32[] parameter(0)
  tmp_1 = f32[] parameter(1)
  ROOT tmp_2 = f32[] add(f32[] tmp_0, f32[] tmp_1)
}

ENTRY main.7 {
  tmp_0 = f32[4]{0} parameter(0)
  tmp_1 = f32[4]{0} parameter(1)
  tmp_2 = f32[4]{0} multiply(f32[4]{0} tmp_0, f32[4]{0} tmp_1)
  tmp_3 = f32[4]{0} constant({1.5, 2, 3, 4})
  tmp_4 = f32[4]{0} add(f32[4]{0} tmp_2, f32[4]{0} tmp_3)
  tmp_5 = f32[] constant(0)
  ROOT tmp_6 = f32[] reduce(f32[4]{0} tmp_4, f32[] tmp_5), dimensions={0}, to_apply=
  {
    tmp_0 = f32[] parameter(0)
    tmp_1 = f32[] parameter(1)
    ROOT tmp_2 = f32[] add(f32[] tmp_0, f32[] tmp_1)
  }
}

)");
}

TEST(CanonicalPrint, FingerprintDropsNamesAndInessentialConstants) {
  const std::string printed = Print(R"(HloModule named
ENTRY e {
  zeros = f32[2,2] constant({{0, 0}, {0, 0}})
  ones = f32[3] constant({1, 1, 1})
  ints = s32[12] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  weight = f32[] constant(2.5)
  small = f32[2] constant({0.5, 3})
  i = (f32[4], token[]) infeed(tok), infeed_config="cfg"
  tok = token[] after-all()
  ROOT t = (f32[2,2], f32[3], s32[12], f32[], f32[2]) tuple(zeros, ones, ints, weight, small)
})",
                                    PrintOptions::FingerprintForm());
  EXPECT_EQ(printed.rfind("HloModule , entry_computation_layout=", 0), 0u) << printed;
  EXPECT_NE(printed.find("\nENTRY {\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f32[2,2]{1,0} constant(0)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f32[3]{0} constant(1)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("s32[12]{0} constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("f32[] constant({...})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f32[2]{0} constant({...})"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("infeed_config"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("named"), std::string::npos) << printed;
  // The canonical form keeps small constants and elides those of more than 10 elements.
  const std::string canonical = Print(R"(HloModule m
ENTRY e {
  ten = f32[10] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  eleven = f32[11] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
  ROOT t = (f32[10], f32[11]) tuple(ten, eleven)
})",
                                      PrintOptions::CanonicalForm());
  EXPECT_NE(canonical.find("constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})"), std::string::npos);
  EXPECT_NE(canonical.find("f32[11]{0} constant({...})"), std::string::npos) << canonical;
}

TEST(CanonicalPrint, CliFormats) {
  const fs::path file =
      fs::temp_directory_path() / ("hlowb_canonical_" + std::to_string(getpid()) + ".hlo");
  ASSERT_TRUE(WriteStringToFile(file.string(), kReduceModule).ok());
  auto canonical = testing::RunHlowb("print " + file.string() + " --format=canonical");
  EXPECT_EQ(canonical.code, 0);
  EXPECT_EQ(canonical.out, Print(kReduceModule, PrintOptions::CanonicalForm()));
  auto fingerprint = testing::RunHlowb("print " + file.string() + " --format=fingerprint");
  EXPECT_EQ(fingerprint.code, 0);
  EXPECT_EQ(fingerprint.out, Print(kReduceModule, PrintOptions::FingerprintForm()));
  auto bad = testing::RunHlowb("print " + file.string() + " --format=canon");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("canonical or fingerprint"), std::string::npos) << bad.out;
  fs::remove(file);
}

// --- Against the installed XLA -------------------------------------------------------------

std::string Python() { return std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python"; }

bool HaveJax() {
  static const bool have = access(Python().c_str(), X_OK) == 0 &&
                           testing::RunCommand(Python() + " -c 'import jax'").code == 0;
  return have;
}

// What XLA prints for each file in `mode`; std::nullopt where XLA cannot parse it.
std::vector<std::optional<std::string>> XlaPrints(const std::string& mode,
                                                  const std::vector<std::string>& files) {
  const fs::path out = fs::temp_directory_path() /
                       ("hlowb_xla_print_" + mode + "_" + std::to_string(getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  std::string cmd = Python() + " " + HLOWB_SOURCE_DIR + "/tests/conformance/xla_print.py " +
                    mode + " " + out.string();
  for (const std::string& f : files) cmd += " '" + f + "'";
  auto ran = testing::RunCommand(cmd);
  EXPECT_EQ(ran.code, 0) << ran.out;
  std::vector<std::optional<std::string>> prints;
  for (size_t i = 0; i < files.size(); ++i) {
    auto text = ReadFileToString((out / (std::to_string(i) + ".txt")).string());
    prints.push_back(text.ok() ? std::optional<std::string>(*text) : std::nullopt);
  }
  fs::remove_all(out);
  return prints;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The lines of `a` and `b` that differ, "a-line | b-line".
std::vector<std::string> DifferingLines(const std::string& a, const std::string& b) {
  std::vector<std::string> la = Lines(a), lb = Lines(b);
  std::vector<std::string> out;
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    std::string x = i < la.size() ? la[i] : "<none>", y = i < lb.size() ? lb[i] : "<none>";
    if (x != y) out.push_back(x + " | " + y);
  }
  return out;
}

// Modules written for the constructs the corpus lacks: while, conditional with branches,
// fusion, scheduled modules, control predecessors, iota replica groups, infeed configs,
// statistics, custom calls calling computations, every constant form.
const char* const kHandWritten[] = {
    kReduceModule,
    R"(HloModule m7

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  first = f32[4] all-reduce(p), channel_id=7, replica_groups={}, to_apply=add
  q = f32[4] negate(p)
  second = f32[4] all-reduce(q), channel_id=7, replica_groups={}, to_apply=add
  ROOT t = (f32[4], f32[4]) tuple(second, first)
}
)",
    R"(HloModule m2, is_scheduled=false

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[12]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[12]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[12] get-tuple-element(p), index=1
  big = f32[12] constant({1,2,3,4,5,6,7,8,9,10,11,12.5})
  v2 = f32[12] add(v, big)
  ROOT t = (s32[], f32[12]) tuple(i2, v2)
}

fused {
  a = f32[12] parameter(0)
  b = f32[12] parameter(1)
  ROOT m = f32[12] multiply(a, b)
}

br0 {
  x = f32[12] parameter(0)
  ROOT n = f32[12] negate(x)
}

br1 {
  x = f32[12] parameter(0)
  ROOT e = f32[12] exponential(x)
}

ENTRY e {
  p0 = f32[12] parameter(0), sharding={replicated}
  k = s32[] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[12]) tuple(z, p0)
  w = (s32[], f32[12]) while(t), condition=cond, body=body, backend_config={"known_trip_count":{"n":"10"}}
  r = f32[12] get-tuple-element(w), index=1
  f = f32[12] fusion(r, p0), kind=kLoop, calls=fused, metadata={op_name="jit(f)/mul"}
  c = f32[12] conditional(k, f, r), branch_computations={br0, br1}, control-predecessors={f}
  ar = f32[12] all-reduce(c), replica_groups=[2,2]<=[4], to_apply=add, channel_id=3
  ROOT out = (f32[12], f32[12]) tuple(c, ar)
}

)",
    R"(HloModule m3

sub {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}

ENTRY e {
  a = f32[4] constant({0, 0, 0, 0})
  b = f32[4] constant({1, 1, 1, 1})
  c = s32[4] constant({1, 2, 3, 4})
  d = s32[12] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  e2 = f32[] constant(2.5)
  f = f32[] constant(3)
  g = f32[10] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  h = f32[11] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
  i = pred[2] constant({true, false})
  j = f32[2,2] constant({{0, 0}, {0, 0}})
  k = (f32[], s32[]) constant((1, 2))
  infv = f32[] constant(inf)
  s = f32[4] add(a, b), statistics={visualizing_index=1,stat-0=0.5}
  tok = token[] after-all()
  inf1 = (f32[4], token[]) infeed(tok), infeed_config="abc"
  cp = f32[4] custom-call(s), custom_call_target="foo", called_computations={sub}, backend_config={"x":1}
  ROOT t = (f32[4], f32[4], s32[4], s32[12], f32[], f32[], f32[10], f32[11], pred[2], f32[2,2], (f32[], s32[]), f32[], f32[4]) tuple(a, b, c, d, e2, f, g, h, i, j, k, infv, s)
}
)",
    R"(HloModule m5, is_scheduled=true

add {
  b = f32[] parameter(1)
  a = f32[] parameter(0)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  n = s32[] constant(10)
  i = s32[] get-tuple-element(p), index=0
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]) parameter(0)
  one = s32[] constant(1)
  i = s32[] get-tuple-element(p), index=0
  i2 = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[4]) tuple(i2, v)
}

fused {
  y = f32[4] parameter(1)
  x = f32[4] parameter(0)
  ROOT m = f32[4] multiply(x, y)
}

callee {
  q = f32[4] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[] reduce(q, c), dimensions={0}, to_apply=add
}

ENTRY e {
  p0 = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, p0)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  f = f32[4] fusion(r, p0), kind=kLoop, calls=fused
  ROOT k = f32[] call(f), to_apply=callee
}
)",
    R"(HloModule m6

ENTRY e {
  a = s32[2,1,2,2] constant({ { { {1, 2}, {3, 4} } }, { { {5, 6}, {7, 8} } } })
  b = s32[1,1,1,1] constant({ { { {9} } } })
  ROOT t = (s32[2,1,2,2], s32[1,1,1,1]) tuple(a, b)
}
)",
};

TEST(CanonicalPrint, HandWrittenModulesMatchXla) {
  if (!HaveJax()) GTEST_SKIP() << "needs the pinned jax in .venv (scripts/setup creates it)";
  const fs::path dir =
      fs::temp_directory_path() / ("hlowb_canonical_hand_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (size_t i = 0; i < std::size(kHandWritten); ++i) {
    files.push_back((dir / (std::to_string(i) + ".hlo")).string());
    ASSERT_TRUE(WriteStringToFile(files.back(), kHandWritten[i]).ok());
  }
  for (const char* mode : {"canonical", "fingerprint"}) {
    const auto xla = XlaPrints(mode, files);
    for (size_t i = 0; i < files.size(); ++i) {
      ASSERT_TRUE(xla[i].has_value()) << "XLA cannot parse hand-written module " << i;
      EXPECT_EQ(Print(kHandWritten[i], std::string(mode) == "canonical"
                                           ? PrintOptions::CanonicalForm()
                                           : PrintOptions::FingerprintForm()),
                *xla[i])
          << mode << ", module " << i;
    }
  }
  fs::remove_all(dir);
}

TEST(CanonicalPrint, CorpusMatchesXla) {
  if (!HaveJax()) GTEST_SKIP() << "needs the pinned jax in .venv (scripts/setup creates it)";
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(HLOWB_CORPUS_DIR), ec)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".hlo" || ext == ".txt")) files.push_back(e.path().string());
  }
  if (files.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";
  std::sort(files.begin(), files.end());
  for (const char* mode : {"canonical", "fingerprint"}) {
    const PrintOptions options = std::string(mode) == "canonical"
                                     ? PrintOptions::CanonicalForm()
                                     : PrintOptions::FingerprintForm();
    const auto xla = XlaPrints(mode, files);
    int compared = 0, identical = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      if (!xla[i]) continue;
      auto text = ReadFileToString(files[i]);
      ASSERT_TRUE(text.ok());
      const std::string ours = Print(*text, options);
      ++compared;
      if (ours == *xla[i]) {
        ++identical;
        continue;
      }
      // Two differences are XLA's and expected; every other line must agree:
      // - XLA's text parser reads the literal `-0` as the integer 0, so a float constant written
      //   `constant(-0)` comes back as +0; we keep the value the file wrote.
      // - XLA fills a constant the file elided (`{...}`) with made-up counting values, which
      //   the fingerprint form then prints for integer constants; we keep `{...}`.
      for (const std::string& d : DifferingLines(*xla[i], ours)) {
        const size_t bar = d.find(" | ");
        const std::string x = d.substr(0, bar), y = bar == std::string::npos ? "" : d.substr(bar + 3);
        const bool negative_zero = x.find("constant(0)") != std::string::npos &&
                                   y.find("constant(-0)") != std::string::npos;
        const size_t open = y.find("constant({...})");
        const bool elided_fill = open != std::string::npos && x.compare(0, open, y, 0, open) == 0;
        EXPECT_TRUE(negative_zero || elided_fill)
            << mode << " " << files[i] << ": XLA | ours:\n" << d.substr(0, 600);
      }
    }
    std::printf("corpus, %s form: %d of %d modules XLA parses print identically to XLA\n", mode,
                identical, compared);
    EXPECT_GE(compared, 80);
    EXPECT_GE(identical, compared - 1);
  }
}

TEST(CanonicalPrint, RealJaxDumpsMatchXla) {
  if (!HaveJax()) GTEST_SKIP() << "needs the pinned jax in .venv (scripts/setup creates it)";
  const fs::path dir = fs::temp_directory_path() / ("hlowb_canonical_jax_" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto made = testing::RunCommand("XLA_FLAGS='--xla_dump_hlo_pass_re=.*' " + Python() + " " +
                                  HLOWB_SOURCE_DIR + "/tests/benchmarks/jax_programs.py " +
                                  dir.string());
  ASSERT_EQ(made.code, 0) << made.out;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    DumpName parsed = ParseDumpFileName(entry.path().filename().string());
    if (IsModuleStateKind(parsed.kind) && parsed.suffix == ".txt") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 100u);
  for (const char* mode : {"canonical", "fingerprint"}) {
    const PrintOptions options = std::string(mode) == "canonical"
                                     ? PrintOptions::CanonicalForm()
                                     : PrintOptions::FingerprintForm();
    const auto xla = XlaPrints(mode, files);
    int identical = 0;
    std::string first_failure;
    for (size_t i = 0; i < files.size(); ++i) {
      ASSERT_TRUE(xla[i].has_value()) << "XLA cannot parse its own dump " << files[i];
      auto text = ReadFileToString(files[i]);
      ASSERT_TRUE(text.ok());
      const std::string ours = Print(*text, options);
      if (ours == *xla[i]) {
        ++identical;
      } else if (first_failure.empty()) {
        const auto d = DifferingLines(*xla[i], ours);
        first_failure = files[i] + ": XLA | ours:\n" + (d.empty() ? "" : d[0]);
      }
    }
    std::printf("jax dumps, %s form: %d of %zu states print identically to XLA\n", mode,
                identical, files.size());
    EXPECT_EQ(identical, static_cast<int>(files.size())) << first_failure;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
