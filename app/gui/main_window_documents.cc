// The main window's documents: opening a file or a dump directory (on the loader's worker
// threads, with progress and Cancel), choosing one of the dump's modules, its pass timeline and
// the cache of parsed states (kept within a memory budget, parsed again when shown), moving
// along the timeline, and showing a state, or the error it failed with, in every view.
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>
#include <algorithm>
#include <string>
#include <utility>

#include "app/gui/main_window.h"
#include "viewer/graph/graph_cost_overlay.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/properties_panel.h"

namespace hlowb::gui {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Opening

void MainWindow::ConnectLoader() {
  // A comparison or a history trace waiting for states learns first that loading stopped.
  connect(loader_, &Loader::statesFinished, this, [this] { OnLoadingFinished(); });
  connect(loader_, &Loader::busyChanged, this, [this](bool busy) {
    if (!busy) OnLoadingFinished();
  });
  connect(loader_, &Loader::progress, this, [this](qint64 done, qint64 total, const QString& what) {
    progress_->setRange(0, total > 0 ? static_cast<int>(total) : 0);
    progress_->setValue(static_cast<int>(std::min<qint64>(done, std::max<qint64>(total, 0))));
    progress_->setToolTip(what);
    progress_->setFormat(total > 0 ? tr("%v/%m states") : QString());
  });
  connect(loader_, &Loader::busyChanged, this, [this](bool busy) {
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    CheckIdle();
  });
  connect(loader_, &Loader::indexReady, this, &MainWindow::OnIndexReady);
  connect(loader_, &Loader::indexFailed, this, &MainWindow::OnIndexFailed);
  connect(loader_, &Loader::fileOpened, this, &MainWindow::OnFileOpened);
  connect(loader_, &Loader::stateLoaded, this, &MainWindow::OnStateLoaded);
  connect(loader_, &Loader::statesFinished, this, [this](bool cancelled) {
    if (cancelled) statusBar()->showMessage(tr("Loading cancelled"), 5000);
    timeline_view_->resizeColumnsToContents();
    emit statesLoaded();
    CheckIdle();
  });
}

void MainWindow::Open(const OpenRequest& request) {
  QFileInfo info(request.path);
  if (request.path.isEmpty() || !info.exists()) {
    const QString message = tr("%1: no such file or directory").arg(request.path);
    statusBar()->showMessage(message, 10000);
    emit openFailed(message);
    return;
  }
  loader_->Cancel();
  // A filter typed for the previous dump would make the next one's module list look empty.
  if (info.absoluteFilePath() != current_path_) modules_filter_->clear();
  // Replay results name the previous document's instructions: they go with it.
  ForgetReplayResults();
  // Forget what was shown; views first, while the modules they show are still alive.
  pending_graph_select_ = nullptr;
  properties_->Clear();
  cost_overlay_->SetComputation(nullptr, nullptr);  // before its instructions go
  graph_->Clear();
  text_->Clear();
  computations_model_->SetModule(nullptr);
  timeline_filter_->SetKeptRow(-1);
  timeline_model_->SetEntries({});
  modules_model_->SetIndex(nullptr);
  session_.reset();
  module_index_ = -1;
  states_.clear();
  rows_.clear();
  wanted_row_ = shown_row_ = -1;
  waiting_for_state_ = false;
  module_.reset();
  computation_ = nullptr;
  computation_name_.clear();
  selected_name_.clear();

  current_path_ = info.absoluteFilePath();
  pending_request_ = request;
  pending_request_.path = current_path_;
  was_busy_ = true;
  if (info.isDir()) {
    loader_->IndexDirectory(current_path_);
  } else {
    loader_->OpenFile(current_path_);
  }
  AddRecent(current_path_);
  UpdateTitle();
  UpdateStateLabel();
  statusBar()->showMessage(tr("Opening %1…").arg(current_path_));
}

void MainWindow::CancelLoading() {
  const bool had_index = session_ != nullptr;
  loader_->Cancel();
  waiting_for_state_ = false;
  if (!had_index && !module_) statusBar()->showMessage(tr("Opening cancelled"), 5000);
  // The loader's workers finish their current file and stop; busyChanged follows.
  CheckIdle();
}

void MainWindow::OnIndexReady(std::shared_ptr<DumpSession> session) {
  session_ = std::move(session);
  const DumpIndex& index = session_->index();
  modules_model_->SetIndex(std::shared_ptr<const DumpIndex>(session_, &index));
  modules_view_->resizeColumnsToContents();
  statusBar()->showMessage(tr("%1: %n module(s), %2 files", "", static_cast<int>(index.modules.size()))
                               .arg(current_path_)
                               .arg(index.files.size()),
                           5000);
  emit indexLoaded(true);
  if (index.modules.empty()) {
    statusBar()->showMessage(tr("%1 holds no HLO module dumps").arg(current_path_), 10000);
    CheckIdle();
    return;
  }
  int chosen = 0;
  if (!pending_request_.module.isEmpty()) {
    const DumpModule* m = index.FindModule(pending_request_.module.toStdString());
    if (m) {
      chosen = static_cast<int>(m - index.modules.data());
    } else {
      statusBar()->showMessage(tr("No module '%1'; showing the first").arg(pending_request_.module),
                               10000);
    }
  }
  pending_request_.module.clear();
  ChooseModule(chosen);
}

void MainWindow::OnIndexFailed(const QString& dir, const QString& message) {
  const QString text = tr("Cannot index %1: %2").arg(dir, message);
  statusBar()->showMessage(text, 10000);
  text_->SetErrorText(text, 1, 1, message);
  emit indexLoaded(false);
  emit openFailed(text);
  CheckIdle();
}

void MainWindow::OnFileOpened(const FileResult& result) {
  if (result.status.ok()) {
    if (!pending_request_.select.isEmpty()) selected_name_ = pending_request_.select;
    pending_request_.select.clear();
    ShowModule(result.module, -1);
    QString message = tr("Opened %1 (%2)").arg(QFileInfo(result.path).fileName(), result.format);
    if (!result.warnings.isEmpty()) message += QStringLiteral(" — ") + result.warnings.join("; ");
    statusBar()->showMessage(message, 10000);
  } else {
    const QString diagnostic = Q(std::string(result.status.message()));
    ShowError(result.path, result.raw_text, diagnostic);
    emit stateShown(-1);
    emit openFailed(diagnostic);
  }
  CheckIdle();
}

// ---------------------------------------------------------------------------------------------
// The module and its timeline

bool MainWindow::SelectModule(const QString& id_or_name) {
  if (!session_) return false;
  const DumpIndex& index = session_->index();
  const DumpModule* m = index.FindModule(id_or_name.toStdString());
  if (!m) return false;
  ChooseModule(static_cast<int>(m - index.modules.data()));
  return true;
}

void MainWindow::OnModuleActivated(const QModelIndex& proxy_index) {
  if (syncing_ || !session_ || !proxy_index.isValid()) return;
  const DumpModule* m = modules_model_->ModuleAt(modules_proxy_->mapToSource(proxy_index).row());
  if (!m) return;
  int i = static_cast<int>(m - session_->index().modules.data());
  if (i != module_index_) ChooseModule(i);
}

void MainWindow::ChooseModule(int module_index) {
  const DumpIndex& index = session_->index();
  if (module_index < 0 || module_index >= static_cast<int>(index.modules.size())) return;
  const DumpModule& m = index.modules[module_index];
  module_index_ = module_index;

  // Reflect the choice in the modules view.
  syncing_ = true;
  for (int r = 0; r < modules_model_->rowCount(); ++r) {
    if (modules_model_->ModuleAt(r) == &m) {
      QModelIndex p = modules_proxy_->mapFromSource(
          static_cast<QAbstractItemModel*>(modules_model_)->index(r, 0));
      if (p.isValid()) {
        modules_view_->setCurrentIndex(p);
        modules_view_->scrollTo(p);
      }
      break;
    }
  }
  syncing_ = false;

  pending_graph_select_ = nullptr;
  if (replay_dump_module_ != module_index) ForgetReplayResults();  // another module's results
  compare_->ForgetModule();  // no comparison or diff base carries over
  history_->ForgetKeptStates();
  properties_->Clear();
  cost_overlay_->SetComputation(nullptr, nullptr);  // before its instructions go
  graph_->Clear();
  text_->Clear();
  computations_model_->SetModule(nullptr);
  module_.reset();
  computation_ = nullptr;
  computation_name_.clear();
  selected_name_.clear();
  shown_row_ = -1;

  states_ = index.Timeline(m);
  rows_.assign(states_.size(), RowState{});
  std::vector<viewer::TimelineEntry> entries;
  entries.reserve(states_.size());
  for (const DumpState& s : states_) {
    viewer::TimelineEntry e;
    e.state = s;
    entries.push_back(std::move(e));
  }
  syncing_ = true;
  timeline_filter_->SetKeptRow(-1);
  timeline_model_->SetEntries(std::move(entries));
  timeline_view_->resizeColumnsToContents();
  syncing_ = false;

  int row = 0;
  if (!pending_request_.step.isEmpty()) {
    const int found = FindStepRow(pending_request_.step);
    if (found < 0) {
      statusBar()->showMessage(tr("No state '%1'; showing the first").arg(pending_request_.step),
                               10000);
    } else {
      row = found;
    }
    pending_request_.step.clear();
  }
  if (!pending_request_.select.isEmpty()) {
    selected_name_ = pending_request_.select;
    pending_request_.select.clear();
  }
  std::vector<int> order = {row};
  for (int r = 0; r < static_cast<int>(states_.size()); ++r) {
    if (r != row) order.push_back(r);
  }
  wanted_row_ = row;
  waiting_for_state_ = true;
  loader_->LoadStates(session_, states_, order);
  SelectTimelineRow(row);
  UpdateTitle();
}

int MainWindow::FindStepRow(const QString& step) const {
  int found = -1;
  bool numeric = false;
  const qlonglong number = step.toLongLong(&numeric);
  for (int r = 0; r < static_cast<int>(states_.size()); ++r) {
    const DumpState& s = states_[r];
    if ((numeric && s.stage == StageKind::kPassStep && s.step == number) ||
        (step == QLatin1String("before") && s.stage == StageKind::kBeforeOptimizations) ||
        (step == QLatin1String("after") && s.stage == StageKind::kAfterOptimizations) ||
        (!numeric && Q(s.pass) == step) || Q(s.label) == step) {
      found = r;
      if (step != QLatin1String("after")) break;  // "after": the last after_optimizations
    }
  }
  return found;
}

bool MainWindow::SelectStep(const QString& step) {
  if (!session_ || module_index_ < 0) return false;
  const int row = FindStepRow(step);
  if (row < 0) return false;
  SelectTimelineRow(row);
  return true;
}

void MainWindow::SelectTimelineRow(int row) {
  QModelIndex proxy = timeline_filter_->mapFromSource(timeline_model_->index(row, 0));
  if (proxy.isValid()) {
    syncing_ = true;
    timeline_view_->setCurrentIndex(proxy);
    timeline_view_->scrollTo(proxy);
    syncing_ = false;
  }
  ShowState(row);
}

void MainWindow::OnTimelineCurrentChanged(const QModelIndex& current) {
  if (syncing_ || !current.isValid()) return;
  ShowState(timeline_filter_->mapToSource(current).row());
}

void MainWindow::ShowState(int row) {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return;
  wanted_row_ = row;
  const RowState& rs = rows_[row];
  if (waiting_for_state_ && (rs.module || rs.failed)) statusBar()->clearMessage();  // "Loading…"
  if (rs.module) {
    waiting_for_state_ = false;
    if (row != shown_row_ || rs.module != module_) ShowModule(rs.module, row);
  } else if (rs.failed) {
    waiting_for_state_ = false;
    const DumpIndex& index = session_->index();
    const int file = states_[row].file();
    QString path = file >= 0 ? Q(index.root + "/" + index.files[file].path) : QString();
    shown_row_ = row;
    ShowError(path, rs.raw_text, rs.error);
    emit stateShown(row);
  } else {
    waiting_for_state_ = true;
    statusBar()->showMessage(tr("Loading %1…").arg(Q(states_[row].label)));
    loader_->RequestState(row);
  }
  UpdateTitle();
  UpdateStateLabel();
  CheckIdle();
}

// ---------------------------------------------------------------------------------------------
// Parsed states: arriving, kept within the memory budget, counted in the timeline

void MainWindow::OnStateLoaded(const StateResult& result) {
  if (result.row < 0 || result.row >= static_cast<int>(rows_.size())) return;
  if (absl::IsCancelled(result.status)) return;  // not loaded; asked for again when needed
  RowState& rs = rows_[result.row];
  if (result.status.ok()) {
    rs.module = result.module;
    rs.fingerprint = result.fingerprint;
    rs.failed = false;
  } else {
    rs.failed = true;
    rs.error = Q(std::string(result.status.message()));
    rs.raw_text = result.raw_text;
  }
  RecomputeTimeline();
  if (result.row == wanted_row_ && (waiting_for_state_ || shown_row_ != wanted_row_)) {
    ShowState(result.row);
  }
  history_->OnStateLoaded(result.row);
  compare_->TryPendingCompare();
  TrimStates();
  CheckIdle();
}

void MainWindow::OnLoadingFinished() {
  if (loader_->busy()) return;
  // Whatever was requested and did not come will not come now.
  history_->OnLoadingFinished();
  compare_->OnLoadingFinished();
  CheckIdle();
}

int MainWindow::KeptStateCount() const {
  int n = 0;
  for (const RowState& rs : rows_) n += rs.module != nullptr;
  return n;
}

void MainWindow::TrimStates() {
  if (!session_) return;
  const DumpIndex& index = session_->index();
  auto bytes = [&](int r) -> uint64_t {
    const int f = states_[r].file();
    return f >= 0 && f < static_cast<int>(index.files.size()) ? index.files[f].size : 0;
  };
  // The shown and wanted states and their neighbours always stay (stepping stays instant).
  std::vector<bool> pinned(rows_.size(), false);
  for (int center : {shown_row_, wanted_row_}) {
    for (int r = center - 2; r <= center + 2; ++r) {
      if (center >= 0 && r >= 0 && r < static_cast<int>(rows_.size())) pinned[r] = true;
    }
  }
  std::vector<int> others;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    if (rows_[r].module && !pinned[r]) others.push_back(r);
  }
  std::sort(others.begin(), others.end(),
            [&](int a, int b) { return rows_[a].last_used > rows_[b].last_used; });
  uint64_t kept = 0;
  for (int r : others) {
    if (kept + bytes(r) <= state_budget_) {
      kept += bytes(r);
    } else {
      rows_[r].module.reset();  // the fingerprint stays; parsed again when shown
    }
  }
}

void MainWindow::RecomputeTimeline() {
  // Rows may disappear from the filter as they turn out unchanged; that must not move the
  // views to another state, so the view's current row is restored afterwards.
  const bool was_syncing = syncing_;
  syncing_ = true;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    const viewer::TimelineEntry* old = timeline_model_->EntryAt(r);
    if (!old) continue;
    viewer::TimelineEntry e = *old;
    const RowState& rs = rows_[r];
    e.failed = rs.failed;
    e.changed.reset();
    e.delta.reset();
    e.instruction_count.reset();
    if (rs.fingerprint) {
      e.instruction_count = rs.fingerprint->instruction_count;
      // Compare with the nearest earlier state that parsed (failed ones are skipped).
      int p = r - 1;
      while (p >= 0 && rows_[p].failed) --p;
      if (p >= 0 && rows_[p].fingerprint) {
        e.changed = rs.fingerprint->hash != rows_[p].fingerprint->hash;
        e.delta = rs.fingerprint->instruction_count - rows_[p].fingerprint->instruction_count;
      }
    }
    if (e.failed != old->failed || e.changed != old->changed || e.delta != old->delta ||
        e.instruction_count != old->instruction_count) {
      timeline_model_->UpdateEntry(r, e);
    }
  }
  const int row = wanted_row_ >= 0 ? wanted_row_ : shown_row_;
  if (row >= 0) {
    QModelIndex proxy = timeline_filter_->mapFromSource(timeline_model_->index(row, 0));
    if (proxy.isValid() && timeline_view_->currentIndex().row() != proxy.row()) {
      timeline_view_->setCurrentIndex(proxy);
    }
  }
  syncing_ = was_syncing;
}

// ---------------------------------------------------------------------------------------------
// Showing a state (or the error it failed with) in every view

void MainWindow::ShowModule(std::shared_ptr<const Module> module, int row) {
  if (!module) return;
  // The comparison's marks name the shown module's instructions.
  if (module != module_) compare_->EndComparison();
  syncing_ = true;
  pending_graph_select_ = nullptr;
  properties_->Clear();
  module_ = std::move(module);
  shown_row_ = row;
  wanted_row_ = row;
  timeline_filter_->SetKeptRow(row);
  waiting_for_state_ = false;
  if (row >= 0 && row < static_cast<int>(rows_.size())) rows_[row].last_used = ++use_clock_;
  computations_model_->SetModule(module_);
  text_->SetModule(module_);
  // Search highlights name this module's instructions (the old ones' pointers go).
  HighlightSearch(search_query_);

  const Computation* computation = nullptr;
  if (!computation_name_.isEmpty()) {
    computation = module_->FindComputation(computation_name_.toStdString());
  }
  if (!computation) computation = module_->entry();
  if (!computation && !module_->computations().empty()) {
    computation = module_->computations().back().get();
  }
  const Instruction* select = nullptr;
  if (!selected_name_.isEmpty()) {
    const std::string name = selected_name_.toStdString();
    if (computation) select = computation->FindInstruction(name);
    for (const auto& c : module_->computations()) {
      if (select) break;
      select = c->FindInstruction(name);
    }
  }
  if (select && !Reaches(computation, select->parent())) computation = select->parent();
  ShowComputation(computation, select);
  syncing_ = false;
  TrimStates();
  UpdateTitle();
  UpdateStateLabel();
  OnReplayModuleShown();
  emit stateShown(row);
  CheckIdle();
}

void MainWindow::ShowComputation(const Computation* computation, const Instruction* select) {
  const bool was_syncing = syncing_;
  syncing_ = true;
  computation_ = computation;
  pending_graph_select_ = select;
  // The overlay first: its heat map names the instructions the graph shows now.
  cost_overlay_->SetComputation(computation ? module_ : nullptr, computation);
  if (computation) {
    graph_->SetComputation(module_, computation);
  } else {
    pending_graph_select_ = nullptr;
    graph_->Clear();
  }
  int r = computation ? computations_model_->RowOf(computation) : -1;
  if (r >= 0) {
    computations_view_->selectRow(r);
    computations_view_->scrollTo(computations_model_->index(r, 0));
  } else {
    computations_view_->clearSelection();
  }
  if (select) {
    text_->ShowInstruction(select);
    properties_->SetInstruction(module_, select);
  } else {
    if (computation) text_->ShowComputation(computation);
    properties_->Clear();
  }
  syncing_ = was_syncing;
  UpdateStateLabel();
}

void MainWindow::ShowError(const QString& path, const QString& raw_text,
                           const QString& diagnostic) {
  pending_graph_select_ = nullptr;
  properties_->Clear();
  cost_overlay_->SetComputation(nullptr, nullptr);  // before its instructions go
  graph_->Clear();
  computations_model_->SetModule(nullptr);
  module_.reset();
  computation_ = nullptr;
  const ErrorLocation loc = ParseErrorLocation(diagnostic);
  if (raw_text.isEmpty()) {
    text_->SetErrorText(diagnostic, 1, 1, loc.message);
  } else {
    text_->SetErrorText(raw_text, loc.line, loc.column, loc.message);
  }
  const bool located = loc.message != diagnostic.section('\n', 0, 0);
  statusBar()->showMessage(
      located ? tr("%1 did not parse: line %2, column %3: %4")
                    .arg(QFileInfo(path).fileName())
                    .arg(loc.line)
                    .arg(loc.column)
                    .arg(loc.message)
              : tr("%1 did not parse: %2").arg(QFileInfo(path).fileName(), loc.message),
      15000);
  UpdateTitle();
  UpdateStateLabel();
}

void MainWindow::OnComputationActivated(const QModelIndex& index) {
  if (syncing_ || !module_ || !index.isValid()) return;
  const Computation* computation = computations_model_->ComputationAt(index.row());
  if (!computation || computation == computation_) return;
  computation_name_ = Q(computation->name());
  const Instruction* keep = nullptr;
  if (!selected_name_.isEmpty()) keep = computation->FindInstruction(selected_name_.toStdString());
  ShowComputation(computation, keep);
}

}  // namespace hlowb::gui
