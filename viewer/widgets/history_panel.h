// The History panel: one instruction's provenance across the states of a module's pass
// timeline — at each state its name there and what the pass did to it (created, changed,
// renamed, fused into another instruction, removed) — with a progress line while states load or
// the trace is computed. Clicking a row asks to show that state with the instruction selected.
//
// It displays rows it is given; tracing (core/analysis/timeline.h) and loading are the
// window's business.
#ifndef HLOWB_VIEWER_WIDGETS_HISTORY_PANEL_H_
#define HLOWB_VIEWER_WIDGETS_HISTORY_PANEL_H_

#include <QString>
#include <QWidget>
#include <vector>

class QLabel;
class QProgressBar;
class QTableWidget;

namespace hlowb::viewer {

class HistoryPanel : public QWidget {
  Q_OBJECT

 public:
  struct Row {
    int state = -1;  // the timeline row
    QString label;   // the state's label
    QString pass;    // the pass that made the state (empty for before/after optimizations)
    QString name;    // the instruction's name in that state; empty when absent
    QString event;   // "created", "changed (shape)", "fused into fusion.3", ...
    bool eventful = false;  // something happened to the instruction in this state
  };

  explicit HistoryPanel(QWidget* parent = nullptr);
  ~HistoryPanel() override;

  // What the panel is about ("add.7 in 0007 fusion: priority-fusion").
  void SetSubject(const QString& subject);
  // Work under way: `done` of `total` (total 0: busy without a count).
  void SetProgress(const QString& what, int done, int total);
  void SetRows(std::vector<Row> rows);
  void SetMessage(const QString& message);  // no rows: why
  void Clear();

  const std::vector<Row>& rows() const { return rows_; }
  bool busy() const;
  QTableWidget* table() const { return table_; }
  QString subject() const;
  QString message() const;

 signals:
  // The user clicked a row: show timeline row `state` and select `name` there (may be empty).
  void stateActivated(int state, const QString& name);

 private:
  QLabel* subject_ = nullptr;
  QLabel* message_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QTableWidget* table_ = nullptr;
  std::vector<Row> rows_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_WIDGETS_HISTORY_PANEL_H_
