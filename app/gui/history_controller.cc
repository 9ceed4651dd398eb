// The History dock of the main window: see history_controller.h.
#include "app/gui/history_controller.h"

#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QPointer>
#include <QTableWidget>
#include <QThreadPool>
#include <QTimer>
#include <algorithm>

#include "viewer/widgets/history_panel.h"

namespace hlowb::gui {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

HistoryController::HistoryController(QMainWindow* window, Host* host,
                                     QDockWidget* properties_dock, QMenu* view_menu)
    : QObject(window), window_(window), host_(host) {
  panel_ = new viewer::HistoryPanel;
  panel_->setObjectName(QStringLiteral("historyPanel"));
  pool_ = new QThreadPool(this);
  pool_->setMaxThreadCount(1);
  latest_ = std::make_shared<std::atomic<uint64_t>>(0);
  dock_ = new QDockWidget(tr("History"), window_);
  dock_->setObjectName(QStringLiteral("historyDock"));
  dock_->setWidget(panel_);
  window_->addDockWidget(Qt::RightDockWidgetArea, dock_);
  if (properties_dock != nullptr) {
    window_->tabifyDockWidget(properties_dock, dock_);
    properties_dock->raise();
  }
  connect(dock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible) {
      Schedule();
    } else {
      keep_.clear();  // the states loaded for it may go
    }
  });
  connect(panel_, &viewer::HistoryPanel::stateActivated, this,
          [this](int state, const QString& name) {
            if (state < 0 || state >= static_cast<int>(host_->TimelineStates().size())) return;
            host_->ShowStateSelecting(state, name);
          });
  view_menu->addAction(dock_->toggleViewAction());
  // The dock's own toggle closes History when it is a tab behind Properties (it counts as
  // shown there); the shortcut brings it to the front instead, and closes it only when it is
  // already in front.
  QAction* show_history = view_menu->addAction(tr("Show &History"), this, [this] {
    if (dock_->isVisible() && !dock_->visibleRegion().isEmpty()) {
      dock_->close();
      return;
    }
    dock_->show();
    dock_->raise();
  });
  show_history->setObjectName(QStringLiteral("showHistory"));
  show_history->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H));
  show_history->setShortcutContext(Qt::WindowShortcut);
}

HistoryController::~HistoryController() {
  // The panel and its dock belong to the window; their signals must not reach this any more.
  QObject::disconnect(dock_, nullptr, this, nullptr);
  QObject::disconnect(panel_, nullptr, this, nullptr);
  *latest_ = ~uint64_t{0};
  pool_->clear();
  pool_->waitForDone();
}

bool HistoryController::IsBusy() const { return scheduled_ || tracing_ || waiting_; }

void HistoryController::ForgetKeptStates() { keep_.clear(); }

void HistoryController::Schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  QTimer::singleShot(0, this, [this] {
    scheduled_ = false;
    Update();
    host_->CheckIdle();
  });
}

void HistoryController::Update() {
  if (!dock_->isVisible()) return;
  const std::shared_ptr<const Module> module = host_->ShownModule();
  const std::vector<DumpState>& states = host_->TimelineStates();
  const int n = static_cast<int>(states.size());
  const int shown_row = host_->ShownRow();
  const QString selected = host_->SelectedName();
  const bool have = module && host_->HasDumpSession() && shown_row >= 0 && shown_row < n &&
                    !selected.isEmpty();
  if (!have) {
    key_.clear();
    *latest_ = ++generation_;
    tracing_ = waiting_ = false;
    panel_->Clear();
    panel_->SetMessage(module && shown_row < 0
                           ? tr("History follows an instruction through the passes of a dump "
                                "directory; open one to see it")
                           : tr("Select an instruction to see its history across the passes"));
    return;
  }
  const QString key = QString::number(shown_row) + QLatin1Char('/') + selected;
  if (key == key_) return;  // shown, or on its way
  key_ = key;
  // Moving along the history shown (clicking one of its rows) keeps it.
  if (!tracing_ && !waiting_) {
    for (const viewer::HistoryPanel::Row& r : panel_->rows()) {
      if (r.state == shown_row && r.name == selected) return;
    }
  }
  *latest_ = ++generation_;
  tracing_ = false;
  panel_->SetSubject(tr("%1 in %2").arg(selected, Q(states[shown_row].label)));
  keep_.resize(n);
  int missing = 0;
  for (int r = 0; r < n; ++r) {
    if (std::shared_ptr<const Module> m = host_->StateModule(r)) {
      keep_[r] = std::move(m);  // held for the trace even when trimmed
    } else if (!host_->StateFailed(r) && !keep_[r]) {
      ++missing;
      host_->RequestState(r);
    }
  }
  if (missing > 0) {
    waiting_ = true;
    panel_->SetProgress(tr("Loading states"), n - missing, n);
    return;
  }
  waiting_ = false;
  StartTrace();
}

void HistoryController::OnStateLoaded(int row) {
  const int n = static_cast<int>(host_->TimelineStates().size());
  if (row < 0 || row >= n) return;
  if (dock_->isVisible() && row < static_cast<int>(keep_.size())) {
    if (std::shared_ptr<const Module> m = host_->StateModule(row)) keep_[row] = std::move(m);
  }
  if (!waiting_) return;
  // The states held are those of the trace asked for; after another module was chosen they are
  // gone (and Update, scheduled by the state shown, asks for the new module's).
  int missing = 0;
  for (int r = 0; r < n; ++r) {
    if (!host_->StateFailed(r) && (r >= static_cast<int>(keep_.size()) || !keep_[r])) ++missing;
  }
  panel_->SetProgress(tr("Loading states"), n - missing, n);
  if (missing > 0) return;
  waiting_ = false;
  StartTrace();
}

void HistoryController::OnLoadingFinished() {
  // Whatever was requested and did not come will not come now.
  if (waiting_) {
    waiting_ = false;
    StartTrace();
  }
}

void HistoryController::StartTrace() {
  const std::vector<DumpState>& states = host_->TimelineStates();
  const int n = static_cast<int>(states.size());
  const int start = host_->ShownRow();
  const QString selected = host_->SelectedName();
  if (start < 0 || start >= n || selected.isEmpty()) return;
  keep_.resize(n);
  auto modules = std::make_shared<std::vector<std::shared_ptr<const Module>>>(n);
  std::vector<TimelineInput> inputs(n);
  for (int r = 0; r < n; ++r) {
    const DumpState& s = states[r];
    TimelineInput& in = inputs[r];
    in.label = s.label;
    in.step = s.step;
    in.pipeline = s.pipeline;
    in.pass = s.pass;
    in.is_pass = s.stage == StageKind::kPassStep;
    std::shared_ptr<const Module> m = host_->StateModule(r);
    (*modules)[r] = m ? m : keep_[r];
    in.module = (*modules)[r].get();
  }
  const uint64_t generation = generation_;
  const std::string name = selected.toStdString();
  tracing_ = true;
  panel_->SetProgress(tr("Tracing"), 0, std::max(1, n - 1));
  std::shared_ptr<std::atomic<uint64_t>> latest = latest_;
  QPointer<HistoryController> self(this);
  pool_->clear();
  pool_->start([self, latest, generation, modules, inputs, start, name] {
    if (latest->load() != generation) return;
    std::string error;
    std::vector<ProvenanceStep> steps =
        TraceInstruction(inputs, start, name, &error, [&](int done, int total) {
          if (latest->load() != generation) return false;
          QMetaObject::invokeMethod(
              QCoreApplication::instance(),
              [self, generation, done, total] {
                if (self && self->generation_ == generation && self->tracing_) {
                  self->panel_->SetProgress(HistoryController::tr("Tracing"), done, total);
                }
              },
              Qt::QueuedConnection);
          return true;
        });
    if (latest->load() != generation) return;
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, generation, steps, error] {
          if (self) self->FinishTrace(generation, steps, error);
        },
        Qt::QueuedConnection);
  });
}

void HistoryController::FinishTrace(uint64_t generation, const std::vector<ProvenanceStep>& steps,
                                    const std::string& error) {
  if (generation != generation_) return;
  tracing_ = false;
  if (steps.empty()) {
    panel_->SetMessage(error.empty() ? tr("No history") : Q(error));
    host_->CheckIdle();
    return;
  }
  const std::vector<DumpState>& states = host_->TimelineStates();
  std::vector<viewer::HistoryPanel::Row> rows;
  for (int r = 0; r < static_cast<int>(steps.size()) && r < static_cast<int>(states.size()); ++r) {
    const ProvenanceStep& s = steps[r];
    viewer::HistoryPanel::Row row;
    row.state = r;
    row.label = Q(s.label);
    row.pass = Q(states[r].pass);
    row.name = Q(s.name);
    row.event = Q(s.event);
    row.eventful = s.event != "present" && s.event != "absent" && s.event != "not loaded";
    rows.push_back(std::move(row));
  }
  panel_->SetRows(std::move(rows));
  // Keep the shown state's row in view.
  const int shown_row = host_->ShownRow();
  if (shown_row >= 0 && shown_row < panel_->table()->rowCount()) {
    panel_->table()->selectRow(shown_row);
    panel_->table()->scrollToItem(panel_->table()->item(shown_row, 0));
  }
  host_->CheckIdle();
}

}  // namespace hlowb::gui
