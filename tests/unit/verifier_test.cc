#include "core/analysis/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"

namespace hlowb {
namespace {

using Severity = VerifierDiagnostic::Severity;

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? std::move(*m) : nullptr;
}

std::string Dump(const std::vector<VerifierDiagnostic>& diags) {
  std::string out;
  for (const VerifierDiagnostic& d : diags) out += d.ToString() + "\n";
  return out;
}

// The diagnostics for `text`; a parse failure yields one synthetic error.
std::vector<VerifierDiagnostic> Verify(std::string_view text) {
  std::unique_ptr<Module> m = Parse(text);
  if (m == nullptr) return {VerifierDiagnostic{Severity::kError, "", "", "parse failed"}};
  return VerifyModule(*m);
}

// True if some diagnostic of `severity` names `instruction` and contains `fragment`.
bool Has(const std::vector<VerifierDiagnostic>& diags, Severity severity,
         std::string_view instruction, std::string_view fragment) {
  for (const VerifierDiagnostic& d : diags) {
    if (d.severity == severity && d.instruction == instruction &&
        d.message.find(fragment) != std::string::npos) {
      return true;
    }
  }
  return false;
}

constexpr std::string_view kValidModule = R"(
HloModule valid, entry_computation_layout={(f32[4,8]{1,0}, s32[])->(f32[4], s32[])}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(i2, v2)
}

ENTRY main {
  a = f32[4,8]{1,0} parameter(0)
  k = s32[] parameter(1)
  z = f32[] constant(0)
  r = f32[4]{0} reduce(a, z), dimensions={1}, to_apply=add
  init = (s32[], f32[4]) tuple(k, r)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  v = f32[4] get-tuple-element(w), index=1
  i = s32[] get-tuple-element(w), index=0
  ROOT out = (f32[4], s32[]) tuple(v, i)
}
)";

TEST(VerifierTest, ValidModuleHasNoDiagnostics) {
  std::vector<VerifierDiagnostic> diags = Verify(kValidModule);
  EXPECT_TRUE(diags.empty()) << Dump(diags);
}

TEST(VerifierTest, OmittedInferableShapesAreAccepted) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT t = tuple(a, b)
}
)");
  EXPECT_EQ(CountErrors(diags), 0) << Dump(diags);
}

TEST(VerifierTest, WrongDeclaredShapeNamesTheInstruction) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[256,512] parameter(0)
  b = f32[512,256] transpose(a), dimensions={0,1}
  ROOT c = f32[4,4] add(b, b)
}
)");
  EXPECT_TRUE(Has(
      diags, Severity::kError, "b",
      "declared shape f32[512,256] does not match the shape f32[256,512] inferred for transpose"))
      << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "c", "declared shape f32[4,4]")) << Dump(diags);
  EXPECT_EQ(diags[0].computation, "e");
  EXPECT_NE(diags[0].ToString().find("e/b: "), std::string::npos) << diags[0].ToString();
}

TEST(VerifierTest, DimensionOutOfRange) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[4,8] parameter(0)
  z = f32[] constant(0)
  r = f32[4] reduce(a, z), dimensions={2}, to_apply=add
  ROOT b = f32[4,8,3] broadcast(a), dimensions={0,3}
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "r",
                  "dimensions of reduce {2} contains 2, which is out of range [0, 2)"))
      << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "b", "out of range")) << Dump(diags);
}

TEST(VerifierTest, ParameterGapAndDuplicate) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(2)
  ROOT c = f32[4] add(a, b)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "b", "parameter(1) is missing before parameter(2)"))
      << Dump(diags);

  diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(0)
  ROOT c = f32[4] add(a, b)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "b", "parameter number 0 is also used by a"))
      << Dump(diags);
}

TEST(VerifierTest, BadReduceComputation) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
three {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  q = f32[] parameter(2)
  ROOT s = f32[] add(x, y)
}

to_s32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = s32[] convert(x)
}

ENTRY e {
  a = f32[4,8] parameter(0)
  z = f32[] constant(0)
  r = f32[4] reduce(a, z), dimensions={1}, to_apply=three
  ROOT r2 = f32[4] reduce(a, z), dimensions={1}, to_apply=to_s32
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "r",
                  "to_apply computation three of reduce must take 2 parameters but takes 3"))
      << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "r2", "to_apply computation to_s32 of reduce"))
      << Dump(diags);
}

TEST(VerifierTest, CycleThroughControlPredecessors) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] negate(a), control-predecessors={c}
  c = f32[4] negate(b)
  ROOT d = f32[4] add(b, c)
}
)");
  bool named_both = false;
  for (const auto& d : diags) {
    named_both =
        named_both ||
        (d.severity == Severity::kError && (d.instruction == "b" || d.instruction == "c") &&
         (d.message.find("cycle through operands and control predecessors: b -> c -> b") !=
              std::string::npos ||
          d.message.find("cycle through operands and control predecessors: c -> b -> c") !=
              std::string::npos));
  }
  EXPECT_TRUE(named_both) << Dump(diags);
}

TEST(VerifierTest, SelfReferenceIsACycle) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  ROOT b = f32[4] add(a, b)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "b", "cycle")) << Dump(diags);
}

TEST(VerifierTest, WhileConditionMustReturnPred) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
cond {
  p = f32[4] parameter(0)
  ROOT c = f32[] constant(1)
}

body {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}

ENTRY e {
  a = f32[4] parameter(0)
  ROOT w = f32[4] while(a), condition=cond, body=body
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "w", "must return pred[] but returns f32[]"))
      << Dump(diags);
}

TEST(VerifierTest, OperandCountsAndRequiredAttributes) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] add(a, a, a)
  c = pred[4] compare(a, a)
  ROOT t = f32[4] transpose(a)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "b", "add takes 2 operands but has 3")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "c", "compare needs direction=")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "t", "transpose needs dimensions=")) << Dump(diags);
}

TEST(VerifierTest, VariadicOperandRules) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[4] parameter(0)
  i = s32[1] parameter(1)
  z = f32[] constant(0)
  r = f32[] reduce(a, z, z), dimensions={0}, to_apply=add
  ROOT s = f32[4] scatter(a, i, a, a), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "r", "even count")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "s", "odd count")) << Dump(diags);
}

TEST(VerifierTest, LayoutMustBeAPermutation) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  ROOT a = f32[4,8]{0,0} parameter(0)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "a", "layout {0,0} of f32[4,8] is not a permutation"))
      << Dump(diags);
}

TEST(VerifierTest, EntryComputationLayoutMustMatch) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
HloModule m, entry_computation_layout={(f32[4]{0})->f32[5]{0}}

ENTRY e {
  ROOT a = f32[4] parameter(0)
}
)");
  EXPECT_TRUE(
      Has(diags, Severity::kError, "a", "entry_computation_layout gives the result shape f32[5]"))
      << Dump(diags);

  diags = Verify(R"(
HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

ENTRY e {
  ROOT a = f32[4] parameter(0)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "", "lists 2 parameters")) << Dump(diags);
}

TEST(VerifierTest, UnknownAttributeIsOnlyAWarning) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  ROOT b = f32[4] negate(a), some_future_attr={1,2}
}
)");
  EXPECT_EQ(CountErrors(diags), 0) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kWarning, "b", "unknown attribute 'some_future_attr'"))
      << Dump(diags);
  EXPECT_EQ(diags.at(0).ToString().rfind("warning: ", 0), 0u);
}

TEST(VerifierTest, ConstantLiteralMustMatchDeclaredShape) {
  std::unique_ptr<Module> m = Parse(R"(
ENTRY e {
  ROOT c = f32[2] constant({1, 2})
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountErrors(VerifyModule(*m)), 0);
  Instruction* c = m->entry()->FindInstruction("c");
  c->set_shape(m->InternShape(Shape::Array(PrimitiveType::kF32, {3})));
  std::vector<VerifierDiagnostic> diags = VerifyModule(*m);
  EXPECT_TRUE(
      Has(diags, Severity::kError, "c", "declared shape f32[3] does not match the shape f32[2]"))
      << Dump(diags);
}

TEST(VerifierTest, CustomCallShapeIsNotInferredButChecked) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  ok = f32[9] custom-call(a), custom_call_target="anything"
  ROOT bad = f32[4] custom-call(a), custom_call_target="x", output_to_operand_aliasing={{}: (0, {})}, operand_layout_constraints={f32[5]{0}}
}
)");
  EXPECT_FALSE(Has(diags, Severity::kError, "ok", "")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "bad", "operand_layout_constraints gives operand 0"))
      << Dump(diags);
}

TEST(VerifierTest, MixedPrecisionIsAWarning) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = bf16[4] parameter(1)
  ROOT c = f32[4] add(a, b)
}
)");
  EXPECT_EQ(CountErrors(diags), 0) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kWarning, "c", "mixes floating-point precisions"))
      << Dump(diags);
}

TEST(VerifierTest, CollectiveReplicaGroupsAreChecked) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[4] parameter(0)
  r = f32[4] all-reduce(a), replica_groups={{0,1},{1,2}}, to_apply=add
  g = f32[8] all-gather(a), replica_groups={{0,1},{2}}, dimensions={0}
  ROOT p = f32[4] collective-permute(a), source_target_pairs={{0,1},{0,2}}
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "r", "name device 1 more than once")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "g", "must all have the same size")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "p", "sends from device 0 more than once"))
      << Dump(diags);
}

TEST(VerifierTest, AsyncDoneMustConsumeItsStart) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
ENTRY e {
  a = f32[4] parameter(0)
  t = (f32[4], f32[4], u32[]) tuple(a, a, a)
  ROOT d = f32[4] copy-done(t)
}
)");
  EXPECT_TRUE(Has(diags, Severity::kError, "d", "the operand of copy-done must be copy-start"))
      << Dump(diags);
}

TEST(VerifierTest, RecursiveCallsAreReported) {
  std::vector<VerifierDiagnostic> diags = Verify(R"(
f {
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=f
}

ENTRY e {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=f
}
)");
  bool found = false;
  for (const auto& d : diags) {
    found = found ||
            (d.computation == "f" && d.message.find("recursively: f -> f") != std::string::npos);
  }
  EXPECT_TRUE(found) << Dump(diags);
}

TEST(VerifierTest, BrokenModulesDoNotCrash) {
  std::unique_ptr<Module> m = Parse(kValidModule);
  ASSERT_NE(m, nullptr);
  Computation* entry = m->entry();
  Instruction* r = entry->FindInstruction("r");
  Instruction* w = entry->FindInstruction("w");
  r->mutable_operands()->push_back(nullptr);
  (*w->mutable_called_computations())[1] = nullptr;
  w->mutable_control_predecessors()->push_back(nullptr);
  std::vector<VerifierDiagnostic> diags = VerifyModule(*m);
  EXPECT_TRUE(Has(diags, Severity::kError, "r", "operand 2 is missing")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "w", "called computation 1 is missing")) << Dump(diags);
  EXPECT_TRUE(Has(diags, Severity::kError, "w", "control predecessor is missing")) << Dump(diags);

  entry->set_root(nullptr);
  diags = VerifyModule(*m);
  EXPECT_TRUE(Has(diags, Severity::kError, "", "has no root")) << Dump(diags);

  m->set_entry(nullptr);
  diags = VerifyModule(*m);
  EXPECT_TRUE(Has(diags, Severity::kError, "", "no entry computation")) << Dump(diags);
}

}  // namespace
}  // namespace hlowb
