#include "core/passes/pipelines.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include "absl/strings/str_join.h"
#include "core/analysis/verifier.h"
#include "core/passes/algebraic_simplifier.h"
#include "core/passes/batchnorm_expander.h"
#include "core/passes/buffer_assignment.h"
#include "core/passes/buffer_assignment_proto.h"
#include "core/passes/call_inliner.h"
#include "core/passes/comparison_expander.h"
#include "core/passes/conditional_simplifier.h"
#include "core/passes/copy_insertion.h"
#include "core/passes/dot_decomposer.h"
#include "core/passes/flatten_call_graph.h"
#include "core/passes/float_normalization.h"
#include "core/passes/fusion_merger.h"
#include "core/passes/hlo_constant_folding.h"
#include "core/passes/hlo_cse.h"
#include "core/passes/hlo_dce.h"
#include "core/passes/hlo_memory_scheduler.h"
#include "core/passes/horizontal_fusion.h"
#include "core/passes/instruction_fusion.h"
#include "core/passes/layout_assignment.h"
#include "core/passes/layout_normalization.h"
#include "core/passes/logistic_expander.h"
#include "core/passes/multi_output_fusion.h"
#include "core/passes/operand_upcaster.h"
#include "core/passes/reshape_mover.h"
#include "core/passes/rng_bit_generator_expander.h"
#include "core/passes/rng_expander.h"
#include "core/passes/sort_simplifier.h"
#include "core/passes/stochastic_convert_decomposer.h"
#include "core/passes/transpose_folding.h"
#include "core/passes/tuple_simplifier.h"
#include "core/passes/while_loop_invariant_code_motion.h"
#include "core/passes/while_loop_simplifier.h"
#include "core/passes/zero_sized_hlo_elimination.h"
#include "core/support/strings.h"

namespace hlowb {

namespace {

using PassFactory = std::function<std::unique_ptr<HloPass>(std::string_view platform)>;

template <typename T>
PassFactory Plain() {
  return [](std::string_view) { return std::make_unique<T>(); };
}

std::unique_ptr<HloPass> MakeAlgsimp(std::string_view platform, bool layout_sensitive) {
  AlgebraicSimplifierOptions o;
  o.is_gpu = platform == "gpu";
  o.is_layout_sensitive = layout_sensitive;
  return std::make_unique<AlgebraicSimplifier>(o);
}

// Every pass by its XLA name. Pipelines are built from this table too, so that a name in
// `--passes=` runs exactly what the target pipeline runs under that name.
const std::map<std::string, PassFactory, std::less<>>& Registry() {
  static const auto* registry = new std::map<std::string, PassFactory, std::less<>>{
      {"algsimp", [](std::string_view p) { return MakeAlgsimp(p, false); }},
      {"batchnorm_expander", Plain<BatchNormExpander>()},
      {"call-inliner", Plain<CallInliner>()},
      {"comparison-expander", Plain<ComparisonExpander>()},
      {"constant_folding", Plain<HloConstantFolding>()},
      {"copy-insertion", Plain<CopyInsertion>()},
      {"cse", Plain<HloCse>()},
      {"dce", Plain<HloDce>()},
      {"dot_decomposer", Plain<DotDecomposer>()},
      {"flatten-call-graph", Plain<FlattenCallGraph>()},
      {"float-normalization-bf16", Plain<FloatNormalization>()},
      {"fusion",
       [](std::string_view) { return std::make_unique<InstructionFusion>("cpu"); }},
      {"fusion_merger", Plain<FusionMerger>()},
      {"hlo-memory-scheduler", Plain<HloMemoryScheduler>()},
      {"horizontal_loop_fusion", Plain<HorizontalLoopFusion>()},
      {"layout-assignment",
       [](std::string_view p) { return std::make_unique<LayoutAssignment>(std::string(p)); }},
      {"layout_normalization", Plain<LayoutNormalization>()},
      {"logistic-expander", Plain<LogisticExpander>()},
      {"multi_output_fusion", Plain<MultiOutputFusion>()},
      {"operand_upcaster", Plain<OperandUpcaster>()},
      {"priority-fusion",
       [](std::string_view) { return std::make_unique<InstructionFusion>("gpu"); }},
      {"reshape-mover", Plain<ReshapeMover>()},
      {"rng-bit-generator-expander",
       [](std::string_view p) {
         // The cpu platform computes philox with a library call (cpu_library_calls.h).
         return std::make_unique<RngBitGeneratorExpander>(/*keep_philox=*/p == "cpu");
       }},
      {"rng-expander", Plain<RngExpander>()},
      {"simplify-conditional", Plain<ConditionalSimplifier>()},
      {"simplify-sorts", Plain<SortSimplifier>()},
      {"simplify-while-loops", Plain<WhileLoopSimplifier>()},
      {"stochastic_convert_decomposer", Plain<StochasticConvertDecomposer>()},
      {"transpose-folding", Plain<TransposeFolding>()},
      {"tuple-simplifier", Plain<TupleSimplifier>()},
      {"while-loop-invariant-code-motion", Plain<WhileLoopInvariantCodeMotion>()},
      {"zero_sized_hlo_elimination", Plain<ZeroSizedHloElimination>()},
  };
  return *registry;
}

void Add(PassPipeline& p, std::string_view name, std::string_view platform) {
  p.AddPass(Registry().find(name)->second(platform));
}

// XLA's "simplification" fixed point, as its CPU and GPU compilers run it. Transpose folding
// runs inside it (XLA's algsimp folds transposes of dots as it goes; a pass after the loop would
// find the transposes already moved by the reshape mover).
void AddSimplification(PassPipeline& parent, std::string name, std::string_view platform) {
  PassPipeline& s = parent.AddFixedPoint(std::move(name));
  for (std::string_view pass :
       {"transpose-folding", "algsimp", "simplify-sorts", "dce", "zero_sized_hlo_elimination",
        "while-loop-invariant-code-motion", "tuple-simplifier", "simplify-while-loops", "dce",
        "reshape-mover", "constant_folding", "simplify-conditional"}) {
    Add(s, pass, platform);
  }
}

// Layout-sensitive cleanup after layout assignment.
void AddSimplificationAfterLayout(PassPipeline& parent, std::string name,
                                  std::string_view platform) {
  PassPipeline& s = parent.AddFixedPoint(std::move(name));
  s.AddPass(MakeAlgsimp(platform, /*layout_sensitive=*/true));
  Add(s, "dce", platform);
  Add(s, "cse", platform);
}

// The passes XLA runs before layout assignment, in its order (where we have them).
void AddThroughLayoutAssignment(PassPipeline& p, std::string_view platform) {
  for (std::string_view pass :
       {"dot_decomposer", "operand_upcaster", "rng-expander", "rng-bit-generator-expander",
        "zero_sized_hlo_elimination", "comparison-expander", "stochastic_convert_decomposer",
        "call-inliner", "float-normalization-bf16", "batchnorm_expander",
        "logistic-expander"}) {
    if (platform == "gpu" && pass == std::string_view("float-normalization-bf16")) continue;
    Add(p, pass, platform);
  }
  AddSimplification(p, "simplification", platform);
  for (std::string_view pass : {"cse", "tuple-simplifier", "flatten-call-graph",
                                "layout-assignment"}) {
    Add(p, pass, platform);
  }
}

}  // namespace

std::vector<std::string> RegisteredPassNames() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : Registry()) out.push_back(name);
  return out;
}

absl::StatusOr<std::unique_ptr<HloPass>> MakePassByName(std::string_view name,
                                                         std::string_view platform) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    return absl::NotFoundError(StrCat("no pass named '", name, "'; passes: ",
                                      absl::StrJoin(RegisteredPassNames(), ", ")));
  }
  return it->second(platform);
}

TargetInfo TargetInfoFor(std::string_view platform) {
  TargetInfo t;
  t.platform = std::string(platform);
  // The CPU computes bf16 and f16 dots in f32; the GPU has native bf16/f16 GEMMs.
  t.native_bf16_dot = platform == "gpu";
  t.native_f16_dot = platform == "gpu";
  return t;
}

absl::StatusOr<std::unique_ptr<PassPipeline>> BuildTargetPipeline(std::string_view platform) {
  if (platform != "cpu" && platform != "gpu") {
    return absl::InvalidArgumentError(
        StrCat("no pipeline for platform '", platform, "' (cpu or gpu)"));
  }
  auto top = std::make_unique<PassPipeline>(StrCat(platform, "-compiler"));
  if (platform == "cpu") {
    AddThroughLayoutAssignment(top->AddSubPipeline("HLO passes through layout assignment"),
                               platform);
    PassPipeline& after = top->AddSubPipeline("HLO passes after layout assignment");
    Add(after, "fusion", platform);
    Add(after, "tuple-simplifier", platform);
    AddSimplificationAfterLayout(after, "simplification after layout assignment", platform);
    Add(after, "dce", platform);
    Add(after, "copy-insertion", platform);
    Add(after, "dce", platform);
    PassPipeline& sched = top->AddSubPipeline("HLO passes after scheduling");
    Add(sched, "hlo-memory-scheduler", platform);
  } else {
    AddThroughLayoutAssignment(top->AddSubPipeline("optimization"), platform);
    PassPipeline& norm = top->AddSubPipeline("layout normalization");
    Add(norm, "layout_normalization", platform);
    AddSimplification(norm, "simplification after layout normalization", platform);
    PassPipeline& fusion = top->AddSubPipeline("fusion");
    Add(fusion, "priority-fusion", platform);
    Add(fusion, "multi_output_fusion", platform);
    Add(fusion, "fusion_merger", platform);
    Add(fusion, "cse", platform);
    Add(fusion, "dce", platform);
    PassPipeline& horizontal = top->AddSubPipeline("horizontal fusion");
    Add(horizontal, "horizontal_loop_fusion", platform);
    Add(horizontal, "dce", platform);
    PassPipeline& post = top->AddSubPipeline("post-fusion optimization");
    AddSimplificationAfterLayout(post, "simplification after fusion", platform);
    Add(post, "copy-insertion", platform);
    Add(post, "dce", platform);
    PassPipeline& sched = top->AddSubPipeline("GPU-schedule");
    Add(sched, "hlo-memory-scheduler", platform);
  }
  return top;
}

absl::StatusOr<std::unique_ptr<PassPipeline>> BuildCustomPipeline(
    const std::vector<std::string>& passes, std::string_view platform) {
  auto p = std::make_unique<PassPipeline>("custom");
  for (const std::string& name : passes) {
    absl::StatusOr<std::unique_ptr<HloPass>> pass = MakePassByName(name, platform);
    if (!pass.ok()) return pass.status();
    p->AddPass(*std::move(pass));
  }
  return p;
}

absl::StatusOr<CompileResult> CompileModule(Module* module, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<VerifierDiagnostic> diags = VerifyModule(*module);
  if (CountErrors(diags) > 0) {
    std::string msg = StrCat("module '", module->name(),
                             "' does not verify; no pass was run:");
    for (const VerifierDiagnostic& d : diags) {
      if (d.severity == VerifierDiagnostic::Severity::kError) StrAppend(&msg, "\n  ", d.ToString());
    }
    return absl::InvalidArgumentError(msg);
  }
  absl::StatusOr<std::unique_ptr<PassPipeline>> pipeline =
      options.passes.empty() ? BuildTargetPipeline(options.platform)
                             : BuildCustomPipeline(options.passes, options.platform);
  if (!pipeline.ok()) return pipeline.status();
  const bool assign = options.passes.empty() || options.assign_buffers;

  CompileResult result;
  ModuleDumper dumper(options.dump_options, *module);
  PipelineObserver observer;
  observer.records = &result.records;
  observer.dumper = dumper.enabled() ? &dumper : nullptr;
  observer.after_change = options.after_change;
  (*pipeline)->set_observer(observer);

  PassContext context(options.pass_options);
  context.set_target(TargetInfoFor(options.platform));
  context.set_evaluator(options.evaluator);
  context.set_cancel(options.cancel);

  if (absl::Status st = dumper.DumpModule(*module, "before_optimizations"); !st.ok()) return st;
  auto pass_start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> ran = (*pipeline)->Run(module, context);
  result.pass_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count();
  if (!ran.ok()) return ran.status();

  std::optional<xla::BufferAssignmentProto> buffer_proto;
  if (assign) {
    if (!module->config().is_scheduled) {
      HloMemoryScheduler scheduler;
      absl::StatusOr<bool> s = scheduler.Run(module, context);
      if (!s.ok()) return s.status();
    }
    BufferAssignmentOptions bo;
    absl::StatusOr<BufferAssignment> buffers = AssignBuffers(*module, bo);
    if (!buffers.ok()) {
      return absl::Status(buffers.status().code(),
                          StrCat("buffer assignment: ", buffers.status().message()));
    }
    result.buffer_assignment_text = buffers->ToString();
    if (dumper.enabled() && dumper.options().as_proto) {
      buffer_proto = BufferAssignmentToProto(*buffers);
    }
    result.memory_usage_report = buffers->MemoryUsageReport();
    result.total_allocation_bytes = buffers->total_allocation_bytes();
  }
  result.kernel_count = CountKernels(*module);
  const std::string stage = options.passes.empty()
                                ? StrCat(options.platform, "_after_optimizations")
                                : std::string("after_optimizations");
  if (absl::Status st =
          dumper.DumpModule(*module, stage, buffer_proto ? &*buffer_proto : nullptr);
      !st.ok()) {
    return st;
  }
  if (assign && dumper.enabled()) {
    if (absl::Status st = dumper.DumpFile(StrCat(".", stage, "-buffer-assignment.txt"),
                                          result.buffer_assignment_text);
        !st.ok()) {
      return st;
    }
    if (absl::Status st = dumper.DumpFile(StrCat(".", stage, "-memory-usage-report.txt"),
                                          result.memory_usage_report);
        !st.ok()) {
      return st;
    }
  }
  result.dump_files = dumper.written();
  result.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace hlowb
