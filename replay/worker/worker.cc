#include "replay/worker/worker.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <thread>
#include <utility>

#include "core/analysis/fingerprint.h"
#include "core/dump/dump_index.h"
#include "core/dump/state_loader.h"
#include "core/proto/literal_convert.h"
#include "core/proto/open_file.h"
#include "core/support/cancel.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "replay/bisect/pass_bisect.h"
#include "replay/codegen/cpu_jit.h"
#include "replay/compare/isolation.h"
#include "replay/compare/nonfinite.h"
#include "replay/worker/worker.pb.h"

namespace hlowb::worker {
namespace {

using google::protobuf::util::ParseDelimitedFromZeroCopyStream;
using google::protobuf::util::SerializeDelimitedToZeroCopyStream;

class Channel {
 public:
  explicit Channel(int fd) : out_(fd) {}
  // False once the controller is gone (a broken pipe).
  bool Send(const Response& response) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return false;
    broken_ = !SerializeDelimitedToZeroCopyStream(response, &out_) || !out_.Flush();
    return !broken_;
  }

 private:
  std::mutex mu_;
  google::protobuf::io::FileOutputStream out_;
  bool broken_ = false;
};

Response ErrorResponse(uint64_t id, const absl::Status& status) {
  Response r;
  r.set_id(id);
  r.mutable_error()->set_code(static_cast<int32_t>(status.code()));
  r.mutable_error()->set_message(std::string(status.message()));
  return r;
}

absl::StatusOr<ReplayOptions> OptionsFrom(const ReplayRequest& request,
                                          const WorkerOptions& options) {
  ReplayOptions o;
  if (!request.platform().empty()) o.platform = request.platform();
  o.reference_platform = request.reference_platform();
  // The cpu platform keeps compiled kernels in the user's kernel cache, as `hlowb replay` does.
  o.cpu.cache_dir = codegen::DefaultKernelCacheDir();
  o.seed = request.seed();
  o.iterations = request.iterations() > 0 ? request.iterations() : 1;
  if (request.abs_error_bound() > 0) o.bounds.abs = request.abs_error_bound();
  if (request.rel_error_bound() > 0) o.bounds.rel = request.rel_error_bound();
  o.force_fake_data = request.force_fake_data();
  if (!request.host_transfers().empty()) {
    auto mode = ParseHostTransferMode(request.host_transfers());
    if (!mode.ok()) return mode.status();
    o.host_transfers = *mode;
  }
  o.num_replicas = request.num_replicas();
  o.num_partitions = request.num_partitions();
  o.hlo_argument_mode = request.hlo_argument_mode();
  o.custom_call = options.custom_call;
  return o;
}

// What the profile and capture hooks collect while a replay runs. The evaluator calls the hook
// from one thread at a time per device; the lock covers multi-device runs.
struct RunObserver {
  struct Entry {
    // Copied when first seen: a compiled platform's instructions belong to its optimised module,
    // which is gone by the time the result is filled.
    std::string name;
    std::string computation;
    double seconds = 0;
    int64_t executions = 0;
    LiteralStatistics last;
  };
  std::mutex mu;
  bool profile = false;
  std::string capture_name;
  std::unordered_map<const Instruction*, Entry> entries;
  std::vector<const Instruction*> order;  // first execution order
  std::optional<Literal> captured;

  void Observe(const hlowb::InstructionProfile& p) {
    if (p.reference || p.instruction == nullptr) return;
    std::lock_guard<std::mutex> lock(mu);
    if (profile) {
      auto [it, inserted] = entries.try_emplace(p.instruction);
      if (inserted) {
        order.push_back(p.instruction);
        it->second.name = p.instruction->name();
        if (p.instruction->parent() != nullptr) {
          it->second.computation = p.instruction->parent()->name();
        }
      }
      it->second.seconds += p.seconds;
      ++it->second.executions;
      it->second.last = p.statistics;
    }
    if (!captured && !capture_name.empty() && p.iteration == 0 && p.device == 0 &&
        p.value != nullptr && p.instruction->name() == capture_name) {
      captured = *p.value;
    }
  }

  absl::Status Fill(ReplayResult* result) const {
    for (const Instruction* instr : order) {
      const Entry& e = entries.at(instr);  // `instr` is a key only: it may be gone
      InstructionTiming* out = result->add_profile();
      out->set_name(e.name);
      if (!e.computation.empty()) out->set_computation(e.computation);
      out->set_seconds(e.seconds);
      out->set_executions(e.executions);
      out->set_nan_count(e.last.nan_count);
      out->set_inf_count(e.last.inf_count);
      out->set_min(e.last.min);
      out->set_max(e.last.max);
      out->set_elements(e.last.elements);
    }
    if (captured) {
      result->set_captured_instruction(capture_name);
      return LiteralToProto(*captured, result->mutable_captured());
    }
    return absl::OkStatus();
  }
};

void FillComparison(const std::optional<ComparisonReport>& comparison, double* max_abs,
                    double* max_rel, int64_t* mismatches) {
  if (!comparison) return;
  for (const OutputComparison& o : comparison->outputs) {
    *max_abs = std::max(*max_abs, o.max_abs_error);
    *max_rel = std::max(*max_rel, o.max_rel_error);
    if (mismatches != nullptr) *mismatches += o.mismatches;
  }
}

absl::StatusOr<ReplayResult> Bisect(const ReplayRequest& request, const WorkerOptions& options,
                                    const CancelToken* cancel, const ProgressFn& progress) {
  if (request.dump_dir().empty() || request.dump_module().empty()) {
    return absl::InvalidArgumentError("bisect_passes needs dump_dir and dump_module");
  }
  auto index = IndexDumpDirectory(request.dump_dir());
  if (!index.ok()) return index.status();
  const DumpModule* m = index->FindModule(request.dump_module());
  if (m == nullptr) {
    return absl::NotFoundError(
        StrCat(request.dump_dir(), ": no module '", request.dump_module(), "'"));
  }
  std::vector<DumpState> states = index->Timeline(*m);
  DumpStateLoader loader(*index, AnyFormatModuleOpener(), 1);
  std::vector<LoadedState> loaded =
      loader.Load(states, cancel, [&progress](int64_t done, int64_t total, const std::string&) {
        if (progress) progress(done, total, StrCat("loading state ", done, "/", total));
      });
  if (cancel != nullptr && cancel->IsCancelled()) return absl::CancelledError("cancelled");
  std::vector<TimelineInput> inputs = TimelineInputs(states, loaded);
  const int baseline = BeforeOptimizationsIndex(states);
  if (baseline < 0) {
    return absl::FailedPreconditionError(
        StrCat("module ", request.dump_module(),
               " has no before_optimizations state to compare the passes with"));
  }
  PassBisectOptions bisect;
  auto replay_options = OptionsFrom(request, options);
  if (!replay_options.ok()) return replay_options.status();
  bisect.replay = std::move(*replay_options);
  auto report = BisectPasses(inputs, baseline, bisect, cancel,
                             [&progress](int64_t done, int64_t total, const std::string& what) {
                               if (progress) progress(done, total, StrCat("state ", what));
                             });
  if (!report.ok()) return report.status();
  ReplayResult result;
  result.set_module_name(report->module_name);
  result.set_first_divergent(report->first_divergent);
  result.set_bisect_report(report->ToString());
  for (const PassBisectRow& r : report->rows) {
    BisectRow* row = result.add_bisect();
    row->set_label(r.label);
    row->set_pass(r.pass);
    row->set_verdict(std::string(BisectVerdictName(r.verdict)));
    row->set_detail(r.detail);
    double max_abs = 0, max_rel = 0;
    FillComparison(r.comparison, &max_abs, &max_rel, nullptr);
    row->set_max_abs_error(max_abs);
    row->set_max_rel_error(max_rel);
  }
  return result;
}

// True when the entry computations take parameters of the same shapes (layouts aside).
bool SameParameterShapes(const Module& a, const Module& b) {
  const Computation* ea = a.entry();
  const Computation* eb = b.entry();
  if (ea == nullptr || eb == nullptr || ea->parameter_count() != eb->parameter_count()) {
    return false;
  }
  for (int i = 0; i < ea->parameter_count(); ++i) {
    const Instruction* pa = ea->parameter(i);
    const Instruction* pb = eb->parameter(i);
    if (pa == nullptr || pb == nullptr || !pa->shape().Compatible(pb->shape())) return false;
  }
  return true;
}

// Puts the arguments of the snapshot among `paths` that matches `module` into `inputs` (see
// ReplayRequest::argument_snapshots) and returns how the report names them ("snapshot FILE,
// matched by fingerprint"); empty, with a note saying why, when none matches.
std::string AdoptMatchingSnapshot(const Module& module,
                                  const google::protobuf::RepeatedPtrField<std::string>& paths,
                                  ReplayInputs* inputs, std::vector<std::string>* notes) {
  const ModuleFingerprint fingerprint = FingerprintModule(module);
  std::optional<OpenedHloFile> by_shapes;
  std::string by_shapes_path;
  int checked = 0;
  for (const std::string& path : paths) {
    auto opened = OpenHloFile(path);
    if (!opened.ok()) {
      notes->push_back(StrCat("snapshot ", std::filesystem::path(path).filename().string(),
                              " not used: ", opened.status().message()));
      continue;
    }
    if (!opened->is_snapshot || opened->modules.empty()) continue;
    ++checked;
    const Module& candidate = *opened->modules.front().module;
    const std::string name = std::filesystem::path(path).filename().string();
    const ModuleFingerprint theirs = FingerprintModule(candidate);
    if (theirs.hash == fingerprint.hash &&
        theirs.instruction_count == fingerprint.instruction_count) {
      inputs->snapshot_arguments = std::move(opened->arguments);
      inputs->snapshot_result = std::move(opened->result);
      return StrCat("snapshot ", name, ", matched by fingerprint");
    }
    if (!by_shapes && SameParameterShapes(candidate, module)) {
      by_shapes = std::move(*opened);
      by_shapes_path = name;
    }
  }
  if (by_shapes) {
    // Another compilation of the same function (e.g. the optimized module's snapshot for
    // before_optimizations): its arguments fit, its recorded result belongs to its own module.
    inputs->snapshot_arguments = std::move(by_shapes->arguments);
    notes->push_back(StrCat("arguments from ", by_shapes_path,
                            ", a snapshot of a module with the same parameter shapes; its "
                            "recorded result is not compared (the modules differ)"));
    return StrCat("snapshot ", by_shapes_path, ", matched by parameter shapes");
  }
  if (checked > 0) {
    notes->push_back(StrCat("none of the ", checked, " snapshot(s) offered matches this module ",
                            "(fingerprint or parameter shapes); it ran on generated data"));
  }
  return "";
}

absl::StatusOr<ReplayResult> Replay(const ReplayRequest& request, const WorkerOptions& options,
                                    const CancelToken* cancel, const ProgressFn& progress) {
  if (request.bisect_passes()) return Bisect(request, options, cancel, progress);
  std::unique_ptr<Module> module;
  ReplayInputs inputs;
  if (!request.module_path().empty()) {
    auto opened = OpenHloFile(request.module_path());
    if (!opened.ok()) return opened.status();
    if (opened->modules.empty()) {
      return absl::InvalidArgumentError(StrCat(request.module_path(), " holds no module"));
    }
    module = std::move(opened->modules.front().module);
    if (opened->is_snapshot) {
      inputs.snapshot_arguments = std::move(opened->arguments);
      inputs.snapshot_result = std::move(opened->result);
    }
  } else {
    auto parsed = ParseModule(request.module_text());
    if (!parsed.ok()) return parsed.status();
    module = std::move(*parsed);
  }
  std::vector<std::string> data_notes;
  std::string snapshot_label;
  if (!request.force_fake_data() && !inputs.snapshot_arguments &&
      request.argument_snapshots_size() > 0) {
    snapshot_label =
        AdoptMatchingSnapshot(*module, request.argument_snapshots(), &inputs, &data_notes);
  }
  auto parsed_options = OptionsFrom(request, options);
  if (!parsed_options.ok()) return parsed_options.status();
  ReplayOptions o = std::move(*parsed_options);
  auto observer = std::make_shared<RunObserver>();
  observer->profile = request.profile();
  observer->capture_name = request.capture_instruction();
  const bool observe = request.profile() || !request.capture_instruction().empty();
  const int64_t limit = options.abort_after_instructions;
  if (observe || limit > 0) {
    auto seen = std::make_shared<std::atomic<int64_t>>(0);
    o.on_instruction = [seen, limit, observer, observe](const hlowb::InstructionProfile& p) {
      if (limit > 0 && ++*seen >= limit) std::abort();
      if (observe) observer->Observe(p);
    };
  }
  if (request.find_nonfinite()) {
    auto found = FindNonfinite(*module, std::move(o), std::move(inputs), cancel);
    if (!found.ok()) return found.status();
    ReplayResult result;
    result.set_module_name(found->module_name);
    for (const std::string& w : data_notes) result.add_warnings(w);
    for (const std::string& w : found->warnings) result.add_warnings(w);
    NonfiniteResult* n = result.mutable_nonfinite();
    n->set_found(found->found);
    // The module's own instruction where the interpreter located it (compiled platforms name
    // their own fusions otherwise).
    const NonfiniteFinding& f =
        found->interpreter_finding ? *found->interpreter_finding : found->finding;
    n->set_instruction(f.instruction);
    n->set_computation(f.computation);
    n->set_report(found->ToString());
    return result;
  }
  if (request.isolate_instructions()) {
    // The arguments: one plain run of the test platform, as the full run would use them.
    ReplayOptions first = o;
    first.iterations = 1;
    first.reference_platform.clear();
    first.on_instruction = nullptr;
    auto run = ReplaySession(*module, first, inputs).Run(cancel, nullptr);
    if (!run.ok()) return run.status();
    IsolationOptions iso;
    iso.platform = o.platform;
    iso.reference_platform = o.reference_platform.empty() ? o.platform : o.reference_platform;
    iso.bounds = o.bounds;
    iso.seed = o.seed;
    iso.custom_call = o.custom_call;
    iso.cpu = o.cpu;
    iso.cuda = o.cuda;
    iso.cancel = cancel;
    iso.progress = progress;
    auto report = IsolateInstructions(*module, run->iterations[0].arguments, iso);
    if (!report.ok()) return report.status();
    ReplayResult result;
    result.set_module_name(report->module_name);
    result.set_all_match(report->ok());
    result.set_isolation_table(report->ToTable());
    for (const std::string& w : data_notes) result.add_warnings(w);
    if (!report->full_run_error.empty()) result.add_warnings(report->full_run_error);
    for (const IsolatedInstruction& r : report->rows) {
      IsolationRow* row = result.add_isolation();
      row->set_name(r.name);
      row->set_opcode(r.opcode);
      row->set_reference_status(std::string(IsolationStatusName(r.reference)));
      row->set_test_status(std::string(IsolationStatusName(r.test)));
      row->set_detail(r.status);
      double max_abs = 0, max_rel = 0;
      int64_t mismatches = 0;
      FillComparison(r.comparison, &max_abs, &max_rel, &mismatches);
      row->set_mismatches(mismatches);
      row->set_max_abs_error(max_abs);
      row->set_max_rel_error(max_rel);
    }
    return result;
  }
  ReplaySession session(*module, std::move(o), std::move(inputs));
  auto report = session.Run(cancel, progress);
  if (!report.ok()) return report.status();
  ReplayResult result;
  result.set_module_name(report->module_name);
  result.set_compile_seconds(report->compile_seconds);
  result.set_compile_summary(report->compile_summary);
  result.set_all_match(report->all_match());
  for (const std::string& w : data_notes) result.add_warnings(w);
  for (const std::string& w : report->warnings) result.add_warnings(w);
  for (const ReplayIteration& it : report->iterations) {
    IterationResult* r = result.add_iterations();
    r->set_argument_source(it.argument_source == "snapshot" && !snapshot_label.empty()
                               ? snapshot_label
                               : it.argument_source);
    r->set_compared_against(it.compared_against);
    r->set_run_seconds(it.run_seconds);
    if (it.comparison) {
      r->set_matched(it.comparison->ok());
      r->set_mismatches(it.comparison->total_mismatches());
      r->set_comparison(it.comparison->ToString());
    }
    if (request.return_result_literals()) {
      if (absl::Status st = LiteralToProto(it.result, r->mutable_result()); !st.ok()) return st;
      if (it.reference_result) {
        if (absl::Status st = LiteralToProto(*it.reference_result, r->mutable_reference_result());
            !st.ok()) {
          return st;
        }
      }
      if (it.devices.size() > 1) {
        for (const DeviceReplay& d : it.devices) {
          if (absl::Status st = LiteralToProto(d.result, r->add_device_results()); !st.ok()) {
            return st;
          }
          if (d.reference_result) {
            if (absl::Status st =
                    LiteralToProto(*d.reference_result, r->add_device_reference_results());
                !st.ok()) {
              return st;
            }
          }
        }
      }
    }
  }
  if (absl::Status st = observer->Fill(&result); !st.ok()) return st;
  // Values beyond what one message carries comfortably stay here; the verdicts still go.
  if (result.ByteSizeLong() > options.max_value_bytes) {
    for (IterationResult& it : *result.mutable_iterations()) {
      it.clear_result();
      it.clear_reference_result();
      it.clear_device_results();
      it.clear_device_reference_results();
    }
    result.clear_captured();
    result.clear_captured_instruction();
    result.add_warnings(StrCat("the result values are not shown: the answer would exceed ",
                               options.max_value_bytes, " bytes"));
  }
  return result;
}

}  // namespace

int RunWorker(int in_fd, int out_fd, const WorkerOptions& options) {
  Channel channel(out_fd);
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Request> queue;
  bool input_done = false;
  uint64_t running_id = 0;
  std::shared_ptr<CancelToken> running_cancel;

  std::thread runner([&] {
    for (;;) {
      Request request;
      std::shared_ptr<CancelToken> cancel = std::make_shared<CancelToken>();
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty() || input_done; });
        if (queue.empty()) return;
        request = std::move(queue.front());
        queue.pop_front();
        running_id = request.id();
        running_cancel = cancel;
      }
      const uint64_t id = request.id();
      auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
      ProgressFn progress = [&](int64_t done, int64_t total, const std::string& what) {
        auto now = std::chrono::steady_clock::now();
        if (done < total && now - last < std::chrono::milliseconds(50)) return;
        last = now;
        Response r;
        r.set_id(id);
        r.mutable_progress()->set_done(done);
        r.mutable_progress()->set_total(total);
        r.mutable_progress()->set_what(what);
        channel.Send(r);
      };
      auto result = Replay(request.replay(), options, cancel.get(), progress);
      Response response;
      if (result.ok()) {
        response.set_id(id);
        *response.mutable_result() = std::move(*result);
      } else {
        response = ErrorResponse(id, result.status());
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        running_id = 0;
        running_cancel.reset();
      }
      channel.Send(response);
    }
  });

  google::protobuf::io::FileInputStream in(in_fd);
  int status = 0;
  for (;;) {
    Request request;
    bool clean_eof = false;
    if (!ParseDelimitedFromZeroCopyStream(&request, &in, &clean_eof)) {
      if (!clean_eof) status = 3;
      break;
    }
    if (request.has_cancel()) {
      const uint64_t target = request.cancel().id();
      std::lock_guard<std::mutex> lock(mu);
      if (running_id == target && running_cancel) running_cancel->Cancel();
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (it->id() == target) {
          queue.erase(it);
          channel.Send(ErrorResponse(target, absl::CancelledError("cancelled before it ran")));
          break;
        }
      }
      continue;
    }
    if (!request.has_replay()) {
      channel.Send(ErrorResponse(request.id(), absl::InvalidArgumentError("unknown request")));
      continue;
    }
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(request));
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    input_done = true;
    if (status != 0) {
      queue.clear();
      if (running_cancel) running_cancel->Cancel();
    }
  }
  cv.notify_all();
  runner.join();
  return status;
}

}  // namespace hlowb::worker
