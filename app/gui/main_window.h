// The HLO Workbench main window: a dump directory's modules, the pass timeline of the chosen
// module, the computations of the current state and the properties of the selected
// instruction in docks around the graph and the text side by side. Opening and parsing run
// on worker threads (app/gui/loader.h) with a progress bar and Cancel; the views follow the
// timeline, and a selection in any view selects the same instruction in the others.
//
// The window is split by concern:
//   main_window.cc            the frame: construction, menus and toolbars, docks, status bar,
//                             settings, theme, recent files, drag and drop, busy/idle
//   main_window_views.cc      the selection kept in step across the views, search, export
//   main_window_documents.cc  what is open: opening files and dump directories, the module
//                             chosen, its timeline and the cache of parsed states, showing a
//                             state (or its parse error) in every view
//   main_window_compare.cc    the window's side of comparing and history: their public calls,
//                             and what CompareController (compare_controller.h) and
//                             HistoryController (history_controller.h) ask of the window
//   main_window_replay.cc     the Replay dock and the replay worker's results
//   main_window_compile.cc    Compile ▸ Compile… (the embedded compiler in a child process)
//   main_window_capture.cc    File ▸ Capture from Program…
#ifndef HLOWB_APP_GUI_MAIN_WINDOW_H_
#define HLOWB_APP_GUI_MAIN_WINDOW_H_

#include <QMainWindow>
#include <QPointer>
#include <QString>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "app/gui/compare_controller.h"
#include "app/gui/history_controller.h"
#include "app/gui/loader.h"
#include "app/gui/replay_controller.h"
#include "core/analysis/timeline.h"
#include "core/ir/module.h"

class QAction;
class QCheckBox;
class QDialog;
class QDockWidget;
class QProcess;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QSortFilterProxyModel;
class QSpinBox;
class QSplitter;
class QTableView;
class QToolBar;
class QToolButton;

namespace hlowb {
enum class CostMetric;
}  // namespace hlowb

namespace hlowb::viewer {
class ComputationsModel;
class CostOverlayController;
class GraphView;
class HistoryPanel;
class HloDiffView;
class HloTextView;
class ModulesModel;
class PropertiesPanel;
class ReplayPanel;
struct ReplaySettings;
enum class HeatMetric;
class TimelineFilterModel;
class TimelineModel;
}  // namespace hlowb::viewer

namespace hlowb::gui {

class ArtifactsController;
class MemoryController;
class ReduceDialog;

// What to open and show first; the command line fills it (`hlowb gui --module=M --step=S
// --select=NAME PATH`).
struct OpenRequest {
  QString path;
  QString module;  // dump module id or name; default: the first module
  QString step;    // step number, "before", "after" or a pass name; default: the first state
  QString select;  // instruction to select once shown
};

class MainWindow : public QMainWindow,
                   private CompareController::Host,
                   private HistoryController::Host {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a file or a dump directory (what the command line, the Open menus, drag and drop
  // and the recent-files list do). Returns at once; loading continues in the background.
  void Open(const OpenRequest& request);
  void OpenPath(const QString& path) { Open(OpenRequest{path, {}, {}, {}}); }

  // Dump directories: chooses a module by id or name; false when the index has none such.
  bool SelectModule(const QString& id_or_name);
  // Moves the timeline to `step` (see OpenRequest::step); false when there is no such state.
  bool SelectStep(const QString& step);
  // Selects `instruction` (of the current module) in the graph, text and properties.
  void SelectInstruction(const hlowb::Instruction* instruction);
  // Selects an instruction of the current module by name; false when there is none.
  bool SelectInstructionByName(const QString& name);
  // Shows the computation `name` of the current module in the graph, the text and the
  // computations list (the selection stays when it is in it); false when there is none such.
  bool ShowComputationByName(const QString& name);
  // Selects the next (or previous) instruction of the module whose name, opcode, op_name,
  // op_type or called computation's name contains `query` (in the text's order, wrapping), says
  // which of how many it is ("3 of 12") and highlights every match in the graph and the text;
  // when no instruction matches, finds it in the text. False when nothing matches.
  bool Find(const QString& query, bool backwards = false);
  // The search bar's count ("3 of 12"), empty when no search is shown.
  QString search_status() const;
  // Writes the graph as SVG, PNG or DOT, chosen by the file's extension.
  absl::Status ExportView(const QString& path);
  void CancelLoading();
  // Parsed states kept in memory beyond the shown one and its neighbours, in bytes of their
  // files (a parsed module takes a few times that); least recently shown ones go first and are
  // parsed again when shown.
  void SetStateMemoryBudget(uint64_t file_bytes) { state_budget_ = file_bytes; }
  // Number of parsed states held (for tests).
  int KeptStateCount() const;

  // True while anything is loading, a requested state is not yet shown, the graph is being
  // laid out or the text view is loading its text.
  bool IsBusy() const;
  QString current_path() const { return current_path_; }
  // The open dump directory (its index and how its state files open); null for a single file
  // and while nothing is open or the directory is being indexed.
  std::shared_ptr<const DumpSession> dump_session() const { return session_; }
  // The chosen module of the dump directory: an index into dump_session()->index().modules;
  // -1 when none (a single file, or nothing open).
  int current_module_index() const { return module_index_; }
  std::shared_ptr<const Module> current_module() const { return module_; }
  const Computation* current_computation() const { return computation_; }
  // Row of the shown state in the timeline model (not the filter); -1 when none.
  int current_state_row() const { return shown_row_; }
  const std::vector<DumpState>& states() const { return states_; }
  // The parsed module of timeline row `row` while it is kept; null when it is not (not loaded
  // yet, failed to parse, or dropped to save memory: see SetStateMemoryBudget).
  std::shared_ptr<const Module> state_module(int row) const { return StateModule(row); }
  QStringList recent_files() const;
  // File ▸ Open Recent: one entry per recent path, labelled with the full path.
  QMenu* recent_menu() const { return recent_menu_; }
  // The View menu: the docks' toggles first, then comparing, graph and theme entries.
  QMenu* view_menu() const { return view_menu_; }
  // Adds a dock the way the window's own docks are set up. `dock` needs an object name: the
  // window saves the dock layout on close and restores it on start by object name (a dock added
  // after the window was built gets its saved place back here, when there is one). On the right
  // the dock becomes a tab beside Properties, which stays in front; elsewhere it is added to
  // `area`. Its toggle goes into the View menu after the other docks' toggles. `visible` is
  // whether it shows when there is no saved layout for it.
  void AddDock(QDockWidget* dock, Qt::DockWidgetArea area, bool visible = true);
  // Help ▸ Keyboard Shortcuts (F1): a non-modal table of every shortcut (keyboard_shortcuts.h).
  QDialog* ShowKeyboardShortcuts();

  viewer::GraphView* graph_view() const { return graph_; }
  viewer::HloTextView* text_view() const { return text_; }
  viewer::PropertiesPanel* properties_panel() const { return properties_; }
  viewer::ReplayPanel* replay_panel() const { return replay_panel_; }
  ReplayController* replay_controller() const { return replay_; }
  // Colours the graph by a diff against the previous step of the timeline (green added,
  // orange changed, removed as ghosts) and shows the counts by kind in the diff bar; false when
  // there is no previous step, or when it is not loaded yet (it is then requested and the
  // comparison made when it arrives). Showing another state or ClearDiff() ends it.
  bool CompareWithPreviousStep();
  bool CompareWithBeforeOptimizations();
  // Selects the next (or previous) added or changed instruction of the comparison, in the
  // shown module's order, wrapping around; null when not comparing.
  const hlowb::Instruction* SelectNextChange(bool backwards = false);
  void ClearDiff();
  // The diff bar's text; empty when not comparing.
  QString diff_summary() const;

  // --- Comparing any two states, side by side, removed ghosts, history. ---
  // Compares timeline row `row` (shown: the timeline moves there) with `base_row`: marks and
  // removed ghosts on the graph, the side-by-side view, the diff bar. A state that is not
  // loaded yet is requested and the comparison made when it arrives (unless the user moves on
  // meanwhile). True when the comparison is shown now or being computed in the background.
  bool CompareRows(int base_row, int row);
  // Compares the two rows selected in the timeline (Ctrl+click), the earlier one as the base.
  bool CompareSelectedStates();
  // The base for CompareWithDiffBase ("Set as Diff Base" in the timeline's context menu).
  void SetDiffBase(int row);
  int diff_base_row() const { return compare_->diff_base_row(); }
  bool CompareWithDiffBase();
  // The base row of the comparison shown (-1 when none) and whether one is shown.
  int compared_base_row() const { return compare_->compared_base_row(); }
  // The base state's module of the comparison shown (null when none); comparisonChanged says
  // when it changes.
  std::shared_ptr<const Module> compared_base_module() const;
  bool IsComparing() const { return compare_->IsComparing(); }
  // Side by side: while comparing, the text pane shows the aligned two-sided diff.
  void SetSideBySide(bool on);
  bool side_by_side() const { return compare_->side_by_side(); }
  // The next (previous) change of the side-by-side view, removed lines included, with the
  // shown state's instruction on that line selected (for a removed line, Properties shows the
  // removed instruction as it was); `top_level_only` skips the lines of fused computations.
  // Without the view, SelectNextChange. Returns the diff view's line, -1 when there is none.
  int StepChange(bool backwards = false, bool top_level_only = false);
  // Recomputes the History panel for the selected instruction (it follows the selection and
  // the shown state by itself while its dock is visible).
  void UpdateHistory();
  viewer::HloDiffView* diff_view() const { return compare_->diff_view(); }
  viewer::HistoryPanel* history_panel() const { return history_->panel(); }
  QDockWidget* history_dock() const { return history_->dock(); }
  // The Memory dock (memory_controller.h): the shown state's memory over its schedule.
  MemoryController* memory_controller() const { return memory_; }
  // The Artifacts dock and the artifact tabs after the HLO text (artifacts_controller.h).
  ArtifactsController* artifacts_controller() const { return artifacts_; }
  // Replays the shown module in the worker process with the panel's settings.
  void StartReplay(const viewer::ReplaySettings& settings);
  // Writes what reproduces the last replay to `dir`: the module (module.hlo, or the file it
  // came from when it is a snapshot) and README.txt with the command line.
  absl::Status SaveReplayReproducer(const QString& dir);
  // Writes a bug-report bundle of the last replay into `dir` with `hlowb bundle` (module as
  // text and proto, snapshot with the arguments, flags, platform, report, commands), in a
  // child process; bundleExported reports the outcome. False when there is no replay yet or a
  // bundle is being written.
  bool ExportReplayBundle(const QString& dir);
  // The Replay dock's Reduce… (offered after a run that failed): shrinks the module of
  // the last replay while it keeps failing with `until` ("mismatch", "nonfinite", "crash",
  // "error") through `hlowb reduce` in a child process, with the last replay's platforms, data
  // and tolerances; the dialog shows progress and Stop; the reduced module then opens as a new
  // document (OpenInNewWindow) and goes into a bug bundle. `out_dir` empty: a fresh folder
  // under the temporary directory. `start` false only shows the dialog. Returns the dialog
  // (null when there is no replay to reduce, saying so in the status bar).
  ReduceDialog* ShowReduceDialog(const QString& until, const QString& out_dir = {},
                                 bool start = false);
  ReduceDialog* reduce_dialog() const;
  // Opens `path` in a new window (which deletes itself when closed) and returns it.
  MainWindow* OpenInNewWindow(const QString& path);
  // --- The embedded compiler (main_window_compile.cc). ---
  // Compiles the shown module with `hlowb opt` in a child process (the window stays
  // responsive; a compile that fails or crashes only reports) with per-pass dumps into
  // `dump_dir` (a fresh folder under the temporary directory when empty), every pass in
  // `disabled_passes` switched off, and opens that dump: its timeline starts with the module as
  // it was (before_optimizations) and steps through every pass that changed it.
  // compileFinished reports. False when nothing is shown or a compile is running.
  bool CompileShownModule(const QString& platform, const QStringList& disabled_passes,
                          const QString& dump_dir = {});
  // Compile ▸ Compile…: the dialog (platform, passes to leave out), then CompileShownModule.
  void ShowCompileDialog();
  bool IsCompiling() const { return compile_process_ != nullptr; }
  // --- Capturing a program's XLA dump (main_window_capture.cc). ---
  // Runs `command` (program and arguments, e.g. python train.py) under `hlowb capture
  // --no-open` in a child process in `working_dir` (the current one when empty), with XLA's
  // dump flags, per-pass dumps and snapshots as asked, into `dump_dir` (a fresh folder under
  // the temporary directory when empty). Its output arrives live (captureOutput); on success
  // the dump opens. captureFinished reports. False when a capture is running or `command` is
  // empty.
  bool StartCapture(const QStringList& command, bool pass_by_pass, bool snapshots,
                    const QString& dump_dir = {}, const QString& working_dir = {});
  // Kills the capture and the program it runs; captureFinished then reports "cancelled" and
  // the window stays as it was.
  void CancelCapture();
  bool IsCapturing() const { return capture_process_ != nullptr; }
  // Everything the running (or last) capture printed so far.
  QString capture_output() const { return capture_output_; }
  // File ▸ Capture from Program…: command line, options, live output, Cancel.
  void ShowCaptureDialog();
  // View ▸ Colour by Cost (main_window_cost.cc): colours the graph by the cost model's flops,
  // transcendentals, bytes accessed or estimated time (kOff: off), computed off the UI thread,
  // and adds the totals per computation to the computations list. Remembered across sessions.
  void SetCostMetric(CostMetric metric);
  CostMetric cost_metric() const;
  viewer::CostOverlayController* cost_overlay() const { return cost_overlay_; }
  // Colours the graph by the last replay's results (the panel's heat-map choice calls it).
  void ApplyHeatMap(viewer::HeatMetric metric);
  viewer::ModulesModel* modules_model() const { return modules_model_; }
  viewer::TimelineModel* timeline_model() const { return timeline_model_; }
  viewer::TimelineFilterModel* timeline_filter() const { return timeline_filter_; }
  viewer::ComputationsModel* computations_model() const { return computations_model_; }
  QSortFilterProxyModel* modules_proxy() const { return modules_proxy_; }
  QTableView* modules_view() const { return modules_view_; }
  QTableView* timeline_view() const { return timeline_view_; }
  QTableView* computations_view() const { return computations_view_; }
  QLineEdit* modules_filter() const { return modules_filter_; }
  QLineEdit* search_edit() const { return search_edit_; }
  QCheckBox* hide_unchanged_box() const { return hide_unchanged_; }
  QProgressBar* progress_bar() const { return progress_; }

 signals:
  // A dump directory was indexed (modules listed) or failed to.
  void indexLoaded(bool ok);
  // The state in timeline `row` (or a single file, row -1) is now what the views show.
  void stateShown(int row);
  // Every state of the chosen module was loaded (or the load was cancelled).
  void statesLoaded();
  // Something failed to open; the message is also in the status bar.
  void openFailed(const QString& message);
  // Nothing is loading or laying out any more (after Open and after each navigation).
  void idle();
  // An instruction of current_module() was selected in the graph, the text, the properties or
  // the side-by-side view, or by a call (SelectInstruction, Find, the change walk, ...); null
  // when the selection was cleared. The instruction lives as long as its module: when another
  // state is shown (stateShown), the views select the instruction of the same name there, if
  // any, without this signal.
  void instructionSelectionChanged(const hlowb::Instruction* instruction);
  // A comparison is now shown against timeline row `base_row` (compared_base_module()), or it
  // ended (-1).
  void comparisonChanged(int base_row);
  // A bundle export finished: `ok`, and the folder or what went wrong.
  void bundleExported(bool ok, const QString& message);
  // A compile finished: `ok`, and the dump folder (now being opened) or what went wrong.
  void compileFinished(bool ok, const QString& message);
  // Output of the running capture, as it arrives.
  void captureOutput(const QString& text);
  // A capture finished: `ok`, and the dump folder (now being opened) or what went wrong.
  void captureFinished(bool ok, const QString& dir_or_error);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  // --- The frame (main_window.cc). ---
  void BuildActions();
  void BuildDocks();
  void BuildStatusBar();
  void RestoreSettings();
  void SaveSettings();
  void AddRecent(const QString& path);
  void RebuildRecentMenu();
  void ApplyTheme();
  void UpdateTitle();
  void UpdateStateLabel();
  void CheckIdle() override;

  // --- Selection, search and export (main_window_views.cc). ---
  void OnGraphSelected(const hlowb::Instruction* instruction);
  void OnTextActivated(const hlowb::Instruction* instruction);
  void OnPropertiesActivated(const hlowb::Instruction* instruction);
  // The one place the selection changes: selects `instruction` (null: none) in the views
  // named, the side-by-side view and History follow, and instructionSelectionChanged says so.
  void SyncSelection(const Instruction* instruction, bool graph, bool text, bool properties);
  void ExportWithDialog(const QString& extension, const QString& filter);
  void ShowSearchBar();
  // The module's instructions matching `query`, in the text's order.
  std::vector<const Instruction*> SearchMatches(const QString& query) const;
  // Highlights `query`'s matches in the graph and the text (empty: none); returns them.
  std::vector<const Instruction*> HighlightSearch(const QString& query);
  // Whether `target` is `from` or reachable from it through called computations.
  static bool Reaches(const Computation* from, const Computation* target);

  // --- Documents and loading (main_window_documents.cc). ---
  // The loader's signals to the handlers below.
  void ConnectLoader();
  void OnIndexReady(std::shared_ptr<DumpSession> session);
  void OnIndexFailed(const QString& dir, const QString& message);
  void OnFileOpened(const FileResult& result);
  void OnStateLoaded(const StateResult& result);
  // Loading stopped: whatever was requested and did not come will not come now.
  void OnLoadingFinished();
  void OnModuleActivated(const QModelIndex& proxy_index);
  void ChooseModule(int module_index);
  void OnTimelineCurrentChanged(const QModelIndex& current);
  // The timeline row of a step number, "before", "after" or a pass name; -1 if none.
  int FindStepRow(const QString& step) const override;
  void OnComputationActivated(const QModelIndex& index);
  // Shows timeline row `row` when loaded (else asks for it and shows it when it arrives).
  void ShowState(int row);
  // Puts `module` (from state `row`, or -1 for a single file) in every view, keeping the
  // current computation and selection by name.
  void ShowModule(std::shared_ptr<const Module> module, int row);
  void ShowError(const QString& path, const QString& raw_text, const QString& diagnostic);
  void ShowComputation(const Computation* computation, const Instruction* select);
  void RecomputeTimeline();
  void TrimStates();
  void SelectTimelineRow(int row) override;

  // --- Comparing and history (main_window_compare.cc). ---
  // Makes the comparing and history controllers' controls once the docks and menus exist.
  void BuildCompareUi();
  void ScheduleHistory();
  // CompareController::Host and HistoryController::Host.
  std::shared_ptr<const Module> ShownModule() const override { return module_; }
  int ShownRow() const override { return shown_row_; }
  int WantedRow() const override { return wanted_row_; }
  bool HasDumpSession() const override { return session_ != nullptr; }
  const std::vector<DumpState>& TimelineStates() const override { return states_; }
  std::shared_ptr<const Module> StateModule(int row) const override;
  bool StateFailed(int row) const override;
  QString SelectedName() const override { return selected_name_; }
  void RequestState(int row) override;
  void SelectInViews(const Instruction* instruction) override;
  void ShowStateSelecting(int row, const QString& name) override;
  bool IsSyncing() const override { return syncing_; }
  void SetSyncing(bool syncing) override { syncing_ = syncing; }

  // --- Replay (main_window_replay.cc). ---
  void BuildReplay();
  void OnReplayFinished(std::shared_ptr<const hlowb::worker::ReplayResult> result);
  void OnReplayModuleShown();
  // Drops the replay results (panel tabs, heat map, timeline verdicts) and stops a running
  // replay: they belong to the document and module they were computed for.
  void ForgetReplayResults();
  const Instruction* FindReplayInstruction(const QString& computation, const QString& name) const;
  // The snapshot files of the open dump, the current module's first (empty for a single file).
  std::vector<std::string> DumpSnapshotPaths() const;
  // Colours the graph by the measure of the run that just finished (none: off), unless the
  // user turned the heat map off.
  void FollowRunMeasure(viewer::HeatMetric measure);

  // --- Compile (main_window_compile.cc) and capture (main_window_capture.cc). ---
  void BuildCompileMenu();
  void BuildCaptureMenu(QMenu* file);

  // Views, models and the frame's widgets.
  viewer::GraphView* graph_ = nullptr;
  viewer::HloTextView* text_ = nullptr;
  viewer::PropertiesPanel* properties_ = nullptr;
  viewer::ReplayPanel* replay_panel_ = nullptr;
  viewer::ModulesModel* modules_model_ = nullptr;
  QSortFilterProxyModel* modules_proxy_ = nullptr;
  viewer::TimelineModel* timeline_model_ = nullptr;
  viewer::TimelineFilterModel* timeline_filter_ = nullptr;
  viewer::ComputationsModel* computations_model_ = nullptr;
  QSplitter* splitter_ = nullptr;
  QTableView* modules_view_ = nullptr;
  QTableView* timeline_view_ = nullptr;
  QTableView* computations_view_ = nullptr;
  QLineEdit* modules_filter_ = nullptr;
  QCheckBox* hide_unchanged_ = nullptr;
  QSpinBox* radius_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancel_ = nullptr;
  QLabel* state_label_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QPointer<QDialog> shortcuts_dialog_;
  QMenu* view_menu_ = nullptr;
  QAction* theme_actions_[3] = {nullptr, nullptr, nullptr};
  QString theme_ = QStringLiteral("system");
  bool was_busy_ = false;

  // Search.
  QToolBar* search_bar_ = nullptr;
  QLineEdit* search_edit_ = nullptr;
  QLabel* search_count_ = nullptr;
  QString search_query_;  // highlighted in the graph and the text

  // What is open.
  Loader* loader_ = nullptr;
  QString current_path_;
  OpenRequest pending_request_;  // module/step/select still to apply after loading
  std::shared_ptr<DumpSession> session_;
  int module_index_ = -1;  // into session_->index().modules
  std::vector<DumpState> states_;  // of the chosen module, timeline order
  struct RowState {
    std::shared_ptr<const Module> module;
    std::optional<ModuleFingerprint> fingerprint;
    bool failed = false;
    QString error;
    QString raw_text;
    uint64_t last_used = 0;  // when it was last shown (use_clock_)
  };
  std::vector<RowState> rows_;  // parallel to states_
  uint64_t state_budget_ = uint64_t{256} << 20;
  uint64_t use_clock_ = 0;
  int wanted_row_ = -1;  // the timeline row the user is on
  int shown_row_ = -1;   // the row the views show
  bool waiting_for_state_ = false;

  // What is shown.
  std::shared_ptr<const Module> module_;
  const Computation* computation_ = nullptr;
  QString computation_name_;  // kept across states
  QString selected_name_;     // kept across states
  const Instruction* pending_graph_select_ = nullptr;
  // A text-view scroll that follows a graph selection, done on the next turn of the event loop.
  const hlowb::Instruction* pending_text_show_ = nullptr;
  std::shared_ptr<const hlowb::Module> pending_text_module_;
  bool syncing_ = false;

  // Comparing and history: their state and widgets (compare_controller.h, history_controller.h).
  CompareController* compare_ = nullptr;
  HistoryController* history_ = nullptr;
  MemoryController* memory_ = nullptr;  // the Memory dock
  ArtifactsController* artifacts_ = nullptr;  // the Artifacts dock and the artifact tabs

  // Replay.
  int replay_runs_ = 0;
  QString replay_run_label_;  // "run 2: NaN/Inf locator on interpreter, 0007 …"
  ReplayController* replay_ = nullptr;
  quint64 replay_id_ = 0;
  hlowb::worker::ReplayRequest last_replay_;
  hlowb::worker::ReplayResult last_result_;
  std::shared_ptr<const Module> replayed_module_;  // the module the results name
  int replayed_module_index_ = -1;                  // the dump module a bisection ran on
  int replay_dump_module_ = -1;  // the dump module the panel's results are for (-1: none)
  QPointer<QProcess> bundle_process_;
  QPointer<ReduceDialog> reduce_dialog_;
  // The cost overlay (main_window_cost.cc).
  void BuildCostOverlay(QMenu* view);
  viewer::CostOverlayController* cost_overlay_ = nullptr;
  std::vector<std::pair<CostMetric, QAction*>> cost_actions_;
  // The failure a reduction of the last replay keeps ("" when the last run did not fail).
  QString ReducibleFailure(const hlowb::worker::ReplayResult* result, bool failed,
                           const QString& error) const;

  // Compile and capture.
  QPointer<QProcess> compile_process_;
  QPointer<QProcess> capture_process_;
  QPointer<QDialog> capture_dialog_;
  QString capture_output_;
  bool capture_cancelled_ = false;
};

// Applies the light or dark palette: `theme` is "system" (dark when the platform's window
// colour is dark), "light" or "dark".
void ApplyPalette(const QString& theme);

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_MAIN_WINDOW_H_
