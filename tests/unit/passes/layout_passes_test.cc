// Golden tests for layout-assignment and layout_normalization, plus a run of both over the
// shared corpus (verifier clean, same values on fake data where the interpreter is quick).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/layout_assignment.h"
#include "core/passes/layout_normalization.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

using testing::ExpectNoChange;
using testing::ExpectRewrite;
using testing::MakeTestContext;
using testing::Normalize;
using testing::ParseOrDie;

// ---------------------------------------------------------------- layout-assignment

TEST(LayoutAssignmentTest, EntryLayoutHonoured) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(p)
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
})");
}

TEST(LayoutAssignmentTest, EntryLayoutRecordedWhenAbsent) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
})");
}

TEST(LayoutAssignmentTest, DotOperandWithMinorBatchGetsCopy) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3,4]{0,2,1}, f32[2,4,5]{2,1,0})->f32[2,3,5]{2,1,0}}
ENTRY e {
  a = f32[2,3,4]{0,2,1} parameter(0)
  b = f32[2,4,5]{2,1,0} parameter(1)
  ROOT d = f32[2,3,5]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3,4]{0,2,1}, f32[2,4,5]{2,1,0})->f32[2,3,5]{2,1,0}}
ENTRY e {
  a = f32[2,3,4]{0,2,1} parameter(0)
  b = f32[2,4,5]{2,1,0} parameter(1)
  copy = f32[2,3,4]{2,1,0} copy(a)
  ROOT d = f32[2,3,5]{2,1,0} dot(copy, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
}

TEST(LayoutAssignmentTest, CpuDotTakesTransposedOperand) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[3,2]{1,0}, f32[3,4]{1,0})->f32[2,4]{1,0}}
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  t = f32[2,3]{1,0} transpose(a), dimensions={1,0}
  ROOT d = f32[2,4]{1,0} dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                R"(
HloModule m, entry_computation_layout={(f32[3,2]{1,0}, f32[3,4]{1,0})->f32[2,4]{1,0}}
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  t = f32[2,3]{0,1} transpose(a), dimensions={1,0}
  ROOT d = f32[2,4]{1,0} dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(LayoutAssignmentTest, GpuDotTakesTransposedOperand) {
  LayoutAssignment pass("gpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[3,2]{1,0}, f32[3,4]{1,0})->f32[2,4]{1,0}}
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  t = f32[2,3]{1,0} transpose(a), dimensions={1,0}
  ROOT d = f32[2,4]{1,0} dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                R"(
HloModule m, entry_computation_layout={(f32[3,2]{1,0}, f32[3,4]{1,0})->f32[2,4]{1,0}}
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  t = f32[2,3]{0,1} transpose(a), dimensions={1,0}
  ROOT d = f32[2,4]{1,0} dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(LayoutAssignmentTest, TransposeMadeBitcastAndRootCopied) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3,2]{1,0}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT t = f32[3,2]{1,0} transpose(p), dimensions={1,0}
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3,2]{1,0}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{0,1} transpose(p), dimensions={1,0}
  ROOT copy = f32[3,2]{1,0} copy(t)
})");
}

TEST(LayoutAssignmentTest, ReshapeMadeBitcast) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3,4]{0,2,1})->f32[2,12]{1,0}}
ENTRY e {
  p = f32[2,3,4]{2,1,0} parameter(0)
  ROOT r = f32[2,12]{1,0} reshape(p)
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3,4]{0,2,1})->f32[2,12]{1,0}}
ENTRY e {
  p = f32[2,3,4]{0,2,1} parameter(0)
  r = f32[2,12]{0,1} reshape(p)
  ROOT copy = f32[2,12]{1,0} copy(r)
})");
}

TEST(LayoutAssignmentTest, ElementwiseFollowsOperand) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1}, f32[2,3]{1,0})->f32[2,3]{0,1}}
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  c = f32[] constant(2)
  bc = f32[2,3]{1,0} broadcast(c), dimensions={}
  m = f32[2,3]{1,0} multiply(a, bc)
  ROOT s = f32[2,3]{1,0} add(m, b)
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1}, f32[2,3]{1,0})->f32[2,3]{0,1}}
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  c = f32[] constant(2)
  bc.1 = f32[2,3]{0,1} broadcast(c), dimensions={}
  m = f32[2,3]{0,1} multiply(a, bc.1)
  copy = f32[2,3]{0,1} copy(b)
  ROOT s = f32[2,3]{0,1} add(m, copy)
})");
}

constexpr char kWhileLoop[] = R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{1,0}}
body {
  bp = (s32[], f32[2,3]{1,0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[2,3]{1,0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[2,3]{1,0} add(x, x)
  ROOT bt = (s32[], f32[2,3]{1,0}) tuple(i1, x1)
}
cond {
  cp = (s32[], f32[2,3]{1,0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2,3]{1,0}) tuple(z, p)
  w = (s32[], f32[2,3]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[2,3]{1,0} get-tuple-element(w), index=1
})";

TEST(LayoutAssignmentTest, WhileLoopCarriesOperandLayout) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, kWhileLoop, R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{1,0}}
body {
  bp = (s32[], f32[2,3]{0,1}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[2,3]{0,1} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[2,3]{0,1} add(x, x)
  ROOT bt = (s32[], f32[2,3]{0,1}) tuple(i1, x1)
}
cond {
  cp = (s32[], f32[2,3]{0,1}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2,3]{0,1}) tuple(z, p)
  w = (s32[], f32[2,3]{0,1}) while(init), condition=cond, body=body
  r = f32[2,3]{0,1} get-tuple-element(w), index=1
  ROOT copy = f32[2,3]{1,0} copy(r)
})");
}

TEST(LayoutAssignmentTest, BitcastKeepsItsOperandLayout) {
  LayoutAssignment pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[3,2]{1,0}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT b = f32[3,2]{1,0} bitcast(p)
})",
                R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[3,2]{1,0}}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  copy = f32[2,3]{1,0} copy(p)
  ROOT b = f32[3,2]{1,0} bitcast(copy)
})",
                /*check_semantics=*/false);
}

TEST(LayoutAssignmentTest, AlreadyLaidOutIsUnchanged) {
  LayoutAssignment pass("cpu");
  ExpectNoChange(pass, R"(
HloModule m, entry_computation_layout={(f32[3,2]{1,0}, f32[2,4]{1,0})->f32[3,4]{1,0}}
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[2,4]{1,0} parameter(1)
  d = f32[3,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[3,4]{1,0} negate(d)
})");
  ExpectNoChange(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(p)
})");
}

TEST(LayoutAssignmentTest, FuelZeroChangesNothing) {
  LayoutAssignment pass("cpu");
  PassContext context = MakeTestContext();
  context.mutable_options().fuel["layout-assignment"] = 0;
  ExpectNoChange(pass, R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(p)
})",
                 &context);
}

TEST(LayoutAssignmentTest, UnknownTargetIsAnError) {
  LayoutAssignment pass("tpu");
  std::unique_ptr<Module> m = ParseOrDie("ENTRY e {\n ROOT p = f32[2] parameter(0)\n}");
  ASSERT_NE(m, nullptr);
  PassContext context = MakeTestContext();
  EXPECT_FALSE(pass.Run(m.get(), context).ok());
}

// ---------------------------------------------------------------- layout_normalization

TEST(LayoutNormalizationTest, CopyBecomesTranspose) {
  LayoutNormalization pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT c = f32[2,3]{0,1} copy(p)
})",
                R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  transpose = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  ROOT bitcast = f32[2,3]{0,1} bitcast(transpose)
})");
}

TEST(LayoutNormalizationTest, ElementwiseOnPhysicalShape) {
  LayoutNormalization pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  c = f32[] constant(2)
  ROOT n = f32[2,3]{0,1} multiply(p, p)
})",
                R"(
HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  c = f32[] constant(2)
  bitcast = f32[3,2]{1,0} bitcast(p)
  n.1 = f32[3,2]{1,0} multiply(bitcast, bitcast)
  ROOT bitcast.1 = f32[2,3]{0,1} bitcast(n.1)
})");
}

TEST(LayoutNormalizationTest, TransposeMadeBitcast) {
  LayoutNormalization pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{0,1} transpose(p), dimensions={1,0}
  ROOT n = f32[3,2]{0,1} negate(t)
})",
                R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  n.1 = f32[2,3]{1,0} negate(p)
  ROOT bitcast = f32[3,2]{0,1} bitcast(n.1)
})");
}

TEST(LayoutNormalizationTest, ReduceAndBroadcastOnPhysicalShape) {
  LayoutNormalization pass;
  ExpectRewrite(pass, R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[2,3,4]{0,2,1} parameter(0)
  z = f32[] constant(0)
  r = f32[2,4]{0,1} reduce(p, z), dimensions={1}, to_apply=add
  ROOT b = f32[2,4,5]{0,1,2} broadcast(r), dimensions={0,1}
})",
                R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[2,3,4]{0,2,1} parameter(0)
  z = f32[] constant(0)
  bitcast = f32[3,4,2]{2,1,0} bitcast(p)
  r.1 = f32[4,2]{1,0} reduce(bitcast, z), dimensions={0}, to_apply=add
  b.1 = f32[5,4,2]{2,1,0} broadcast(r.1), dimensions={1,2}
  ROOT bitcast.1 = f32[2,4,5]{0,1,2} bitcast(b.1)
})");
}

TEST(LayoutNormalizationTest, WhileLoopCarriesPhysicalShapes) {
  LayoutNormalization pass;
  ExpectRewrite(pass, R"(
HloModule m
body {
  bp = (s32[], f32[2,3]{0,1}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[2,3]{0,1} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[2,3]{0,1} add(x, x)
  ROOT bt = (s32[], f32[2,3]{0,1}) tuple(i1, x1)
}
cond {
  cp = (s32[], f32[2,3]{0,1}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2,3]{0,1}) tuple(z, p)
  w = (s32[], f32[2,3]{0,1}) while(init), condition=cond, body=body
  ROOT r = f32[2,3]{0,1} get-tuple-element(w), index=1
})",
                R"(
HloModule m
body {
  bp = (s32[], f32[3,2]{1,0}) parameter(0)
  one = s32[] constant(1)
  i.1 = s32[] get-tuple-element(bp), index=0
  x.1 = f32[3,2]{1,0} get-tuple-element(bp), index=1
  i1.1 = s32[] add(i.1, one)
  x1.1 = f32[3,2]{1,0} add(x.1, x.1)
  ROOT bt.1 = (s32[], f32[3,2]{1,0}) tuple(i1.1, x1.1)
}
cond {
  cp = (s32[], f32[3,2]{1,0}) parameter(0)
  n = s32[] constant(3)
  ci.1 = s32[] get-tuple-element(cp), index=0
  ROOT lt.1 = pred[] compare(ci.1, n), direction=LT
}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  z = s32[] constant(0)
  bitcast = f32[3,2]{1,0} bitcast(p)
  init.1 = (s32[], f32[3,2]{1,0}) tuple(z, bitcast)
  w.1 = (s32[], f32[3,2]{1,0}) while(init.1), condition=cond, body=body
  r.1 = f32[3,2]{1,0} get-tuple-element(w.1), index=1
  ROOT bitcast.1 = f32[2,3]{0,1} bitcast(r.1)
})");
}

TEST(LayoutNormalizationTest, DefaultLayoutsAreUnchanged) {
  LayoutNormalization pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  ROOT n = f32[3,2]{1,0} negate(t)
})");
}

TEST(LayoutNormalizationTest, FuelZeroChangesNothing) {
  LayoutNormalization pass;
  PassContext context = MakeTestContext();
  context.mutable_options().fuel["layout_normalization"] = 0;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT c = f32[2,3]{0,1} copy(p)
})",
                 &context);
}

// ---------------------------------------------------------------- corpus

bool HasOpcode(const Module& m, Opcode op) {
  for (const auto& c : m.computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->opcode() == op) return true;
    }
  }
  return false;
}

bool HasElidedConstant(const Module& m) {
  for (const auto& c : m.computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->literal() != nullptr && i->literal()->elided()) return true;
    }
  }
  return false;
}

// Runs `passes` in order over every corpus module; the last one's change decides whether
// the values are compared with the original module's.
void RunOverCorpus(const std::vector<HloPass*>& passes) {
  HloPass& pass = *passes.back();
  if (testing::CorpusModules().empty()) {
    GTEST_SKIP() << "corpus not found at " << HLOWB_CORPUS_DIR;
  }
  int ran = 0, changed = 0, evaluated = 0;
  for (const testing::CorpusModule& cm : testing::CorpusModules()) {
    std::unique_ptr<Module> parsed = testing::ParseValidModule(cm.text);
    if (!parsed) continue;
    std::unique_ptr<Module> before = CloneModule(*parsed);
    Module* m = parsed.get();
    PassContext context = MakeTestContext();
    const std::string& where = cm.label;
    absl::StatusOr<bool> r = false;
    for (HloPass* p : passes) {
      r = p->Run(m, context);
      ASSERT_TRUE(r.ok()) << where << ": " << p->name() << ": " << r.status().message();
    }
    ++ran;
    changed += *r ? 1 : 0;
    for (const VerifierDiagnostic& d : VerifyModule(*m)) {
      EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError)
          << where << ": " << d.ToString();
    }
    // Semantics on fake data for small modules the interpreter runs quickly. Bitcasts and
    // fusions (which hold bitcasts) depend on layouts the interpreter only partly tracks.
    int64_t count = 0;
    for (const auto& c : m->computations()) count += c->instruction_count();
    if (!*r || count > 200 || HasOpcode(*before, Opcode::kBitcast) ||
        HasOpcode(*before, Opcode::kFusion) || HasOpcode(*before, Opcode::kCustomCall) ||
        HasElidedConstant(*before)) {
      continue;
    }
    SCOPED_TRACE(where);
    if (testing::ExpectSameResults(*before, *m)) ++evaluated;
  }
  std::cout << pass.name() << ": " << ran << " corpus modules, " << changed << " changed, "
            << evaluated << " evaluated\n";
  EXPECT_GT(ran, 0);
}

TEST(LayoutAssignmentTest, Corpus) {
  LayoutAssignment pass("gpu");
  RunOverCorpus({&pass});
}

TEST(LayoutNormalizationTest, Corpus) {
  LayoutNormalization pass;
  RunOverCorpus({&pass});
}

// Layout assignment leaves transposes, reshapes and loops in non-default layouts: a harder
// input for normalization, checked against the original module's values.
TEST(LayoutNormalizationTest, CorpusAfterLayoutAssignment) {
  LayoutAssignment assignment("gpu");
  LayoutNormalization pass;
  RunOverCorpus({&assignment, &pass});
}

}  // namespace
}  // namespace hlowb
