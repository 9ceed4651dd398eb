// Comparing two states of the main window's module: see compare_controller.h.
#include "app/gui/compare_controller.h"

#include <QAction>
#include <QCoreApplication>
#include <QFrame>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QPointer>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>
#include <algorithm>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/analysis/diff.h"
#include "core/ir/opcode.h"
#include "core/text/printer.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_diff_view.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/properties_panel.h"

namespace hlowb::gui {
namespace {

// Modules at least this large are diffed on a worker thread.
constexpr int64_t kAsyncDiffInstructions = 2000;

QString Q(const std::string& s) { return QString::fromStdString(s); }

std::string Clip(std::string s, size_t max) {
  if (s.size() > max) s = s.substr(0, max - 1) + "…";
  return s;
}

}  // namespace

CompareController::CompareController(QMainWindow* window, Host* host, const Views& views)
    : QObject(window), window_(window), host_(host), views_(views) {
  // The text pane: the text view, or while comparing side by side the two-sided diff.
  text_stack_ = new QStackedWidget;
  text_stack_->setObjectName(QStringLiteral("textStack"));
  text_stack_->addWidget(views_.text);
  diff_view_ = new viewer::HloDiffView;
  diff_view_->setObjectName(QStringLiteral("diffView"));
  text_stack_->addWidget(diff_view_);

  // The diff bar: what the shown state was compared with and the counts by kind (the change
  // walk and side by side follow in BuildControls).
  diff_bar_ = new QFrame;
  diff_bar_->setObjectName(QStringLiteral("diffBar"));
  diff_bar_->setFrameShape(QFrame::StyledPanel);
  auto* bar = new QHBoxLayout(diff_bar_);
  bar->setContentsMargins(6, 2, 6, 2);
  diff_summary_ = new QLabel;
  diff_summary_->setObjectName(QStringLiteral("diffSummary"));
  diff_summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long summary wraps instead of widening the central area (which would squeeze the docks
  // the user sized, or widen the window past the screen).
  diff_summary_->setWordWrap(true);
  diff_summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  diff_summary_->setMinimumWidth(120);
  auto* diff_close = new QToolButton;
  diff_close->setText(tr("Clear"));
  diff_close->setToolTip(tr("Stop comparing"));
  connect(diff_close, &QToolButton::clicked, this, [this] { Clear(); });
  bar->addWidget(diff_summary_, 1);
  bar->addWidget(diff_close);
  diff_bar_->hide();

  connect(diff_view_, &viewer::HloDiffView::instructionActivated, this,
          [this](const hlowb::Instruction* instruction) {
            if (host_->IsSyncing() || !instruction) return;
            from_diff_view_ = true;
            host_->SelectInViews(instruction);
            from_diff_view_ = false;
          });
  connect(diff_view_, &viewer::HloDiffView::diffLoaded, this, [this] { host_->CheckIdle(); });
}

CompareController::~CompareController() = default;

QWidget* CompareController::text_pane() const { return text_stack_; }

void CompareController::BuildControls(viewer::TimelineModel* model,
                                      viewer::TimelineFilterModel* filter, QTableView* view,
                                      QMenu* view_menu) {
  // The diff bar: the change walk of the side-by-side view, side by side on or off.
  auto* bar = static_cast<QHBoxLayout*>(diff_bar_->layout());
  auto* previous = new QToolButton;
  previous->setObjectName(QStringLiteral("diffPrevious"));
  previous->setArrowType(Qt::UpArrow);
  previous->setToolTip(tr("Previous change (Ctrl+[)"));
  connect(previous, &QToolButton::clicked, this, [this] { StepChange(true, false); });
  auto* next = new QToolButton;
  next->setObjectName(QStringLiteral("diffNext"));
  next->setArrowType(Qt::DownArrow);
  next->setToolTip(tr("Next change (Ctrl+])"));
  connect(next, &QToolButton::clicked, this, [this] { StepChange(false, false); });
  side_by_side_ = QSettings().value(QStringLiteral("view/sideBySide"), true).toBool();
  side_by_side_button_ = new QToolButton;
  side_by_side_button_->setObjectName(QStringLiteral("sideBySide"));
  side_by_side_button_->setText(tr("Side by Side"));
  side_by_side_button_->setToolTip(
      tr("Show the two states' text side by side, aligned by the structural match"));
  side_by_side_button_->setCheckable(true);
  side_by_side_button_->setChecked(side_by_side_);
  connect(side_by_side_button_, &QToolButton::toggled, this,
          [this](bool on) { SetSideBySide(on); });
  bar->insertWidget(1, previous);
  bar->insertWidget(2, next);
  bar->insertWidget(3, side_by_side_button_);

  timeline_model_ = model;
  timeline_filter_ = filter;
  timeline_view_ = view;
  // The timeline: Ctrl+click a second state and compare the two; a context menu for the rest.
  timeline_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  timeline_view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(timeline_view_, &QWidget::customContextMenuRequested, this,
          &CompareController::ShowTimelineMenu);
  timeline_view_->setToolTip(timeline_view_->toolTip() +
                             tr("; Ctrl+click a second state, then Compare Selected States "
                                "(context menu) to diff any two"));

  view_menu->addSeparator();
  QAction* compare_selected = view_menu->addAction(tr("Compare &Selected States"), this,
                                                   [this] { CompareSelectedStates(); });
  compare_selected->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  view_menu->addAction(tr("Set Shown State as Diff &Base"), this,
                       [this] { SetDiffBase(host_->ShownRow()); });
  view_menu->addAction(tr("Compare with Diff B&ase"), this, [this] { CompareWithDiffBase(); });
  QAction* sbs = view_menu->addAction(tr("Side-by-Side &Diff"));
  sbs->setCheckable(true);
  sbs->setChecked(side_by_side_);
  connect(sbs, &QAction::toggled, side_by_side_button_, &QToolButton::setChecked);
  connect(side_by_side_button_, &QToolButton::toggled, sbs, &QAction::setChecked);
}

void CompareController::ShowStatus(const QString& message, int timeout_ms) {
  window_->statusBar()->showMessage(message, timeout_ms);
}

// ---------------------------------------------------------------------------------------------
// Choosing what to compare

bool CompareController::CompareWithPreviousStep() {
  const int shown_row = host_->ShownRow();
  if (!host_->ShownModule() || shown_row <= 0 ||
      shown_row >= static_cast<int>(host_->TimelineStates().size())) {
    ShowStatus(tr("No previous step to compare with"), 5000);
    return false;
  }
  return CompareWithRow(shown_row - 1);
}

bool CompareController::CompareWithBeforeOptimizations() {
  const int row = host_->FindStepRow(QStringLiteral("before"));
  if (!host_->ShownModule() || row < 0 || row == host_->ShownRow()) {
    ShowStatus(tr("No before_optimizations state to compare with"), 5000);
    return false;
  }
  return CompareWithRow(row);
}

bool CompareController::CompareWithRow(int previous) {
  if (!host_->ShownModule() || previous < 0 ||
      previous >= static_cast<int>(host_->TimelineStates().size())) {
    return false;
  }
  return CompareRows(previous, host_->ShownRow());
}

bool CompareController::CompareRows(int base_row, int row) {
  const int n = static_cast<int>(host_->TimelineStates().size());
  if (base_row < 0 || row < 0 || base_row >= n || row >= n || base_row == row) {
    ShowStatus(tr("Choose two different states to compare"), 5000);
    return false;
  }
  pending_base_ = base_row;
  pending_row_ = row;
  pending_requested_ = false;
  if (host_->WantedRow() != row || host_->ShownRow() != row) host_->SelectTimelineRow(row);
  TryPendingCompare();
  return pending_base_ < 0 && (diff_computing_ || compared_base_row_ == base_row);
}

bool CompareController::CompareSelectedStates() {
  std::vector<int> rows;
  for (const QModelIndex& index : timeline_view_->selectionModel()->selectedRows()) {
    rows.push_back(timeline_filter_->mapToSource(index).row());
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (rows.size() != 2) {
    ShowStatus(tr("Select two states in the timeline (Ctrl+click the second) to compare them"),
               8000);
    return false;
  }
  return CompareRows(rows[0], rows[1]);
}

void CompareController::SetDiffBase(int row) {
  const std::vector<DumpState>& states = host_->TimelineStates();
  if (row < 0 || row >= static_cast<int>(states.size())) return;
  diff_base_row_ = row;
  UpdateTimelineMarks();
  ShowStatus(tr("Diff base: %1. Show another state and choose Compare with Diff Base.")
                 .arg(Q(states[row].label)),
             8000);
}

bool CompareController::CompareWithDiffBase() {
  if (diff_base_row_ < 0) {
    ShowStatus(tr("No diff base: choose Set as Diff Base on a timeline state"), 5000);
    return false;
  }
  const int wanted_row = host_->WantedRow();
  return CompareRows(diff_base_row_, wanted_row >= 0 ? wanted_row : host_->ShownRow());
}

void CompareController::Clear() {
  pending_base_ = pending_row_ = -1;
  EndComparison();
  host_->CheckIdle();
}

void CompareController::ForgetModule() {
  Clear();
  diff_base_row_ = -1;
}

QString CompareController::diff_summary() const {
  return diff_bar_->isVisible() ? diff_summary_->text() : QString();
}

bool CompareController::IsBusy() const {
  return diff_computing_ || diff_view_->IsLoading() || pending_base_ >= 0;
}

// ---------------------------------------------------------------------------------------------
// Computing and showing the comparison

void CompareController::TryPendingCompare() {
  if (pending_base_ < 0) return;
  const int base = pending_base_;
  const int row = pending_row_;
  auto drop = [this](const QString& why) {
    pending_base_ = pending_row_ = -1;
    if (!why.isEmpty()) ShowStatus(why, 8000);
    host_->CheckIdle();
  };
  const std::vector<DumpState>& states = host_->TimelineStates();
  const int n = static_cast<int>(states.size());
  if (base >= n || row >= n || host_->WantedRow() != row) {
    drop(QString());  // the user moved on
    return;
  }
  for (int r : {base, row}) {
    if (host_->StateFailed(r)) {
      drop(tr("%1 did not load; nothing to compare").arg(Q(states[r].label)));
      return;
    }
  }
  std::shared_ptr<const Module> shown = host_->ShownModule();
  if (host_->ShownRow() != row || !shown || shown != host_->StateModule(row)) return;  // on its way
  std::shared_ptr<const Module> before = host_->StateModule(base);
  if (!before) {
    if (!pending_requested_) {
      pending_requested_ = true;
      ShowStatus(tr("Loading %1 to compare with…").arg(Q(states[base].label)));
      host_->RequestState(base);
    }
    return;
  }
  pending_base_ = pending_row_ = -1;
  const uint64_t generation = ++diff_generation_;
  if (std::max(before->instruction_count(), shown->instruction_count()) <
      kAsyncDiffInstructions) {
    ApplyDiff(generation, base, before, shown,
              std::make_shared<const ModuleDiff>(DiffModules(*before, *shown)));
    return;
  }
  diff_computing_ = true;
  ShowStatus(tr("Comparing with %1…").arg(Q(states[base].label)));
  QPointer<CompareController> self(this);
  std::thread([self, generation, base, before, shown] {
    auto diff = std::make_shared<const ModuleDiff>(DiffModules(*before, *shown));
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, generation, base, before, shown, diff] {
          if (self) self->ApplyDiff(generation, base, before, shown, diff);
        },
        Qt::QueuedConnection);
  }).detach();
}

void CompareController::ApplyDiff(uint64_t generation, int base_row,
                                  std::shared_ptr<const Module> base,
                                  std::shared_ptr<const Module> shown,
                                  std::shared_ptr<const ModuleDiff> diff) {
  if (generation != diff_generation_) return;
  diff_computing_ = false;
  if (shown != host_->ShownModule() || !diff) {
    host_->CheckIdle();
    return;
  }
  if (!diff_bar_->isVisible()) window_->statusBar()->clearMessage();  // "Comparing with…"
  const ModuleDiff& d = *diff;
  std::unordered_map<const Instruction*, uint8_t> marks;
  std::unordered_map<const Instruction*, const Instruction*> match;  // base -> shown
  diff_order_.clear();
  for (const ComputationDiff& c : d.computations) {
    for (const InstructionDiff& row : c.rows) {
      if (row.a != nullptr && row.b != nullptr) match.emplace(row.a, row.b);
      if (row.b == nullptr) continue;
      if (row.kind == DiffKind::kAdded) marks[row.b] = 1;
      if (row.kind == DiffKind::kChanged) marks[row.b] = 2;
      if (row.kind == DiffKind::kAdded || row.kind == DiffKind::kChanged) {
        diff_order_.push_back(row.b);
      }
    }
  }
  diff_position_ = -1;
  views_.text->SetDiffMarks(marks);
  views_.graph->SetDiffMarks(std::move(marks));

  // Removed instructions as ghosts, in the matched computation of the shown state, joined to
  // the matched operands and users they had.
  const std::vector<DumpState>& states = host_->TimelineStates();
  std::vector<viewer::GraphView::RemovedGhost> ghosts;
  std::unordered_map<const Instruction*, int> ghost_of;
  const QString base_label = Q(states[base_row].label);
  for (const ComputationDiff& c : d.computations) {
    if (c.a == nullptr || c.b == nullptr) continue;  // nowhere to draw a whole computation
    for (const InstructionDiff& row : c.rows) {
      if (row.kind != DiffKind::kRemoved || row.a == nullptr) continue;
      const Instruction& a = *row.a;
      viewer::GraphView::RemovedGhost g;
      g.key = a.name();
      g.label = {a.name(), std::string(OpcodeName(a.opcode())),
                 Clip(PrintShape(a.shape(), false), 64)};
      PrintOptions short_form = PrintOptions::Short();
      short_form.print_metadata = false;
      g.tooltip = tr("Removed (present in %1):\n%2")
                      .arg(base_label, Q(Clip(PrintInstruction(a, short_form), 400)))
                      .toStdString();
      if (row.fused_into != nullptr) {
        g.tooltip += tr("\nFused into %1").arg(Q(row.fused_into->name())).toStdString();
      }
      g.computation = c.b;
      ghost_of.emplace(row.a, static_cast<int>(ghosts.size()));
      ghosts.push_back(std::move(g));
    }
  }
  for (const ComputationDiff& c : d.computations) {
    if (c.a == nullptr) continue;
    for (const Instruction* user : c.a->instructions()) {
      auto user_ghost = ghost_of.find(user);
      auto user_match = match.find(user);
      for (const Instruction* operand : user->operands()) {
        auto it = ghost_of.find(operand);
        if (user_ghost != ghost_of.end()) {
          viewer::GraphView::RemovedGhost& g = ghosts[user_ghost->second];
          if (it != ghost_of.end()) {
            g.removed_operands.push_back(it->second);
          } else if (auto m = match.find(operand); m != match.end()) {
            g.operands.push_back(m->second);
          }
        } else if (it != ghost_of.end() && user_match != match.end()) {
          ghosts[it->second].users.push_back(user_match->second);
        }
      }
    }
  }
  views_.graph->SetRemovedGhosts(std::move(ghosts));

  compared_base_row_ = base_row;
  diff_base_module_ = base;
  diff_ = diff;
  const DiffCounts& n = d.counts;
  diff_summary_->setText(
      tr("Compared with %1: %2 changed, %3 added, %4 removed, %5 unchanged (%6 renamed). "
         "Green: added; orange: changed; red: removed (dashed ghosts on the graph).")
          .arg(base_label)
          .arg(n.changed)
          .arg(n.added)
          .arg(n.removed)
          .arg(n.unchanged)
          .arg(n.renamed));
  diff_bar_->show();
  const int shown_row = host_->ShownRow();
  const QString shown_label = shown_row >= 0 && shown_row < static_cast<int>(states.size())
                                  ? Q(states[shown_row].label)
                                  : QString();
  diff_view_->SetDiff(base, shown, diff, base_label, shown_label);
  UpdateComparePane();
  emit comparisonChanged(base_row);
  if (const QString selected = host_->SelectedName(); !selected.isEmpty()) {
    const std::string name = selected.toStdString();
    for (const auto& c : host_->ShownModule()->computations()) {
      if (const Instruction* i = c->FindInstruction(name)) {
        diff_view_->ShowInstruction(i);
        break;
      }
    }
  }
  host_->CheckIdle();
}

void CompareController::EndComparison() {
  ++diff_generation_;
  diff_computing_ = false;
  diff_order_.clear();
  diff_position_ = -1;
  compared_base_row_ = -1;
  diff_.reset();
  const bool was_comparing = diff_base_module_ != nullptr;
  diff_base_module_.reset();
  views_.graph->SetRemovedGhosts({});
  diff_view_->Clear();
  UpdateComparePane();
  if (was_comparing) emit comparisonChanged(-1);
  if (!diff_bar_->isVisible() && diff_summary_->text().isEmpty()) return;
  views_.graph->SetDiffMarks({});
  views_.text->SetDiffMarks({});
  diff_summary_->clear();
  diff_bar_->hide();
}

void CompareController::OnLoadingFinished() {
  if (pending_base_ >= 0 && pending_requested_ &&
      pending_base_ < static_cast<int>(host_->TimelineStates().size()) &&
      !host_->StateModule(pending_base_)) {
    pending_base_ = pending_row_ = -1;
    ShowStatus(tr("The state to compare with did not load"), 8000);
  }
}

// ---------------------------------------------------------------------------------------------
// Side by side, the change walk, the timeline's marks and menu

void CompareController::SetSideBySide(bool on) {
  if (side_by_side_button_->isChecked() != on) {
    side_by_side_button_->setChecked(on);  // comes back here through toggled
    return;
  }
  side_by_side_ = on;
  QSettings().setValue(QStringLiteral("view/sideBySide"), on);
  UpdateComparePane();
}

void CompareController::UpdateComparePane() {
  text_stack_->setCurrentWidget(IsComparing() && side_by_side_
                                    ? static_cast<QWidget*>(diff_view_)
                                    : static_cast<QWidget*>(views_.text));
  UpdateTimelineMarks();
}

void CompareController::UpdateTimelineMarks() {
  if (timeline_model_ == nullptr) return;
  using Mark = viewer::TimelineEntry::CompareMark;
  const bool was_syncing = host_->IsSyncing();
  host_->SetSyncing(true);  // rows changing must not move the views
  const int shown_row = host_->ShownRow();
  for (int r = 0; r < timeline_model_->rowCount(); ++r) {
    const viewer::TimelineEntry* old = timeline_model_->EntryAt(r);
    if (old == nullptr) continue;
    Mark mark = Mark::kNone;
    if (r == diff_base_row_) mark = Mark::kDiffBase;
    if (IsComparing() && r == compared_base_row_) mark = Mark::kComparedBase;
    if (IsComparing() && r == shown_row) mark = Mark::kCompared;
    if (old->compare == mark) continue;
    viewer::TimelineEntry e = *old;
    e.compare = mark;
    timeline_model_->UpdateEntry(r, e);
  }
  host_->SetSyncing(was_syncing);
}

void CompareController::FollowSelection(const Instruction* instruction) {
  if (instruction && IsComparing() && !from_diff_view_) diff_view_->ShowInstruction(instruction);
}

const Instruction* CompareController::SelectNextChange(bool backwards) {
  if (diff_order_.empty()) return nullptr;
  const int n = static_cast<int>(diff_order_.size());
  diff_position_ = diff_position_ < 0 ? (backwards ? n - 1 : 0)
                                      : (diff_position_ + (backwards ? n - 1 : 1)) % n;
  const Instruction* target = diff_order_[diff_position_];
  host_->SelectInViews(target);
  ShowStatus(tr("Change %1 of %2: %3").arg(diff_position_ + 1).arg(n).arg(Q(target->name())),
             5000);
  return target;
}

int CompareController::StepChange(bool backwards, bool top_level_only) {
  if (!IsComparing() || !side_by_side_ || diff_view_->LineCount() == 0) {
    SelectNextChange(backwards);
    return -1;
  }
  const int line = diff_view_->GoToChange(backwards, top_level_only);
  const SideBySideLine* at = diff_view_->LineAt(line);
  if (at == nullptr) return -1;
  if (at->b != nullptr) {
    from_diff_view_ = true;
    host_->SelectInViews(at->b);
    from_diff_view_ = false;
  } else if (at->a != nullptr && diff_base_module_) {
    // Removed: Properties shows what it was (in the base state), not the last selection.
    views_.properties->SetGhost(diff_base_module_, at->a,
                                at->note.empty() ? tr("removed") : Q(at->note));
  }
  // A removed line says where the instruction went ("removed (fused into fusion.2)").
  ShowStatus(at->b != nullptr
                 ? tr("%1: %2").arg(Q(std::string(DiffKindName(at->kind))), Q(at->b->name()))
                 : tr("%1: %2").arg(at->a != nullptr ? Q(at->a->name()) : QString(),
                                    at->note.empty() ? tr("removed") : Q(at->note)),
             5000);
  return line;
}

void CompareController::ShowTimelineMenu(const QPoint& pos) {
  const QModelIndex at = timeline_view_->indexAt(pos);
  const int row = at.isValid() ? timeline_filter_->mapToSource(at).row() : -1;
  const std::vector<DumpState>& states = host_->TimelineStates();
  const int shown_row = host_->ShownRow();
  QMenu menu(window_);
  const int selected = static_cast<int>(timeline_view_->selectionModel()->selectedRows().size());
  QAction* compare_selected =
      menu.addAction(tr("Compare Selected States"), this, [this] { CompareSelectedStates(); });
  compare_selected->setEnabled(selected == 2);
  if (row >= 0 && row < static_cast<int>(states.size())) {
    const QString label = Q(states[row].label);
    if (row != shown_row && shown_row >= 0) {
      menu.addAction(tr("Compare Shown State with \"%1\"").arg(label), this,
                     [this, row] { CompareRows(row, host_->ShownRow()); });
    }
    menu.addAction(tr("Set \"%1\" as Diff Base").arg(label), this,
                   [this, row] { SetDiffBase(row); });
  }
  if (diff_base_row_ >= 0 && diff_base_row_ < static_cast<int>(states.size())) {
    QAction* a = menu.addAction(
        tr("Compare with Diff Base (%1)").arg(Q(states[diff_base_row_].label)), this,
        [this] { CompareWithDiffBase(); });
    a->setEnabled(diff_base_row_ != shown_row);
  }
  menu.addSeparator();
  menu.addAction(tr("Compare with Previous Step"), this, [this] { CompareWithPreviousStep(); });
  menu.addAction(tr("Compare with before_optimizations"), this,
                 [this] { CompareWithBeforeOptimizations(); });
  if (IsComparing()) menu.addAction(tr("Stop Comparing"), this, [this] { Clear(); });
  menu.exec(timeline_view_->viewport()->mapToGlobal(pos));
}

}  // namespace hlowb::gui
