// The main window's replay side: the Replay dock's requests go to the worker process through
// the replay controller, and its answers come back to the dock (report, values, instruction
// profile, isolation table, pass bisection), the graph (heat map, the NaN/Inf locator's
// instruction) and the timeline (the bisection's verdict per state).
#include <QDir>
#include <QAtomicInt>
#include <QCoreApplication>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QFileDialog>
#include <QFileInfo>
#include <QProcess>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include "app/gui/main_window.h"
#include "app/gui/reduce_dialog.h"
#include "core/proto/literal_convert.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/backends/xla/xla_cpu_backend.h"
#include "core/analysis/cost_overlay.h"
#include "viewer/graph/graph_cost_overlay.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/widgets/replay_panel.h"
#include "viewer/widgets/tensor_viewer.h"

namespace hlowb::gui {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// A replay's values for the tensor viewer, decoded from the worker's answer.
struct ReplayValues {
  std::vector<std::pair<QString, std::shared_ptr<const Literal>>> values;
  QStringList notes;  // values that could not be shown, and why
};

// The outputs: the test platform's, the reference's and how far apart they are, or on several
// devices each device's; then the captured instruction's value. Runs off the UI thread.
ReplayValues DecodeReplayValues(const hlowb::worker::ReplayResult& result) {
  ReplayValues out;
  auto add = [&](const QString& name, const xla::LiteralProto& proto) {
    auto literal = LiteralFromProto(proto);
    if (!literal.ok()) {
      out.notes << QStringLiteral("%1 cannot be shown: %2")
                       .arg(name, Q(std::string(literal.status().message())));
      return std::shared_ptr<const Literal>();
    }
    auto shared = std::make_shared<const Literal>(std::move(*literal));
    out.values.emplace_back(name, shared);
    return shared;
  };
  auto add_difference = [&](const QString& name, const std::shared_ptr<const Literal>& a,
                            const std::shared_ptr<const Literal>& b) {
    if (!a || !b) return;
    if (auto diff = viewer::AbsoluteDifference(*a, *b)) out.values.emplace_back(name, diff);
  };
  const QString output = QStringLiteral("output");
  for (int i = 0; i < result.iterations_size(); ++i) {
    const auto& it = result.iterations(i);
    const QString suffix =
        result.iterations_size() > 1 ? QStringLiteral(", iteration %1").arg(i + 1) : QString();
    if (it.device_results_size() > 0) {
      for (int d = 0; d < it.device_results_size(); ++d) {
        const QString device = QStringLiteral(", device %1").arg(d) + suffix;
        auto out_value = add(output + device, it.device_results(d));
        if (d < it.device_reference_results_size()) {
          auto ref = add(QStringLiteral("reference") + device, it.device_reference_results(d));
          add_difference(QStringLiteral("|output − reference|") + device, out_value, ref);
        }
      }
    } else if (it.has_result()) {
      auto out_value = add(output + suffix, it.result());
      if (it.has_reference_result()) {
        auto ref = add(QStringLiteral("reference output") + suffix, it.reference_result());
        add_difference(QStringLiteral("|output − reference|") + suffix, out_value, ref);
      }
    }
  }
  if (result.has_captured()) add(QStringLiteral("%") + Q(result.captured_instruction()),
                                 result.captured());
  return out;
}

int TabIndex(QTabWidget* tabs, const QString& title) {
  for (int i = 0; i < tabs->count(); ++i) {
    if (tabs->tabText(i) == title) return i;
  }
  return 0;
}

}  // namespace

void MainWindow::BuildReplay() {
  replay_panel_ = new viewer::ReplayPanel;
  replay_panel_->setObjectName(QStringLiteral("replayPanel"));
  {
    absl::StatusOr<std::string> python = FindXlaPython();
    replay_panel_->SetXlaCpuAvailable(
        python.ok(), python.ok() ? tr("XLA's CPU compiler from the jax of %1, run in a helper "
                                      "process")
                                       .arg(QString::fromStdString(*python))
                                 : QString::fromStdString(std::string(python.status().message())));
  }
  {
    // The cuda platform: loading the driver (dlopen, cuInit) can take a moment where there is
    // one, so the panel asks off the UI thread and lists cuda disabled until it knows.
    struct CudaProbe {
      bool available = false;
      QString detail;
    };
    auto* watcher = new QFutureWatcher<CudaProbe>(this);
    connect(watcher, &QFutureWatcher<CudaProbe>::finished, this, [this, watcher] {
      const CudaProbe probe = watcher->result();
      watcher->deleteLater();
      replay_panel_->SetCudaAvailable(probe.available, probe.detail);
    });
    watcher->setFuture(QtConcurrent::run([] {
      CudaProbe probe;
      const absl::Status st = CudaAvailable();
      probe.available = st.ok();
      probe.detail =
          st.ok() ? QString::fromStdString(CudaDeviceDescription())
                  : QString::fromStdString(std::string(st.message())) +
                        tr(" (the cuda platform needs an NVIDIA GPU and its driver)");
      return probe;
    }));
  }
  replay_ = new ReplayController(this);
  timeline_view_->setColumnHidden(viewer::TimelineModel::kReplay, true);
  connect(replay_panel_, &viewer::ReplayPanel::runRequested, this, &MainWindow::StartReplay);
  connect(replay_panel_, &viewer::ReplayPanel::cancelRequested, this,
          [this] { replay_->Cancel(replay_id_); });
  connect(replay_panel_, &viewer::ReplayPanel::saveReproducerRequested, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Save Reproducer To"));
    if (dir.isEmpty()) return;
    absl::Status st = SaveReplayReproducer(dir);
    statusBar()->showMessage(st.ok() ? tr("Reproducer written to %1").arg(dir)
                                     : QString::fromStdString(std::string(st.message())),
                             8000);
  });
  connect(replay_panel_, &viewer::ReplayPanel::exportBundleRequested, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export Bug-Report Bundle To"));
    if (dir.isEmpty()) return;
    if (!ExportReplayBundle(dir)) {
      statusBar()->showMessage(tr("No replay to export, or a bundle is being written"), 8000);
    }
  });
  connect(this, &MainWindow::bundleExported, this, [this](bool ok, const QString& message) {
    statusBar()->showMessage(ok ? tr("Bundle written to %1").arg(message)
                                : tr("Bundle failed: %1").arg(message),
                             10000);
  });
  connect(replay_panel_, &viewer::ReplayPanel::heatMetricChanged, this,
          [this](viewer::HeatMetric metric) { ApplyHeatMap(metric); });
  // Choosing a replay measure takes the heat map back from the cost overlay.
  connect(replay_panel_, &viewer::ReplayPanel::heatMetricChosen, this,
          [this](viewer::HeatMetric metric) {
            if (metric != viewer::HeatMetric::kOff && cost_metric() != CostMetric::kOff) {
              SetCostMetric(CostMetric::kOff);
            }
          });
  connect(replay_panel_, &viewer::ReplayPanel::instructionActivated, this,
          [this](const QString& name) {
            // Rows name instructions of the replayed module; find the same name here.
            if (!SelectInstructionByName(name)) {
              statusBar()->showMessage(tr("%1 is not in the shown state").arg(name), 5000);
            }
          });
  connect(replay_panel_, &viewer::ReplayPanel::stateActivated, this, [this](const QString& label) {
    for (size_t r = 0; r < states_.size(); ++r) {
      if (Q(states_[r].label) == label) {
        SelectTimelineRow(static_cast<int>(r));
        return;
      }
    }
  });
  connect(replay_, &ReplayController::progress, this,
          [this](quint64 id, qint64 done, qint64 total, const QString& what) {
            if (id == replay_id_) replay_panel_->SetProgress(done, total, what);
          });
  connect(replay_, &ReplayController::finished, this,
          [this](quint64 id, std::shared_ptr<const hlowb::worker::ReplayResult> result) {
            if (id == replay_id_ && result) OnReplayFinished(std::move(result));
          });
  connect(replay_, &ReplayController::failed, this,
          [this](quint64 id, const QString& message, const QString& last) {
            if (id != replay_id_) return;
            replay_panel_->ShowError(message, last);
            replay_panel_->SetReducible(ReducibleFailure(nullptr, true, message));
          });
  connect(replay_panel_, &viewer::ReplayPanel::reduceRequested, this,
          [this](const QString& until) { ShowReduceDialog(until); });
}

std::vector<std::string> MainWindow::DumpSnapshotPaths() const {
  std::vector<std::string> own, others;
  if (!session_) return own;
  const DumpIndex& index = session_->index();
  const std::filesystem::path root(index.root);
  const int64_t module_id =
      module_index_ >= 0 ? index.modules[module_index_].id : int64_t{-1};
  for (const DumpFile& f : index.files) {
    if (f.name.kind != DumpFileKind::kSnapshot &&
        f.name.kind != DumpFileKind::kUnoptimizedSnapshot) {
      continue;
    }
    const std::string path = std::filesystem::absolute(root / f.path).string();
    (f.name.module_id == std::optional<int64_t>(module_id) ? own : others).push_back(path);
  }
  own.insert(own.end(), others.begin(), others.end());
  return own;
}

void MainWindow::StartReplay(const viewer::ReplaySettings& settings) {
  if (!module_) {
    replay_panel_->ShowError(tr("open a module first"), QString());
    return;
  }
  hlowb::worker::ReplayRequest request;
  if (settings.mode == viewer::ReplayMode::kBisectPasses) {
    if (!session_ || module_index_ < 0) {
      replay_panel_->ShowError(tr("bisecting the passes needs a dump directory"), QString());
      return;
    }
    request.set_bisect_passes(true);
    request.set_dump_dir(current_path_.toStdString());
    const DumpModule& m = session_->index().modules[module_index_];
    request.set_dump_module(m.id_text.empty() ? m.name : m.id_text);
    replayed_module_index_ = module_index_;
  } else {
    // A single file (a snapshot brings its arguments) is replayed from disk; a dump state as
    // the text of the module shown.
    const QFileInfo file(current_path_);
    if (shown_row_ < 0 && file.isFile()) {
      request.set_module_path(current_path_.toStdString());
    } else {
      request.set_module_text(PrintModule(*module_, PrintOptions::Long()));
      // The dump's snapshots, this module's first: the worker takes the arguments of one whose
      // module matches the shown state (by fingerprint or parameter shapes).
      if (!settings.force_fake_data) {
        for (const std::string& path : DumpSnapshotPaths()) request.add_argument_snapshots(path);
      }
    }
  }
  request.set_platform(settings.platform.toStdString());
  request.set_reference_platform(settings.reference_platform.toStdString());
  request.set_force_fake_data(settings.force_fake_data);
  request.set_seed(settings.seed);
  request.set_abs_error_bound(settings.abs_error);
  request.set_rel_error_bound(settings.rel_error);
  request.set_host_transfers(settings.host_transfers.toStdString());
  request.set_find_nonfinite(settings.mode == viewer::ReplayMode::kFindNonfinite);
  request.set_isolate_instructions(settings.mode == viewer::ReplayMode::kIsolate);
  request.set_num_replicas(settings.num_replicas);
  request.set_num_partitions(settings.num_partitions);
  request.set_hlo_argument_mode(settings.argument_mode.toStdString());
  if (settings.mode == viewer::ReplayMode::kCompare) {
    request.set_return_result_literals(true);
    request.set_profile(settings.profile);
    if (settings.capture_selected && !selected_name_.isEmpty()) {
      request.set_capture_instruction(selected_name_.toStdString());
    }
  }
  last_replay_ = request;
  replayed_module_ = module_;
  replay_dump_module_ = module_index_;
  // What the result tables will say they came from.
  const QString mode = settings.mode == viewer::ReplayMode::kFindNonfinite  ? tr("NaN/Inf locator")
                       : settings.mode == viewer::ReplayMode::kIsolate      ? tr("isolation")
                       : settings.mode == viewer::ReplayMode::kBisectPasses ? tr("pass bisection")
                                                                            : tr("comparison");
  replay_run_label_ = tr("run %1: %2 on %3").arg(++replay_runs_).arg(mode, settings.platform);
  if (settings.mode != viewer::ReplayMode::kBisectPasses && shown_row_ >= 0 &&
      shown_row_ < static_cast<int>(states_.size())) {
    replay_run_label_ += tr(", %1").arg(Q(states_[shown_row_].label));
  }
  replay_panel_->SetRunning(true);
  replay_id_ = replay_->Submit(request);
}

void MainWindow::OnReplayFinished(std::shared_ptr<const hlowb::worker::ReplayResult> payload) {
  const hlowb::worker::ReplayResult& result = *payload;
  // Every verdict below leaves the offer standing (only a new run or Clear withdraws it).
  replay_panel_->SetReducible(ReducibleFailure(&result, false, QString()));
  // What the heat map needs later; the values (which can be large) are not kept here.
  last_result_.Clear();
  *last_result_.mutable_profile() = result.profile();
  *last_result_.mutable_isolation() = result.isolation();
  QTabWidget* tabs = replay_panel_->tabs();
  // Every table shows this run's rows, or says that this run made none: no table keeps an
  // earlier run's numbers under a newer verdict.
  replay_panel_->SetResultsSource(replay_run_label_);
  std::vector<viewer::ProfileRowView> profile;
  for (const auto& p : result.profile()) {
    profile.push_back({Q(p.name()), Q(p.computation()), p.seconds(), p.executions(), p.nan_count(),
                       p.inf_count(), p.elements(), p.min(), p.max()});
  }
  const bool profiled = !profile.empty();
  replay_panel_->ShowProfile(std::move(profile));
  if (!last_replay_.bisect_passes()) replay_panel_->ShowBisect({}, -1);
  if (!last_replay_.isolate_instructions()) replay_panel_->ShowIsolation({}, QString());
  if (last_replay_.bisect_passes() || last_replay_.isolate_instructions() ||
      last_replay_.find_nonfinite()) {
    replay_panel_->ShowValues({});  // only comparisons bring values back
  }
  if (last_replay_.bisect_passes()) {
    std::vector<viewer::BisectRowView> rows;
    std::map<std::string, QString> verdicts;
    for (const auto& b : result.bisect()) {
      rows.push_back({Q(b.label()), Q(b.pass()), Q(b.verdict()), Q(b.detail()),
                      b.max_abs_error(), b.max_rel_error()});
      verdicts[b.label()] = Q(b.verdict());
    }
    const int first = result.first_divergent();
    replay_panel_->ShowBisect(std::move(rows), first);
    timeline_model_->SetReplayVerdicts(std::move(verdicts));
    timeline_view_->setColumnHidden(viewer::TimelineModel::kReplay, false);
    QString verdict = tr("No pass diverged");
    if (first >= 0 && first < result.bisect_size()) {
      const auto& row = result.bisect(first);
      verdict = tr("Diverged after %1").arg(Q(row.pass().empty() ? row.label() : row.pass()));
    }
    replay_panel_->ShowResult(verdict, Q(result.bisect_report()));
    tabs->setCurrentIndex(TabIndex(tabs, tr("Passes")));
    FollowRunMeasure(viewer::HeatMetric::kOff);  // no per-instruction numbers
    return;
  }
  if (last_replay_.isolate_instructions()) {
    std::vector<viewer::IsolationRowView> rows;
    int bad = 0;
    for (const auto& r : result.isolation()) {
      rows.push_back({Q(r.name()), Q(r.opcode()), Q(r.reference_status()), Q(r.test_status()),
                      Q(r.detail()), r.mismatches(), r.max_abs_error(), r.max_rel_error()});
      bad += r.test_status() != "MATCHED" && r.test_status() != "RAN" &&
             r.test_status() != "SKIPPED";
    }
    replay_panel_->ShowIsolation(std::move(rows), Q(result.isolation_table()));
    QString details = Q(result.isolation_table());
    for (const std::string& w : result.warnings()) details += tr("Note: %1\n").arg(Q(w));
    replay_panel_->ShowResult(bad == 0 ? tr("ISOLATED: all matched")
                                       : tr("ISOLATED: %n instruction(s) differ", "", bad),
                              details);
    tabs->setCurrentIndex(TabIndex(tabs, tr("Isolation")));
    FollowRunMeasure(viewer::HeatMetric::kIsolationError);
    return;
  }
  if (result.has_nonfinite()) {
    const auto& n = result.nonfinite();
    FollowRunMeasure(profiled ? viewer::HeatMetric::kNonfinite : viewer::HeatMetric::kOff);
    if (!n.found()) {
      replay_panel_->ShowResult(tr("No NaN or Inf"), Q(n.report()));
      return;
    }
    replay_panel_->ShowResult(tr("NaN/Inf first at %%1").arg(Q(n.instruction())),
                              Q(n.report()));
    // Show where: the instruction in the graph, the text and the properties.
    if (const Instruction* at = FindReplayInstruction(Q(n.computation()), Q(n.instruction()))) {
      SelectInstruction(at);
    }
    return;
  }
  bool compared = false;
  QString details;
  if (!result.compile_summary().empty()) {
    details += tr("Compiled for %1: %2\n")
                   .arg(Q(last_replay_.platform()), Q(result.compile_summary()));
  }
  for (int i = 0; i < result.iterations_size(); ++i) {
    const auto& it = result.iterations(i);
    compared |= !it.compared_against().empty();
    details += tr("Iteration %1 (%2)").arg(i + 1).arg(Q(it.argument_source()));
    if (!it.compared_against().empty()) {
      details += tr(" against %1:\n%2").arg(Q(it.compared_against()), Q(it.comparison()));
    }
    details += QStringLiteral("\n");
  }
  // The values are decoded (and compared element by element) on a worker thread: outputs can
  // be hundreds of megabytes.
  replay_panel_->ShowValues({});
  auto* watcher = new QFutureWatcher<ReplayValues>(this);
  const quint64 id = replay_id_;
  connect(watcher, &QFutureWatcher<ReplayValues>::finished, this, [this, watcher, id] {
    watcher->deleteLater();
    if (id != replay_id_) return;  // a newer replay's values are coming
    ReplayValues v = watcher->result();
    replay_panel_->ShowValues(v.values);
    if (!v.notes.isEmpty()) statusBar()->showMessage(v.notes.join(QStringLiteral("; ")), 10000);
  });
  watcher->setFuture(QtConcurrent::run([payload] { return DecodeReplayValues(*payload); }));
  for (const std::string& w : result.warnings()) details += tr("Note: %1\n").arg(Q(w));
  const QString verdict = !compared           ? QStringLiteral("RAN")
                          : result.all_match() ? QStringLiteral("MATCHED")
                                               : QStringLiteral("MISMATCH");
  replay_panel_->ShowResult(verdict, details);
  FollowRunMeasure(profiled ? viewer::HeatMetric::kTime : viewer::HeatMetric::kOff);
}

void MainWindow::FollowRunMeasure(viewer::HeatMetric measure) {
  if (!replay_panel_->heat_map_turned_off() && replay_panel_->heat_metric() != measure) {
    replay_panel_->SetHeatMetric(measure);  // heatMetricChanged draws it
    return;
  }
  ApplyHeatMap(replay_panel_->heat_metric());
}

const Instruction* MainWindow::FindReplayInstruction(const QString& computation,
                                                     const QString& name) const {
  if (!module_) return nullptr;
  const std::string n = name.toStdString();
  if (!computation.isEmpty()) {
    if (const Computation* c = module_->FindComputation(computation.toStdString())) {
      if (const Instruction* i = c->FindInstruction(n)) return i;
    }
  }
  for (const auto& c : module_->computations()) {
    if (const Instruction* i = c->FindInstruction(n)) return i;
  }
  return nullptr;
}

void MainWindow::ApplyHeatMap(viewer::HeatMetric metric) {
  // While the cost overlay is on, the heat map is its (main_window_cost.cc).
  if (cost_metric() != CostMetric::kOff) return;
  // The results name the replayed module's instructions; another state may reuse names for
  // other things, so the map is drawn only on the module that ran.
  if (metric == viewer::HeatMetric::kOff || !module_ || module_ != replayed_module_) {
    graph_->ClearHeatMap();
    return;
  }
  std::unordered_map<const Instruction*, double> values;
  QString title, low, high;
  if (metric == viewer::HeatMetric::kTime) {
    double max_seconds = 0;
    for (const auto& p : last_result_.profile()) max_seconds = std::max(max_seconds, p.seconds());
    if (max_seconds > 0) {
      for (const auto& p : last_result_.profile()) {
        if (const Instruction* i = FindReplayInstruction(Q(p.computation()), Q(p.name()))) {
          values[i] = p.seconds() / max_seconds;
        }
      }
    }
    title = tr("time");
    low = QStringLiteral("0 ms");
    high = QStringLiteral("%1 ms").arg(max_seconds * 1e3, 0, 'f', 3);
  } else if (metric == viewer::HeatMetric::kNonfinite) {
    for (const auto& p : last_result_.profile()) {
      if (p.elements() <= 0) continue;
      if (const Instruction* i = FindReplayInstruction(Q(p.computation()), Q(p.name()))) {
        values[i] = static_cast<double>(p.nan_count() + p.inf_count()) /
                    static_cast<double>(p.elements());
      }
    }
    title = tr("NaN/Inf share of the result");
    low = QStringLiteral("0%");
    high = QStringLiteral("100%");
  } else {
    // Isolation error: the relative error on a log scale from the bound to 1; a mismatch or an
    // error is the top of the scale.
    const double bound = last_replay_.rel_error_bound() > 0 ? last_replay_.rel_error_bound() : 1e-3;
    for (const auto& r : last_result_.isolation()) {
      const Instruction* i = FindReplayInstruction(QString(), Q(r.name()));
      if (i == nullptr) continue;
      double v = 0;
      if (r.test_status() == "MISMATCH" || r.test_status().find("ERROR") != std::string::npos) {
        v = 1;
      } else if (r.max_rel_error() > 0) {
        v = std::clamp(std::log10(r.max_rel_error() / bound * 1e3) / 3, 0.0, 1.0);
      }
      values[i] = v;
    }
    title = tr("isolation error");
    low = tr("exact");
    high = tr("mismatch");
  }
  graph_->SetHeatMap(std::move(values), title, low, high);
}

void MainWindow::ForgetReplayResults() {
  if (replay_->IsBusy()) replay_->Cancel(replay_id_);
  replay_id_ = 0;  // answers still on their way are dropped
  last_replay_.Clear();
  last_result_.Clear();
  replayed_module_.reset();
  replay_dump_module_ = -1;
  replay_panel_->Clear();
  if (cost_overlay_ == nullptr || !cost_overlay_->OwnsHeatMap()) graph_->ClearHeatMap();
  if (replayed_module_index_ >= 0) {
    timeline_model_->SetReplayVerdicts({});
    timeline_view_->setColumnHidden(viewer::TimelineModel::kReplay, true);
    replayed_module_index_ = -1;
  }
}

void MainWindow::OnReplayModuleShown() {
  replay_panel_->SetBisectAvailable(session_ != nullptr && module_index_ >= 0);
  if (replayed_module_index_ >= 0 && replayed_module_index_ != module_index_) {
    timeline_model_->SetReplayVerdicts({});
    timeline_view_->setColumnHidden(viewer::TimelineModel::kReplay, true);
    replayed_module_index_ = -1;
  }
  ApplyHeatMap(replay_panel_->heat_metric());
}

absl::Status MainWindow::SaveReplayReproducer(const QString& dir) {
  const hlowb::worker::ReplayRequest& r = last_replay_;
  if (r.module_path().empty() && r.module_text().empty() && !r.bisect_passes()) {
    return absl::FailedPreconditionError("no replay to reproduce yet");
  }
  QDir out(dir);
  if (!out.mkpath(QStringLiteral("."))) {
    return absl::InternalError("cannot create " + dir.toStdString());
  }
  std::string module_file = "module.hlo";
  if (r.bisect_passes()) {
    module_file = r.dump_dir() + " --module=" + r.dump_module();
  } else if (!r.module_path().empty()) {
    module_file = QFileInfo(QString::fromStdString(r.module_path())).fileName().toStdString();
    QFile::remove(out.filePath(QString::fromStdString(module_file)));
    if (!QFile::copy(QString::fromStdString(r.module_path()),
                     out.filePath(QString::fromStdString(module_file)))) {
      return absl::InternalError("cannot copy " + r.module_path());
    }
  } else if (absl::Status st = WriteStringToFile(
                 out.filePath(QStringLiteral("module.hlo")).toStdString(), r.module_text());
             !st.ok()) {
    return st;
  }
  std::string command = "hlowb replay " + module_file;
  if (!r.platform().empty() && r.platform() != "interpreter") command += " --platform=" + r.platform();
  if (!r.reference_platform().empty()) command += " --reference_platform=" + r.reference_platform();
  command += " --seed=" + std::to_string(r.seed());
  if (r.force_fake_data()) command += " --force_fake_data";
  if (r.find_nonfinite()) command += " --find_nonfinite";
  if (r.isolate_instructions()) command += " --isolate_instructions";
  if (r.bisect_passes()) command += " --bisect_passes";
  if (r.abs_error_bound() > 0) command += " --abs_error_bound=" + std::to_string(r.abs_error_bound());
  if (r.rel_error_bound() > 0) command += " --rel_error_bound=" + std::to_string(r.rel_error_bound());
  if (!r.host_transfers().empty() && r.host_transfers() != "error") {
    command += " --host_transfers=" + r.host_transfers();
  }
  if (r.num_replicas() > 0) command += " --num_replicas=" + std::to_string(r.num_replicas());
  if (r.num_partitions() > 0) command += " --num_partitions=" + std::to_string(r.num_partitions());
  if (!r.hlo_argument_mode().empty()) command += " --hlo_argument_mode=" + r.hlo_argument_mode();
  std::string readme = "Reproduces the replay run from HLO Workbench.\n\n  " + command + "\n\n" +
                       "Outcome shown in the window:\n" +
                       replay_panel_->Verdict().toStdString() + "\n" +
                       replay_panel_->Details().toStdString() + "\n";
  return WriteStringToFile(out.filePath(QStringLiteral("README.txt")).toStdString(), readme);
}

bool MainWindow::ExportReplayBundle(const QString& dir) {
  const hlowb::worker::ReplayRequest& r = last_replay_;
  if ((r.module_path().empty() && r.module_text().empty()) || bundle_process_) return false;
  // The module as it ran: the file itself, or the shown state's text in a scratch file that
  // lives until the bundle is written.
  auto scratch = std::make_shared<QTemporaryDir>();
  QString input = Q(r.module_path());
  if (input.isEmpty()) {
    if (!scratch->isValid()) return false;
    input = scratch->filePath(QStringLiteral("module.hlo"));
    if (!WriteStringToFile(input.toStdString(), r.module_text()).ok()) return false;
  }
  QStringList args = {QStringLiteral("bundle"), input, QStringLiteral("-o"), dir};
  if (!r.reference_platform().empty()) {
    args << QStringLiteral("--reference_platform=") + Q(r.reference_platform());
  }
  if (!r.platform().empty()) args << QStringLiteral("--platform=") + Q(r.platform());
  args << QStringLiteral("--seed=%1").arg(static_cast<qulonglong>(r.seed()));
  if (r.force_fake_data()) args << QStringLiteral("--force_fake_data");
  if (r.abs_error_bound() > 0) {
    args << QStringLiteral("--abs_error_bound=%1").arg(r.abs_error_bound(), 0, 'g', 17);
  }
  if (r.rel_error_bound() > 0) {
    args << QStringLiteral("--rel_error_bound=%1").arg(r.rel_error_bound(), 0, 'g', 17);
  }
  auto* process = new QProcess(this);
  bundle_process_ = process;
  process->setProcessChannelMode(QProcess::MergedChannels);
  connect(process, &QProcess::finished, this,
          [this, process, scratch, dir](int code, QProcess::ExitStatus status) {
            const QString output = QString::fromUtf8(process->readAll()).trimmed();
            process->deleteLater();
            const bool ok = status == QProcess::NormalExit && code == 0;
            emit bundleExported(ok, ok ? dir : (output.isEmpty() ? tr("exit code %1").arg(code)
                                                                 : output));
          });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    process->deleteLater();
    emit bundleExported(false, tr("cannot start %1").arg(process->program()));
  });
  process->start(replay_->program(), args);
  return true;
}

QString MainWindow::ReducibleFailure(const hlowb::worker::ReplayResult* result, bool failed,
                                     const QString& error) const {
  const hlowb::worker::ReplayRequest& r = last_replay_;
  if (r.bisect_passes() || (r.module_path().empty() && r.module_text().empty())) return {};
  if (failed) {
    if (error == QStringLiteral("cancelled")) return {};
    return error.contains(QStringLiteral("crashed")) ? QStringLiteral("crash")
                                                      : QStringLiteral("error");
  }
  if (result == nullptr) return {};
  // A mismatch reduction needs a platform to compare with: a comparison against a snapshot's
  // recorded result has none.
  const bool reference = !r.reference_platform().empty();
  if (r.isolate_instructions()) {
    for (const auto& row : result->isolation()) {
      if (row.test_status() != "MATCHED" && row.test_status() != "RAN" &&
          row.test_status() != "SKIPPED") {
        return reference ? QStringLiteral("mismatch") : QString();
      }
    }
    return {};
  }
  if (result->has_nonfinite()) {
    return result->nonfinite().found() ? QStringLiteral("nonfinite") : QString();
  }
  bool compared = false;
  for (const auto& it : result->iterations()) compared |= !it.compared_against().empty();
  return compared && !result->all_match() && reference ? QStringLiteral("mismatch") : QString();
}

ReduceDialog* MainWindow::ShowReduceDialog(const QString& until, const QString& out_dir,
                                           bool start) {
  const hlowb::worker::ReplayRequest& r = last_replay_;
  if (r.bisect_passes() || (r.module_path().empty() && r.module_text().empty())) {
    statusBar()->showMessage(tr("Run a replay that fails first: Reduce… shrinks its module"),
                             8000);
    return nullptr;
  }
  if (reduce_dialog_ && reduce_dialog_->runner()->running()) {
    reduce_dialog_->show();
    reduce_dialog_->raise();
    statusBar()->showMessage(tr("A reduction is running"), 5000);
    return reduce_dialog_;
  }
  static QAtomicInt counter;
  const QString dir =
      !out_dir.isEmpty()
          ? out_dir
          : QDir(QDir::tempPath())
                .filePath(QStringLiteral("hlowb-reduce-%1-%2")
                              .arg(QCoreApplication::applicationPid())
                              .arg(counter.fetchAndAddRelaxed(1)));
  ReduceJob job;
  job.program = replay_->program();
  job.until = until;
  job.out_dir = dir;
  // The module as it ran: the file itself (a snapshot brings its arguments), or the shown
  // state's text next to what the reduction writes.
  job.input = Q(r.module_path());
  if (job.input.isEmpty()) {
    if (!QDir().mkpath(dir) ||
        !WriteStringToFile(QDir(dir).filePath(QStringLiteral("input.hlo")).toStdString(),
                           r.module_text())
             .ok()) {
      statusBar()->showMessage(tr("Cannot write the module to %1").arg(dir), 8000);
      return nullptr;
    }
    job.input = QDir(dir).filePath(QStringLiteral("input.hlo"));
  }
  if (!r.platform().empty()) job.replay_flags << QStringLiteral("--platform=") + Q(r.platform());
  if (until == QStringLiteral("mismatch") && !r.reference_platform().empty()) {
    job.replay_flags << QStringLiteral("--reference_platform=") + Q(r.reference_platform());
  }
  job.replay_flags << QStringLiteral("--seed=%1").arg(static_cast<qulonglong>(r.seed()));
  if (r.force_fake_data()) job.replay_flags << QStringLiteral("--force_fake_data");
  if (r.abs_error_bound() > 0) {
    job.replay_flags << QStringLiteral("--abs_error_bound=%1").arg(r.abs_error_bound(), 0, 'g', 17);
  }
  if (r.rel_error_bound() > 0) {
    job.replay_flags << QStringLiteral("--rel_error_bound=%1").arg(r.rel_error_bound(), 0, 'g', 17);
  }
  if (!r.host_transfers().empty()) {
    job.replay_flags << QStringLiteral("--host_transfers=") + Q(r.host_transfers());
  }
  QString description =
      tr("%1 — %2 on %3").arg(replay_run_label_, replay_panel_->Verdict(), Q(r.platform()));
  if (r.module_path().empty() && r.argument_snapshots_size() > 0 && !r.force_fake_data()) {
    description += tr("\nThe reduction runs on fake data from seed %1: the dump's snapshot "
                      "arguments are not carried over, so a failure that needs them may not "
                      "reproduce.")
                       .arg(static_cast<qulonglong>(r.seed()));
  }
  if (reduce_dialog_) reduce_dialog_->deleteLater();
  auto* dialog = new ReduceDialog(job, description, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose, false);
  reduce_dialog_ = dialog;
  connect(dialog, &ReduceDialog::openRequested, this, [this](const QString& path) {
    if (!path.isEmpty()) OpenInNewWindow(path);
  });
  connect(dialog, &ReduceDialog::reduceFinished, this, [this](const ReduceOutcome& o) {
    statusBar()->showMessage(o.ok ? tr("Reduced to %1 instructions: %2")
                                        .arg(o.reduced_instructions)
                                        .arg(o.reduced_path)
                                  : tr("Reduction failed: %1").arg(o.message),
                             15000);
  });
  dialog->show();
  if (start) dialog->Start();
  return dialog;
}

ReduceDialog* MainWindow::reduce_dialog() const { return reduce_dialog_.data(); }

MainWindow* MainWindow::OpenInNewWindow(const QString& path) {
  auto* w = new MainWindow();
  w->setAttribute(Qt::WA_DeleteOnClose);
  w->replay_->SetWorkerCommand(replay_->program(), replay_->worker_arguments());
  w->resize(size());
  w->show();
  w->OpenPath(path);
  return w;
}

}  // namespace hlowb::gui
