// The item models under QAbstractItemModelTester (failures reported through QtTest) on real
// data: the bundled sample dump indexed with core/dump, its pass timeline loaded and
// fingerprinted, and computations of a corpus module. Also: roles (sort keys, bold/dimmed
// timeline rows, unknown values), resets, in-place updates, filtering and sorting.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QSortFilterProxyModel>
#include <QTest>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/timeline.h"
#include "core/dump/dump_index.h"
#include "core/dump/state_loader.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "viewer/models/models.h"

using hlowb::Computation;
using hlowb::DumpIndex;
using hlowb::DumpModule;
using hlowb::Module;
using hlowb::StageKind;
using hlowb::viewer::ComputationsModel;
using hlowb::viewer::ModulesModel;
using hlowb::viewer::TimelineEntry;
using hlowb::viewer::TimelineFilterModel;
using hlowb::viewer::TimelineModel;

namespace {

const std::string kSampleDump = std::string(HLOWB_SOURCE_DIR) + "/resources/samples/dump";
const std::string kCorpusModule =
    std::string(HLOWB_CORPUS_DIR) + "/benchmarks/xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo";

constexpr auto kTesterMode = QAbstractItemModelTester::FailureReportingMode::QtTest;

// States the timeline filter always keeps.
bool IsBeforeOrAfter(StageKind stage) {
  return stage == StageKind::kBeforeOptimizations || stage == StageKind::kAfterOptimizations ||
         stage == StageKind::kAfterOptimizationsVariant;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every kind of called computation.
const char kKinds[] = R"(HloModule kinds

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(f32[4]{0} %p)
}

%cond (c: (s32[], f32[4])) -> pred[] {
  %c = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[4]{0}) %c), index=0
  %k = s32[] constant(3)
  ROOT %lt = pred[] compare(s32[] %i, s32[] %k), direction=LT
}

%body (bp: (s32[], f32[4])) -> (s32[], f32[4]) {
  %bp = (s32[], f32[4]{0}) parameter(0)
  %bi = s32[] get-tuple-element((s32[], f32[4]{0}) %bp), index=0
  %bv = f32[4]{0} get-tuple-element((s32[], f32[4]{0}) %bp), index=1
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %bi, s32[] %one)
  ROOT %bt = (s32[], f32[4]{0}) tuple(s32[] %next, f32[4]{0} %bv)
}

%then (tp: f32[4]) -> f32[4] {
  ROOT %tp = f32[4]{0} parameter(0)
}

%else (ep: f32[4]) -> f32[4] {
  %ep = f32[4]{0} parameter(0)
  ROOT %en = f32[4]{0} negate(f32[4]{0} %ep)
}

%unused (u: f32[]) -> f32[] {
  ROOT %u = f32[] parameter(0)
}

ENTRY %main (x: f32[4], flag: pred[]) -> (f32[], f32[4], (s32[], f32[4]), f32[4]) {
  %x = f32[4]{0} parameter(0)
  %flag = pred[] parameter(1)
  %zero = f32[] constant(0)
  %r = f32[] reduce(f32[4]{0} %x, f32[] %zero), dimensions={0}, to_apply=%add
  %f = f32[4]{0} fusion(f32[4]{0} %x), kind=kLoop, calls=%fused
  %c0 = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(s32[] %c0, f32[4]{0} %x)
  %w = (s32[], f32[4]{0}) while((s32[], f32[4]{0}) %init), condition=%cond, body=%body
  %cd = f32[4]{0} conditional(pred[] %flag, f32[4]{0} %x, f32[4]{0} %x), true_computation=%then, false_computation=%else
  ROOT %t = (f32[], f32[4]{0}, (s32[], f32[4]{0}), f32[4]{0}) tuple(f32[] %r, f32[4]{0} %f, (s32[], f32[4]{0}) %w, f32[4]{0} %cd)
}
)";

std::shared_ptr<const Module> Parse(const std::string& text) {
  auto m = hlowb::ParseModule(text);
  if (!m.ok()) qFatal("parse failed: %s", std::string(m.status().message()).c_str());
  return std::shared_ptr<const Module>(std::move(*m));
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

 private:
  std::shared_ptr<const DumpIndex> index_;

  // The sample module with the most states.
  const DumpModule* Busiest() const {
    const DumpModule* best = nullptr;
    for (const DumpModule& m : index_->modules) {
      if (best == nullptr || m.states.size() > best->states.size()) best = &m;
    }
    return best;
  }

  // Timeline entries for a module, fully loaded and fingerprinted like the app does.
  std::vector<TimelineEntry> LoadedEntries(const DumpModule& module) {
    hlowb::DumpStateLoader loader(*index_, hlowb::TextModuleOpener(), 2);
    std::vector<hlowb::LoadedState> loaded = loader.Load(module.states);
    std::vector<hlowb::TimelineInput> inputs;
    for (size_t i = 0; i < module.states.size(); ++i) {
      hlowb::TimelineInput in;
      in.label = module.states[i].label;
      in.step = module.states[i].step;
      in.pipeline = module.states[i].pipeline;
      in.pass = module.states[i].pass;
      in.is_pass = module.states[i].stage == StageKind::kPassStep;
      in.module = loaded[i].module.get();
      inputs.push_back(in);
    }
    hlowb::Timeline timeline = hlowb::BuildTimeline(inputs);
    std::vector<TimelineEntry> entries;
    for (size_t i = 0; i < module.states.size(); ++i) {
      TimelineEntry e;
      e.state = module.states[i];
      if (loaded[i].module) {
        e.changed = timeline.rows[i].changed;
        e.instruction_count = timeline.rows[i].instruction_count;
        e.delta = timeline.rows[i].delta;
      } else {
        e.failed = true;
      }
      entries.push_back(e);
    }
    return entries;
  }

 private slots:
  void initTestCase() {
    auto index = hlowb::IndexDumpDirectory(kSampleDump);
    QVERIFY2(index.ok(), std::string(index.status().message()).c_str());
    QVERIFY(!index->modules.empty());
    index_ = std::make_shared<const DumpIndex>(std::move(*index));
  }

  void modulesModel() {
    ModulesModel model;
    QAbstractItemModelTester tester(&model, kTesterMode);
    QCOMPARE(model.rowCount(), 0);
    model.SetIndex(index_);
    QCOMPARE(model.rowCount(), static_cast<int>(index_->modules.size()));
    QCOMPARE(model.columnCount(), static_cast<int>(ModulesModel::kColumnCount));
    for (int row = 0; row < model.rowCount(); ++row) {
      const DumpModule& m = index_->modules[row];
      QCOMPARE(model.ModuleAt(row), &m);
      QCOMPARE(model.data(model.index(row, ModulesModel::kName)).toString(),
               QString::fromStdString(m.name));
      QCOMPARE(model.data(model.index(row, ModulesModel::kStates)).toInt(),
               static_cast<int>(m.states.size()));
      QCOMPARE(model.data(model.index(row, ModulesModel::kId), hlowb::viewer::kSortRole)
                   .toLongLong(),
               static_cast<qlonglong>(m.id));
      qlonglong bytes = 0;
      for (const hlowb::DumpState& s : m.states) {
        if (s.text_file >= 0) bytes += static_cast<qlonglong>(index_->files[s.text_file].size);
        if (s.proto_file >= 0) bytes += static_cast<qlonglong>(index_->files[s.proto_file].size);
      }
      QVERIFY(bytes > 0);
      QCOMPARE(model.data(model.index(row, ModulesModel::kSize), hlowb::viewer::kSortRole)
                   .toLongLong(),
               bytes);
      QVERIFY(!model.data(model.index(row, ModulesModel::kSize)).toString().isEmpty());
      QCOMPARE(model.data(model.index(row, 0), hlowb::viewer::kIndexRole).toInt(), row);
    }
    QCOMPARE(model.headerData(ModulesModel::kSize, Qt::Horizontal).toString(),
             QStringLiteral("Size"));

    // Sorting through a proxy uses the numeric keys.
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(hlowb::viewer::kSortRole);
    QAbstractItemModelTester proxy_tester(&proxy, kTesterMode);
    proxy.sort(ModulesModel::kSize, Qt::DescendingOrder);
    for (int row = 1; row < proxy.rowCount(); ++row) {
      QVERIFY(proxy.index(row - 1, ModulesModel::kSize).data(hlowb::viewer::kSortRole).toLongLong() >=
              proxy.index(row, ModulesModel::kSize).data(hlowb::viewer::kSortRole).toLongLong());
    }

    // Resets: a smaller index, then none, then the real one again.
    hlowb::DumpIndex one = *index_;
    one.modules.resize(1);
    model.SetIndex(std::make_shared<const DumpIndex>(one));
    QCOMPARE(model.rowCount(), 1);
    model.SetIndex(nullptr);
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(model.ModuleAt(0) == nullptr);
    model.SetIndex(index_);
    QCOMPARE(model.rowCount(), static_cast<int>(index_->modules.size()));
  }

  void timelineModel() {
    const DumpModule* module = Busiest();
    QVERIFY(module != nullptr && module->states.size() >= 2);
    TimelineModel model;
    QAbstractItemModelTester tester(&model, kTesterMode);
    TimelineFilterModel filter;
    filter.setSourceModel(&model);
    QAbstractItemModelTester filter_tester(&filter, kTesterMode);

    // First the states alone: nothing known yet.
    std::vector<TimelineEntry> unknown;
    for (const hlowb::DumpState& s : module->states) unknown.push_back(TimelineEntry{s, {}, {}, {}, false});
    model.SetEntries(unknown);
    const int rows = static_cast<int>(module->states.size());
    QCOMPARE(model.rowCount(), rows);
    for (int row = 0; row < rows; ++row) {
      QCOMPARE(model.data(model.index(row, TimelineModel::kInstructions)).toString(),
               QStringLiteral("\u2026"));
      QVERIFY(model.data(model.index(row, TimelineModel::kDelta)).toString().isEmpty());
      QVERIFY(!model.data(model.index(row, 0), hlowb::viewer::kChangedRole).isValid());
      QVERIFY(!model.data(model.index(row, 0), Qt::ForegroundRole).isValid());
      QCOMPARE(model.data(model.index(row, TimelineModel::kStep), hlowb::viewer::kSortRole).toInt(),
               row);
    }
    // Unknown rows are never hidden.
    filter.SetHideUnchanged(true);
    QCOMPARE(filter.rowCount(), rows);

    // Then each row as its state loads, in place.
    std::vector<TimelineEntry> loaded = LoadedEntries(*module);
    for (int row = 0; row < rows; ++row) model.UpdateEntry(row, loaded[row]);
    int unchanged_passes = 0;
    for (int row = 0; row < rows; ++row) {
      const TimelineEntry& e = loaded[row];
      const QModelIndex pass = model.index(row, TimelineModel::kPass);
      QCOMPARE(model.EntryAt(row)->state.label, e.state.label);
      if (e.failed) {
        QCOMPARE(model.data(model.index(row, TimelineModel::kInstructions)).toString(),
                 QStringLiteral("error"));
        continue;
      }
      QCOMPARE(model.data(model.index(row, TimelineModel::kInstructions)).toLongLong(),
               static_cast<qlonglong>(*e.instruction_count));
      QCOMPARE(model.data(pass, hlowb::viewer::kChangedRole).toBool(), *e.changed);
      const bool before_after = IsBeforeOrAfter(e.state.stage);
      if (*e.changed) {
        QVERIFY(model.data(pass, Qt::FontRole).value<QFont>().bold());
        QVERIFY(!model.data(pass, Qt::ForegroundRole).isValid());
      } else if (!before_after) {
        ++unchanged_passes;
        QVERIFY(!model.data(pass, Qt::FontRole).isValid());
        QVERIFY(model.data(pass, Qt::ForegroundRole).value<QBrush>().style() != Qt::NoBrush);
      }
      const QString delta = model.data(model.index(row, TimelineModel::kDelta)).toString();
      if (*e.delta > 0) QVERIFY(delta.startsWith(QLatin1Char('+')));
      QCOMPARE(model.data(model.index(row, TimelineModel::kDelta), hlowb::viewer::kSortRole)
                   .toLongLong(),
               static_cast<qlonglong>(*e.delta));
    }
    qInfo("sample module %s: %d states, %d unchanged passes", module->name.c_str(), rows,
          unchanged_passes);

    // Hiding unchanged passes: before/after states always stay.
    QCOMPARE(filter.rowCount(), rows - unchanged_passes);
    bool has_before = false;
    bool has_after = false;
    for (int row = 0; row < filter.rowCount(); ++row) {
      const int source = filter.mapToSource(filter.index(row, 0)).row();
      const StageKind stage = model.EntryAt(source)->state.stage;
      has_before |= stage == StageKind::kBeforeOptimizations;
      has_after |= stage == StageKind::kAfterOptimizations;
    }
    bool sample_has_before = false;
    bool sample_has_after = false;
    for (const hlowb::DumpState& s : module->states) {
      sample_has_before |= s.stage == StageKind::kBeforeOptimizations;
      sample_has_after |= s.stage == StageKind::kAfterOptimizations;
    }
    QCOMPARE(has_before, sample_has_before);
    QCOMPARE(has_after, sample_has_after);

    // A row that becomes unchanged disappears from the filtered view (dynamic filtering), and a
    // before/after state marked unchanged stays.
    for (int row = 0; row < rows; ++row) {
      TimelineEntry e = loaded[row];
      if (!e.failed) e.changed = false;
      model.UpdateEntry(row, e);
    }
    int kept = 0;
    for (const TimelineEntry& e : loaded) kept += IsBeforeOrAfter(e.state.stage) || e.failed;
    QVERIFY(kept < rows);
    QCOMPARE(filter.rowCount(), kept);
    filter.SetHideUnchanged(false);
    QCOMPARE(filter.rowCount(), rows);

    // Sorting by delta through the filter (it is a QSortFilterProxyModel with kSortRole).
    filter.sort(TimelineModel::kDelta, Qt::AscendingOrder);
    for (int row = 1; row < filter.rowCount(); ++row) {
      QVERIFY(filter.index(row - 1, TimelineModel::kDelta).data(hlowb::viewer::kSortRole).toLongLong() <=
              filter.index(row, TimelineModel::kDelta).data(hlowb::viewer::kSortRole).toLongLong());
    }
    filter.sort(-1);

    // Resets.
    model.SetEntries({});
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(filter.rowCount(), 0);
    model.SetEntries(loaded);
    QCOMPARE(model.rowCount(), rows);
    model.UpdateEntry(rows, loaded[0]);  // out of range: ignored
    QVERIFY(model.EntryAt(rows) == nullptr);
  }

  void computationsModelKinds() {
    auto module = Parse(kKinds);
    ComputationsModel model;
    QAbstractItemModelTester tester(&model, kTesterMode);
    model.SetModule(module);
    QCOMPARE(model.rowCount(), static_cast<int>(module->computations().size()));
    QCOMPARE(model.ComputationAt(0), module->entry());
    auto kind = [&](const char* name) {
      return model.KindAt(model.RowOf(module->FindComputation(name)));
    };
    QCOMPARE(kind("main"), QStringLiteral("entry"));
    QCOMPARE(kind("add"), QStringLiteral("reducer"));
    QCOMPARE(kind("fused"), QStringLiteral("fusion"));
    QCOMPARE(kind("cond"), QStringLiteral("while condition"));
    QCOMPARE(kind("body"), QStringLiteral("while body"));
    QCOMPARE(kind("then"), QStringLiteral("branch"));
    QCOMPARE(kind("else"), QStringLiteral("branch"));
    QCOMPARE(kind("unused"), QStringLiteral("unused"));
    // The rest follow in module order.
    QCOMPARE(model.ComputationAt(1), module->computations()[0].get());
    for (int row = 0; row < model.rowCount(); ++row) {
      QCOMPARE(model.RowOf(model.ComputationAt(row)), row);
      QCOMPARE(model.data(model.index(row, ComputationsModel::kKind)).toString(), model.KindAt(row));
      QCOMPARE(model.data(model.index(row, ComputationsModel::kInstructions), hlowb::viewer::kSortRole)
                   .toInt(),
               model.ComputationAt(row)->instruction_count());
    }
    QVERIFY(model.data(model.index(0, 0), Qt::FontRole).value<QFont>().bold());
    QCOMPARE(model.RowOf(nullptr), -1);
    QVERIFY(model.ComputationAt(model.rowCount()) == nullptr);
  }

  void computationsModelOnCorpusModule() {
    std::ifstream probe(kCorpusModule);
    if (!probe) QSKIP("corpus not available");
    auto module = Parse(ReadFile(kCorpusModule));
    ComputationsModel model;
    QAbstractItemModelTester tester(&model, kTesterMode);
    model.SetModule(module);
    QCOMPARE(model.rowCount(), static_cast<int>(module->computations().size()));
    QCOMPARE(model.ComputationAt(0), module->entry());
    std::set<const Computation*> seen;
    for (int row = 0; row < model.rowCount(); ++row) seen.insert(model.ComputationAt(row));
    QCOMPARE(seen.size(), module->computations().size());

    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(hlowb::viewer::kSortRole);
    QAbstractItemModelTester proxy_tester(&proxy, kTesterMode);
    proxy.sort(ComputationsModel::kInstructions, Qt::DescendingOrder);
    const int top = proxy.mapToSource(proxy.index(0, 0)).row();
    for (const auto& c : module->computations()) {
      QVERIFY(c->instruction_count() <= model.ComputationAt(top)->instruction_count());
    }

    // Resets: another module (the sample's first state), then none.
    model.SetModule(Parse(kKinds));
    QCOMPARE(model.KindAt(0), QStringLiteral("entry"));
    model.SetModule(nullptr);
    QCOMPARE(model.rowCount(), 0);
    model.SetModule(module);
    QCOMPARE(model.rowCount(), static_cast<int>(module->computations().size()));
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ModelsTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "models_test.moc"
