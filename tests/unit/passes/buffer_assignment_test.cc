// Buffer assignment: sizes, kinds, reuse of freed temp space, aliasing, the XLA text forms,
// and the overlap checker over the corpus.
#include "core/passes/buffer_assignment.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "core/analysis/verifier.h"
#include "core/passes/buffer_assignment_proto.h"
#include "core/passes/copy_insertion.h"
#include "core/passes/hlo_memory_scheduler.h"
#include "core/passes/pipelines.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::MakeTestContext;
using testing::ParseOrDie;

const Instruction* Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

AllocationSlice SliceOf(const BufferAssignment& ba, const Module& m, const std::string& name,
                        const ShapeIndex& index = {}) {
  const Instruction* instr = Find(m, name);
  EXPECT_NE(instr, nullptr) << name;
  if (instr == nullptr) return {};
  std::optional<AllocationSlice> s = ba.GetSlice(instr, index);
  EXPECT_TRUE(s.has_value()) << name;
  return s.value_or(AllocationSlice{});
}

BufferAssignment Assign(const Module& m) {
  absl::StatusOr<BufferAssignment> ba = AssignBuffers(m);
  EXPECT_TRUE(ba.ok()) << ba.status().message();
  if (!ba.ok()) return BufferAssignment();
  absl::Status check = CheckBufferAssignment(*ba);
  EXPECT_TRUE(check.ok()) << check.message();
  return *std::move(ba);
}

TEST(BufferAssignment, RefusesUnscheduledModule) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(p)
}
)");
  ASSERT_TRUE(m);
  absl::StatusOr<BufferAssignment> ba = AssignBuffers(*m);
  ASSERT_FALSE(ba.ok());
  EXPECT_NE(std::string(ba.status().message()).find("not scheduled"), std::string::npos);
}

TEST(BufferAssignment, SizesAndKinds) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  k = f32[4]{0} constant({1, 2, 3, 4})
  a = f32[4]{0} add(p0, p1)
  b = f32[4]{0} multiply(a, k)
  ROOT c = f32[4]{0} negate(b)
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  EXPECT_EQ(ba.parameter_bytes(), 32);
  EXPECT_EQ(ba.constant_bytes(), 16);
  EXPECT_EQ(ba.output_bytes(), 16);
  EXPECT_EQ(ba.thread_local_bytes(), 0);
  // b reads a for the last time element by element: it writes over a's bytes in place.
  EXPECT_EQ(ba.temp_bytes(), 16);
  EXPECT_EQ(ba.peak_temp_bytes(), 16);
  EXPECT_EQ(ba.total_allocation_bytes(), 32 + 16 + 16 + 16);
  AllocationSlice p1 = SliceOf(ba, *m, "p1");
  const BufferAllocation& pa = ba.allocations()[p1.allocation];
  EXPECT_EQ(pa.kind, AllocationKind::kParameter);
  EXPECT_EQ(pa.parameter_number, 1);
  EXPECT_FALSE(pa.maybe_live_out);
  AllocationSlice c = SliceOf(ba, *m, "c");
  EXPECT_EQ(ba.allocations()[c.allocation].kind, AllocationKind::kOutput);
  EXPECT_TRUE(ba.allocations()[c.allocation].maybe_live_out);
  EXPECT_EQ(ba.allocations()[SliceOf(ba, *m, "k").allocation].kind, AllocationKind::kConstant);
  AllocationSlice a = SliceOf(ba, *m, "a");
  AllocationSlice b = SliceOf(ba, *m, "b");
  EXPECT_EQ(a.allocation, b.allocation);
  EXPECT_EQ(ba.allocations()[a.allocation].kind, AllocationKind::kTemp);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.size, 16);
}

TEST(BufferAssignment, ReusesFreedTempSpace) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[1024]{0} parameter(0)
  a = f32[1024]{0} reverse(p), dimensions={0}
  b = f32[1024]{0} reverse(a), dimensions={0}
  c = f32[1024]{0} reverse(b), dimensions={0}
  d = f32[1024]{0} reverse(c), dimensions={0}
  ROOT r = f32[1024]{0} reverse(d), dimensions={0}
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  AllocationSlice a = SliceOf(ba, *m, "a");
  AllocationSlice b = SliceOf(ba, *m, "b");
  AllocationSlice c = SliceOf(ba, *m, "c");
  AllocationSlice d = SliceOf(ba, *m, "d");
  EXPECT_EQ(a.offset, c.offset);
  EXPECT_EQ(b.offset, d.offset);
  EXPECT_NE(a.offset, b.offset);
  EXPECT_EQ(ba.temp_bytes(), 8192);
  EXPECT_EQ(ba.peak_temp_bytes(), 8192);
}

TEST(BufferAssignment, TupleGteAndBitcastAlias) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  a = f32[2,3]{1,0} negate(p)
  b = f32[2,3]{1,0} exponential(p)
  t = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(a, b)
  g = f32[2,3]{1,0} get-tuple-element(t), index=0
  bc = f32[6]{0} bitcast(g)
  g1 = f32[2,3]{1,0} get-tuple-element(t), index=1
  bc1 = f32[6]{0} bitcast(g1)
  ROOT s = f32[6]{0} add(bc, bc1)
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  EXPECT_EQ(SliceOf(ba, *m, "bc"), SliceOf(ba, *m, "a"));
  EXPECT_EQ(SliceOf(ba, *m, "t", {0}), SliceOf(ba, *m, "a"));
  EXPECT_EQ(SliceOf(ba, *m, "t", {1}), SliceOf(ba, *m, "b"));
  EXPECT_EQ(SliceOf(ba, *m, "bc1"), SliceOf(ba, *m, "b"));
  EXPECT_EQ(SliceOf(ba, *m, "t").size, 16);  // index table of two pointers
  EXPECT_NE(SliceOf(ba, *m, "a").offset, SliceOf(ba, *m, "b").offset);
}

TEST(BufferAssignment, WhileLoopSharesOneBufferPerElement) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule w
cond {
  cp = (s32[], f32[8]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  ROOT lt = pred[] compare(ci, s32[] constant(4)), direction=LT
}
body {
  bp = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  ni = s32[] add(i, s32[] constant(1))
  x = f32[8]{0} get-tuple-element(bp), index=1
  e = f32[8]{0} exponential(x)
  nx = f32[8]{0} multiply(e, x)
  ROOT r = (s32[], f32[8]{0}) tuple(ni, nx)
}
ENTRY e {
  p0 = f32[8]{0} parameter(0)
  init = (s32[], f32[8]{0}) tuple(s32[] constant(0), p0)
  w = (s32[], f32[8]{0}) while(init), condition=cond, body=body
  ROOT out = f32[8]{0} get-tuple-element(w), index=1
}
)");
  ASSERT_TRUE(m);
  PassContext ctx = MakeTestContext();
  CopyInsertion copies;
  ASSERT_TRUE(copies.Run(m.get(), ctx).ok());
  HloMemoryScheduler scheduler;
  ASSERT_TRUE(scheduler.Run(m.get(), ctx).ok());
  BufferAssignment ba = Assign(*m);
  AllocationSlice loop = SliceOf(ba, *m, "w", {1});
  EXPECT_EQ(SliceOf(ba, *m, "bp", {1}), loop);
  EXPECT_EQ(SliceOf(ba, *m, "cp", {1}), loop);
  EXPECT_EQ(SliceOf(ba, *m, "x"), loop);
  EXPECT_EQ(SliceOf(ba, *m, "out"), loop);
  EXPECT_EQ(SliceOf(ba, *m, "w", {0}), SliceOf(ba, *m, "ni"));
  // The loop's element is the output; the parameter was copied into it.
  EXPECT_EQ(ba.allocations()[loop.allocation].kind, AllocationKind::kOutput);
  EXPECT_NE(SliceOf(ba, *m, "p0").allocation, loop.allocation);
  // The body temporary e lives in the temp allocation, not in the loop buffer.
  EXPECT_EQ(ba.allocations()[SliceOf(ba, *m, "e").allocation].kind, AllocationKind::kTemp);
}

TEST(BufferAssignment, InputOutputAliasSharesTheParameter) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  ROOT a = f32[4]{0} add(p0, p1)
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  AllocationSlice p0 = SliceOf(ba, *m, "p0");
  EXPECT_EQ(SliceOf(ba, *m, "a"), p0);
  const BufferAllocation& alloc = ba.allocations()[p0.allocation];
  EXPECT_EQ(alloc.kind, AllocationKind::kParameter);
  EXPECT_TRUE(alloc.maybe_live_out);
  EXPECT_EQ(ba.output_bytes(), 0);
  EXPECT_NE(ba.ToString().find("allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex "
                               "{}, output shape is |f32[4]|, maybe-live-out:\n"),
            std::string::npos)
      << ba.ToString();
}

TEST(BufferAssignment, DynamicUpdateSliceInPlace) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[16]{0} parameter(0)
  u = f32[4]{0} parameter(1)
  i = s32[] parameter(2)
  b = f32[16]{0} exponential(p)
  d = f32[16]{0} dynamic-update-slice(b, u, i)
  ROOT n = f32[16]{0} negate(d)
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  EXPECT_EQ(SliceOf(ba, *m, "d"), SliceOf(ba, *m, "b"));
  // A parameter is never updated in place.
  std::unique_ptr<Module> m2 = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[16]{0} parameter(0)
  u = f32[4]{0} parameter(1)
  i = s32[] parameter(2)
  d = f32[16]{0} dynamic-update-slice(p, u, i)
  ROOT n = f32[16]{0} negate(d)
}
)");
  ASSERT_TRUE(m2);
  BufferAssignment ba2 = Assign(*m2);
  EXPECT_NE(SliceOf(ba2, *m2, "d").allocation, SliceOf(ba2, *m2, "p").allocation);
}

TEST(BufferAssignment, FusionInternalsAndReducersAreNotTemps) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  fp = f32[8]{0} parameter(0)
  fe = f32[8]{0} exponential(fp)
  ROOT fn = f32[8]{0} negate(fe)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  f = f32[8]{0} fusion(p), kind=kLoop, calls=fused
  ROOT r = f32[] reduce(f, f32[] constant(0)), dimensions={0}, to_apply=add_f32
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  EXPECT_FALSE(ba.GetSlice(Find(*m, "fe")).has_value());
  EXPECT_EQ(ba.allocations()[SliceOf(ba, *m, "s").allocation].kind,
            AllocationKind::kThreadLocal);
  EXPECT_EQ(ba.thread_local_bytes(), 12);
  EXPECT_EQ(ba.allocations()[SliceOf(ba, *m, "f").allocation].kind, AllocationKind::kTemp);
}

constexpr char kTextModule[] = R"(
HloModule m, is_scheduled=true
ENTRY e {
  p0 = f32[32]{0} parameter(0)
  p1 = (f32[4]{0}, s32[]) parameter(1)
  a = f32[32]{0} exponential(p0)
  b = f32[32]{0} negate(a)
  g = f32[4]{0} get-tuple-element(p1), index=0
  h = f32[4]{0} negate(g)
  ROOT t = (f32[32]{0}, f32[4]{0}) tuple(b, h)
}
)";

TEST(BufferAssignment, TextFormKeyLines) {
  std::unique_ptr<Module> m = ParseOrDie(kTextModule);
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  std::string text = ba.ToString();
  EXPECT_EQ(text.rfind("BufferAssignment:\n", 0), 0u) << text;
  for (const char* line : {
           "allocation 0: size 128, parameter 0, shape |f32[32]| at ShapeIndex {}:\n"
           " value: <0 p0 @0> (size=128,offset=0): f32[32]{0}\n",
           "allocation 1: size 16, parameter 1, shape |(f32[4], s32[])| at ShapeIndex {}:\n"
           " value: <1 p1{} @0> (size=16,offset=0): (f32[4]{0}, s32[])\n",
           "allocation 2: size 16, parameter 1, shape |(f32[4], s32[])| at ShapeIndex {0}:\n"
           " value: <2 p1{0} @0> (size=16,offset=0): f32[4]{0}\n",
           "parameter 1, shape |(f32[4], s32[])| at ShapeIndex {1}:\n",
           ", output shape is |(f32[32], f32[4])|, maybe-live-out:\n",
           ", preallocated-temp:\n value: <",
           "\nTotal bytes used: ",
           "\nUsed values:\n<0 p0 @0>\n positions:\n  p0\n uses:\n  a, operand 0\n"
           " from instruction: %p0 = f32[32]{0} parameter(0)\n",
           "<2 p1{0} @0>\n positions:\n  p1 {0}\n  g\n uses:\n  h, operand 0\n",
           "\nHloLiveRange (max 6):\n  InstructionSequence:\n    0:p0\n    1:p1\n    2:a\n",
           "  BufferLiveRange:\n    p0{}:0-6\n",
           "    a{}:2-3\n",
           "  Live ranges at ",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  }
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(BufferAssignment, ProtoCarriesEveryAllocationValueAndAlias) {
  std::unique_ptr<Module> m = ParseOrDie(kTextModule);
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  xla::BufferAssignmentProto proto = BufferAssignmentToProto(ba);
  ASSERT_EQ(proto.buffer_allocations_size(), static_cast<int>(ba.allocations().size()));
  int64_t total = 0;
  for (int i = 0; i < proto.buffer_allocations_size(); ++i) {
    const xla::BufferAllocationProto& ap = proto.buffer_allocations(i);
    const BufferAllocation& a = ba.allocations()[i];
    EXPECT_EQ(ap.index(), a.index);
    EXPECT_EQ(ap.size(), a.size);
    EXPECT_EQ(ap.is_entry_computation_parameter(), a.kind == AllocationKind::kParameter);
    EXPECT_EQ(ap.maybe_live_out(), a.maybe_live_out);
    ASSERT_EQ(ap.assigned_size(), static_cast<int>(a.assigned.size()));
    total += ap.size();
  }
  EXPECT_EQ(total, ba.total_allocation_bytes());
  // Parameter 1's element {0} is its own allocation, and says so.
  bool found_param_element = false;
  for (const xla::BufferAllocationProto& ap : proto.buffer_allocations()) {
    if (ap.is_entry_computation_parameter() && ap.parameter_number() == 1 &&
        ap.parameter_shape_index_size() == 1 && ap.parameter_shape_index(0) == 0) {
      found_param_element = true;
      EXPECT_EQ(ap.size(), 16);
      ASSERT_EQ(ap.assigned_size(), 1);
      EXPECT_EQ(ap.assigned(0).element_type(), xla::F32);
    }
  }
  EXPECT_TRUE(found_param_element);
  // Every assigned id names a logical buffer defined at a named instruction.
  std::map<int64_t, const xla::LogicalBufferProto*> by_id;
  for (const xla::LogicalBufferProto& lb : proto.logical_buffers()) by_id[lb.id()] = &lb;
  for (const xla::BufferAllocationProto& ap : proto.buffer_allocations()) {
    for (const auto& as : ap.assigned()) {
      ASSERT_TRUE(by_id.count(as.logical_buffer_id())) << as.logical_buffer_id();
      EXPECT_EQ(by_id[as.logical_buffer_id()]->size(), as.size());
    }
  }
  // The value p1{0} also appears at get-tuple-element g: an alias.
  bool g_alias = false;
  for (const auto& alias : proto.buffer_aliases()) {
    const xla::LogicalBufferProto* src = by_id[alias.source_buffer_id()];
    ASSERT_NE(src, nullptr);
    if (alias.location().instruction_name() == "g") {
      g_alias = true;
      EXPECT_EQ(src->defined_at().instruction_name(), "p1");
      ASSERT_EQ(src->defined_at().shape_index_size(), 1);
      EXPECT_EQ(src->defined_at().shape_index(0), 0);
    }
  }
  EXPECT_TRUE(g_alias);
  // The temp heap's trace allocates each of its buffers once and frees it once, in order.
  ASSERT_EQ(proto.heap_simulator_traces_size(), 1);
  const xla::HeapSimulatorTrace& trace = proto.heap_simulator_traces(0);
  EXPECT_EQ(ba.allocations()[trace.buffer_allocation_index()].kind, AllocationKind::kTemp);
  std::map<int64_t, int> state;
  int allocs = 0;
  for (const auto& ev : trace.events()) {
    if (ev.kind() == xla::HeapSimulatorTrace::Event::ALLOC) {
      EXPECT_EQ(state[ev.buffer_id()]++, 0) << ev.buffer_id();
      ++allocs;
    } else if (ev.kind() == xla::HeapSimulatorTrace::Event::FREE) {
      EXPECT_EQ(state[ev.buffer_id()]++, 1) << ev.buffer_id();
    }
    EXPECT_FALSE(ev.instruction_name().empty());
  }
  EXPECT_GT(allocs, 0);
  for (const auto& [id, n] : state) EXPECT_EQ(n, 2) << id;
}

TEST(BufferAssignment, AfterOptimizationsProtoDumpCarriesTheAssignment) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule jit_g
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  p0 = f32[64] parameter(0)
  a = f32[64] exponential(p0)
  s = f32[] constant(0)
  r = f32[] reduce(a, s), dimensions={0}, to_apply=add
  b = f32[64] broadcast(r), dimensions={}
  ROOT d = f32[64] divide(a, b)
})");
  ASSERT_TRUE(m);
  const fs::path dir = fs::temp_directory_path() / "hlowb_ba_proto_dump_test";
  fs::remove_all(dir);
  CompileOptions options;
  options.dump_options.dump_to = dir.string();
  options.dump_options.as_proto = true;
  absl::StatusOr<CompileResult> r = CompileModule(m.get(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  const fs::path after = dir / "module_0000.jit_g.cpu_after_optimizations.hlo.pb";
  const fs::path before = dir / "module_0000.jit_g.before_optimizations.hlo.pb";
  ASSERT_TRUE(fs::exists(after));
  absl::StatusOr<OpenedHloFile> opened = OpenHloFile(after.string());
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_NE(opened->buffer_assignment, nullptr);
  int64_t total = 0;
  for (const auto& ap : opened->buffer_assignment->buffer_allocations()) total += ap.size();
  EXPECT_EQ(total, r->total_allocation_bytes);
  EXPECT_GT(opened->buffer_assignment->logical_buffers_size(), 0);
  // Every logical buffer is defined at an instruction of the dumped module.
  for (const auto& lb : opened->buffer_assignment->logical_buffers()) {
    bool found = false;
    ASSERT_EQ(opened->modules.size(), 1u);
    for (const auto& c : opened->modules[0].module->computations()) {
      found |= c->FindInstruction(lb.defined_at().instruction_name()) != nullptr;
    }
    EXPECT_TRUE(found) << lb.defined_at().instruction_name();
  }
  // The state before the passes has no assignment to carry.
  absl::StatusOr<OpenedHloFile> first = OpenHloFile(before.string());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->buffer_assignment, nullptr);
  fs::remove_all(dir);
}

#pragma GCC diagnostic pop

TEST(BufferAssignment, AllocationLinesAddUpToTheTotal) {
  std::unique_ptr<Module> m = ParseOrDie(kTextModule);
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  std::string text = ba.ToString();
  std::regex alloc_re(R"(^allocation (\d+): size (\d+)[,:])");
  std::regex total_re(R"(^Total bytes used: (\d+) \()");
  std::istringstream in(text);
  std::string line;
  int64_t sum = 0;
  int64_t count = 0;
  int64_t total = -1;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_search(line, match, alloc_re)) {
      EXPECT_EQ(std::stoll(match[1]), count);
      sum += std::stoll(match[2]);
      ++count;
    } else if (std::regex_search(line, match, total_re)) {
      total = std::stoll(match[1]);
    }
  }
  EXPECT_EQ(count, static_cast<int64_t>(ba.allocations().size()));
  EXPECT_EQ(sum, total);
  EXPECT_EQ(total, ba.total_allocation_bytes());
}

TEST(BufferAssignment, MemoryUsageReportKeyLines) {
  std::unique_ptr<Module> m = ParseOrDie(kTextModule);
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  std::string report = ba.MemoryUsageReport();
  int64_t total = ba.total_allocation_bytes();
  EXPECT_EQ(report.rfind("Total bytes used: " + std::to_string(total) + " (" +
                             HumanReadableNumBytes(total) + ")\n",
                         0),
            0u)
      << report;
  for (const char* line : {
           "\nAllocations sorted by size:\n\n"
           "cumulative_size; total_size - cumulative_size; allocation\n",
           "; allocation 0: size 128B, parameter 0, shape |f32[32]| at ShapeIndex {}:\n",
           "\n\nAllocations sorted by size with their values:\n",
           "BufferAssignment stats:\n",
           "parameter allocation:",
           "preallocated temp allocation:",
           "thread-local allocation:",
           "total allocation:",
       }) {
    EXPECT_NE(report.find(line), std::string::npos) << "missing: " << line << "\n" << report;
  }
  // The largest allocation comes first.
  EXPECT_LT(report.find("allocation 0: size 128B"), report.find("allocation 2: size 16B"));
}

TEST(BufferAssignment, MemoryUsageReportGroupsValuesByOffset) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[1024]{0} parameter(0)
  a = f32[1024]{0} reverse(p), dimensions={0}
  b = f32[1024]{0} reverse(a), dimensions={0}
  c = f32[1024]{0} reverse(b), dimensions={0}
  d = f32[1024]{0} reverse(c), dimensions={0}
  ROOT r = f32[1024]{0} reverse(d), dimensions={0}
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  std::string report = ba.MemoryUsageReport();
  for (const char* line : {
           "allocation 2: size 8.00KiB, preallocated-temp:\n\n"
           "\tcumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
           "\t------------------------------------------------------------\n"
           "\t  4.00KiB( 50%);    4.00KiB;            0;                2; 2\xC3\x97" "f32[1024]\n"
           "\t  8.00KiB(100%);    4.00KiB;         4096;                2; 2\xC3\x97" "f32[1024]\n",
       }) {
    EXPECT_NE(report.find(line), std::string::npos) << "missing: " << line << "\n" << report;
  }
}

TEST(BufferAssignment, HumanReadableNumBytes) {
  EXPECT_EQ(HumanReadableNumBytes(0), "0B");
  EXPECT_EQ(HumanReadableNumBytes(1023), "1023B");
  EXPECT_EQ(HumanReadableNumBytes(1024), "1.00KiB");
  EXPECT_EQ(HumanReadableNumBytes(12140), "11.86KiB");
  EXPECT_EQ(HumanReadableNumBytes(3 * 1024 * 1024 / 2), "1.50MiB");
  EXPECT_EQ(HumanReadableNumBytes(-2048), "-2.00KiB");
}

TEST(BufferAssignment, CheckerCatchesOverlap) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[16]{0} parameter(0)
  a = f32[16]{0} exponential(p)
  b = f32[16]{0} negate(p)
  ROOT c = f32[16]{0} add(a, b)
}
)");
  ASSERT_TRUE(m);
  BufferAssignment ba = Assign(*m);
  ASSERT_TRUE(CheckBufferAssignment(ba).ok());
  // a and b are live together; putting b at a's offset in a copy of the assignment must be
  // reported.
  BufferAssignment broken = ba;
  auto& allocs = const_cast<std::vector<BufferAllocation>&>(broken.allocations());
  auto& buffers = const_cast<std::vector<LogicalBuffer>&>(broken.buffers());
  int64_t va = broken.ValueAt(Find(*m, "a"));
  int64_t vb = broken.ValueAt(Find(*m, "b"));
  const LogicalBuffer& ba_buf = buffers[broken.values()[va].buffer];
  LogicalBuffer& bb_buf = buffers[broken.values()[vb].buffer];
  ASSERT_EQ(ba_buf.allocation, bb_buf.allocation);
  bb_buf.offset = ba_buf.offset;
  for (auto& s : allocs[bb_buf.allocation].assigned) {
    if (s.value == vb) s.offset = ba_buf.offset;
  }
  absl::Status st = CheckBufferAssignment(broken);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("overlap"), std::string::npos) << st.message();
}

TEST(BufferAssignment, CorpusModulesHaveNoOverlaps) {
  if (testing::CorpusModules().empty()) GTEST_SKIP() << "no corpus at " << HLOWB_CORPUS_DIR;
  int assigned = 0;
  for (const testing::CorpusModule& cm : testing::CorpusModules()) {
    std::unique_ptr<Module> parsed = testing::ParseValidModule(cm.text);
    if (!parsed) continue;
    Module& m = *parsed;
    SCOPED_TRACE(cm.label);
    PassContext ctx;
    auto t0 = std::chrono::steady_clock::now();
    CopyInsertion copies;
    absl::StatusOr<bool> ci = copies.Run(&m, ctx);
    ASSERT_TRUE(ci.ok()) << ci.status().message();
    EXPECT_EQ(CountErrors(VerifyModule(m)), 0);
    HloMemoryScheduler scheduler;
    absl::StatusOr<bool> sched = scheduler.Run(&m, ctx);
    ASSERT_TRUE(sched.ok()) << sched.status().message();
    absl::StatusOr<BufferAssignment> ba = AssignBuffers(m);
    ASSERT_TRUE(ba.ok()) << ba.status().message();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    absl::Status check = CheckBufferAssignment(*ba);
    EXPECT_TRUE(check.ok()) << check.message();
    EXPECT_GE(ba->temp_bytes(), ba->peak_temp_bytes());
    if (m.instruction_count() > 5000) {
      std::printf("%s: %lld instructions, copy insertion + schedule + assignment %.3f s, "
                  "temp %lld bytes (peak live %lld)\n",
                  cm.label.c_str(), static_cast<long long>(m.instruction_count()),
                  seconds, static_cast<long long>(ba->temp_bytes()),
                  static_cast<long long>(ba->peak_temp_bytes()));
      EXPECT_LT(seconds, 1.0);
    }
    ++assigned;
  }
  EXPECT_GT(assigned, 0);
}

}  // namespace
}  // namespace hlowb
