// Qt item models over core value snapshots: the modules of a dump index, the pass timeline of
// one module, and the computations of one module state. Each takes a snapshot by value (or a
// shared_ptr to an immutable one) and never reaches back into loaders or threads.
#ifndef HLOWB_VIEWER_MODELS_MODELS_H_
#define HLOWB_VIEWER_MODELS_MODELS_H_

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/analysis/cost_overlay.h"
#include "core/dump/dump_index.h"
#include "core/ir/module.h"

namespace hlowb::viewer {

// Custom roles shared by the models.
enum ModelRole {
  kSortRole = Qt::UserRole + 1,  // numeric sort key where the display text is not
  kIndexRole,                    // the row's index into the snapshot (int)
  kChangedRole,                  // timeline: bool, the pass changed the module
  kCompareRole,                  // timeline: int, the row's TimelineEntry::CompareMark
};

// Modules of a dump index: columns id, name, states, size (bytes of all state files).
class ModulesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kId, kName, kStates, kSize, kColumnCount };
  explicit ModulesModel(QObject* parent = nullptr);
  void SetIndex(std::shared_ptr<const DumpIndex> index);
  const DumpIndex* index() const { return index_.get(); }
  // index() above would otherwise hide QAbstractItemModel::index(row, column, parent).
  using QAbstractTableModel::index;
  // The module shown in `row` (of this model, not a proxy).
  const DumpModule* ModuleAt(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const DumpIndex> index_;
  std::vector<int64_t> sizes_;
};

// One row of the pass timeline. `changed`, `instruction_count` and `delta` are unknown
// (std::nullopt) until the states were loaded and fingerprinted.
struct TimelineEntry {
  DumpState state;
  std::optional<bool> changed;
  std::optional<int64_t> instruction_count;
  std::optional<int64_t> delta;
  bool failed = false;  // the state's file did not parse
  // The row's part in comparing: the chosen diff base, the base of the comparison shown, or
  // the state compared with it. Drawn as a tinted background and named in the tooltip.
  enum class CompareMark : uint8_t { kNone, kDiffBase, kComparedBase, kCompared };
  CompareMark compare = CompareMark::kNone;
};

// States of one module in compiler order: columns step, pipeline, pass, instructions, delta.
// Changed passes are bold; unchanged ones are dimmed (ForegroundRole; before/after states are
// never dimmed). Unknown counts show as "…", unknown deltas blank. kSortRole gives numeric keys
// (step: compiler order, instructions: count or -1, delta: value).
class TimelineModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kStep, kPipeline, kPass, kInstructions, kDelta, kReplay, kColumnCount };
  explicit TimelineModel(QObject* parent = nullptr);
  void SetEntries(std::vector<TimelineEntry> entries);
  // The Replay column: a pass bisection's verdict per state, by state label ("DIVERGED" is
  // red, "MATCH" green); kept across SetEntries until replaced. An empty map clears it.
  void SetReplayVerdicts(std::map<std::string, QString> verdicts);
  QString ReplayVerdict(int row) const;
  // Updates one row in place (after its state loaded), emitting dataChanged.
  void UpdateEntry(int row, const TimelineEntry& entry);
  const TimelineEntry* EntryAt(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<TimelineEntry> entries_;
  std::map<std::string, QString> verdicts_;
};

// Hides unchanged passes when asked (before/after states always stay).
class TimelineFilterModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit TimelineFilterModel(QObject* parent = nullptr);
  void SetHideUnchanged(bool hide);
  bool hide_unchanged() const { return hide_unchanged_; }
  // A source row that stays listed even when it is an unchanged pass (the state being shown:
  // hiding the unchanged passes must not take the current state away); -1 for none.
  void SetKeptRow(int source_row);
  int kept_row() const { return kept_row_; }

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  bool hide_unchanged_ = false;
  int kept_row_ = -1;
};

// Computations of one module: columns name, instructions, kind (entry, fusion, while body,
// reducer, ...). The entry computation comes first, then the rest in module order.
// Cost columns (flops, bytes accessed, estimated time) follow once the cost overlay's totals
// were set (SetCostTotals): until then, and after they are cleared, the model has only the first
// three columns. kSortRole gives their numbers (flops and bytes as qint64, seconds as double).
class ComputationsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kInstructions, kKind, kFlops, kBytes, kEstimatedTime, kColumnCount };
  explicit ComputationsModel(QObject* parent = nullptr);
  // Another module drops the cost totals; the same module again keeps them.
  void SetModule(std::shared_ptr<const Module> module);
  const Computation* ComputationAt(int row) const;
  int RowOf(const Computation* computation) const;
  // The kind shown in `row` ("entry", "fusion", "while body", "reducer", ...).
  QString KindAt(int row) const;

  // The cost columns' totals for the computations of `module` (the module shown, else ignored
  // and false), and the device the estimated times are for (named in the column's tooltip).
  // Computations without an entry show empty cells. Null or no totals remove the columns.
  bool SetCostTotals(const Module* module, const std::vector<ComputationTotals>& totals,
                     const QString& device = QString());
  bool HasCostTotals() const { return !cost_totals_.empty(); }
  // The totals shown in `row`; nullopt when none.
  std::optional<CostTotals> CostTotalsAt(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Module> module_;
  std::vector<const Computation*> rows_;
  std::vector<QString> kinds_;  // parallel to rows_
  std::unordered_map<const Computation*, CostTotals> cost_totals_;
  QString cost_device_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_MODELS_MODELS_H_
