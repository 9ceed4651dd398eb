#include "replay/compare/isolation.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "core/analysis/verifier.h"
#include "core/support/strings.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/backends/xla/xla_cpu_backend.h"
#include "replay/compare/extract.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"
#include "replay/session.h"

namespace hlowb {
namespace {

// Instructions that only move values: no row of their own.
bool MovesValuesOnly(Opcode op) {
  return op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
         op == Opcode::kGetTupleElement;
}

// Why an instruction cannot run on its own, or "" when it can.
std::string CannotRunAlone(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone: return "host or device transfer";
    case Opcode::kRngGetAndUpdateState: return "stateful random number generator";
    case Opcode::kAfterAll: return "token only";
    default: break;
  }
  if (instr.opcode() == Opcode::kCustomCall &&
      instr.attrs_or_default().custom_call_has_side_effect) {
    return "custom call with side effects";
  }
  return "";
}

uint64_t Bytes(const Literal& l) {
  uint64_t total = l.data().size();
  for (const Literal& e : l.tuple_elements()) total += Bytes(e);
  return total;
}

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string MismatchSummary(const ComparisonReport& c) {
  double max_abs = 0, max_rel = 0;
  for (const OutputComparison& o : c.outputs) {
    if (!o.error.empty()) return StrCat("cannot compare: ", o.error);
    max_abs = std::max(max_abs, o.max_abs_error);
    max_rel = std::max(max_rel, o.max_rel_error);
  }
  std::ostringstream s;
  s << c.total_mismatches() << " mismatching element" << (c.total_mismatches() == 1 ? "" : "s")
    << ", max abs error " << std::setprecision(4) << max_abs << ", max rel error " << max_rel;
  return s.str();
}

}  // namespace

std::string_view IsolationStatusName(IsolationStatus status) {
  switch (status) {
    case IsolationStatus::kMatched: return "MATCHED";
    case IsolationStatus::kRan: return "RAN";
    case IsolationStatus::kSkipped: return "SKIPPED";
    case IsolationStatus::kDidntRun: return "DIDN'T RUN";
    case IsolationStatus::kOtherError: return "OTHER ERROR";
    case IsolationStatus::kCompilationError: return "COMPILATION ERROR";
    case IsolationStatus::kRuntimeError: return "RUNTIME ERROR";
    case IsolationStatus::kMismatch: return "MISMATCH";
  }
  return "?";
}

int IsolationReport::Count(IsolationStatus test) const {
  return static_cast<int>(std::count_if(
      rows.begin(), rows.end(), [test](const IsolatedInstruction& r) { return r.test == test; }));
}

bool IsolationReport::ok() const {
  if (!full_run_error.empty()) return false;
  for (const IsolatedInstruction& r : rows) {
    for (IsolationStatus s : {r.test, r.reference}) {
      if (s == IsolationStatus::kMismatch || s == IsolationStatus::kRuntimeError ||
          s == IsolationStatus::kCompilationError || s == IsolationStatus::kOtherError) {
        return false;
      }
    }
  }
  return true;
}

std::string IsolationReport::ToTable() const {
  constexpr int kStatusWidth = 21;
  constexpr int kNameWidth = 30;
  constexpr int kThreeColumnsWidth = 5 + 2 * kStatusWidth + kNameWidth;
  constexpr int kTableWidth = kThreeColumnsWidth + 30;
  std::ostringstream out;
  auto row = [&](std::string_view reference, std::string_view test, std::string_view name,
                 std::string_view status) {
    out << " " << std::left << std::setw(kStatusWidth) << reference << "| "
        << std::setw(kStatusWidth) << test << "| " << std::setw(kNameWidth) << name << "| "
        << status << "\n";
  };
  auto line = [&](int width) { out << std::string(width, '-') << "\n"; };
  row("Reference", "Test", "Instruction", "Status");
  line(kTableWidth);
  std::map<std::pair<IsolationStatus, IsolationStatus>, int> counts;
  for (const IsolatedInstruction& r : rows) {
    ++counts[{r.reference, r.test}];
    row(IsolationStatusName(r.reference), IsolationStatusName(r.test), r.name, r.status);
  }
  line(kTableWidth);
  out << "\n";
  line(kThreeColumnsWidth);
  row("Reference", "Test", "Total count", "");
  line(kThreeColumnsWidth);
  for (const auto& [pair, count] : counts) {
    row(IsolationStatusName(pair.first), IsolationStatusName(pair.second), std::to_string(count),
        "");
  }
  line(kThreeColumnsWidth);
  if (!full_run_error.empty()) {
    out << "\nthe full " << (reference_platform.empty() ? platform : reference_platform)
        << " run stopped early: " << full_run_error << "\n";
  }
  return out.str();
}

namespace {

// One isolated instruction's module run on `platform`: the interpreter, the cpu or cuda
// platform (the piece compiled on its own, so the instruction runs as that platform's code), or
// real XLA's cpu backend.
absl::StatusOr<Literal> RunPiece(const std::string& platform, const Module& piece,
                                 const std::vector<Literal>& args, const EvaluatorOptions& base,
                                 const IsolationOptions& options) {
  if (platform == kCpuPlatform || platform == "host") {
    CpuCompileOptions co = options.cpu;
    co.cancel = base.cancel;
    auto exe = CpuExecutable::Compile(piece, co);
    if (!exe.ok()) return exe.status();
    return (*exe)->Run(args, base);
  }
  if (platform == kCudaPlatform || platform == "gpu") {
    CudaCompileOptions co = options.cuda;
    co.cancel = base.cancel;
    auto exe = CudaExecutable::Compile(piece, co);
    if (!exe.ok()) return exe.status();
    return (*exe)->Run(args, base);
  }
  if (platform == "xla-cpu") {
    XlaCpuOptions xo;
    xo.cancel = base.cancel;
    xo.elided_constant = base.elided_constant;
    auto run = RunOnXlaCpu(piece, args, xo);
    if (!run.ok()) return run.status();
    return std::move(run->result);
  }
  return EvaluateModule(piece, args, base);
}

}  // namespace

absl::StatusOr<IsolationReport> IsolateInstructions(const Module& module,
                                                    const std::vector<Literal>& arguments,
                                                    const IsolationOptions& options) {
  for (const std::string* p : {&options.platform, &options.reference_platform}) {
    if (p->empty()) continue;
    if (absl::Status st = CheckPlatform(*p, options.cuda.emulate); !st.ok()) return st;
  }
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  if (absl::Status st = CheckArguments(module, arguments, "arguments"); !st.ok()) return st;

  IsolationReport report;
  report.module_name = module.name();
  report.platform = options.platform;
  report.reference_platform = options.reference_platform;

  // Positions and remaining uses (by isolated instructions) of every entry value.
  std::unordered_map<const Instruction*, int> order;
  std::unordered_map<const Instruction*, int> uses;
  int isolated_total = 0;
  for (const Instruction* i : entry->instructions()) {
    order[i] = static_cast<int>(order.size());
    if (MovesValuesOnly(i->opcode())) continue;
    ++isolated_total;
    for (const Instruction* op : i->operands()) ++uses[op];
  }

  EvaluatorOptions base;
  base.memory_budget_bytes = options.memory_budget_bytes;
  base.cancel = options.cancel;
  base.seed = options.seed;
  base.custom_call = options.custom_call;
  if (options.fake_elided_constants) {
    auto mu = std::make_shared<std::mutex>();
    FakeDataOptions fake{options.seed, options.use_large_float_range};
    // Elided constants of the isolated modules are copies: key them by name, not address.
    auto by_name = std::make_shared<std::map<std::string, Literal>>();
    base.elided_constant = [fake, mu, by_name,
                            &module](const Instruction& instr) -> absl::StatusOr<Literal> {
      std::string key = StrCat(instr.parent() ? instr.parent()->name() : "", "/", instr.name());
      std::lock_guard<std::mutex> lock(*mu);
      auto it = by_name->find(key);
      if (it != by_name->end()) return it->second;
      // Prefer the original module's instruction, so constraints from its uses apply.
      const Instruction* original = &instr;
      for (const auto& c : module.computations()) {
        if (instr.parent() != nullptr && c->name() == instr.parent()->name()) {
          if (const Instruction* o = c->FindInstruction(instr.name())) original = o;
        }
      }
      absl::StatusOr<Literal> l = MakeFakeElidedConstant(module, *original, fake);
      if (!l.ok()) return l.status();
      return by_name->emplace(key, std::move(*l)).first->second;
    };
  }

  std::unordered_map<const Instruction*, Literal> captured;
  uint64_t captured_bytes = 0;
  int done = 0;

  auto isolate = [&](const Instruction& instr) {
    IsolatedInstruction row;
    row.name = instr.name();
    row.opcode = std::string(OpcodeName(instr.opcode()));
    row.order = order[&instr];
    auto finish = [&](IsolationStatus reference, IsolationStatus test, std::string status) {
      row.reference = reference;
      row.test = test;
      row.status = OneLine(std::move(status));
      report.rows.push_back(std::move(row));
    };
    if (std::string why = CannotRunAlone(instr); !why.empty()) {
      return finish(IsolationStatus::kSkipped, IsolationStatus::kSkipped,
                    StrCat("cannot run alone: ", why));
    }
    absl::StatusOr<ExtractedModule> piece = ExtractModule(module, instr, 0);
    if (!piece.ok()) {
      return finish(IsolationStatus::kCompilationError, IsolationStatus::kCompilationError,
                    std::string(piece.status().message()));
    }
    std::vector<VerifierDiagnostic> diags = VerifyModule(*piece->module);
    if (CountErrors(diags) > 0) {
      std::string first;
      for (const VerifierDiagnostic& d : diags) {
        if (d.severity == VerifierDiagnostic::Severity::kError) {
          first = d.ToString();
          break;
        }
      }
      return finish(IsolationStatus::kCompilationError, IsolationStatus::kCompilationError, first);
    }
    std::vector<Literal> args;
    for (const Instruction* src : piece->parameter_sources) {
      auto it = captured.find(src);
      if (it == captured.end()) {
        return finish(IsolationStatus::kSkipped, IsolationStatus::kSkipped,
                      StrCat("the value of %", src->name(), " was not captured (memory budget of ",
                             options.memory_budget_bytes, " bytes)"));
      }
      args.push_back(it->second);
    }
    absl::StatusOr<Literal> test = options.test_runner
                                       ? options.test_runner(*piece->module, args)
                                       : RunPiece(options.platform, *piece->module, args, base,
                                                  options);
    if (!test.ok()) {
      return finish(IsolationStatus::kDidntRun, IsolationStatus::kRuntimeError,
                    StrCat("test platform ", options.platform, ": ", test.status().message()));
    }
    if (options.reference_platform.empty()) {
      return finish(IsolationStatus::kDidntRun, IsolationStatus::kRan, "OK");
    }
    if (instr.opcode() == Opcode::kCustomCall) {
      // As run_hlo_module: a custom call has no reference implementation to compare with.
      return finish(IsolationStatus::kSkipped, IsolationStatus::kRan,
                    StrCat("OK (reference skipped for custom call \"",
                           instr.attrs_or_default().custom_call_target, "\")"));
    }
    absl::StatusOr<Literal> reference =
        RunPiece(options.reference_platform, *piece->module, args, base, options);
    if (!reference.ok()) {
      return finish(IsolationStatus::kRuntimeError, IsolationStatus::kRan,
                    StrCat("reference platform ", options.reference_platform, ": ",
                           reference.status().message()));
    }
    ComparisonReport cmp =
        CompareLiterals(*reference, *test, options.bounds, options.max_reported_elements);
    const bool ok = cmp.ok();
    std::string summary = ok ? "OK" : MismatchSummary(cmp);
    row.comparison = std::move(cmp);
    IsolationStatus s = ok ? IsolationStatus::kMatched : IsolationStatus::kMismatch;
    finish(s, s, std::move(summary));
  };

  EvaluatorOptions full = base;
  full.on_instruction = [&](const InstructionEvent& e) {
    const Instruction* instr = e.instruction;
    if (instr == nullptr || instr->parent() != entry) return;
    if (uses.count(instr) > 0 && e.result != nullptr) {
      uint64_t b = Bytes(*e.result);
      if (captured_bytes + b <= options.memory_budget_bytes) {
        captured.emplace(instr, *e.result);
        captured_bytes += b;
      }
    }
    if (MovesValuesOnly(instr->opcode())) return;
    isolate(*instr);
    ++done;
    if (options.progress) options.progress(done, isolated_total, instr->name());
    for (const Instruction* op : instr->operands()) {
      auto u = uses.find(op);
      if (u == uses.end() || --u->second > 0) continue;
      auto c = captured.find(op);
      if (c != captured.end()) {
        captured_bytes -= Bytes(c->second);
        captured.erase(c);
      }
    }
  };
  absl::StatusOr<Literal> result = EvaluateModule(module, arguments, full);
  if (!result.ok()) {
    if (options.cancel != nullptr && options.cancel->IsCancelled()) {
      return absl::CancelledError("isolation cancelled");
    }
    report.full_run_error = std::string(result.status().message());
    std::unordered_map<std::string, bool> seen;
    for (const IsolatedInstruction& r : report.rows) seen[r.name] = true;
    for (const Instruction* i : entry->instructions()) {
      if (MovesValuesOnly(i->opcode()) || seen.count(i->name()) > 0) continue;
      IsolatedInstruction row;
      row.name = i->name();
      row.opcode = std::string(OpcodeName(i->opcode()));
      row.order = order[i];
      row.status = "the full run did not reach it";
      report.rows.push_back(std::move(row));
    }
  }
  std::stable_sort(report.rows.begin(), report.rows.end(),
                   [](const IsolatedInstruction& a, const IsolatedInstruction& b) {
                     if (a.test != b.test) return a.test < b.test;
                     if (a.reference != b.reference) return a.reference < b.reference;
                     return a.order < b.order;
                   });
  return report;
}

}  // namespace hlowb
