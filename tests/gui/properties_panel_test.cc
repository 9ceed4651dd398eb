// PropertiesPanel on the offscreen platform: what it shows for an instruction (opcode, shape and
// layout, operands, users, metadata with stack frames, sharding, backend_config as indented
// JSON, frontend and other attributes, cost), and that clicking an operand or user emits
// instructionActivated.
#include <QApplication>
#include <QClipboard>
#include <QLocale>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>
#include <memory>
#include <string>

#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "viewer/widgets/properties_panel.h"

using hlowb::Instruction;
using hlowb::Module;
using hlowb::viewer::PropertiesPanel;

namespace {

const char kModule[] = R"(HloModule props, entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0})->(f32[8,32]{1,0}, f32[32,8]{0,1}, f32[8,32]{1,0})}

FileNames
1 "model.py"
2 "lib/layers.py"
FunctionNames
1 "loss"
2 "dense"
FileLocations
1 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=4 end_column=20}
2 {file_name_id=2 function_name_id=2 line=40 end_line=41 column=2 end_column=9}
StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=2 parent_frame_id=2}

%fused_computation (p0: f32[8,32], p1: f32[8,32]) -> f32[8,32] {
  %p0 = f32[8,32]{1,0} parameter(0)
  %p1 = f32[8,32]{1,0} parameter(1)
  %m = f32[8,32]{1,0} multiply(f32[8,32]{1,0} %p0, f32[8,32]{1,0} %p1)
  ROOT %e = f32[8,32]{1,0} exponential(f32[8,32]{1,0} %m)
}

ENTRY %main (x: f32[8,16], w: f32[16,32]) -> (f32[8,32], f32[32,8], f32[8,32]) {
  %x = f32[8,16]{1,0} parameter(0), sharding={replicated}
  %w = f32[16,32]{1,0} parameter(1)
  %dot = f32[8,32]{1,0} dot(f32[8,16]{1,0} %x, f32[16,32]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, frontend_attributes={_xla_stream="1"}, metadata={op_type="dot_general" op_name="jit(f)/dot_general" source_file="model.py" source_line=12 stack_frame_id=2}, backend_config={"operation_queue_id":"0","gemm_backend_config":{"alpha_real":1,"beta":0}}
  %neg = f32[8,32]{1,0} negate(f32[8,32]{1,0} %dot), backend_config="not json at all"
  %t = f32[32,8]{0,1} transpose(f32[8,32]{1,0} %dot), dimensions={1,0}
  %fusion = f32[8,32]{1,0} fusion(f32[8,32]{1,0} %dot, f32[8,32]{1,0} %neg), kind=kLoop, calls=%fused_computation
  ROOT %out = (f32[8,32]{1,0}, f32[32,8]{0,1}, f32[8,32]{1,0}) tuple(f32[8,32]{1,0} %neg, f32[32,8]{0,1} %t, f32[8,32]{1,0} %fusion)
}
)";

const Instruction* FindInstr(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

QString N(qlonglong n) { return QLocale::system().toString(n); }

}  // namespace

class PropertiesPanelTest : public QObject {
  Q_OBJECT

 private:
  std::shared_ptr<const Module> module_;
  std::unique_ptr<PropertiesPanel> panel_;

  const Instruction* I(const char* name) { return FindInstr(*module_, name); }

  void Click(QTreeWidgetItem* item, int column) {
    QTreeWidget* tree = panel_->tree();
    tree->scrollToItem(item);
    QRect r = tree->visualItemRect(item);
    if (column == 1) r.setLeft(tree->columnViewportPosition(1) + 4);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, Qt::NoModifier,
                      QPoint(r.left() + 8, r.center().y()));
  }

 private slots:
  void initTestCase() {
    auto m = hlowb::ParseModule(kModule);
    QVERIFY2(m.ok(), std::string(m.status().message()).c_str());
    module_ = std::shared_ptr<const Module>(std::move(*m));
  }

  void init() {
    panel_ = std::make_unique<PropertiesPanel>();
    panel_->resize(500, 900);
    panel_->show();
    QVERIFY(QTest::qWaitForWindowExposed(panel_.get()));
  }

  void cleanup() { panel_.reset(); }

  void showsEverythingAboutADot() {
    panel_->SetInstruction(module_, I("dot"));
    QCOMPARE(panel_->instruction(), I("dot"));
    const QString text = panel_->PlainText();
    const QStringList lines = text.split(QLatin1Char('\n'));
    auto has = [&](const QString& line) {
      if (lines.contains(line)) return true;
      qWarning("missing line '%s' in:\n%s", qPrintable(line), qPrintable(text));
      return false;
    };
    QVERIFY(has(QStringLiteral("name: dot")));
    QVERIFY(has(QStringLiteral("opcode: dot")));
    QVERIFY(has(QStringLiteral("computation: main")));
    QVERIFY(has(QStringLiteral("shape: f32[8,32]{1,0}")));
    QVERIFY(has(QStringLiteral("element type: f32")));
    QVERIFY(has(QStringLiteral("layout: {1,0}")));
    QVERIFY(has(QStringLiteral("operand 0: %x  f32[8,16]{1,0}")));
    QVERIFY(has(QStringLiteral("operand 1: %w  f32[16,32]{1,0}")));
    QVERIFY(has(QStringLiteral("user 0: %neg  negate")));
    QVERIFY(has(QStringLiteral("user 1: %t  transpose")));
    QVERIFY(has(QStringLiteral("user 2: %fusion  fusion")));
    // Metadata, with the stack frames resolved through the module's tables (innermost first).
    QVERIFY(has(QStringLiteral("op_name: jit(f)/dot_general")));
    QVERIFY(has(QStringLiteral("op_type: dot_general")));
    QVERIFY(has(QStringLiteral("source: model.py:12")));
    QVERIFY(has(QStringLiteral("stack frame 0: lib/layers.py:40:2  dense")));
    QVERIFY(has(QStringLiteral("stack frame 1: model.py:12:4  loss")));
    // backend_config as indented JSON (keys sorted by Qt's JSON writer).
    QVERIFY2(text.contains(QStringLiteral("backend_config: {\n    \"gemm_backend_config\": {\n"
                                          "        \"alpha_real\": 1,\n")),
             qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("    \"operation_queue_id\": \"0\"\n}")));
    // Frontend attributes and the remaining attributes.
    QVERIFY(has(QStringLiteral("_xla_stream: 1")));
    QVERIFY(has(QStringLiteral("lhs_contracting_dims: {1}")));
    QVERIFY(has(QStringLiteral("rhs_contracting_dims: {0}")));
    // Cost: 2 · 8 · 32 · 16 flops; reads 512 + 2048 bytes, writes 1024.
    QVERIFY(text.contains(QStringLiteral("flops: ") + N(8192)));
    QVERIFY(text.contains(QStringLiteral("bytes accessed: ") + N(3584) + QStringLiteral(" B")));
    QVERIFY(has(QStringLiteral("bytes written: ") + N(1024) + QStringLiteral(" B (1.0 KiB)")));
    QVERIFY(has(QStringLiteral("bytes read: ") + N(2560) + QStringLiteral(" B (2.5 KiB)")));
    // Attributes shown in their own sections are not repeated.
    QVERIFY(!text.contains(QStringLiteral("metadata: ")));
    QVERIFY(!text.contains(QStringLiteral("frontend_attributes: ")));
  }

  void showsShardingRawConfigsAndFusions() {
    panel_->SetInstruction(module_, I("x"));
    QVERIFY(panel_->PlainText().contains(QStringLiteral("sharding: {replicated}")));
    QVERIFY(panel_->PlainText().contains(QStringLiteral("parameter: 0")));

    panel_->SetInstruction(module_, I("neg"));
    QVERIFY(panel_->PlainText().contains(QStringLiteral("backend_config: not json at all")));

    // A fusion's flops are its fused computation's; its bytes only its own operands/result.
    panel_->SetInstruction(module_, I("fusion"));
    const QString text = panel_->PlainText();
    QVERIFY2(text.contains(QStringLiteral("flops: 256")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("transcendentals: 256")));
    QVERIFY(text.contains(QStringLiteral("bytes accessed: ") + N(3072)));
    QVERIFY(text.contains(QStringLiteral("calls: fused_computation")));
    QVERIFY(text.contains(QStringLiteral("kind: kLoop")));

    panel_->SetInstruction(module_, I("out"));
    QVERIFY(panel_->PlainText().contains(QStringLiteral("users: none (root)")));
    QVERIFY(panel_->PlainText().contains(QStringLiteral("computation: main  (root)")));
  }

  void clickingOperandsAndUsersEmits() {
    panel_->SetInstruction(module_, I("dot"));
    QSignalSpy spy(panel_.get(), &PropertiesPanel::instructionActivated);
    QTreeWidgetItem* operand = panel_->FindRow(QStringLiteral("operand 1"));
    QVERIFY(operand != nullptr);
    Click(operand, 1);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<const Instruction*>(), I("w"));
    QTreeWidgetItem* user = panel_->FindRow(QStringLiteral("user 1"));
    QVERIFY(user != nullptr);
    Click(user, 0);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(1).at(0).value<const Instruction*>(), I("t"));
    // Rows that are not links do not emit.
    Click(panel_->FindRow(QStringLiteral("opcode")), 1);
    Click(panel_->FindRow(QStringLiteral("op_name")), 1);
    QCOMPARE(spy.count(), 2);
    // The panel does not change by itself; the caller decides what to show.
    QCOMPARE(panel_->instruction(), I("dot"));

    // A called computation goes to its root.
    panel_->SetInstruction(module_, I("fusion"));
    QTreeWidgetItem* called = panel_->FindRow(QStringLiteral("calls"));
    QVERIFY(called != nullptr);
    Click(called, 1);
    QCOMPARE(spy.count(), 3);
    QCOMPARE(spy.at(2).at(0).value<const Instruction*>(), I("e"));

    // Keyboard: Enter on a link row.
    panel_->SetInstruction(module_, I("neg"));
    QTreeWidgetItem* op = panel_->FindRow(QStringLiteral("operand 0"));
    panel_->tree()->setCurrentItem(op);
    panel_->tree()->setFocus();
    QTest::keyClick(panel_->tree(), Qt::Key_Return);
    QCOMPARE(spy.count(), 4);
    QCOMPARE(spy.at(3).at(0).value<const Instruction*>(), I("dot"));
  }

  void ctrlCCopiesKeyValueLines() {
    panel_->SetInstruction(module_, I("dot"));
    QTreeWidget* tree = panel_->tree();
    tree->clearSelection();
    panel_->FindRow(QStringLiteral("opcode"))->setSelected(true);
    panel_->FindRow(QStringLiteral("operand 0"))->setSelected(true);
    tree->setFocus();
    QTest::keyClick(tree, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QApplication::clipboard()->text(),
             QStringLiteral("opcode: dot\noperand 0: %x  f32[8,16]{1,0}"));
  }

  void collapsedSectionsStayCollapsed() {
    panel_->SetInstruction(module_, I("dot"));
    QTreeWidget* tree = panel_->tree();
    QTreeWidgetItem* metadata = nullptr;
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
      if (tree->topLevelItem(i)->text(0) == QStringLiteral("Metadata")) metadata = tree->topLevelItem(i);
    }
    QVERIFY(metadata != nullptr && metadata->isExpanded());
    metadata->setExpanded(false);
    panel_->SetInstruction(module_, I("dot"));
    for (int i = 0; i < tree->topLevelItemCount(); ++i) {
      QTreeWidgetItem* item = tree->topLevelItem(i);
      QCOMPARE(item->isExpanded(), item->text(0) != QStringLiteral("Metadata"));
    }
  }

  void clearEmpties() {
    panel_->SetInstruction(module_, I("dot"));
    panel_->Clear();
    QVERIFY(panel_->instruction() == nullptr);
    QVERIFY(panel_->PlainText().isEmpty());
    QCOMPARE(panel_->tree()->topLevelItemCount(), 0);
    panel_->SetInstruction(module_, nullptr);
    QVERIFY(panel_->PlainText().isEmpty());
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  qRegisterMetaType<const hlowb::Instruction*>();
  PropertiesPanelTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "properties_panel_test.moc"
