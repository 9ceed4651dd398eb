// HloTextView on the offscreen platform: positions of definitions, links followed by real mouse
// clicks, cursor activation without loops, find, folding, error display, and the time to show
// the largest corpus module.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QAbstractTextDocumentLayout>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "latency_probe.h"
#include "viewer/text/hlo_text_view.h"

using hlowb::Computation;
using hlowb::Instruction;
using hlowb::Module;
using hlowb::viewer::HloTextView;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<const Module> ParseOrDie(const std::string& text) {
  auto m = hlowb::ParseModule(text);
  if (!m.ok()) qFatal("parse failed: %s", std::string(m.status().message()).c_str());
  return std::shared_ptr<const Module>(std::move(*m));
}

const Instruction* FindInstr(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

// A small optimized MLP loss: fusions, reducers, metadata (kept here so the test does not
// depend on the bundled sample dump's contents).
const char kMlp[] = R"(HloModule jit_mlp_loss, entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0}, f32[32]{0}, f32[32,4]{1,0}, s32[8]{0})->f32[]}

%region_add (Arg_0: f32[], Arg_1: f32[]) -> f32[] {
  %Arg_0 = f32[] parameter(0)
  %Arg_1 = f32[] parameter(1)
  ROOT %add.0 = f32[] add(f32[] %Arg_0, f32[] %Arg_1)
}

%region_max (Arg_0.1: f32[], Arg_1.1: f32[]) -> f32[] {
  %Arg_0.1 = f32[] parameter(0)
  %Arg_1.1 = f32[] parameter(1)
  ROOT %maximum.0 = f32[] maximum(f32[] %Arg_0.1, f32[] %Arg_1.1)
}

%fused_relu (param_0: f32[8,32], param_1: f32[32]) -> f32[8,32] {
  %param_0 = f32[8,32]{1,0} parameter(0)
  %param_1 = f32[32]{0} parameter(1)
  %broadcast.1 = f32[8,32]{1,0} broadcast(f32[32]{0} %param_1), dimensions={1}
  %add.1 = f32[8,32]{1,0} add(f32[8,32]{1,0} %param_0, f32[8,32]{1,0} %broadcast.1)
  %constant.1 = f32[] constant(0)
  %broadcast.2 = f32[8,32]{1,0} broadcast(f32[] %constant.1), dimensions={}
  ROOT %maximum.1 = f32[8,32]{1,0} maximum(f32[8,32]{1,0} %add.1, f32[8,32]{1,0} %broadcast.2)
}

%fused_exp (param_0.1: f32[8,4], param_1.1: f32[8,4]) -> f32[8,4] {
  %param_0.1 = f32[8,4]{1,0} parameter(0)
  %param_1.1 = f32[8,4]{1,0} parameter(1)
  %subtract.3 = f32[8,4]{1,0} subtract(f32[8,4]{1,0} %param_0.1, f32[8,4]{1,0} %param_1.1)
  ROOT %exponential.1 = f32[8,4]{1,0} exponential(f32[8,4]{1,0} %subtract.3)
}

ENTRY %main (x: f32[8,16], w1: f32[16,32], b1: f32[32], w2: f32[32,4], labels: s32[8]) -> f32[] {
  %x = f32[8,16]{1,0} parameter(0), metadata={op_name="x"}
  %w1 = f32[16,32]{1,0} parameter(1), metadata={op_name="params[w1]"}
  %b1 = f32[32]{0} parameter(2), metadata={op_name="params[b1]"}
  %w2 = f32[32,4]{1,0} parameter(3), metadata={op_name="params[w2]"}
  %labels = s32[8]{0} parameter(4), metadata={op_name="labels"}
  %dot.1 = f32[8,32]{1,0} dot(f32[8,16]{1,0} %x, f32[16,32]{1,0} %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="dot_general" op_name="jit(loss)/dot_general" source_file="model.py" source_line=12}
  %fusion.1 = f32[8,32]{1,0} fusion(f32[8,32]{1,0} %dot.1, f32[32]{0} %b1), kind=kLoop, calls=%fused_relu, metadata={op_type="max" op_name="jit(loss)/max" source_file="model.py" source_line=13}
  %dot.2 = f32[8,4]{1,0} dot(f32[8,32]{1,0} %fusion.1, f32[32,4]{1,0} %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="dot_general" op_name="jit(loss)/dot_general" source_file="model.py" source_line=14}
  %constant.2 = f32[] constant(-inf)
  %reduce.1 = f32[8]{0} reduce(f32[8,4]{1,0} %dot.2, f32[] %constant.2), dimensions={1}, to_apply=%region_max
  %broadcast.3 = f32[8,4]{1,0} broadcast(f32[8]{0} %reduce.1), dimensions={0}
  %subtract.1 = f32[8,4]{1,0} subtract(f32[8,4]{1,0} %dot.2, f32[8,4]{1,0} %broadcast.3)
  %fusion.2 = f32[8,4]{1,0} fusion(f32[8,4]{1,0} %dot.2, f32[8,4]{1,0} %broadcast.3), kind=kLoop, calls=%fused_exp
  %constant.3 = f32[] constant(0)
  %reduce.2 = f32[8]{0} reduce(f32[8,4]{1,0} %fusion.2, f32[] %constant.3), dimensions={1}, to_apply=%region_add
  %log.1 = f32[8]{0} log(f32[8]{0} %reduce.2)
  %iota.1 = s32[8,4]{1,0} iota(), iota_dimension=1
  %broadcast.4 = s32[8,4]{1,0} broadcast(s32[8]{0} %labels), dimensions={0}
  %compare.1 = pred[8,4]{1,0} compare(s32[8,4]{1,0} %iota.1, s32[8,4]{1,0} %broadcast.4), direction=EQ
  %broadcast.5 = f32[8,4]{1,0} broadcast(f32[] %constant.3), dimensions={}
  %select.1 = f32[8,4]{1,0} select(pred[8,4]{1,0} %compare.1, f32[8,4]{1,0} %subtract.1, f32[8,4]{1,0} %broadcast.5)
  %reduce.3 = f32[8]{0} reduce(f32[8,4]{1,0} %select.1, f32[] %constant.3), dimensions={1}, to_apply=%region_add
  %subtract.2 = f32[8]{0} subtract(f32[8]{0} %log.1, f32[8]{0} %reduce.3)
  %reduce.4 = f32[] reduce(f32[8]{0} %subtract.2, f32[] %constant.3), dimensions={0}, to_apply=%region_add
  %constant.5 = f32[] constant(0.125)
  ROOT %multiply.1 = f32[] multiply(f32[] %reduce.4, f32[] %constant.5), metadata={op_type="mul" op_name="jit(loss)/mul" source_file="model.py" source_line=20}
}
)";
const std::string kLargest =
    std::string(HLOWB_CORPUS_DIR) + "/benchmarks/xla__service__attention_model.hlo";

// A module whose last instruction carries a multi-line backend_config: lines after the first
// of a definition must still map to it, and the computation must close after them.
const char kMultiLine[] = R"(HloModule multi

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %n = f32[4]{0} negate(f32[4]{0} %p)
  ROOT %c = f32[4]{0} custom-call(f32[4]{0} %n), custom_call_target="foo", backend_config={
  "x": 1
}
}
)";

}  // namespace

class TextViewTest : public QObject {
  Q_OBJECT

 private:
  std::shared_ptr<const Module> sample_;
  std::unique_ptr<HloTextView> view_;

  QPlainTextEdit* editor() { return view_->editor(); }

  // The document position of the first occurrence of `needle` on the 1-based line.
  int PositionOnLine(int line, const QString& needle) {
    const QTextBlock block = editor()->document()->findBlockByNumber(line - 1);
    const int col = static_cast<int>(block.text().indexOf(needle));
    if (col < 0) return -1;
    return block.position() + col;
  }

  // Clicks the viewport where the character at `position` is drawn.
  void ClickAt(int position) {
    QTextCursor c(editor()->document());
    c.setPosition(position);
    const QRect r = editor()->cursorRect(c);
    // Just right of the cursor line, inside the character cell.
    const QPoint p(r.left() + 2, r.center().y());
    QTest::mouseClick(editor()->viewport(), Qt::LeftButton, Qt::NoModifier, p);
  }

 private slots:
  void init() {
    sample_ = ParseOrDie(kMlp);
    view_ = std::make_unique<HloTextView>();
    view_->resize(1000, 700);
    view_->show();
    QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
    view_->SetModule(sample_);
  }

  void cleanup() { view_.reset(); }

  void showsPrintedModule() {
    const QString text = view_->PlainText();
    QVERIFY(text.startsWith(QStringLiteral("HloModule jit_mlp_loss")));
    QVERIFY(text.contains(QStringLiteral("ENTRY %main (")));
    QVERIFY(text.contains(QStringLiteral("%fusion.1 = f32[8,32]{1,0} fusion(")));
  }

  void showInstructionPlacesCursorOnDefinition() {
    QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
    for (const char* name : {"dot.2", "add.1", "multiply.1", "Arg_0.1", "maximum.0"}) {
      const Instruction* instr = FindInstr(*sample_, name);
      QVERIFY(instr != nullptr);
      view_->ShowInstruction(instr);
      const int line = editor()->textCursor().blockNumber() + 1;
      QCOMPARE(line, view_->LineOf(instr));
      const QString text = editor()->textCursor().block().text();
      QVERIFY2(text.contains(QStringLiteral("%") + QString::fromStdString(instr->name()) +
                             QStringLiteral(" = ")),
               qPrintable(text));
      QCOMPARE(view_->CurrentInstruction(), instr);
    }
    // Programmatic moves never emit (no loops with a caller that syncs from the signal).
    QCOMPARE(spy.count(), 0);
  }

  void showComputationPlacesCursorOnHeader() {
    const Computation* c = sample_->FindComputation("fused_exp");
    QVERIFY(c != nullptr);
    QSignalSpy spy(view_.get(), &HloTextView::computationActivated);
    view_->ShowComputation(c);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, view_->LineOf(c));
    QVERIFY(editor()->textCursor().block().text().startsWith(QStringLiteral("%fused_exp (")));
    QCOMPARE(spy.count(), 0);
  }

  void clickOnOperandJumpsAndEmits() {
    const Instruction* fusion = FindInstr(*sample_, "fusion.1");
    const Instruction* dot = FindInstr(*sample_, "dot.1");
    view_->ShowInstruction(fusion);
    const int line = view_->LineOf(fusion);
    // "fusion(f32[8,32]{1,0} %dot.1, f32[32]{0} %b1)": click inside "dot.1".
    const int pos = PositionOnLine(line, QStringLiteral("%dot.1")) + 3;
    QVERIFY(pos > 0);
    QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
    ClickAt(pos);
    QCOMPARE(spy.count(), 1);  // the operand only, not the clicked line first
    QCOMPARE(spy.at(0).at(0).value<const Instruction*>(), dot);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, view_->LineOf(dot));
    QCOMPARE(view_->CurrentInstruction(), dot);

    // Another operand, the second one, with a parameter definition.
    const Instruction* b1 = FindInstr(*sample_, "b1");
    view_->ShowInstruction(fusion);
    ClickAt(PositionOnLine(line, QStringLiteral("%b1")) + 1);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(1).at(0).value<const Instruction*>(), b1);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, view_->LineOf(b1));

    // Alt+Left goes back to where the link was followed.
    QTest::keyClick(editor(), Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, line);
  }

  void clickOnCalledComputationJumpsAndEmits() {
    const Instruction* fusion = FindInstr(*sample_, "fusion.1");
    const Computation* relu = sample_->FindComputation("fused_relu");
    view_->ShowInstruction(fusion);
    QSignalSpy comp_spy(view_.get(), &HloTextView::computationActivated);
    QSignalSpy instr_spy(view_.get(), &HloTextView::instructionActivated);
    ClickAt(PositionOnLine(view_->LineOf(fusion), QStringLiteral("calls=%fused_relu")) + 8);
    QCOMPARE(comp_spy.count(), 1);
    QCOMPARE(comp_spy.at(0).at(0).value<const Computation*>(), relu);
    QCOMPARE(instr_spy.count(), 0);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, view_->LineOf(relu));

    // to_apply= of a reduce names a computation too.
    const Instruction* reduce = FindInstr(*sample_, "reduce.1");
    view_->ShowInstruction(reduce);
    ClickAt(PositionOnLine(view_->LineOf(reduce), QStringLiteral("%region_max")) + 3);
    QCOMPARE(comp_spy.count(), 2);
    QCOMPARE(comp_spy.at(1).at(0).value<const Computation*>(),
             sample_->FindComputation("region_max"));
  }

  void hoveringALinkShowsAHand() {
    const Instruction* fusion = FindInstr(*sample_, "fusion.1");
    view_->ShowInstruction(fusion);
    const int line = view_->LineOf(fusion);
    auto point_at = [&](int position) {
      QTextCursor c(editor()->document());
      c.setPosition(position);
      const QRect r = editor()->cursorRect(c);
      return QPoint(r.left() + 2, r.center().y());
    };
    QTest::mouseMove(editor()->viewport(), point_at(PositionOnLine(line, QStringLiteral("%dot.1")) + 2));
    QCOMPARE(editor()->viewport()->cursor().shape(), Qt::PointingHandCursor);
    bool underlined = false;
    for (const QTextEdit::ExtraSelection& s : editor()->extraSelections()) {
      underlined |= s.format.fontUnderline() && s.cursor.selectedText() == QStringLiteral("dot.1");
    }
    QVERIFY(underlined);
    QTest::mouseMove(editor()->viewport(), point_at(PositionOnLine(line, QStringLiteral("kind=")) + 1));
    QCOMPARE(editor()->viewport()->cursor().shape(), Qt::IBeamCursor);
  }

  void clickOutsideNamesDoesNotFollow() {
    const Instruction* fusion = FindInstr(*sample_, "fusion.1");
    view_->ShowInstruction(fusion);
    QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
    // A click on the shape of the same line: no link, the cursor stays on the line, and the
    // line's instruction is already the activated one.
    ClickAt(PositionOnLine(view_->LineOf(fusion), QStringLiteral("f32[8,32]")) + 2);
    QCOMPARE(spy.count(), 0);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, view_->LineOf(fusion));
    // Inside a metadata string nothing is a link.
    const Instruction* dot = FindInstr(*sample_, "dot.1");
    view_->ShowInstruction(dot);
    const int pos = PositionOnLine(view_->LineOf(dot), QStringLiteral("jit(loss)")) + 2;
    ClickAt(pos);
    QCOMPARE(spy.count(), 0);
    QCOMPARE(view_->CurrentInstruction(), dot);
  }

  void movingTheCursorActivatesDefinitions() {
    const Instruction* dot = FindInstr(*sample_, "dot.1");
    const Instruction* fusion = FindInstr(*sample_, "fusion.1");
    view_->ShowInstruction(dot);
    QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
    editor()->setFocus();
    QTest::keyClick(editor(), Qt::Key_Down);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<const Instruction*>(), fusion);
    // Moving along the same line does not emit again.
    QTest::keyClick(editor(), Qt::Key_End);
    QCOMPARE(spy.count(), 1);
    // A user click on another definition line (not on a name) emits that instruction.
    ClickAt(PositionOnLine(view_->LineOf(dot), QStringLiteral(" dot(")) + 2);
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(1).at(0).value<const Instruction*>(), dot);
  }

  void findNextAndPrevious() {
    editor()->moveCursor(QTextCursor::Start);
    // "%exponential.1 = f32[8,4]{1,0} exponential(...)": two matches on one line.
    QVERIFY(view_->Find(QStringLiteral("exponential")));
    const int first = editor()->textCursor().selectionStart();
    QCOMPARE(editor()->textCursor().selectedText(), QStringLiteral("exponential"));
    QVERIFY(view_->Find(QStringLiteral("exponential")));
    const int second = editor()->textCursor().selectionStart();
    QVERIFY(second > first);
    QCOMPARE(editor()->textCursor().selectedText(), QStringLiteral("exponential"));
    QVERIFY(view_->Find(QStringLiteral("exponential"), /*backwards=*/true));
    QCOMPARE(editor()->textCursor().selectionStart(), first);
    // Backwards from the first match wraps to the last one.
    QVERIFY(view_->Find(QStringLiteral("exponential"), true));
    QVERIFY(editor()->textCursor().selectionStart() >= second);
    // Forwards from the last one wraps to the first.
    QVERIFY(view_->Find(QStringLiteral("exponential")));
    QCOMPARE(editor()->textCursor().selectionStart(), first);
    QVERIFY(!view_->Find(QStringLiteral("no-such-text-anywhere")));
    // Case-insensitive.
    QVERIFY(view_->Find(QStringLiteral("FUSED_RELU")));
  }

  void findBarKeyboard() {
    // A window-wide action on the same keys (as the main window has) must not steal them
    // while the text has focus, nor make them ambiguous.
    QAction window_find(view_.get());
    window_find.setShortcut(QKeySequence::Find);
    view_->addAction(&window_find);
    QSignalSpy window_spy(&window_find, &QAction::triggered);
    editor()->moveCursor(QTextCursor::Start);
    editor()->setFocus();
    QTest::keyClick(editor(), Qt::Key_F, Qt::ControlModifier);
    QCOMPARE(window_spy.count(), 0);
    auto* bar = view_->findChild<QWidget*>(QStringLiteral("hloTextFindBar"));
    QVERIFY(bar != nullptr);
    QVERIFY(bar->isVisible());
    QLineEdit* edit = bar->findChild<QLineEdit*>();
    QVERIFY(edit != nullptr && edit->hasFocus());
    QTest::keyClicks(edit, QStringLiteral("region_add"));
    const int first = editor()->textCursor().blockNumber();
    QCOMPARE(editor()->textCursor().selectedText(), QStringLiteral("region_add"));
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY(editor()->textCursor().blockNumber() > first);
    QTest::keyClick(edit, Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(editor()->textCursor().blockNumber(), first);
    QTest::keyClick(edit, Qt::Key_F3);
    QVERIFY(editor()->textCursor().blockNumber() > first);
    QTest::keyClick(edit, Qt::Key_Escape);
    QVERIFY(!bar->isVisible());
    // F3 in the editor repeats the last search.
    const int before = editor()->textCursor().selectionStart();
    QTest::keyClick(editor(), Qt::Key_F3);
    QVERIFY(editor()->textCursor().selectionStart() != before);
    QCOMPARE(editor()->textCursor().selectedText(), QStringLiteral("region_add"));
    QCOMPARE(window_spy.count(), 0);
  }

  void foldingHidesLines() {
    const Computation* relu = sample_->FindComputation("fused_relu");
    const int header = view_->LineOf(relu);
    const int body_lines = relu->instruction_count();
    const qreal lines_before = editor()->document()->documentLayout()->documentSize().height();
    view_->SetComputationFolded(relu, true);
    QVERIFY(view_->IsComputationFolded(relu));
    QVERIFY(view_->IsLineVisible(header));
    for (int l = header + 1; l <= header + body_lines; ++l) QVERIFY(!view_->IsLineVisible(l));
    QVERIFY(view_->IsLineVisible(header + body_lines + 1));  // the closing brace
    const qreal lines_after = editor()->document()->documentLayout()->documentSize().height();
    QCOMPARE(lines_before - lines_after, qreal(body_lines));
    // Showing an instruction inside unfolds it.
    view_->ShowInstruction(FindInstr(*sample_, "add.1"));
    QVERIFY(!view_->IsComputationFolded(relu));
    for (int l = header + 1; l <= header + body_lines; ++l) QVERIFY(view_->IsLineVisible(l));
    // Find into a folded computation unfolds it too.
    view_->SetComputationFolded(relu, true);
    editor()->moveCursor(QTextCursor::Start);
    QVERIFY(view_->Find(QStringLiteral("%broadcast.2 =")));
    QVERIFY(!view_->IsComputationFolded(relu));
    // Folding while the cursor is inside moves it to the header.
    view_->SetComputationFolded(relu, true);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, header);
    // The keyboard steps over the hidden lines.
    editor()->setFocus();
    QTest::keyClick(editor(), Qt::Key_Down);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, header + body_lines + 1);
    QTest::keyClick(editor(), Qt::Key_Up);
    QCOMPARE(editor()->textCursor().blockNumber() + 1, header);
    view_->SetComputationFolded(relu, false);

    // A click on the fold marker in the gutter toggles the computation.
    auto* gutter = editor()->findChild<QWidget*>(QStringLiteral("hloTextGutter"));
    QVERIFY(gutter != nullptr);
    view_->ShowComputation(relu);
    QTextCursor at_header(editor()->document()->findBlockByNumber(header - 1));
    const int y = editor()->cursorRect(at_header).center().y();
    QTest::mouseClick(gutter, Qt::LeftButton, Qt::NoModifier, QPoint(gutter->width() - 5, y));
    QVERIFY(view_->IsComputationFolded(relu));
    QVERIFY(!view_->IsLineVisible(header + 1));
    QTest::mouseClick(gutter, Qt::LeftButton, Qt::NoModifier, QPoint(gutter->width() - 5, y));
    QVERIFY(!view_->IsComputationFolded(relu));
    QVERIFY(view_->IsLineVisible(header + 1));
  }

  void errorTextHighlightsLineAndColumn() {
    const QString text = QStringLiteral(
        "HloModule broken\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n  ROOT %x = f32[4] "
        "frobnicate(f32[4] %p)\n}\n");
    view_->SetErrorText(text, 5, 20, QStringLiteral("unknown opcode 'frobnicate'"));
    QCOMPARE(view_->ErrorLine(), 5);
    QCOMPARE(view_->PlainText(), text);
    QCOMPARE(editor()->textCursor().blockNumber(), 4);
    const QTextBlock block = editor()->document()->findBlockByNumber(4);
    bool line_marked = false;
    bool column_marked = false;
    for (const QTextEdit::ExtraSelection& s : editor()->extraSelections()) {
      if (s.format.property(QTextFormat::FullWidthSelection).toBool() &&
          s.cursor.blockNumber() == 4 && s.format.background().color().red() > 150 &&
          s.format.background().color().green() < s.format.background().color().red()) {
        line_marked = true;
      }
      if (s.cursor.hasSelection() && s.cursor.selectionStart() == block.position() + 19 &&
          s.cursor.selectionEnd() == block.position() + 20) {
        column_marked = true;
      }
    }
    QVERIFY(line_marked);
    QVERIFY(column_marked);
    auto* banner = view_->findChild<QLabel*>(QStringLiteral("hloTextErrorBanner"));
    QVERIFY(banner != nullptr && banner->isVisible());
    QVERIFY(banner->text().contains(QStringLiteral("line 5, column 20")));
    QVERIFY(banner->text().contains(QStringLiteral("frobnicate")));
    // No module: no links, no activation.
    QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
    ClickAt(block.position() + 30);
    QCOMPARE(spy.count(), 0);
    QVERIFY(view_->CurrentInstruction() == nullptr);

    // CRLF text keeps line numbers.
    view_->SetErrorText(QStringLiteral("a\r\nb\r\nc x\r\n"), 3, 3, QStringLiteral("bad"));
    QCOMPARE(editor()->textCursor().blockNumber(), 2);
    // Then a module again clears the error.
    view_->SetModule(sample_);
    QCOMPARE(view_->ErrorLine(), 0);
    QVERIFY(!banner->isVisible());
  }

  void multiLineDefinitions() {
    auto m = ParseOrDie(kMultiLine);
    view_->SetModule(m);
    const Instruction* c = FindInstr(*m, "c");
    const Instruction* n = FindInstr(*m, "n");
    const int line = view_->LineOf(c);
    QVERIFY(line > 0);
    QVERIFY(editor()->document()->findBlockByNumber(line - 1).text().contains(
        QStringLiteral("ROOT %c = ")));
    // The JSON continuation lines belong to %c.
    QTextCursor cursor(editor()->document()->findBlockByNumber(line));
    editor()->setTextCursor(cursor);
    QCOMPARE(view_->CurrentInstruction(), c);
    // Links on the definition line still work.
    QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
    ClickAt(PositionOnLine(line, QStringLiteral("%n)")) + 1);
    QCOMPARE(spy.last().at(0).value<const Instruction*>(), n);
    // Folding hides all of it, including the continuation lines.
    view_->SetComputationFolded(m->entry(), true);
    QVERIFY(!view_->IsLineVisible(line + 2));
    QVERIFY(view_->IsLineVisible(line + 3));  // the closing brace of the computation
  }

  void clearEmptiesEverything() {
    view_->Clear();
    QVERIFY(view_->PlainText().isEmpty());
    QVERIFY(view_->CurrentInstruction() == nullptr);
    view_->ShowInstruction(FindInstr(*sample_, "dot.1"));  // not shown: ignored
    QVERIFY(view_->CurrentInstruction() == nullptr);
  }

  // Every definition of every corpus module maps to the line that defines it, and every
  // computation to its header (the index is built from the printed text in one pass).
  void everyCorpusDefinitionMapsToItsLine() {
    QDir dir(QStringLiteral(HLOWB_CORPUS_DIR));
    if (!dir.exists()) QSKIP("corpus not available");
    int modules = 0;
    int64_t instructions = 0;
    QDirIterator it(dir.path(), {QStringLiteral("*.hlo")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const std::string path = it.next().toStdString();
      if (QFileInfo(it.filePath()).size() > 500000) continue;  // the largest has its own test
      const std::string text = ReadFile(path);
      for (std::string_view part : hlowb::SplitInputFile(text)) {
        auto parsed = hlowb::ParseModule(part);
        if (!parsed.ok()) continue;
        std::shared_ptr<const Module> m(std::move(*parsed));
        view_->SetModule(m);
        ++modules;
        QTextDocument* doc = editor()->document();
        for (const auto& c : m->computations()) {
          const int header = view_->LineOf(c.get());
          QVERIFY2(header > 0, path.c_str());
          const QString header_text = doc->findBlockByNumber(header - 1).text();
          QVERIFY2(header_text.startsWith(QStringLiteral("%") + QString::fromStdString(c->name())) ||
                       header_text.startsWith(QStringLiteral("ENTRY %") +
                                              QString::fromStdString(c->name())),
                   qPrintable(QString::fromStdString(path) + QStringLiteral(": ") + header_text));
          for (const Instruction* instr : c->instructions()) {
            ++instructions;
            const int line = view_->LineOf(instr);
            QVERIFY2(line > header, path.c_str());
            const QString t = doc->findBlockByNumber(line - 1).text();
            const QString def = QStringLiteral("%") + QString::fromStdString(instr->name()) +
                                QStringLiteral(" = ");
            QVERIFY2(t.startsWith(QStringLiteral("  ") + def) ||
                         t.startsWith(QStringLiteral("  ROOT ") + def),
                     qPrintable(QString::fromStdString(path) + QStringLiteral(": ") + t));
          }
        }
      }
    }
    qInfo("%d corpus modules, %lld definitions", modules, static_cast<long long>(instructions));
    QVERIFY(modules > 10);
  }

  // Loading on a worker thread (forced here for a small module): a newer module, Clear() or
  // the view's destruction while a load runs drop it; requests made meanwhile are applied.
  void workerLoadsAreReplacedAndDroppedCleanly() {
    view_->SetAsyncThreshold(0);
    QSignalSpy loaded(view_.get(), &HloTextView::textLoaded);
    auto first = ParseOrDie(kMlp);
    auto other = ParseOrDie(kMultiLine);
    view_->SetModule(first);
    QVERIFY(view_->IsLoading());
    QVERIFY(view_->PlainText().startsWith(QStringLiteral("Loading")));
    QCOMPARE(view_->LineOf(first->entry()->root()), 0);
    view_->SetModule(other);  // replaces the load in flight
    view_->ShowInstruction(other->entry()->root());
    QVERIFY(loaded.wait(10000));
    QTest::qWait(100);  // the replaced load must not arrive later
    QCOMPARE(loaded.count(), 1);
    QVERIFY(view_->PlainText().contains(QStringLiteral("HloModule multi")));
    QVERIFY(!view_->PlainText().contains(QStringLiteral("jit_mlp_loss")));
    QCOMPARE(view_->CurrentInstruction(), other->entry()->root());
    QVERIFY(view_->LineOf(other->entry()->root()) > 0);

    view_->SetModule(first);
    QVERIFY(view_->IsLoading());
    view_->Clear();
    QTest::qWait(200);
    QCOMPARE(loaded.count(), 1);
    QVERIFY(!view_->IsLoading());
    QVERIFY(view_->PlainText().isEmpty());

    view_->SetModule(other);
    QVERIFY(view_->IsLoading());
    view_.reset();  // destroyed mid-load: the result is discarded
    QTest::qWait(200);
    view_ = std::make_unique<HloTextView>();
  }

  void largestCorpusModuleIsFast() {
    std::ifstream probe(kLargest);
    if (!probe) QSKIP("corpus not available");
    auto m = ParseOrDie(ReadFile(kLargest));
    QVERIFY(m->instruction_count() >= 2000);  // loads on a worker thread
    hlowb::testing::LatencyProbe latency;
    latency.SetPhase("load");
    latency.Start();
    QSignalSpy loaded(view_.get(), &HloTextView::textLoaded);
    QElapsedTimer timer;
    timer.start();
    view_->SetModule(m);
    QVERIFY(view_->IsLoading());
    // A request made while loading is applied when the text is in.
    const Instruction* entry_root = m->entry()->root();
    view_->ShowInstruction(entry_root);
    QVERIFY(loaded.wait(60000));
    const qint64 loaded_ms = timer.elapsed();
    QVERIFY(!view_->IsLoading());
    QCOMPARE(view_->CurrentInstruction(), entry_root);
    latency.SetPhase("first paint");
    QTest::qWait(50);
    latency.SetPhase("scroll");
    for (int i = 0; i < 10; ++i) {
      editor()->verticalScrollBar()->setValue(editor()->verticalScrollBar()->value() + 700);
      QTest::qWait(20);
    }
    latency.Stop();
    qInfo("largest module: %lld instructions, %d lines; loaded in %lld ms; max event-loop gap "
          "%lld ms (%s), UI-thread CPU in a gap at most %.0f ms (%s)",
          static_cast<long long>(m->instruction_count()), editor()->document()->blockCount(),
          static_cast<long long>(loaded_ms), static_cast<long long>(latency.max_gap()),
          qPrintable(latency.worst()), latency.max_cpu_gap(), qPrintable(latency.worst_cpu()));
    QVERIFY2(latency.max_cpu_gap() < 100,
             qPrintable(QStringLiteral("the UI thread worked %1 ms without returning to the "
                                       "event loop during %2")
                            .arg(latency.max_cpu_gap())
                            .arg(latency.worst_cpu())));
    if (latency.max_gap() >= 100 && hlowb::testing::LatencyProbe::MachineOverloaded()) {
      qWarning("event-loop gap of %lld ms on an overloaded machine: wall-clock check skipped",
               static_cast<long long>(latency.max_gap()));
    } else {
      QVERIFY2(latency.max_gap() < 100,
               qPrintable(QStringLiteral("UI thread blocked for %1 ms during %2")
                              .arg(latency.max_gap())
                              .arg(latency.worst())));
    }

    // The biggest computation: jump to its root, fold and unfold it, click an operand.
    const Computation* biggest = nullptr;
    for (const auto& c : m->computations()) {
      if (biggest == nullptr || c->instruction_count() > biggest->instruction_count()) {
        biggest = c.get();
      }
    }
    const Instruction* root = biggest->root();
    timer.restart();
    view_->ShowInstruction(root);
    QCoreApplication::processEvents();
    QCOMPARE(view_->CurrentInstruction(), root);
    const qint64 show_ms = timer.elapsed();
    timer.restart();
    view_->SetComputationFolded(biggest, true);
    qint64 fold_ms = timer.elapsed();
    QCoreApplication::processEvents();
    QVERIFY(!view_->IsLineVisible(view_->LineOf(root)));
    timer.restart();
    view_->SetComputationFolded(biggest, false);
    fold_ms += timer.elapsed();
    QCoreApplication::processEvents();
    QVERIFY(view_->IsLineVisible(view_->LineOf(root)));
    timer.restart();
    editor()->moveCursor(QTextCursor::Start);
    QVERIFY(view_->Find(QString::fromStdString(root->name()) + QStringLiteral(" = ")));
    const qint64 find_ms = timer.elapsed();
    qInfo("computation of %d instructions: show root %lld ms, fold+unfold %lld ms (without "
          "painting), find %lld ms",
          biggest->instruction_count(), static_cast<long long>(show_ms),
          static_cast<long long>(fold_ms), static_cast<long long>(find_ms));
    QVERIFY(show_ms < 1000);
    QVERIFY(fold_ms < 100);

    if (root->operand_count() > 0) {
      const Instruction* op = root->operand(0);
      view_->ShowInstruction(root);
      QCoreApplication::processEvents();
      const int line = view_->LineOf(root);
      const QString needle = QStringLiteral("%") + QString::fromStdString(op->name());
      const QTextBlock block = editor()->document()->findBlockByNumber(line - 1);
      // The first operand appears after the opcode's parenthesis.
      const int paren = static_cast<int>(block.text().indexOf(QLatin1Char('(')));
      const int col = static_cast<int>(block.text().indexOf(needle + QLatin1Char(','), paren));
      const int col2 = col >= 0 ? col : static_cast<int>(block.text().indexOf(needle + QLatin1Char(')'), paren));
      QVERIFY(col2 > 0);
      QTextCursor c(editor()->document());
      c.setPosition(block.position() + col2 + 1);
      editor()->setTextCursor(c);  // scrolls horizontally to it
      QSignalSpy spy(view_.get(), &HloTextView::instructionActivated);
      ClickAt(block.position() + col2 + 1);
      QVERIFY(spy.count() >= 1);
      QCOMPARE(spy.last().at(0).value<const Instruction*>(), op);
    }
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  qRegisterMetaType<const hlowb::Instruction*>();
  qRegisterMetaType<const hlowb::Computation*>();
  TextViewTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "text_view_test.moc"
