// The Memory dock of the main window: see memory_controller.h.
#include "app/gui/memory_controller.h"

#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QScrollArea>
#include <QStatusBar>
#include <QThread>
#include <QThreadPool>
#include <QTimer>
#include <QVBoxLayout>
#include <QWidget>
#include <string>
#include <utility>

#include "app/gui/main_window.h"
#include "app/gui/memory_source.h"
#include "viewer/widgets/memory_view.h"
#include "viewer/widgets/thread_priority.h"

namespace hlowb::gui {

namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

MemoryController::MemoryController(MainWindow* window) : QObject(window), window_(window) {
  pool_ = new QThreadPool(this);
  // The shown state's profile and the comparison base's may be computed side by side.
  pool_->setMaxThreadCount(2);

  view_ = new viewer::MemoryView;
  view_->setObjectName(QStringLiteral("memoryView"));
  status_ = new QLabel;
  status_->setObjectName(QStringLiteral("memoryOrigin"));
  // One line: a long path is cut rather than widening the dock (its tooltip has it whole).
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setContentsMargins(4, 0, 4, 2);
  // The view needs some height (summary, chart, tables): in a short dock it scrolls rather
  // than squeezing the chart.
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("memoryScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(view_);
  auto* box = new QWidget;
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(scroll, 1);
  layout->addWidget(status_);

  dock_ = new QDockWidget(tr("Memory"), window_);
  dock_->setObjectName(QStringLiteral("memoryDock"));
  dock_->setWidget(box);
  dock_->setToolTip(tr("Memory over the schedule of the shown state: XLA's buffer assignment "
                       "when the dump has one for it, else hlowb's own"));

  connect(window_, &MainWindow::stateShown, this, [this](int) {
    if (on_screen_) {
      Schedule();
      return;
    }
    // Hidden: nothing is computed; what was on its way is no longer wanted.
    Stop(shown_);
    shown_.has_key = false;
  });
  connect(window_, &MainWindow::comparisonChanged, this, [this](int) {
    if (on_screen_) {
      Schedule();
      return;
    }
    Stop(base_);
    base_.has_key = false;
  });
  // visibilityChanged follows the tab too: a dock behind another tab is not on screen, though
  // isVisible() may say it is.
  connect(dock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    on_screen_ = visible;
    if (visible) Schedule();
  });
  connect(view_, &viewer::MemoryView::instructionActivated, this,
          &MemoryController::OnInstructionActivated);
  // The window's selection is marked on the chart (the profile of an unscheduled module names
  // the same instructions, plus the copies hlowb adds).
  connect(window_, &MainWindow::instructionSelectionChanged, this,
          [this](const Instruction* instruction) {
            view_->SetMarkedInstruction(instruction != nullptr
                                            ? QString::fromStdString(instruction->name())
                                            : QString());
          });

  // A tab behind Properties: there for a new user to find, and computing nothing until it is
  // brought to the front.
  window_->AddDock(dock_, Qt::RightDockWidgetArea, /*visible=*/true);
}

MemoryController::~MemoryController() {
  // The window's signals and the view's stop reaching this with it; a result posted by a job
  // that finishes meanwhile is dropped with it.
  Stop(shown_);
  Stop(base_);
  pool_->clear();
  pool_->waitForDone();
}

void MemoryController::Refresh() {
  if (!on_screen_) return;
  ShowState();
  ShowBaseline();
}

void MemoryController::Schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  // The window paints what changed first (a state's views, the dock); the profile's job then
  // does not compete with that painting for the CPU.
  QTimer::singleShot(0, this, [this] {
    scheduled_ = false;
    Refresh();
  });
}

uint64_t MemoryController::CurrentDocument() {
  // A dump directory is its session; a single file is its module (opening it again, or another
  // file, makes a new one).
  std::shared_ptr<const void> identity = window_->dump_session();
  if (identity == nullptr && window_->current_state_row() < 0) identity = window_->current_module();
  const bool same = identity != nullptr && identity.get() == document_identity_ &&
                    !document_alive_.expired();
  if (!same && identity != nullptr) {
    document_identity_ = identity.get();
    document_alive_ = identity;
    ++document_;
    cache_.clear();
  }
  return document_;
}

QString MemoryController::LabelOf(const Module* module, int row) const {
  QString name;
  const std::shared_ptr<const DumpSession> session = window_->dump_session();
  const int module_index = window_->current_module_index();
  if (module != nullptr) {
    name = Q(module->name());
  } else if (session != nullptr && module_index >= 0 &&
             module_index < static_cast<int>(session->index().modules.size())) {
    name = Q(session->index().modules[module_index].name);
  }
  const std::vector<DumpState>& states = window_->states();
  if (row >= 0 && row < static_cast<int>(states.size())) {
    return name.isEmpty() ? Q(states[row].label)
                          : QStringLiteral("%1: %2").arg(name, Q(states[row].label));
  }
  const QString file = QFileInfo(window_->current_path()).fileName();
  if (file.isEmpty()) return name;
  return name.isEmpty() ? file : QStringLiteral("%1: %2").arg(name, file);
}

void MemoryController::ShowState() {
  const uint64_t document = CurrentDocument();
  std::shared_ptr<const Module> module = window_->current_module();
  const int row = window_->current_state_row();
  const std::shared_ptr<const DumpSession> session = window_->dump_session();
  const bool dump_row =
      session != nullptr && row >= 0 && row < static_cast<int>(window_->states().size());
  const Key key{document, dump_row ? window_->current_module_index() : -1, dump_row ? row : -1};
  if (shown_.has_key && shown_.key == key) return;  // shown, or on its way
  Stop(shown_);
  shown_.has_key = false;
  // A state that did not parse still has XLA's buffer assignment when the dump holds one.
  const bool has_file =
      dump_row && !FindBufferAssignmentFile(session->index(), window_->current_module_index(),
                                            window_->states()[row])
                       .empty();
  if (module == nullptr && !has_file) {
    origin_.clear();
    origin_ms_ = -1;
    shown_source_.clear();
    if (dump_row) {
      shown_status_ = tr("No memory profile");
      view_->SetError(tr("%1 did not parse: there is no module to profile.")
                          .arg(LabelOf(nullptr, row)));
    } else {
      shown_status_.clear();
      view_->Clear();  // nothing open; the baseline goes too
      Stop(base_);
      base_.has_key = false;
      base_status_.clear();
    }
    UpdateStatus();
    emit profileShown();
    return;
  }
  shown_.key = key;
  shown_.has_key = true;
  if (const Cached* cached = Find(key)) {
    view_->SetProfile(cached->profile, cached->label);
    shown_source_ = Q(cached->profile->source);
    origin_ = cached->origin;
    origin_ms_ = -1;
    UpdateStatus();
    emit profileShown();
    return;
  }
  Start(Which::kShown, key, std::move(module), dump_row ? row : -1,
        LabelOf(window_->current_module().get(), dump_row ? row : -1));
}

void MemoryController::ShowBaseline() {
  const int base_row = window_->compared_base_row();
  std::shared_ptr<const Module> base = window_->compared_base_module();
  const std::shared_ptr<const DumpSession> session = window_->dump_session();
  if (base_row < 0 || base == nullptr || session == nullptr ||
      base_row >= static_cast<int>(window_->states().size())) {
    const bool had = base_.has_key || view_->baseline() != nullptr;
    Stop(base_);
    base_.has_key = false;
    if (had) {
      view_->SetBaseline(nullptr, QString());
      base_status_.clear();
      UpdateStatus();
      emit baselineShown();
    }
    return;
  }
  const Key key{CurrentDocument(), window_->current_module_index(), base_row};
  if (base_.has_key && base_.key == key) return;  // shown, or on its way
  Stop(base_);
  base_.key = key;
  base_.has_key = true;
  // Until the new base's profile is there, no stale one stands beside the shown state.
  view_->SetBaseline(nullptr, QString());
  if (const Cached* cached = Find(key)) {
    view_->SetBaseline(cached->profile, cached->label);
    base_status_ = tr("compared with %1").arg(cached->label);
    UpdateStatus();
    emit baselineShown();
    return;
  }
  Start(Which::kBase, key, base, base_row, LabelOf(base.get(), base_row));
}

void MemoryController::Start(Which which, const Key& key, std::shared_ptr<const Module> module,
                             int row, const QString& label) {
  Slot& slot = which == Which::kShown ? shown_ : base_;
  MemorySourceRequest request;
  request.module = std::move(module);
  request.label = label;
  const std::shared_ptr<const DumpSession> session = window_->dump_session();
  if (session != nullptr && row >= 0 && row < static_cast<int>(window_->states().size())) {
    request.buffer_assignment_file =
        FindBufferAssignmentFile(session->index(), key.module_index, window_->states()[row]);
  }
  auto cancel = std::make_shared<CancelToken>();
  slot.cancel = cancel;
  slot.running = true;
  const uint64_t generation = ++slot.generation;
  ++jobs_started_;
  if (which == Which::kShown) {
    origin_.clear();
    origin_ms_ = -1;
    shown_source_.clear();
    shown_status_ = tr("Computing…");
    view_->SetBusy(tr("Computing the memory profile of %1…").arg(label));
  } else {
    base_status_ = tr("computing the baseline, %1…").arg(label);
  }
  UpdateStatus();
  pool_->start([this, which, generation, key, request = std::move(request), cancel] {
    viewer::LowerThisThreadPriority();
    absl::StatusOr<MemorySourceResult> result = LoadMemoryProfile(request, cancel.get());
    const bool cancelled =
        cancel->IsCancelled() || result.status().code() == absl::StatusCode::kCancelled;
    std::shared_ptr<const MemoryProfile> profile;
    QString label = request.label, origin, error;
    double seconds = 0;
    if (result.ok()) {
      profile = result->profile;
      label = result->label;
      origin = result->origin;
      seconds = result->seconds;
    } else {
      error = Q(std::string(result.status().message()));
    }
    // Delivered on the UI thread; dropped if the controller is gone by then (the destructor
    // waits for this job, so it is alive while the call is posted).
    QMetaObject::invokeMethod(
        this,
        [this, which, generation, key, ok = result.ok(), profile, label, origin, seconds, error,
         cancelled] {
          Finish(which, generation, key, ok, profile, label, origin, seconds, error, cancelled);
        },
        Qt::QueuedConnection);
  });
}

void MemoryController::Finish(Which which, uint64_t generation, const Key& key, bool ok,
                              std::shared_ptr<const MemoryProfile> profile, const QString& label,
                              const QString& origin, double seconds, const QString& error,
                              bool cancelled) {
  // A finished profile is worth keeping even when the user has moved on.
  if (ok && profile != nullptr && key.document == document_) {
    Remember(key, profile, label, origin);
  }
  Slot& slot = which == Which::kShown ? shown_ : base_;
  if (generation != slot.generation) return;  // superseded
  slot.running = false;
  slot.cancel.reset();
  if (cancelled) {
    slot.has_key = false;
    return;
  }
  if (which == Which::kShown) {
    if (ok && profile != nullptr) {
      view_->SetProfile(profile, label);
      shown_source_ = Q(profile->source);
      origin_ = origin;
      origin_ms_ = static_cast<qint64>(seconds * 1000.0 + 0.5);
    } else {
      view_->SetError(error);
      origin_.clear();
      origin_ms_ = -1;
      shown_source_.clear();
      shown_status_ = tr("No memory profile");
    }
    UpdateStatus();
    emit profileShown();
    return;
  }
  if (ok && profile != nullptr) {
    view_->SetBaseline(profile, label);
    base_status_ = tr("compared with %1").arg(label);
  } else {
    view_->SetBaseline(nullptr, QString());
    base_status_ = tr("no baseline: %1").arg(error);
  }
  UpdateStatus();
  emit baselineShown();
}

void MemoryController::Stop(Slot& slot) {
  if (slot.cancel != nullptr) slot.cancel->Cancel();
  slot.cancel.reset();
  slot.running = false;
  ++slot.generation;
}

const MemoryController::Cached* MemoryController::Find(const Key& key) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->key == key) {
      cache_.splice(cache_.begin(), cache_, it);  // most recently used first
      return &cache_.front();
    }
  }
  return nullptr;
}

void MemoryController::Remember(const Key& key, std::shared_ptr<const MemoryProfile> profile,
                                const QString& label, const QString& origin) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->key == key) {
      cache_.erase(it);
      break;
    }
  }
  cache_.push_front(Cached{key, std::move(profile), label, origin});
  while (static_cast<int>(cache_.size()) > kCachedProfiles) cache_.pop_back();
}

void MemoryController::UpdateStatus() {
  QString line = origin_.isEmpty() ? shown_status_ : origin_;
  if (!origin_.isEmpty() && origin_ms_ > 0) line += tr(" · %1 ms").arg(origin_ms_);
  if (!base_status_.isEmpty()) line += QStringLiteral(" · ") + base_status_;
  status_->setText(line);
  status_->setToolTip(line);
}

void MemoryController::OnInstructionActivated(const QString& name) {
  if (name.isEmpty() || window_->SelectInstructionByName(name)) return;
  // The profile names an instruction the shown module does not have: hlowb's buffer
  // assignment works on a scheduled copy (which may gain copies), and XLA's file on the module
  // XLA compiled.
  QString why;
  if (shown_source_ == QLatin1String("hlowb")) {
    why = tr(" (hlowb's buffer assignment added it)");
  } else if (shown_source_ == QLatin1String("xla")) {
    why = tr(" (only XLA's buffer assignment names it)");
  }
  window_->statusBar()->showMessage(tr("%1 is not in the shown module%2").arg(name, why),
                                    10000);
}

}  // namespace hlowb::gui
