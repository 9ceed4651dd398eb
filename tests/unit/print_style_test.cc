// Printing in the style a file was written in: DetectPrintOptions reads the form and the
// operand-shape choice off the text, the printer writes XLA's current dump style (no operand
// shapes, index annotations, stack-frame tables each followed by a blank line), and HLO states
// that the pinned jax writes come back byte for byte.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/dump/dump_names.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

std::string Reprint(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  return PrintModule(**m, DetectPrintOptions(text));
}

// The first line where two texts differ, for failure messages.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line = 1, start = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      size_t ea = a.find('\n', start), eb = b.find('\n', start);
      return "line " + std::to_string(line) + ":\n  file:    " + a.substr(start, ea - start) +
             "\n  printed: " + b.substr(start, eb - start);
    }
    if (a[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return a.size() == b.size() ? "" : "lengths differ at the end (" + std::to_string(a.size()) +
                                         " vs " + std::to_string(b.size()) + " bytes)";
}

TEST(PrintStyle, DetectsFormAndOperandShapes) {
  PrintOptions o = DetectPrintOptions(R"(HloModule m

ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(f32[4]{0} %p)
}
)");
  EXPECT_EQ(o.form, PrintOptions::Form::kLong);
  EXPECT_TRUE(o.print_operand_shape);

  o = DetectPrintOptions(R"(HloModule m

ENTRY %e (p: (f32[4], s32[])) -> f32[4] {
  %p = (f32[4]{0}, s32[]) parameter(0)
  %c = f32[] constant(1)
  %g = f32[4]{0} get-tuple-element(%p), index=0
  ROOT %n = f32[4]{0} negate(%g)
}
)");
  EXPECT_EQ(o.form, PrintOptions::Form::kLong);
  EXPECT_FALSE(o.print_operand_shape);

  o = DetectPrintOptions(R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  EXPECT_EQ(o.form, PrintOptions::Form::kShort);
  EXPECT_FALSE(o.print_operand_shape);

  // A tuple-shaped first operand still counts as an operand shape.
  o = DetectPrintOptions(R"(HloModule m

ENTRY %e (p: (f32[4], s32[])) -> f32[4] {
  %p = (f32[4]{0}, s32[]) parameter(0)
  ROOT %g = f32[4]{0} get-tuple-element((f32[4]{0}, s32[]) %p), index=0
}
)");
  EXPECT_TRUE(o.print_operand_shape);
}

// XLA's dump style as jax 0.10 writes it: stack-frame tables each followed by a blank line,
// operands without shapes, /*index=5*/ in operand lists and in the entry layout's parameters.
constexpr char kDumpStyle[] = R"(HloModule jit_f, entry_computation_layout={(f32[3]{0}, f32[3]{0}, f32[3]{0}, f32[3]{0}, f32[3]{0}, /*index=5*/f32[3]{0})->f32[18]{0}}

FileNames
1 "/tmp/prog.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=9 end_column=30}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY %main.1 (a.1: f32[3], b.1: f32[3], c.1: f32[3], d.1: f32[3], e.1: f32[3], f.1: f32[3]) -> f32[18] {
  %a.1 = f32[3]{0} parameter(0), metadata={op_name="a"}
  %b.1 = f32[3]{0} parameter(1), metadata={op_name="b"}
  %c.1 = f32[3]{0} parameter(2), metadata={op_name="c"}
  %d.1 = f32[3]{0} parameter(3), metadata={op_name="d"}
  %e.1 = f32[3]{0} parameter(4), metadata={op_name="e"}
  %f.1 = f32[3]{0} parameter(5), metadata={op_name="f"}
  ROOT %concatenate.1 = f32[18]{0} concatenate(%a.1, %b.1, %c.1, %d.1, %e.1, /*index=5*/%f.1), dimensions={0}, metadata={op_name="jit(f)/concatenate" stack_frame_id=1}
}

)";

TEST(PrintStyle, DumpStyleComesBackByteForByte) {
  const std::string text = kDumpStyle;
  const std::string printed = Reprint(text);
  EXPECT_EQ(printed, text) << FirstDifference(text, printed);
  // Forced into the old long form, the operands get their shapes back.
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok());
  const std::string long_form = PrintModule(**m, PrintOptions::Long());
  EXPECT_NE(long_form.find("concatenate(f32[3]{0} %a.1, "), std::string::npos) << long_form;
  EXPECT_NE(long_form.find(", /*index=5*/f32[3]{0} %f.1)"), std::string::npos) << long_form;
}

// A custom call's attributes in the order XLA's HloCustomCallInstruction prints them: padding
// type, target, operand layout constraints, side effect, literal, output-to-operand aliasing,
// schedule, API version. The first two instructions are jax 0.10's CPU lowering of
// jnp.linalg.cholesky and solve_triangular (LAPACK FFI calls), the third jax.ffi.ffi_call with
// has_side_effect and input_output_aliases, each as XLA wrote it.
constexpr char kCustomCalls[] = R"(HloModule jit_f, entry_computation_layout={(f32[6,6]{1,0}, f32[5,5]{1,0}, f32[5,3]{1,0}, f32[4]{0})->(f32[6,6]{0,1}, f32[5,3]{0,1}, f32[4]{0})}

ENTRY %main.1 (a.1: f32[6,6], b.1: f32[5,5], c.1: f32[5,3], x.1: f32[4]) -> (f32[6,6], f32[5,3], f32[4]) {
  %a.1 = f32[6,6]{1,0} parameter(0)
  %copy = f32[6,6]{0,1} copy(%a.1)
  %cholesky.11 = (f32[6,6]{0,1}, s32[]) custom-call(%copy), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[6,6]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, frontend_attributes={num_batch_dims="0"}, metadata={op_name="cholesky"}, backend_config={uplo = 76 : ui8}
  %get-tuple-element = f32[6,6]{0,1} get-tuple-element(%cholesky.11), index=0
  %b.1 = f32[5,5]{1,0} parameter(1)
  %copy.1 = f32[5,5]{0,1} copy(%b.1)
  %c.1 = f32[5,3]{1,0} parameter(2)
  %copy.2 = f32[5,3]{0,1} copy(%c.1)
  %triangular_solve.1 = f32[5,3]{0,1} custom-call(%copy.1, %copy.2), custom_call_target="lapack_strsm_ffi", operand_layout_constraints={f32[5,5]{0,1}, f32[5,3]{0,1}}, output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
  %x.1 = f32[4]{0} parameter(3)
  %ffi_call.1 = f32[4]{0} custom-call(%x.1), custom_call_target="my_target", operand_layout_constraints={f32[4]{0}}, custom_call_has_side_effect=true, output_to_operand_aliasing={{}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  ROOT %tuple = (f32[6,6]{0,1}, f32[5,3]{0,1}, f32[4]{0}) tuple(%get-tuple-element, %triangular_solve.1, %ffi_call.1)
}

)";

TEST(PrintStyle, CustomCallAttributesInXlasOrder) {
  const std::string text = kCustomCalls;
  const std::string printed = Reprint(text);
  EXPECT_EQ(printed, text) << FirstDifference(text, printed);
  // The same order in the long form; a fusion's aliasing still follows its kind.
  auto m = ParseModule(R"(HloModule m
fused {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
ENTRY e {
  x = f32[4] parameter(0)
  f = f32[4] fusion(x), kind=kLoop, output_to_operand_aliasing={{}: (0, {})}, calls=fused
  ROOT c = f32[4] custom-call(f), custom_call_target="t", padding_type=PADDING_SAME, output_to_operand_aliasing={{}: (0, {})}, literal=s32[] 1, custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string long_form = PrintModule(**m, PrintOptions::Long());
  EXPECT_NE(long_form.find("fusion(f32[4] %x), kind=kLoop, output_to_operand_aliasing={{}: "
                           "(0, {})}, calls=%fused"),
            std::string::npos)
      << long_form;
  EXPECT_NE(long_form.find("custom-call(f32[4] %f), padding_type=PADDING_SAME, "
                           "custom_call_target=\"t\", custom_call_has_side_effect=true, "
                           "literal=s32[] 1, output_to_operand_aliasing={{}: (0, {})}, "
                           "schedule=SCHEDULE_LATEST"),
            std::string::npos)
      << long_form;
}

// Literals as XLA's Literal::ToString writes them (what run_hlo_module prints).
std::string XlaLiteral(const std::string& shaped) {
  auto lit = ParseShapedLiteral(shaped);
  EXPECT_TRUE(lit.ok()) << lit.status();
  return lit.ok() ? PrintLiteralAsXla(*lit) : "";
}

// Quoted strings are copied as they are when nothing needs escaping and C-escaped otherwise;
// layouts with tiles, memory spaces and element sizes, and scalar layouts, print as written.
TEST(PrintStyle, QuotedStringsAndLayoutsComeBackAsWritten) {
  const std::string text = R"(HloModule m, entry_computation_layout={(f32[8,128]{1,0:T(8,128)S(1)})->f32[]}

ENTRY e {
  p = f32[8,128]{1,0:T(8,128)S(1)} parameter(0), metadata={op_type="Mul" op_name="jit(f)/a\"b\\c\nd'e" source_file="/x/\303\251t\303\251.py" source_line=3 stack_frame_id=2}
  q = s4[8,128]{1,0:T(8,128)(2,1)E(4)} parameter(1), metadata={op_name="plain/name_1.2-3"}
  c = f32[]{:S(2)} constant(0)
  ROOT r = f32[] constant(1), metadata={op_type="\t"}
}
)";
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string printed = PrintModule(**m);
  EXPECT_NE(printed.find(R"(op_name="jit(f)/a\"b\\c\nd\'e")"), std::string::npos) << printed;
  EXPECT_NE(printed.find(R"(source_file="/x/\303\251t\303\251.py")"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find(R"(metadata={op_name="plain/name_1.2-3"})"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find(R"(metadata={op_type="\t"})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f32[8,128]{1,0:T(8,128)S(1)} parameter(0)"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("s4[8,128]{1,0:T(8,128)(2,1)E(4)} parameter(1)"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("%c = f32[]{:S(2)} constant(0)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("ROOT %r = f32[] constant(1)"), std::string::npos) << printed;
  // And the printed text reads back to the same strings.
  auto again = ParseModule(printed);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(PrintModule(**again), printed);
  const Instruction* p = (*again)->entry()->instructions()[0];
  ASSERT_NE(p->metadata(), nullptr);
  EXPECT_EQ(p->metadata()->op_name, "jit(f)/a\"b\\c\nd'e");
  EXPECT_EQ(p->metadata()->source_file, "/x/\xc3\xa9t\xc3\xa9.py");
}

TEST(LiteralText, ScalarsVectorsAndPredicates) {
  EXPECT_EQ(XlaLiteral("f32[] 1.5"), "f32[] 1.5");
  EXPECT_EQ(XlaLiteral("pred[] true"), "pred[] true");
  EXPECT_EQ(XlaLiteral("s32[3]{0} {1, -2, 3}"), "s32[3] {1, -2, 3}");
  EXPECT_EQ(XlaLiteral("pred[3] {true, false, true}"), "pred[3] {1, 0, 1}");
  EXPECT_EQ(XlaLiteral("f32[0] {}"), "f32[0] {}");
  EXPECT_EQ(XlaLiteral("c64[2] {(1, 2), (3, -4)}"), "c64[2] {(1, 2), (3, -4)}");
}

TEST(LiteralText, MatricesAndHigherRanks) {
  EXPECT_EQ(XlaLiteral("f32[2,3]{1,0} { {1, 2, 3}, {4, 5, 6} }"),
            "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}");
  // A row of one element has no inner spaces.
  EXPECT_EQ(XlaLiteral("s32[2,1] { {7}, {8} }"), "s32[2,1] {\n  {7},\n  {8}\n}");
  EXPECT_EQ(XlaLiteral("s32[2,2,2] { { {1, 2}, {3, 4} }, { {5, 6}, {7, 8} } }"),
            "s32[2,2,2] {\n{\n  { 1, 2 },\n  { 3, 4 }\n},\n{\n  { 5, 6 },\n  { 7, 8 }\n}\n}");
  // Above rank 3 the blocks say which index they are.
  EXPECT_EQ(XlaLiteral("s32[2,1,1,2] { { { {1, 2} } }, { { {3, 4} } } }"),
            "s32[2,1,1,2] {\n"
            "{ /*i0=0*/\n{ /*i1=0*/\n  { 1, 2 }\n}\n},\n"
            "{ /*i0=1*/\n{ /*i1=0*/\n  { 3, 4 }\n}\n}\n}");
}

TEST(LiteralText, Tuples) {
  EXPECT_EQ(XlaLiteral("(f32[2], s32[]) ({1, 2}, 3)"), "(\nf32[2] {1, 2},\ns32[] 3\n)");
}

// Asynchronous syntax sugar: "<op>-start/-update/-done" for opcodes without native async
// forms is an async-start wrapping <op> in a computation, and prints back as the sugar.
void ExpectSugarRoundTrip(const std::string& text, Opcode wrapped_opcode) {
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
  const Computation* entry = (*m)->entry();
  const Instruction* start = nullptr;
  for (const Instruction* i : entry->instructions()) {
    if (i->opcode() == Opcode::kAsyncStart) start = i;
  }
  ASSERT_NE(start, nullptr) << text;
  ASSERT_EQ(start->called_computations().size(), 1u);
  const Computation* wrapped = start->called_computations()[0];
  ASSERT_NE(wrapped->root(), nullptr);
  EXPECT_EQ(wrapped->root()->opcode(), wrapped_opcode);
  EXPECT_EQ(wrapped->root()->operand_count(), start->operand_count());
  EXPECT_EQ(entry->root()->opcode(), Opcode::kAsyncDone);
  const std::string printed = PrintModule(**m, DetectPrintOptions(text));
  EXPECT_EQ(printed, text) << FirstDifference(text, printed);
  // Through an HloProto (the explicit form) and back, it prints as the sugar again.
  auto bytes = EncodeHloFile(**m, HloOutputFormat::kHloProto);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto opened = OpenHloBytes(*bytes, "m.hlo.pb");
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_EQ(opened->modules.size(), 1u);
  const std::string from_proto = PrintModule(*opened->modules[0].module, DetectPrintOptions(text));
  EXPECT_EQ(from_proto, text) << FirstDifference(text, from_proto);
}

TEST(AsyncSugar, EveryOpcodeFamilyRoundTrips) {
  ExpectSugarRoundTrip(R"(HloModule m, replica_count=4

ENTRY %e (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %all-to-all-start = ((f32[8]{0}), f32[8]{0}) all-to-all-start(%p), replica_groups={{0,1,2,3}}, dimensions={0}, metadata={op_name="a2a"}
  ROOT %all-to-all-done = f32[8]{0} all-to-all-done(%all-to-all-start)
}

)", Opcode::kAllToAll);
  ExpectSugarRoundTrip(R"(HloModule m, replica_count=2

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (p: f32[8]) -> f32[4] {
  %p = f32[8]{0} parameter(0)
  %reduce-scatter-start = ((f32[8]{0}), f32[4]{0}) reduce-scatter-start(%p), replica_groups={{0,1}}, dimensions={0}, to_apply=%add
  %reduce-scatter-update = ((f32[8]{0}), f32[4]{0}) reduce-scatter-update(%reduce-scatter-start)
  ROOT %reduce-scatter-done = f32[4]{0} reduce-scatter-done(%reduce-scatter-update)
}

)", Opcode::kReduceScatter);
  ExpectSugarRoundTrip(R"(HloModule m

ENTRY %e (p: f32[8], q: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %q = f32[8]{0} parameter(1)
  %custom-call-start = ((f32[8]{0}, f32[8]{0}), f32[8]{0}, s32[]) custom-call-start(%p, %q), custom_call_target="foo", async_execution_thread="host"
  ROOT %custom-call-done = f32[8]{0} custom-call-done(%custom-call-start)
}

)", Opcode::kCustomCall);
  ExpectSugarRoundTrip(R"(HloModule m

%fused (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%x)
}

ENTRY %e (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %fusion-start = ((f32[8]{0}), f32[8]{0}) fusion-start(%p), kind=kLoop, calls=%fused
  ROOT %fusion-done = f32[8]{0} fusion-done(%fusion-start)
}

)", Opcode::kFusion);
  ExpectSugarRoundTrip(R"(HloModule m

%callee (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%x)
}

ENTRY %e (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %call-start = ((f32[8]{0}), f32[8]{0}) call-start(%p), to_apply=%callee
  ROOT %call-done = f32[8]{0} call-done(%call-start)
}

)", Opcode::kCall);
  ExpectSugarRoundTrip(R"(HloModule m, replica_count=2

ENTRY %e (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %collective-broadcast-start = ((f32[8]{0}), f32[8]{0}) collective-broadcast-start(%p), replica_groups={{0,1}}
  ROOT %collective-broadcast-done = f32[8]{0} collective-broadcast-done(%collective-broadcast-start)
}

)", Opcode::kCollectiveBroadcast);
}

TEST(AsyncSugar, BadWrappersAreRefusedWithTheirPlace) {
  // A done that continues nothing of its kind.
  auto m = ParseModule(R"(HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  s = ((f32[8]), f32[8]) all-to-all-start(p), replica_groups={}, dimensions={0}
  ROOT d = f32[8] reduce-scatter-done(s)
}
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("6:19"), std::string::npos) << m.status();
  EXPECT_NE(m.status().message().find("'reduce-scatter-done' takes the value of a "
                                      "'reduce-scatter-start'"),
            std::string::npos)
      << m.status();
  // A start whose shape does not list its operands.
  m = ParseModule(R"(HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  s = ((f32[8], f32[8]), f32[8]) all-to-all-start(p), replica_groups={}, dimensions={0}
  ROOT d = f32[8] all-to-all-done(s)
}
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("5:"), std::string::npos) << m.status();
  EXPECT_NE(m.status().message().find("has 1 operand(s) but its shape lists 2"),
            std::string::npos)
      << m.status();
  // A start without a result shape.
  m = ParseModule(R"(HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  s = all-to-all-start(p), replica_groups={}, dimensions={0}
  ROOT d = f32[8] all-to-all-done(s)
}
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("needs its result shape"), std::string::npos)
      << m.status();
  // An explicit async-start calling a computation that does not exist.
  m = ParseModule(R"(HloModule m

ENTRY e {
  p = f32[8] parameter(0)
  s = ((f32[8]), f32[8]) async-start(p), calls=nowhere
  ROOT d = f32[8] async-done(s)
}
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nowhere"), std::string::npos) << m.status();
}

using ShellResult = testing::CommandResult;
ShellResult Shell(const std::string& cmd) { return testing::RunCommand(cmd); }

// The sugar and the explicit form compute the same all-to-all on 8 devices.
TEST(AsyncSugar, AllToAllSugarRunsLikeTheExplicitFormOnEightDevices) {
  const fs::path dir =
      fs::temp_directory_path() / ("hlowb_async_sugar_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string sugar = (dir / "sugar.hlo").string();
  const std::string explicit_form = (dir / "explicit.hlo").string();
  ASSERT_TRUE(WriteStringToFile(sugar, R"(HloModule m, replica_count=8

ENTRY e {
  p = f32[16] parameter(0)
  c = f32[16] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  x = f32[16] add(p, c)
  s = ((f32[16]), f32[16]) all-to-all-start(x), replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}
  ROOT d = f32[16] all-to-all-done(s)
}
)").ok());
  ASSERT_TRUE(WriteStringToFile(explicit_form, R"(HloModule m, replica_count=8

wrapped {
  q = f32[16] parameter(0)
  ROOT a = f32[16] all-to-all(q), replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}
}

ENTRY e {
  p = f32[16] parameter(0)
  c = f32[16] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  x = f32[16] add(p, c)
  s = ((f32[16]), f32[16]) async-start(x), calls=wrapped
  ROOT d = f32[16] async-done(s)
}
)").ok());
  auto results = [](const std::string& path) {
    ShellResult r = Shell(std::string(HLOWB_BINARY) + " replay " + path +
                          " --hlo_argument_mode=use_device_id_as_input --print_literals");
    EXPECT_EQ(r.code, 0) << r.out;
    std::string lines;
    size_t pos = 0;
    while ((pos = r.out.find("result: ", pos)) != std::string::npos) {
      size_t end = r.out.find('\n', pos);
      lines += r.out.substr(pos, end - pos) + "\n";
      pos = end;
    }
    return lines;
  };
  const std::string a = results(sugar);
  const std::string b = results(explicit_form);
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 8) << a;
  EXPECT_EQ(a, b);
  // Device 1 receives the second pair of elements of every device: 1+2, 1+3 from device 0 ...
  EXPECT_NE(a.find("result: f32[16] {2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10}"),
            std::string::npos)
      << a;
  fs::remove_all(dir);
}

// Pass-by-pass dumps of eight JAX programs (MLP training step, attention, CNN, scan, ...)
// written now by the pinned jax: every HLO state re-prints exactly as XLA wrote it, through
// the parser and `hlowb print`'s default.
// Dumps of older XLA releases (tests/golden/xla-dumps/jaxlib-*: 0.4.13, 0.4.35 and 0.6.2),
// each in its own style: the short form with operand index marks, "} // name" after larger
// computations, or the long form. Each file comes back byte for byte, and the detected style is
// what makes it so: where a short-form file carries those marks, plain short printing differs.
TEST(PrintStyle, OlderXlaDumpsRePrintByteForByte) {
  const fs::path dir = fs::path(HLOWB_SOURCE_DIR) / "tests" / "golden" / "xla-dumps";
  int files = 0;
  std::set<std::string> releases;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    releases.insert(entry.path().parent_path().filename().string());
    const std::string name = entry.path().parent_path().filename().string() + "/" +
                             entry.path().filename().string();
    auto text = ReadFileToString(entry.path().string());
    ASSERT_TRUE(text.ok()) << name;
    const PrintOptions style = DetectPrintOptions(*text);
    const std::string printed = Reprint(*text);
    EXPECT_EQ(printed, *text) << name << ": " << FirstDifference(*text, printed);
    const bool closing_names = text->find("\n} // ") != std::string::npos;
    // An operand's mark is followed by a name and then ',' or ')'; a shape's by "type[".
    static const std::regex kOperandMark(R"(, /\*index=5\*/%?[A-Za-z_][\w.\-]*[,)])");
    const bool operand_marks = std::regex_search(*text, kOperandMark);
    EXPECT_EQ(style.print_name_after_closing_brace, closing_names) << name;
    if (style.form == PrintOptions::Form::kShort && (closing_names || operand_marks)) {
      EXPECT_EQ(style.print_operand_index, operand_marks) << name;
      auto m = ParseModule(*text);
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_NE(PrintModule(**m, PrintOptions::Short()), *text) << name;
    }
    ShellResult cli = Shell(std::string(HLOWB_BINARY) + " print " + entry.path().string());
    EXPECT_EQ(cli.code, 0);
    EXPECT_EQ(cli.out, *text) << name;
  }
  EXPECT_GE(files, 11);
  EXPECT_EQ(releases.size(), 3u);
}

// The markers are read per file: a short-form file whose sixth operands carry no index marks
// and whose computations end in a bare brace is printed that way, and a small computation
// (five instructions or fewer) never gets a name after its brace.
TEST(PrintStyle, OperandIndexAndClosingNameAreDetectedPerFile) {
  const std::string with_marks = R"(HloModule m

big {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] add(a, b)
  d = f32[] add(c, b)
  e = f32[] add(d, a)
  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(a, b, c, d, e, /*index=5*/a)
} // big

ENTRY small {
  x = f32[] parameter(0)
  c = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) call(x, x), to_apply=big
  ROOT r = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(x, x, x, x, x, /*index=5*/x)
}

)";
  PrintOptions style = DetectPrintOptions(with_marks);
  EXPECT_TRUE(style.print_operand_index);
  EXPECT_TRUE(style.print_name_after_closing_brace);
  EXPECT_EQ(Reprint(with_marks), with_marks);

  std::string without = with_marks;
  for (std::string_view mark : {std::string_view(", /*index=5*/a)"), std::string_view(", /*index=5*/x)")}) {
    size_t at = without.find(mark);
    ASSERT_NE(at, std::string::npos);
    without.replace(at, mark.size(), ", " + std::string(mark.substr(13)));
  }
  without.replace(without.find("} // big"), 8, "}");
  style = DetectPrintOptions(without);
  EXPECT_FALSE(style.print_operand_index);
  EXPECT_FALSE(style.print_name_after_closing_brace);
  EXPECT_EQ(Reprint(without), without);
}

TEST(PrintStyle, RealJaxDumpsRePrintByteForByte) {
  const std::string python = std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python";
  if (access(python.c_str(), X_OK) != 0 || Shell(python + " -c 'import jax'").code != 0) {
    GTEST_SKIP() << "needs the pinned jax in " << HLOWB_SOURCE_DIR
                 << "/.venv (scripts/setup creates it)";
  }
  const fs::path dir =
      fs::temp_directory_path() / ("hlowb_print_style_jax_" + std::to_string(getpid()));
  fs::remove_all(dir);
  ShellResult made = Shell("XLA_FLAGS='--xla_dump_hlo_pass_re=.*' " + python + " " + HLOWB_SOURCE_DIR +
                   "/tests/benchmarks/jax_programs.py " + dir.string());
  ASSERT_EQ(made.code, 0) << made.out;
  int states = 0, identical = 0;
  std::string first_failure;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    DumpName parsed = ParseDumpFileName(name);
    if (!IsModuleStateKind(parsed.kind) || parsed.suffix != ".txt") continue;
    auto text = ReadFileToString(entry.path().string());
    ASSERT_TRUE(text.ok());
    ++states;
    const std::string printed = Reprint(*text);
    if (printed == *text) {
      ++identical;
    } else if (first_failure.empty()) {
      first_failure = name + ": " + FirstDifference(*text, printed);
    }
    // The CLI's default is the same style.
    if (states <= 3) {
      ShellResult cli = Shell(std::string(HLOWB_BINARY) + " print " + entry.path().string());
      EXPECT_EQ(cli.code, 0);
      EXPECT_EQ(cli.out, *text) << name;
    }
  }
  std::printf("jax dumps: %d of %d HLO states re-print byte-identical\n", identical, states);
  EXPECT_GE(states, 100) << "the dump looks incomplete";
  EXPECT_EQ(identical, states) << first_failure;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
