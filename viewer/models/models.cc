#include "viewer/models/models.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QFont>
#include <QGuiApplication>
#include <QLocale>
#include <QPalette>
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/analysis/cost_model.h"
#include "core/analysis/cost_overlay.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/opcode.h"

namespace hlowb::viewer {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// "1.2 MB" style sizes (binary multiples, like file managers).
QString FormatBytes(int64_t bytes) {
  return QLocale::system().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat);
}

QColor DimmedColor() {
  const QPalette palette = QGuiApplication::palette();
  QColor text = palette.color(QPalette::Active, QPalette::Text);
  QColor base = palette.color(QPalette::Active, QPalette::Base);
  // A third of the way from the text to the background reads as "present but not important"
  // and stays readable (contrast above 4.5:1) in both the light and the dark palette; halfway
  // was too faint on dark.
  auto mix = [](int t, int b) { return (2 * t + b) / 3; };
  return QColor(mix(text.red(), base.red()), mix(text.green(), base.green()),
                mix(text.blue(), base.blue()));
}

bool IsBeforeOrAfter(StageKind stage) {
  return stage == StageKind::kBeforeOptimizations || stage == StageKind::kAfterOptimizations ||
         stage == StageKind::kAfterOptimizationsVariant;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ModulesModel

ModulesModel::ModulesModel(QObject* parent) : QAbstractTableModel(parent) {}

void ModulesModel::SetIndex(std::shared_ptr<const DumpIndex> index) {
  beginResetModel();
  index_ = std::move(index);
  sizes_.clear();
  if (index_) {
    sizes_.reserve(index_->modules.size());
    const int file_count = static_cast<int>(index_->files.size());
    for (const DumpModule& m : index_->modules) {
      int64_t total = 0;
      for (const DumpState& s : m.states) {
        if (s.text_file >= 0 && s.text_file < file_count) total += index_->files[s.text_file].size;
        if (s.proto_file >= 0 && s.proto_file < file_count) {
          total += index_->files[s.proto_file].size;
        }
      }
      sizes_.push_back(total);
    }
  }
  endResetModel();
}

const DumpModule* ModulesModel::ModuleAt(int row) const {
  if (!index_ || row < 0 || row >= static_cast<int>(index_->modules.size())) return nullptr;
  return &index_->modules[row];
}

int ModulesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !index_) return 0;
  return static_cast<int>(index_->modules.size());
}

int ModulesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant ModulesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const DumpModule* m = ModuleAt(index.row());
  if (m == nullptr) return {};
  const int64_t size = sizes_[index.row()];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case kId: return m->id_text.empty() ? QString::number(m->id) : Q(m->id_text);
        case kName: return Q(m->name);
        case kStates: return static_cast<int>(m->states.size());
        case kSize: return FormatBytes(size);
      }
      break;
    case kSortRole:
      switch (index.column()) {
        case kId: return static_cast<qlonglong>(m->id);
        case kName: return Q(m->name);
        case kStates: return static_cast<int>(m->states.size());
        case kSize: return static_cast<qlonglong>(size);
      }
      break;
    case kIndexRole:
      return index.row();
    case Qt::TextAlignmentRole:
      if (index.column() != kName) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::ToolTipRole:
      switch (index.column()) {
        case kSize:
          return tr("%1 bytes in %2 state files").arg(size).arg(m->states.size());
        case kName:
          return tr("%1 (module %2): %3 states, %4 other files")
              .arg(Q(m->name), m->id_text.empty() ? QString::number(m->id) : Q(m->id_text))
              .arg(m->states.size())
              .arg(m->artifacts.size());
      }
      break;
    default:
      break;
  }
  return {};
}

QVariant ModulesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kId: return tr("Id");
      case kName: return tr("Module");
      case kStates: return tr("States");
      case kSize: return tr("Size");
    }
  }
  if (role == Qt::ToolTipRole && section == kSize) return tr("Bytes of all state files");
  return {};
}

// ---------------------------------------------------------------------------------------------
// TimelineModel

TimelineModel::TimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimelineModel::SetEntries(std::vector<TimelineEntry> entries) {
  beginResetModel();
  entries_ = std::move(entries);
  endResetModel();
}

void TimelineModel::UpdateEntry(int row, const TimelineEntry& entry) {
  if (row < 0 || row >= static_cast<int>(entries_.size())) return;
  entries_[row] = entry;
  emit dataChanged(index(row, 0), index(row, kColumnCount - 1));
}

void TimelineModel::SetReplayVerdicts(std::map<std::string, QString> verdicts) {
  verdicts_ = std::move(verdicts);
  if (!entries_.empty()) {
    emit dataChanged(index(0, kReplay), index(static_cast<int>(entries_.size()) - 1, kReplay));
  }
}

QString TimelineModel::ReplayVerdict(int row) const {
  if (row < 0 || row >= static_cast<int>(entries_.size())) return QString();
  auto it = verdicts_.find(entries_[row].state.label);
  return it == verdicts_.end() ? QString() : it->second;
}

const TimelineEntry* TimelineModel::EntryAt(int row) const {
  if (row < 0 || row >= static_cast<int>(entries_.size())) return nullptr;
  return &entries_[row];
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const TimelineEntry& e = entries_[index.row()];
  const DumpState& s = e.state;
  const bool known = e.changed.has_value();
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case kStep:
          if (s.stage == StageKind::kBeforeOptimizations) return tr("before");
          if (s.stage == StageKind::kAfterOptimizations ||
              s.stage == StageKind::kAfterOptimizationsVariant) {
            return tr("after");
          }
          return s.step >= 0 ? QString::number(s.step) : QString();
        case kPipeline:
          return Q(s.pipeline);
        case kPass:
          if (!s.pass.empty()) return Q(s.pass);
          return Q(s.label);
        case kInstructions:
          if (e.failed) return tr("error");
          return e.instruction_count ? QString::number(*e.instruction_count)
                                     : QStringLiteral("\u2026");
        case kDelta:
          if (e.failed || !e.delta) return QString();
          if (*e.delta > 0) return QStringLiteral("+%1").arg(*e.delta);
          return QString::number(*e.delta);
        case kReplay:
          return ReplayVerdict(index.row());
      }
      break;
    case Qt::BackgroundRole:
      if (index.column() == kReplay) {
        const QString v = ReplayVerdict(index.row());
        if (v == QLatin1String("DIVERGED") || v == QLatin1String("FAILED")) {
          return QBrush(QColor(0xEF, 0x9A, 0x9A));
        }
        if (v == QLatin1String("MATCH") || v == QLatin1String("baseline")) {
          return QBrush(QColor(0xC8, 0xE6, 0xC9));
        }
        if (v == QLatin1String("SKIPPED")) return QBrush(QColor(0xFF, 0xE0, 0xB2));
        break;
      }
      // The other columns: the comparison's tint.
      switch (e.compare) {
        case TimelineEntry::CompareMark::kNone:
          break;
        case TimelineEntry::CompareMark::kDiffBase:
        case TimelineEntry::CompareMark::kComparedBase:
          return QBrush(QColor(0x42, 0x8B, 0xCA, 70));
        case TimelineEntry::CompareMark::kCompared:
          return QBrush(QColor(0xE3, 0x8B, 0x00, 70));
      }
      break;
    case kSortRole:
      switch (index.column()) {
        case kStep: return index.row();  // compiler order
        case kPipeline: return Q(s.pipeline);
        case kPass: return s.pass.empty() ? Q(s.label) : Q(s.pass);
        case kInstructions:
          return static_cast<qlonglong>(e.instruction_count.value_or(-1));
        case kDelta:
          return static_cast<qlonglong>(e.delta.value_or(0));
        case kReplay:
          return ReplayVerdict(index.row());
      }
      break;
    case kIndexRole:
      return index.row();
    case kChangedRole:
      return known ? QVariant(*e.changed) : QVariant();
    case kCompareRole:
      return static_cast<int>(e.compare);
    case Qt::FontRole:
      if (known && *e.changed) {
        QFont font;
        font.setBold(true);
        return font;
      }
      break;
    case Qt::ForegroundRole:
      if (e.failed) return QBrush(QColor(0xd0, 0x30, 0x30));
      if (known && !*e.changed && !IsBeforeOrAfter(s.stage)) return QBrush(DimmedColor());
      break;
    case Qt::TextAlignmentRole:
      if (index.column() == kStep || index.column() == kInstructions ||
          index.column() == kDelta) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      }
      break;
    case Qt::ToolTipRole: {
      QString tip = Q(s.label.empty() ? s.pass : s.label);
      if (!s.next_pass.empty()) tip += tr("\nnext pass: %1").arg(Q(s.next_pass));
      if (e.compare == TimelineEntry::CompareMark::kDiffBase) tip += tr("\ndiff base");
      if (e.compare == TimelineEntry::CompareMark::kComparedBase) {
        tip += tr("\nthe base of the comparison shown");
      }
      if (e.compare == TimelineEntry::CompareMark::kCompared) tip += tr("\ncompared with the base");
      if (e.failed) {
        tip += tr("\nthe state's file did not parse");
      } else if (!known) {
        tip += tr("\nnot loaded yet");
      } else {
        tip += *e.changed ? tr("\nchanged the module") : tr("\nno structural change");
      }
      return tip;
    }
    default:
      break;
  }
  return {};
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kStep: return tr("Step");
      case kPipeline: return tr("Pipeline");
      case kPass: return tr("Pass");
      case kInstructions: return tr("Instructions");
      case kDelta: return tr("\u0394");
      case kReplay: return tr("Replay");
    }
  }
  if (role == Qt::ToolTipRole && section == kDelta) {
    return tr("Instruction count minus the previous state's");
  }
  if (role == Qt::ToolTipRole && section == kReplay) {
    return tr("The pass bisection's verdict for the state (Replay dock, Bisect the passes)");
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// TimelineFilterModel

TimelineFilterModel::TimelineFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(kSortRole);
}

void TimelineFilterModel::SetHideUnchanged(bool hide) {
  if (hide == hide_unchanged_) return;
  hide_unchanged_ = hide;
  invalidateFilter();
}

void TimelineFilterModel::SetKeptRow(int source_row) {
  if (source_row == kept_row_) return;
  kept_row_ = source_row;
  if (hide_unchanged_) invalidateFilter();
}

bool TimelineFilterModel::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (!hide_unchanged_ || source_parent.isValid() || source_row == kept_row_) return true;
  if (const auto* timeline = qobject_cast<const TimelineModel*>(sourceModel())) {
    const TimelineEntry* e = timeline->EntryAt(source_row);
    if (e == nullptr) return true;
    if (IsBeforeOrAfter(e->state.stage) || e->failed) return true;
    return !e->changed.has_value() || *e->changed;
  }
  // Another source model: go by the changed role alone.
  const QVariant changed =
      sourceModel()->data(sourceModel()->index(source_row, 0, source_parent), kChangedRole);
  return !changed.isValid() || changed.toBool();
}

// ---------------------------------------------------------------------------------------------
// ComputationsModel

namespace {

// What a computation is, from how its first caller uses it.
QString CalledKind(const Instruction& caller, int position) {
  switch (caller.opcode()) {
    case Opcode::kFusion:
      return QStringLiteral("fusion");
    case Opcode::kWhile:
      return position == 0 ? QStringLiteral("while condition") : QStringLiteral("while body");
    case Opcode::kConditional:
      return QStringLiteral("branch");
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kScatter:
    case Opcode::kCollectiveReduce:
      return QStringLiteral("reducer");
    case Opcode::kSelectAndScatter:
      return position == 0 ? QStringLiteral("select") : QStringLiteral("scatter");
    case Opcode::kSort:
      return QStringLiteral("comparator");
    case Opcode::kMap:
      return QStringLiteral("to_apply");
    case Opcode::kCall:
      return QStringLiteral("called");
    case Opcode::kCustomCall:
      return QStringLiteral("custom-call");
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return QStringLiteral("async");
    default:
      return QStringLiteral("called");
  }
}

}  // namespace

ComputationsModel::ComputationsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ComputationsModel::SetModule(std::shared_ptr<const Module> module) {
  beginResetModel();
  if (module.get() != module_.get()) {
    cost_totals_.clear();
    cost_device_.clear();
  }
  module_ = std::move(module);
  rows_.clear();
  kinds_.clear();
  if (module_) {
    const Computation* entry = module_->entry();
    if (entry != nullptr) rows_.push_back(entry);
    for (const auto& c : module_->computations()) {
      if (c.get() != entry) rows_.push_back(c.get());
    }
    std::unordered_map<const Computation*, QString> kind;
    for (const auto& c : module_->computations()) {
      for (const Instruction* instr : c->instructions()) {
        const auto& called = instr->called_computations();
        for (int i = 0; i < static_cast<int>(called.size()); ++i) {
          if (called[i] != nullptr && !kind.count(called[i])) {
            kind.emplace(called[i], CalledKind(*instr, i));
          }
        }
      }
    }
    kinds_.reserve(rows_.size());
    for (const Computation* c : rows_) {
      if (c == entry) {
        kinds_.push_back(QStringLiteral("entry"));
      } else if (auto it = kind.find(c); it != kind.end()) {
        kinds_.push_back(it->second);
      } else {
        kinds_.push_back(QStringLiteral("unused"));
      }
    }
  }
  endResetModel();
}

const Computation* ComputationsModel::ComputationAt(int row) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return nullptr;
  return rows_[row];
}

int ComputationsModel::RowOf(const Computation* computation) const {
  if (computation == nullptr) return -1;
  auto it = std::find(rows_.begin(), rows_.end(), computation);
  return it == rows_.end() ? -1 : static_cast<int>(it - rows_.begin());
}

QString ComputationsModel::KindAt(int row) const {
  if (row < 0 || row >= static_cast<int>(kinds_.size())) return QString();
  return kinds_[row];
}

bool ComputationsModel::SetCostTotals(const Module* module,
                                      const std::vector<ComputationTotals>& totals,
                                      const QString& device) {
  std::unordered_map<const Computation*, CostTotals> by_computation;
  if (module != nullptr) {
    if (module != module_.get()) return false;
    const std::unordered_set<const Computation*> shown(rows_.begin(), rows_.end());
    for (const ComputationTotals& t : totals) {
      if (shown.count(t.computation)) by_computation[t.computation] = t.totals;
    }
  }
  const bool had = HasCostTotals();
  if (by_computation.empty()) {
    if (had) {
      beginRemoveColumns(QModelIndex(), kFlops, kColumnCount - 1);
      cost_totals_.clear();
      cost_device_.clear();
      endRemoveColumns();
    }
    return true;
  }
  if (!had) {
    beginInsertColumns(QModelIndex(), kFlops, kColumnCount - 1);
    cost_totals_ = std::move(by_computation);
    cost_device_ = device;
    endInsertColumns();
    return true;
  }
  cost_totals_ = std::move(by_computation);
  cost_device_ = device;
  if (!rows_.empty()) {
    emit dataChanged(index(0, kFlops), index(static_cast<int>(rows_.size()) - 1, kColumnCount - 1));
  }
  emit headerDataChanged(Qt::Horizontal, kFlops, kColumnCount - 1);
  return true;
}

std::optional<CostTotals> ComputationsModel::CostTotalsAt(int row) const {
  const Computation* c = ComputationAt(row);
  if (c == nullptr) return std::nullopt;
  auto it = cost_totals_.find(c);
  if (it == cost_totals_.end()) return std::nullopt;
  return it->second;
}

int ComputationsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ComputationsModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  return HasCostTotals() ? kColumnCount : kFlops;
}

QVariant ComputationsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const Computation* c = rows_[index.row()];
  if (index.column() >= kFlops) {
    auto it = cost_totals_.find(c);
    const CostTotals* t = it != cost_totals_.end() ? &it->second : nullptr;
    switch (role) {
      case Qt::DisplayRole:
        if (t == nullptr) return {};
        switch (index.column()) {
          case kFlops: return Q(CountMagnitude(t->flops));
          case kBytes: return FormatBytes(t->bytes_accessed);
          case kEstimatedTime: return Q(FormatEstimatedSeconds(t->seconds));
        }
        break;
      case kSortRole:
        // Rows without totals sort below every real value.
        switch (index.column()) {
          case kFlops: return t != nullptr ? qint64{t->flops} : qint64{-1};
          case kBytes: return t != nullptr ? qint64{t->bytes_accessed} : qint64{-1};
          case kEstimatedTime: return t != nullptr ? t->seconds : -1.0;
        }
        break;
      case kIndexRole:
        return index.row();
      case Qt::TextAlignmentRole:
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      case Qt::ToolTipRole:
        if (t == nullptr) return {};
        return tr("%1: %2 flops, %3 transcendentals, %4 bytes accessed; estimated %5 on %6")
            .arg(Q(c->name()), QLocale::system().toString(qint64{t->flops}),
                 QLocale::system().toString(qint64{t->transcendentals}),
                 QLocale::system().toString(qint64{t->bytes_accessed}),
                 Q(FormatEstimatedSeconds(t->seconds)), cost_device_);
      default:
        break;
    }
    return {};
  }
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case kName: return Q(c->name());
        case kInstructions: return c->instruction_count();
        case kKind: return kinds_[index.row()];
      }
      break;
    case kSortRole:
      switch (index.column()) {
        case kName: return Q(c->name());
        case kInstructions: return c->instruction_count();
        case kKind: return kinds_[index.row()];
      }
      break;
    case kIndexRole:
      return index.row();
    case Qt::FontRole:
      if (index.row() == 0 && module_ && c == module_->entry()) {
        QFont font;
        font.setBold(true);
        return font;
      }
      break;
    case Qt::TextAlignmentRole:
      if (index.column() == kInstructions) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::ToolTipRole:
      if (!c->execution_thread().empty()) {
        return tr("%1 (%2), execution thread %3")
            .arg(Q(c->name()), kinds_[index.row()], Q(c->execution_thread()));
      }
      return tr("%1 (%2)").arg(Q(c->name()), kinds_[index.row()]);
    default:
      break;
  }
  return {};
}

QVariant ComputationsModel::headerData(int section, Qt::Orientation orientation,
                                       int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kName: return tr("Computation");
      case kInstructions: return tr("Instructions");
      case kKind: return tr("Kind");
      case kFlops: return tr("Flops");
      case kBytes: return tr("Bytes");
      case kEstimatedTime: return tr("Est. time");
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kFlops: return tr("Floating-point operations of the computation's instructions");
      case kBytes: return tr("Bytes its instructions read and write");
      case kEstimatedTime:
        return tr("Estimated time on %1: the sum of its instructions' roofline estimates")
            .arg(cost_device_);
    }
  }
  return {};
}

}  // namespace hlowb::viewer
