// The main window's views kept in step: a selection in the graph, the text, the properties or
// the side-by-side view (or by a call) selects the same instruction in the others, and
// instructionSelectionChanged reports it; Find and its bar (matches highlighted in the graph
// and the text); exporting the graph as SVG, PNG or DOT.
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <cctype>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "app/gui/main_window.h"
#include "core/ir/opcode.h"
#include "viewer/graph/graph_view.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/properties_panel.h"

namespace hlowb::gui {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Selection

bool MainWindow::Reaches(const Computation* from, const Computation* target) {
  if (!from || !target) return false;
  std::set<const Computation*> seen;
  std::vector<const Computation*> work = {from};
  while (!work.empty()) {
    const Computation* c = work.back();
    work.pop_back();
    if (c == target) return true;
    if (!seen.insert(c).second) continue;
    for (const Instruction* i : c->instructions()) {
      for (const Computation* called : i->called_computations()) work.push_back(called);
    }
  }
  return false;
}

void MainWindow::OnGraphSelected(const hlowb::Instruction* instruction) {
  if (syncing_) return;
  SyncSelection(instruction, false, true, true);
}

void MainWindow::OnTextActivated(const hlowb::Instruction* instruction) {
  if (syncing_ || !instruction) return;
  SyncSelection(instruction, true, false, true);
}

void MainWindow::OnPropertiesActivated(const hlowb::Instruction* instruction) {
  if (syncing_ || !instruction) return;
  // A removed instruction's ghost links into the compared base state, not the shown one.
  if (instruction->parent() == nullptr || instruction->parent()->parent() != module_.get()) return;
  SyncSelection(instruction, true, true, true);
}

void MainWindow::SelectInstruction(const hlowb::Instruction* instruction) {
  SyncSelection(instruction, true, true, true);
}

bool MainWindow::SelectInstructionByName(const QString& name) {
  if (!module_) return false;
  const std::string n = name.toStdString();
  const Instruction* found = computation_ ? computation_->FindInstruction(n) : nullptr;
  for (const auto& c : module_->computations()) {
    if (found) break;
    found = c->FindInstruction(n);
  }
  if (!found) return false;
  SelectInstruction(found);
  return true;
}

bool MainWindow::ShowComputationByName(const QString& name) {
  if (!module_) return false;
  const Computation* computation = module_->FindComputation(name.toStdString());
  if (!computation) return false;
  // As when it is chosen in the computations list: the selection stays when it is in it.
  computation_name_ = name;
  const Instruction* keep = nullptr;
  if (!selected_name_.isEmpty()) keep = computation->FindInstruction(selected_name_.toStdString());
  if (computation != computation_) ShowComputation(computation, keep);
  return true;
}

void MainWindow::SyncSelection(const Instruction* instruction, bool graph, bool text,
                               bool properties) {
  if (!module_) return;
  syncing_ = true;
  selected_name_ = instruction ? Q(instruction->name()) : QString();
  if (graph) {
    if (instruction && !Reaches(computation_, instruction->parent())) {
      // Not drawn in (or inside) the shown computation: show its own computation.
      ShowComputation(instruction->parent(), instruction);
    } else if (graph_->IsLayoutRunning()) {
      pending_graph_select_ = instruction;
    } else {
      graph_->SelectInstruction(instruction);
    }
  }
  if (text && instruction) {
    if (graph) {
      // The graph repaints first; the text view scrolls (and lays out the lines it then
      // shows) in a later slice of UI-thread work, so neither waits for the other's painting.
      pending_text_show_ = instruction;
      pending_text_module_ = module_;
      QTimer::singleShot(0, this, [this] {
        const Instruction* show = std::exchange(pending_text_show_, nullptr);
        std::shared_ptr<const Module> owner = std::move(pending_text_module_);
        pending_text_module_.reset();
        if (show != nullptr && owner == module_) text_->ShowInstruction(show);
        CheckIdle();
      });
    } else {
      text_->ShowInstruction(instruction);
    }
  }
  if (properties) {
    if (instruction) {
      properties_->SetInstruction(module_, instruction);
    } else {
      properties_->Clear();
    }
  }
  // The side-by-side view follows (unless the click came from it), and so does the history.
  compare_->FollowSelection(instruction);
  ScheduleHistory();
  syncing_ = false;
  emit instructionSelectionChanged(instruction);
  CheckIdle();
}

// ---------------------------------------------------------------------------------------------
// Search

void MainWindow::ShowSearchBar() {
  search_bar_->show();
  search_edit_->setFocus(Qt::ShortcutFocusReason);
  search_edit_->selectAll();
}

namespace {

std::string LowerAscii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool Contains(const std::string& haystack, const std::string& lower_needle) {
  return LowerAscii(haystack).find(lower_needle) != std::string::npos;
}

}  // namespace

std::vector<const Instruction*> MainWindow::SearchMatches(const QString& query) const {
  std::vector<const Instruction*> matches;
  const std::string needle = LowerAscii(query.trimmed().toStdString());
  if (!module_ || needle.empty()) return matches;
  for (const auto& c : module_->computations()) {
    for (const Instruction* i : c->instructions()) {
      bool hit =
          Contains(i->name(), needle) || Contains(std::string(OpcodeName(i->opcode())), needle);
      if (const OpMetadata* md = i->metadata(); !hit && md != nullptr) {
        hit = Contains(md->op_name, needle) || Contains(md->op_type, needle);
      }
      // A reducer, fused computation or loop body named like the query: its caller matches.
      for (const Computation* called : i->called_computations()) {
        if (!hit && called != nullptr) hit = Contains(called->name(), needle);
      }
      if (hit) matches.push_back(i);
    }
  }
  return matches;
}

std::vector<const Instruction*> MainWindow::HighlightSearch(const QString& query) {
  search_query_ = query;
  std::vector<const Instruction*> matches = SearchMatches(query);
  graph_->SetSearchMatches(std::unordered_set<const Instruction*>(matches.begin(), matches.end()));
  text_->SetSearchHighlight(query.trimmed());
  return matches;
}

QString MainWindow::search_status() const { return search_count_->text(); }

bool MainWindow::Find(const QString& query, bool backwards) {
  if (query.isEmpty()) {
    ShowSearchBar();
    return false;
  }
  // The bar shows the query and the count, also for F3 pressed with the bar closed.
  if (search_edit_->text() != query) search_edit_->setText(query);
  search_bar_->show();
  const std::vector<const Instruction*> matches = HighlightSearch(query);
  if (matches.empty()) {
    // No instruction says it; the text may (an attribute, a computation's header).
    if (text_->Find(query.trimmed(), backwards)) {
      search_count_->setText(tr("in the text only"));
      statusBar()->showMessage(tr("No instruction matches '%1'; found in the text").arg(query),
                               5000);
      return true;
    }
    search_count_->setText(tr("no match"));
    statusBar()->showMessage(tr("No match for '%1'").arg(query), 5000);
    return false;
  }
  // From the selected instruction, in the text's order: the matches before it count.
  const int n = static_cast<int>(matches.size());
  const std::string selected = selected_name_.toStdString();
  int at = -1;     // the selection's index among the matches
  int before = 0;  // matches before the selection
  if (!selected.empty() && module_) {
    std::unordered_map<const Instruction*, int> index;
    for (int k = 0; k < n; ++k) index.emplace(matches[k], k);
    bool found = false;
    for (const auto& c : module_->computations()) {
      for (const Instruction* i : c->instructions()) {
        if (i->name() == selected) {
          found = true;
          if (auto it = index.find(i); it != index.end()) at = it->second;
          break;
        }
        before += index.count(i) != 0;
      }
      if (found) break;
    }
    if (!found) before = 0;
  }
  int next;
  if (at >= 0) {
    next = (at + (backwards ? n - 1 : 1)) % n;
  } else {
    next = backwards ? (before + n - 1) % n : before % n;
  }
  const Instruction* target = matches[next];
  SelectInstruction(target);
  search_count_->setText(tr("%1 of %2").arg(next + 1).arg(n));
  statusBar()->showMessage(
      tr("Match %1 of %2 for '%3': %4").arg(next + 1).arg(n).arg(query, Q(target->name())), 5000);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Export

absl::Status MainWindow::ExportView(const QString& path) {
  if (!graph_->computation()) return absl::FailedPreconditionError("no graph is shown");
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("svg")) return graph_->ExportSvg(path);
  if (ext == QLatin1String("png")) return graph_->ExportPng(path);
  if (ext == QLatin1String("dot") || ext == QLatin1String("gv")) return graph_->ExportDot(path);
  return absl::InvalidArgumentError("export as .svg, .png or .dot (not '." + ext.toStdString() +
                                    "')");
}

void MainWindow::ExportWithDialog(const QString& extension, const QString& filter) {
  if (!graph_->computation()) {
    statusBar()->showMessage(tr("Nothing to export: no graph is shown"), 5000);
    return;
  }
  QSettings settings;
  QString dir = settings.value(QStringLiteral("lastExportDir")).toString();
  QString base = computation_ ? Q(computation_->name()) : QStringLiteral("graph");
  QString suggested = (dir.isEmpty() ? QString() : dir + QLatin1Char('/')) + base +
                      QLatin1Char('.') + extension;
  QString path = QFileDialog::getSaveFileName(this, tr("Export View"), suggested, filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + extension;
  settings.setValue(QStringLiteral("lastExportDir"), QFileInfo(path).absolutePath());
  // Pictures of big graphs take a while to draw: they are written on a worker thread.
  if (graph_->ExportInBackground(path)) {
    statusBar()->showMessage(tr("Exporting %1…").arg(path));
    return;
  }
  absl::Status status = ExportView(path);
  if (status.ok()) {
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
  } else {
    QMessageBox::warning(this, tr("Export failed"), Q(std::string(status.message())));
  }
}

}  // namespace hlowb::gui
