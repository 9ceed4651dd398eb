// The sharding view, offscreen: the graph view's "colour by sharding" mode (equal shardings share
// a colour, different tile grids or device orders do not, maximal/replicated/manual/invalid/none
// have their own, tuple shardings are striped per element, a legend lists what is drawn), the
// properties panel's decoded sharding (kind, tile grid, iota device orders expanded, subgroups,
// last_tile_dim_replicate, the per-device shape with padding, tuple elements, "invalid
// sharding: ..." for shardings that cannot be right), per-partition programs after SPMD
// partitioning, the same on a module jax partitions over 8 host devices (skipped without jax),
// and the UI thread while the mode is turned on for the largest corpus module.
#include <QAction>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <memory>
#include <string>

#include "app/gui/main_window.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "latency_probe.h"
#include "tests/gui/corpus_util.h"
#include "tests/gui/window_test_util.h"
#include "viewer/graph/graph_view.h"
#include "viewer/graph/sharding_info.h"
#include "viewer/models/models.h"
#include "viewer/widgets/properties_panel.h"

using hlowb::Instruction;
using hlowb::Module;
using hlowb::graph::ShardingKind;
using hlowb::viewer::GraphView;
using hlowb::viewer::PropertiesPanel;

namespace {

// Every sharding form, equal ones under different spellings, and shardings that cannot be
// right. Before partitioning: the tuple's sharding says so.
constexpr char kShardedModule[] = R"(HloModule sharded, num_partitions=8

ENTRY main {
  p.tiled = f32[16,32] parameter(0), sharding={devices=[2,4]<=[8]}
  p.tiled.same = f32[16,32] parameter(1), sharding={devices=[2,4]<=[8] metadata={op_name="other"}}
  p.tiled.explicit = f32[16,32] parameter(2), sharding={devices=[2,4]0,1,2,3,4,5,6,7}
  p.transposed = f32[16,32] parameter(3), sharding={devices=[2,4]<=[4,2]T(1,0)}
  p.partial = f32[16,8] parameter(4), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  p.padded = f32[16,10] parameter(5), sharding={devices=[1,4,2]<=[8] last_tile_dims={replicated}}
  p.repl = f32[8] parameter(6), sharding={replicated}
  p.max = f32[8] parameter(7), sharding={maximal device=3}
  p.max5 = f32[8] parameter(8), sharding={maximal device=5}
  p.manual = f32[8] parameter(9), sharding={manual}
  bad.count = f32[16,32] parameter(10), sharding={devices=[2,4]0,1,2,3,4,5}
  bad.rank = f32[16] parameter(11), sharding={devices=[2,4]<=[8]}
  bad.huge = f32[16,32] parameter(12), sharding={devices=[100000,100000]<=[10000000000]}
  bad.dup = f32[4,4] parameter(13), sharding={devices=[2,2]0,1,1,3}
  none.add = f32[8] add(p.repl, p.max)
  sum.tiled = f32[16,32] add(p.tiled, p.tiled.same)
  sum.other = f32[16,32] add(p.tiled.explicit, p.transposed)
  tup = (f32[8], f32[16,32]) tuple(none.add, sum.tiled), sharding={{replicated}, {devices=[2,4]<=[8]}}
  ROOT out = (f32[8], f32[16,32], f32[16,8], f32[16,10], f32[8], f32[8], f32[8], f32[16,32], f32[16], f32[16,32], f32[4,4], (f32[8], f32[16,32])) tuple(p.max5, sum.other, p.partial, p.padded, p.manual, bad.dup, bad.dup, bad.count, bad.rank, bad.huge, bad.dup, tup)
}
)";

// After SPMD partitioning (XLA names the entry "<name>_spmd"): shapes are each partition's; the
// parameters keep the sharding they were split by.
constexpr char kPartitionedModule[] = R"(HloModule partitioned, num_partitions=8

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main_spmd {
  param = f32[8,8] parameter(0), sharding={devices=[2,4]<=[8]}
  param.1 = f32[8,8] parameter(1), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  dot = f32[8,8] dot(param, param.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT all-reduce = f32[8,8] all-reduce(dot), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=add_f32
}
)";

std::shared_ptr<const Module> Parse(const std::string& text) {
  auto m = hlowb::ParseModule(text);
  if (!m.ok()) {
    qWarning("parse failed: %s", std::string(m.status().message()).c_str());
    return nullptr;
  }
  return std::shared_ptr<const Module>(std::move(*m));
}

const Instruction* Find(const Module& m, const std::string& name) {
  return hlowb::testing::FindInstruction(m, name);
}

QColor Kind(ShardingKind kind, int slot = -1) { return GraphView::ShardingColor(kind, slot); }

QColor First(const std::vector<QColor>& colors) { return colors.empty() ? QColor() : colors[0]; }

// Shows `computation` with the sharding colours on and waits for both.
bool ShowColoured(GraphView& view, std::shared_ptr<const Module> module,
                  const hlowb::Computation* computation) {
  QSignalSpy finished(&view, &GraphView::layoutFinished);
  view.SetColorBySharding(true);
  view.SetComputation(std::move(module), computation);
  return QTest::qWaitFor(
      [&] {
        return !finished.isEmpty() && !view.IsLayoutRunning() && view.ShardingColoringReady();
      },
      60000);
}

// The colour painted `dx` in from the left (negative: from the right) of the node's box,
// halfway down, where no label text is.
QColor PaintedColor(GraphView& view, const Instruction* instruction, double dx) {
  const QRectF rect = view.NodeSceneRect(instruction);
  if (rect.isEmpty()) return QColor();
  QImage image(rect.size().toSize() * 2, QImage::Format_ARGB32);
  image.fill(Qt::black);
  {
    QPainter painter(&image);
    view.graphicsView()->scene()->render(&painter, QRectF(QPointF(0, 0), image.size()), rect);
  }
  const int x = dx >= 0 ? static_cast<int>(dx * 2) : image.width() + static_cast<int>(dx * 2);
  return image.pixelColor(x, image.height() / 2);
}

bool Near(const QColor& a, const QColor& b) {
  return std::abs(a.red() - b.red()) <= 8 && std::abs(a.green() - b.green()) <= 8 &&
         std::abs(a.blue() - b.blue()) <= 8;
}

QString Names(const std::vector<GraphView::LegendEntry>& legend) {
  QStringList out;
  for (const auto& e : legend) out << e.text;
  return out.join(QStringLiteral(" | "));
}

bool HasLegend(const std::vector<GraphView::LegendEntry>& legend, const QString& text,
               const QColor& color) {
  for (const auto& e : legend) {
    if (e.text == text) return e.color == color;
  }
  return false;
}

// The largest .hlo file of the corpus; empty when the corpus is absent.
using hlowb::testing::LargestCorpusFile;

// jax's script: a dot, tanh and add over a 2x4 mesh of 8 host devices, dumped around SPMD
// partitioning.
constexpr char kJaxScript[] = R"(
import os, sys
os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count=8 --xla_dump_to=" + sys.argv[1]
                           + " --xla_dump_hlo_pass_re=spmd-partitioning")
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
def sharded_step(a, b, c):
    h = jnp.tanh(jnp.dot(a, b)) + c
    return h.sum(axis=0), h
a = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P("x", "y")))
b = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("y", None)))
c = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(None, "x")))
jax.jit(sharded_step, out_shardings=(NamedSharding(mesh, P()),
                                     NamedSharding(mesh, P("x", None))))(a, b, c)
)";

// With HLOWB_GRAPH_TEST_SHOTS=DIR, saves what `widget` shows as DIR/NAME.png (to look at what a
// test checked).
void Shot(QWidget& widget, const char* name) {
  const QString dir = qEnvironmentVariable("HLOWB_GRAPH_TEST_SHOTS");
  if (dir.isEmpty()) return;
  QTest::qWait(50);
  widget.grab().save(QDir(dir).filePath(QString::fromLatin1(name) + QStringLiteral(".png")));
}

QString FindDump(const QString& dir, const QString& pattern) {
  QDirIterator it(dir, {pattern}, QDir::Files, QDirIterator::Subdirectories);
  return it.hasNext() ? it.next() : QString();
}

}  // namespace

class ShardingViewTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("sharding_view_test"));
    QSettings().clear();
  }

  void ColoursNodesBySharding() {
    auto module = Parse(kShardedModule);
    QVERIFY(module != nullptr);
    const Module& m = *module;
    GraphView view;
    view.resize(1400, 900);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(ShowColoured(view, module, m.entry()));
    auto colors = [&](const char* name) {
      const Instruction* i = Find(m, name);
      return i == nullptr ? std::vector<QColor>() : view.ShardingColorsOf(i);
    };
    const QColor tiled = First(colors("p.tiled"));
    QVERIFY(tiled.isValid());
    QCOMPARE(colors("p.tiled").size(), size_t{1});
    // Equal shardings share a colour whatever their metadata or spelling.
    QCOMPARE(colors("p.tiled.same"), colors("p.tiled"));
    QCOMPARE(colors("p.tiled.explicit"), colors("p.tiled"));
    // Another device order, another grid: other colours, all different.
    const QColor transposed = First(colors("p.transposed"));
    const QColor partial = First(colors("p.partial"));
    const QColor padded = First(colors("p.padded"));
    QVERIFY(transposed.isValid() && partial.isValid() && padded.isValid());
    QVERIFY(transposed != tiled);
    QVERIFY(partial != tiled && partial != transposed);
    QVERIFY(padded != tiled && padded != transposed && padded != partial);
    QCOMPARE(tiled, Kind(ShardingKind::kTiled, 0));
    // The fixed kinds: one hue each; every maximal device shares it.
    QCOMPARE(colors("p.repl"), std::vector<QColor>{Kind(ShardingKind::kReplicated)});
    QCOMPARE(colors("p.max"), std::vector<QColor>{Kind(ShardingKind::kMaximal)});
    QCOMPARE(colors("p.max5"), colors("p.max"));
    QCOMPARE(colors("p.manual"), std::vector<QColor>{Kind(ShardingKind::kManual)});
    QCOMPARE(colors("none.add"), std::vector<QColor>{Kind(ShardingKind::kNone)});
    QCOMPARE(colors("sum.tiled"), std::vector<QColor>{Kind(ShardingKind::kNone)});
    for (const char* bad : {"bad.count", "bad.rank", "bad.huge", "bad.dup"}) {
      QVERIFY2(colors(bad) == std::vector<QColor>{Kind(ShardingKind::kInvalid)}, bad);
    }
    QVERIFY(Kind(ShardingKind::kReplicated) != Kind(ShardingKind::kMaximal));
    QVERIFY(Kind(ShardingKind::kManual) != Kind(ShardingKind::kNone));
    // A tuple sharding: one stripe per element.
    const std::vector<QColor> tup = {Kind(ShardingKind::kReplicated), tiled};
    QCOMPARE(colors("tup"), tup);

    Shot(view, "sharding_colours");
    // What is painted: the fill of a box, both stripes of the tuple.
    QVERIFY2(Near(PaintedColor(view, Find(m, "p.max"), 4), Kind(ShardingKind::kMaximal)),
             qPrintable(PaintedColor(view, Find(m, "p.max"), 4).name()));
    QVERIFY(Near(PaintedColor(view, Find(m, "p.transposed"), 4), transposed));
    QVERIFY2(Near(PaintedColor(view, Find(m, "tup"), 4), Kind(ShardingKind::kReplicated)),
             qPrintable(PaintedColor(view, Find(m, "tup"), 4).name()));
    QVERIFY2(Near(PaintedColor(view, Find(m, "tup"), -4), tiled),
             qPrintable(PaintedColor(view, Find(m, "tup"), -4).name()));

    // The legend: what each drawn colour means, the tile grid for tiled ones.
    const auto legend = view.ShardingLegend();
    const QString names = Names(legend);
    QVERIFY2(HasLegend(legend, QStringLiteral("no sharding"), Kind(ShardingKind::kNone)),
             qPrintable(names));
    QVERIFY2(HasLegend(legend, QStringLiteral("tiled [2,4]<=[8]"), tiled), qPrintable(names));
    QVERIFY2(HasLegend(legend, QStringLiteral("tiled [2,4]<=[4,2]T(1,0)"), transposed),
             qPrintable(names));
    QVERIFY2(HasLegend(legend,
                       QStringLiteral("partially replicated [2,1,4]<=[8] last_tile_dim_replicate"),
                       partial),
             qPrintable(names));
    QVERIFY2(HasLegend(legend, QStringLiteral("partially replicated [1,4,2]<=[8] {replicated}"),
                       padded),
             qPrintable(names));
    QVERIFY(HasLegend(legend, QStringLiteral("replicated"), Kind(ShardingKind::kReplicated)));
    QVERIFY(HasLegend(legend, QStringLiteral("maximal"), Kind(ShardingKind::kMaximal)));
    QVERIFY(HasLegend(legend, QStringLiteral("manual"), Kind(ShardingKind::kManual)));
    QVERIFY(HasLegend(legend, QStringLiteral("invalid"), Kind(ShardingKind::kInvalid)));
    // Equal shardings are one entry.
    QCOMPARE(static_cast<int>(legend.size()), 9);
    const QString shown = view.ShardingLegendText();
    QVERIFY2(shown.startsWith(QStringLiteral("Sharding: no sharding | tiled [2,4]<=[8] | ")),
             qPrintable(shown));
    QVERIFY2(shown.contains(QStringLiteral(" | tiled [2,4]<=[4,2]T(1,0) | ")), qPrintable(shown));
    QVERIFY(!shown.contains(QStringLiteral("per-partition")));
    QWidget* legend_widget = view.findChild<QWidget*>(QStringLiteral("shardingLegend"));
    QVERIFY(legend_widget != nullptr);
    QVERIFY(legend_widget->isVisible());
    QVERIFY(legend_widget->height() >= 16);

    // Off: the opcode colours are back and the legend goes.
    view.SetColorBySharding(false);
    QVERIFY(view.ShardingColorsOf(Find(m, "p.max")).empty());
    QVERIFY(view.ShardingLegendText().isEmpty());
    QVERIFY(!Near(PaintedColor(view, Find(m, "p.max"), 4), Kind(ShardingKind::kMaximal)));
  }

  void DecodesShardingsInTheProperties() {
    auto module = Parse(kShardedModule);
    QVERIFY(module != nullptr);
    PropertiesPanel panel;
    auto text = [&](const char* name) {
      panel.SetInstruction(module, Find(*module, name));
      return panel.PlainText();
    };
    auto expect = [](const QString& all, const QStringList& lines) {
      for (const QString& line : lines) {
        if (!all.split(QLatin1Char('\n')).contains(line)) {
          qWarning("missing line \"%s\" in:\n%s", qPrintable(line), qPrintable(all));
          return false;
        }
      }
      return true;
    };
    QVERIFY(expect(text("p.tiled"), {
        "sharding: {devices=[2,4]<=[8]}",
        "kind: tiled",
        "tile grid: [2,4] (dimension 0 in 2, dimension 1 in 4)",
        "iota: [2,4]<=[8]",
        "device list: 0,1,2,3,4,5,6,7",
        "devices: 8",
        "tile [1,2]: device 6",
        "per-device shape: f32[8,8]",
    }));
    // The iota with a transpose, expanded.
    QVERIFY(expect(text("p.transposed"), {
        "kind: tiled",
        "iota: [2,4]<=[4,2]T(1,0)",
        "iota means: devices 0..7 laid out as [4,2], transposed by (1,0) to [2,4], read "
        "row-major into the grid [2,4]",
        "device list: 0,2,4,6,1,3,5,7",
        "tile [0,1]: device 2",
        "tile [1,0]: device 1",
        "per-device shape: f32[8,8]",
    }));
    QVERIFY(expect(text("p.tiled.explicit"), {"device list: 0,1,2,3,4,5,6,7", "devices: 8"}));
    QVERIFY(expect(text("p.partial"), {
        "kind: partially replicated",
        "tile grid: [2,1,4] (dimension 0 in 2, dimension 1 in 1)",
        "subgroups: replicated \u00d74",
        "last_tile_dim_replicate: true: the last grid dimension (4) replicates each tile",
        "replication: each tile on 4 devices",
        "tile [1,0]: devices 4,5,6,7",
        "per-device shape: f32[8,8]",
    }));
    // Subgroup types, and a dimension that does not divide evenly.
    QVERIFY(expect(text("p.padded"), {
        "kind: partially replicated",
        "subgroups: replicated \u00d72",
        "per-device shape: f32[16,3]",
        "padding: dimension 1: 10 in 4 tiles of 3 (2 padding)",
        "tile [0,3]: devices 6,7",
    }));
    QVERIFY(expect(text("p.max5"), {"kind: maximal", "device: 5", "per-device shape: f32[8]"}));
    QVERIFY(expect(text("p.repl"), {"kind: replicated", "per-device shape: f32[8]"}));
    QVERIFY(expect(text("p.manual"), {"kind: manual"}));
    QVERIFY(expect(text("p.tiled.same"), {"sharding metadata: {op_name=\"other\"}"}));
    // Tuples: each element decoded.
    QVERIFY(expect(text("tup"), {
        "kind: tuple",
        "elements: 2",
        "element 0: {replicated}",
        "element 0 kind: replicated",
        "element 1: {devices=[2,4]<=[8]}",
        "element 1 kind: tiled",
        "element 1 per-device shape: f32[8,8]",
    }));
    // Shardings that cannot be right say why.
    QVERIFY(expect(text("bad.count"), {
        "kind: invalid",
        "error: invalid sharding: the device list has 6 devices but the tile grid [2,4] has 8 "
        "tiles",
    }));
    QVERIFY(expect(text("bad.rank"), {
        "error: invalid sharding: the tile grid [2,4] splits 2 dimensions but f32[16] has 1",
    }));
    QVERIFY(expect(text("bad.huge"), {
        "error: invalid sharding: the tile grid [100000,100000] has more than 16,777,216 tiles",
    }));
    QVERIFY(expect(text("bad.dup"), {"error: invalid sharding: device 1 holds two tiles"}));
    // No sharding, no section (the module is not partitioned yet).
    QVERIFY(!text("none.add").contains(QStringLiteral("kind:")));
    QVERIFY(!text("none.add").contains(QStringLiteral("per-partition")));
  }

  void DecoderRefusesHostileShardings() {
    // Straight from the decoder: no crash, an explanation.
    hlowb::Sharding s;
    s.type = hlowb::ShardingType::kTiled;
    s.tile_dims = {int64_t{1} << 40, int64_t{1} << 40};
    s.iota = hlowb::IotaDeviceList{s.tile_dims, {int64_t{1} << 40, int64_t{1} << 40}, {}};
    const hlowb::Shape shape = hlowb::Shape::Array(hlowb::PrimitiveType::kF32, {4, 4});
    auto d = hlowb::graph::DecodeSharding(s, shape);
    QCOMPARE(d.kind, ShardingKind::kInvalid);
    QVERIFY(d.error.rfind("invalid sharding: ", 0) == 0);
    s.tile_dims = {2, 0};
    s.iota.reset();
    s.devices = {};
    d = hlowb::graph::DecodeSharding(s, shape);
    QCOMPARE(QString::fromStdString(d.error),
             QStringLiteral("invalid sharding: tile dimension 1 is 0 (every dimension needs at "
                            "least one tile)"));
    s.tile_dims = {2, 2};
    s.iota = hlowb::IotaDeviceList{{2, 2}, {4}, {1, 0}};
    d = hlowb::graph::DecodeSharding(s, shape);
    QCOMPARE(QString::fromStdString(d.error),
             QStringLiteral("invalid sharding: T(1,0) is not a permutation of the 1 iota "
                            "dimensions"));
    s.iota = hlowb::IotaDeviceList{{2, 2}, {3}, {}};
    d = hlowb::graph::DecodeSharding(s, shape);
    QCOMPARE(QString::fromStdString(d.error),
             QStringLiteral("invalid sharding: the iota reshape [3] does not hold the 4 tiles "
                            "of the grid [2,2]"));
    hlowb::Sharding tuple;
    tuple.type = hlowb::ShardingType::kTuple;
    tuple.tuple_elements.resize(3);
    d = hlowb::graph::DecodeSharding(
        tuple, hlowb::Shape::Tuple({shape, shape}));
    QCOMPARE(QString::fromStdString(d.error),
             QStringLiteral("invalid sharding: 3 element shardings for a tuple of 2 elements"));
  }

  void PerPartitionProgram() {
    auto module = Parse(kPartitionedModule);
    QVERIFY(module != nullptr);
    QVERIFY(hlowb::graph::PartitioningOf(*module).per_partition_program);
    QVERIFY(!hlowb::graph::PartitioningOf(*Parse(kShardedModule)).per_partition_program);
    PropertiesPanel panel;
    panel.SetInstruction(module, Find(*module, "param"));
    const QString param = panel.PlainText();
    QVERIFY2(param.contains(QStringLiteral(
                 "program: per-partition program (8 partitions): the shapes are each "
                 "partition's")),
             qPrintable(param));
    QVERIFY2(param.contains(QStringLiteral("per-partition shape: f32[8,8]")), qPrintable(param));
    QVERIFY2(param.contains(QStringLiteral("full shape: f32[16,32]")), qPrintable(param));
    QVERIFY(!param.contains(QStringLiteral("per-device shape")));
    panel.SetInstruction(module, Find(*module, "param.1"));
    QVERIFY2(panel.PlainText().contains(QStringLiteral("full shape: f32[32,8]")),
             qPrintable(panel.PlainText()));
    QVERIFY(panel.PlainText().contains(QStringLiteral("device list: 0,4,1,5,2,6,3,7")));
    panel.SetInstruction(module, Find(*module, "all-reduce"));
    QVERIFY(panel.PlainText().contains(QStringLiteral("program: per-partition program")));
    QVERIFY(panel.PlainText().contains(QStringLiteral("per-partition shape: f32[8,8]")));

    GraphView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(ShowColoured(view, module, module->entry()));
    QVERIFY(view.ShardingLegendText().contains(QStringLiteral("per-partition program (8")));
    Shot(view, "sharding_partitioned");
    QCOMPARE(view.ShardingColorsOf(Find(*module, "all-reduce")),
             std::vector<QColor>{Kind(ShardingKind::kNone)});
    QCOMPARE(view.ShardingColorsOf(Find(*module, "param")),
             std::vector<QColor>{Kind(ShardingKind::kTiled, 0)});
  }

  void ModulePartitionedByJax() {
    const QString python = QStringLiteral(HLOWB_SOURCE_DIR "/.venv/bin/python");
    if (!QFile::exists(python)) QSKIP("no .venv/bin/python: run scripts/setup to install jax");
    QProcess probe;
    probe.start(python, {QStringLiteral("-c"), QStringLiteral("import jax")});
    if (!probe.waitForFinished(60000) || probe.exitCode() != 0) {
      QSKIP(".venv/bin/python has no jax: the 8-device module cannot be generated");
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString script = dir.filePath(QStringLiteral("sharded_step.py"));
    {
      QFile f(script);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(kJaxScript);
    }
    const QString dump = dir.filePath(QStringLiteral("dump"));
    QProcess jax;
    jax.setProcessChannelMode(QProcess::MergedChannels);
    jax.start(python, {script, dump});
    QVERIFY(jax.waitForFinished(180000));
    QVERIFY2(jax.exitCode() == 0, jax.readAll().constData());
    const QString before =
        FindDump(dump, QStringLiteral("*sharded_step*before_spmd-partitioning*"));
    const QString after = FindDump(dump, QStringLiteral("*sharded_step*after_spmd-partitioning*"));
    if (before.isEmpty() || after.isEmpty()) {
      QSKIP("this jax names its SPMD partitioning dumps differently");
    }

    // Before partitioning: the shardings propagated over the mesh.
    auto text = hlowb::ReadFileToString(before.toStdString());
    QVERIFY(text.ok());
    auto module = Parse(*text);
    QVERIFY(module != nullptr);
    QVERIFY(!hlowb::graph::PartitioningOf(*module).per_partition_program);
    const hlowb::Computation* entry = module->entry();
    const Instruction* a = entry->parameter(0);
    const Instruction* b = entry->parameter(1);
    QVERIFY(a != nullptr && b != nullptr);
    PropertiesPanel panel;
    panel.SetInstruction(module, a);
    QString props = panel.PlainText();
    QVERIFY2(props.contains(QStringLiteral("kind: tiled")), qPrintable(props));
    QVERIFY2(props.contains(QStringLiteral("per-device shape: f32[8,8]")), qPrintable(props));
    QVERIFY(props.contains(QStringLiteral("device list: 0,1,2,3,4,5,6,7")));
    panel.SetInstruction(module, b);
    props = panel.PlainText();
    QVERIFY2(props.contains(QStringLiteral("kind: partially replicated")), qPrintable(props));
    QVERIFY2(props.contains(QStringLiteral("device list: 0,4,1,5,2,6,3,7")), qPrintable(props));
    QVERIFY2(props.contains(QStringLiteral("per-device shape: f32[8,8]")), qPrintable(props));

    GraphView view;
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(ShowColoured(view, module, entry));
    const auto ca = view.ShardingColorsOf(a);
    const auto cb = view.ShardingColorsOf(b);
    QCOMPARE(ca.size(), size_t{1});
    QCOMPARE(cb.size(), size_t{1});
    QVERIFY(ca != cb);
    // The dot, tanh and add carry one propagated sharding: one colour, not the parameters'.
    std::vector<const Instruction*> same;
    for (const Instruction* i : entry->instructions()) {
      if (i->opcode() == hlowb::Opcode::kTanh || i->opcode() == hlowb::Opcode::kDot) {
        same.push_back(i);
      }
    }
    QVERIFY(same.size() >= 2);
    const auto cs = view.ShardingColorsOf(same[0]);
    QCOMPARE(cs.size(), size_t{1});
    QVERIFY(cs != ca && cs != cb && cs[0] != Kind(ShardingKind::kNone));
    for (const Instruction* i : same) QCOMPARE(view.ShardingColorsOf(i), cs);
    QVERIFY(view.ShardingLegend().size() >= 4);
    Shot(view, "sharding_jax");

    // After partitioning: a per-partition program, each parameter one partition's.
    text = hlowb::ReadFileToString(after.toStdString());
    QVERIFY(text.ok());
    auto partitioned = Parse(*text);
    QVERIFY(partitioned != nullptr);
    QVERIFY(hlowb::graph::PartitioningOf(*partitioned).per_partition_program);
    panel.SetInstruction(partitioned, partitioned->entry()->parameter(0));
    props = panel.PlainText();
    QVERIFY2(props.contains(QStringLiteral("program: per-partition program (8 partitions)")),
             qPrintable(props));
    QVERIFY2(props.contains(QStringLiteral("per-partition shape: f32[8,8]")), qPrintable(props));
    QVERIFY2(props.contains(QStringLiteral("full shape: f32[16,32]")), qPrintable(props));
  }

  void TurningItOnNeverBlocksTheUiThread() {
    const std::string path = LargestCorpusFile();
    if (path.empty()) QSKIP("corpus not found at " HLOWB_CORPUS_DIR);
    hlowb::gui::MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.OpenPath(QString::fromStdString(path));
    QVERIFY(hlowb::testing::WaitWindowIdle(w, 120000));
    QVERIFY(w.current_module() != nullptr);
    QAction* action = w.findChild<QAction*>(QStringLiteral("colorBySharding"));
    QVERIFY(action != nullptr);
    QVERIFY(action->isCheckable());
    GraphView* graph = w.graph_view();

    // The window finishes opening in slices for a moment after it says it is idle; the probe
    // measures the sharding view, not that.
    QTest::qWait(1500);
    hlowb::testing::LatencyProbe probe;
    probe.SetPhase("colour by sharding on");
    probe.Start();
    action->setChecked(true);
    QVERIFY(QTest::qWaitFor([&] { return graph->ShardingColoringReady(); }, 60000));
    QTest::qWait(300);  // the far image and the repaint with the colours
    // The biggest computation (thousands of instructions), coloured as it is laid out.
    const hlowb::Computation* biggest = nullptr;
    for (const auto& c : w.current_module()->computations()) {
      if (biggest == nullptr || c->instruction_count() > biggest->instruction_count()) {
        biggest = c.get();
      }
    }
    probe.SetPhase("biggest computation, coloured");
    const int row = w.computations_model()->RowOf(biggest);
    QVERIFY(row >= 0);
    emit w.computations_view()->activated(w.computations_model()->index(row, 0));
    QVERIFY(hlowb::testing::WaitWindowIdle(w, 120000));
    QCOMPARE(graph->computation(), biggest);
    QVERIFY(QTest::qWaitFor([&] { return graph->ShardingColoringReady(); }, 60000));
    QTest::qWait(300);
    probe.SetPhase("colour by sharding off");
    action->setChecked(false);
    QTest::qWait(300);
    probe.SetPhase("colour by sharding on again");
    action->setChecked(true);
    QVERIFY(QTest::qWaitFor([&] { return graph->ShardingColoringReady(); }, 60000));
    QTest::qWait(300);
    probe.Stop();

    // The module's shardings (maximal, some per tuple element) are drawn: the scope boxes of the
    // grouped overview show the shardings inside them.
    const QString legend = Names(graph->ShardingLegend());
    qInfo("%s: legend %s; max event-loop gap %lld ms (%s), UI-thread CPU in a gap at most %.0f ms "
          "(%s); load %.1f",
          path.c_str(), qPrintable(legend), static_cast<long long>(probe.max_gap()),
          qPrintable(probe.worst()), probe.max_cpu_gap(), qPrintable(probe.worst_cpu()),
          hlowb::testing::SystemLoad());
    QVERIFY2(legend.contains(QStringLiteral("maximal")), qPrintable(legend));
    QVERIFY2(probe.max_cpu_gap() < 100,
             qPrintable(QStringLiteral("the UI thread worked %1 ms without returning to the "
                                       "event loop during %2")
                            .arg(probe.max_cpu_gap())
                            .arg(probe.worst_cpu())));
    if (probe.max_gap() >= 100 && hlowb::testing::LatencyProbe::MachineOverloaded()) {
      qWarning("event-loop gap of %lld ms on an overloaded machine: wall-clock check skipped",
               static_cast<long long>(probe.max_gap()));
      return;
    }
    QVERIFY2(probe.max_gap() < 100,
             qPrintable(QStringLiteral("UI thread blocked for %1 ms during %2")
                            .arg(probe.max_gap())
                            .arg(probe.worst())));
  }
};

QTEST_MAIN(ShardingViewTest)
#include "sharding_view_test.moc"
