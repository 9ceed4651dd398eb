// Links: a plain left click on a %name (an operand, a called computation, a control
// predecessor, a definition, or a parameter name in a computation signature) jumps to its
// definition and emits instructionActivated / computationActivated. A press that turns into a
// drag selects text instead. F2 or Return follows the link under the text cursor; Alt+Left /
// Alt+Right (and the mouse back/forward buttons) go back and forth through followed links.
// Moving the cursor onto a definition line (keys, clicks elsewhere on the line, find) emits
// instructionActivated once per instruction; programmatic ShowInstruction/ShowComputation
// calls never emit, so a caller that syncs other views from the signal cannot loop.
#include "viewer/text/hlo_text_view.h"

#include <QAbstractTextDocumentLayout>
#include <QCoreApplication>
#include <QPlainTextDocumentLayout>
#include <QPointer>
#include <QThread>
#include <QAction>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QStyle>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <thread>
#include <string>
#include <vector>

#include "viewer/text/find_field.h"
#include "viewer/text/hlo_highlighter.h"
#include "viewer/text/hlo_text_editor.h"
#include "viewer/text/hlo_text_index.h"

namespace hlowb::viewer {
namespace {

// Makes '\n' the only block separator QTextDocument sees, so that block numbers equal line
// numbers: CRLF becomes LF; lone CR, paragraph/line separators and Qt's frame markers become
// spaces; NUL becomes a visible symbol.
QString Sanitize(QString text) {
  if (text.contains(QLatin1Char('\r'))) text.replace(QLatin1String("\r\n"), QLatin1String("\n"));
  QChar* d = text.data();
  const qsizetype n = text.size();
  for (qsizetype i = 0; i < n; ++i) {
    const char16_t u = d[i].unicode();
    if (u == u'\r' || u == 0x2028 || u == 0x2029 || u == 0xFDD0 || u == 0xFDD1) {
      d[i] = QLatin1Char(' ');
    } else if (u == 0) {
      d[i] = QChar(0x2400);
    }
  }
  return text;
}

QColor Mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                          static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                          static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

// Whether text[0, end) leaves us inside a double-quoted string.
bool InsideString(const QString& text, int end) {
  bool inside = false;
  for (int i = 0; i < end && i < text.size(); ++i) {
    const QChar c = text[i];
    if (inside && c == u'\\') {
      ++i;
    } else if (c == u'"') {
      inside = !inside;
    }
  }
  return inside;
}

}  // namespace

class HloTextView::Impl : public HloTextEditorClient {
 public:
  explicit Impl(HloTextView* q);

  // HloTextEditorClient
  bool LinkAt(int position, int* start, int* length) const override;
  bool FollowLink(int position) override;
  void CursorSettled() override { ActivateCurrentLine(); }
  void SetHoverLink(int start, int length) override;
  Fold FoldAt(int block_number) const override;
  void ToggleFold(int block_number) override;
  QString MarkerAt(int block_number) const override;
  void AddContextActions(QMenu* menu, int position) override;
  void NavigateBack() override;
  void NavigateForward() override;
  void FindKeyPressed(FindKey key) override;

  struct Target {
    const Instruction* instruction = nullptr;
    const Computation* computation = nullptr;
    int start = -1;  // document position of the name
    int length = 0;
  };
  Target Resolve(int position) const;

  void SetText(const QString& text, int line_count);
  void ResetState();
  void ShowInstruction(const Instruction* instruction);
  void ShowComputation(const Computation* computation);
  void PlaceCursor(int line, int column, bool center);
  void ActivateCurrentLine();
  void OnCursorMoved();
  void UpdateSelections();
  void SetFolded(int computation, bool folded);
  void PushHistory();
  void MoveToHistory(int position);
  bool Find(const QString& query, bool backwards);
  void ShowFindBar();
  void HideFindBar();
  void SetFindStatus(const QString& status, bool error);
  int ComputationAtLine(int line) const {
    return line >= 0 && line < static_cast<int>(index.line_computation.size())
               ? index.line_computation[line]
               : -1;
  }

  HloTextView* q;
  HloTextEditor* editor = nullptr;
  QLabel* banner = nullptr;
  QFrame* find_bar = nullptr;
  FindField* find_edit = nullptr;
  QLabel* find_status = nullptr;

  std::shared_ptr<const Module> module;
  HloTextIndex index;
  std::vector<bool> folded;  // per computation
  int programmatic = 0;      // > 0 while the view moves the cursor itself
  const void* last_target = nullptr;  // what the cursor line last activated
  QList<QTextEdit::ExtraSelection> error_selections;
  int error_line = 0;  // 1-based; 0 when not showing an error
  int hover_start = -1;
  int hover_length = 0;
  std::vector<int> back;
  std::vector<int> forward;

  // Loading on a worker thread (see SetModule).
  struct Loaded;
  void StartLoad(std::shared_ptr<const Module> m);
  void FinishLoad(std::uint64_t generation, const std::shared_ptr<Loaded>& loaded);
  int64_t async_threshold = 2000;
  std::uint64_t generation = 0;  // bumped by every new content; stale loads are dropped
  bool loading = false;
  const Instruction* pending_instruction = nullptr;  // shown when the load completes
  // Diff colouring (see SetDiffMarks) and the line backgrounds made from it.
  std::unordered_map<const Instruction*, uint8_t> diff_marks;
  QList<QTextEdit::ExtraSelection> diff_selections;
  void RebuildDiffSelections();
  // Every occurrence of the window's search query (see SetSearchHighlight); kept across
  // modules, the occurrences found again in each.
  QString search_query;
  QList<QTextEdit::ExtraSelection> search_selections;
  void RebuildSearchSelections();
  const Computation* pending_computation = nullptr;
};

// What the worker hands back: the index, and the document with its layout and highlighter
// (moved to the UI thread). Deleted with deleteLater if the view never takes it.
struct HloTextView::Impl::Loaded {
  HloTextIndex index;
  QTextDocument* document = nullptr;
  HloHighlighter* highlighter = nullptr;  // a child of `document` until adopted
  int block_count = 0;
  ~Loaded() {
    if (document != nullptr) document->deleteLater();
  }
};

void HloTextView::Impl::StartLoad(std::shared_ptr<const Module> m) {
  loading = true;
  const std::uint64_t gen = generation;
  const QFont font = editor->document()->defaultFont();
  const QPalette palette = editor->palette();
  QThread* ui_thread = QThread::currentThread();
  QPointer<HloTextView> view(q);
  std::thread([m = std::move(m), gen, font, palette, ui_thread, view] {
    auto loaded = std::make_shared<Loaded>();
    loaded->index = HloTextIndex::Build(*m);
    QString text = Sanitize(QString::fromUtf8(loaded->index.text));
    std::string().swap(loaded->index.text);
    auto* doc = new QTextDocument;
    doc->setUndoRedoEnabled(false);
    doc->setDocumentLayout(new QPlainTextDocumentLayout(doc));
    doc->setDefaultFont(font);
    // Attached before the text goes in, so its pass over the new blocks runs here too.
    auto* highlighter = new HloHighlighter(doc);
    highlighter->SetPalette(palette);
    highlighter->Reset(loaded->index.line_count);
    doc->setPlainText(text);
    loaded->block_count = doc->blockCount();
    doc->moveToThread(ui_thread);  // with its children: the layout and the highlighter
    loaded->document = doc;
    loaded->highlighter = highlighter;
    QMetaObject::invokeMethod(
        view.data() != nullptr ? static_cast<QObject*>(view.data()) : QCoreApplication::instance(),
        [view, gen, loaded] {
          if (view) view->impl_->FinishLoad(gen, loaded);
        },
        Qt::QueuedConnection);
  }).detach();
}

void HloTextView::Impl::FinishLoad(std::uint64_t gen, const std::shared_ptr<Loaded>& loaded) {
  if (gen != generation || !loading) return;  // replaced meanwhile: `loaded` cleans up
  loading = false;
  ++programmatic;
  index = std::move(loaded->index);
  folded.assign(index.computations.size(), false);
  editor->AdoptDocument(loaded->document, loaded->highlighter);
  loaded->document = nullptr;
  if (loaded->block_count != index.line_count) index.structured = false;
  RebuildDiffSelections();
  RebuildSearchSelections();
  editor->RefreshDecorations();
  editor->moveCursor(QTextCursor::Start);
  --programmatic;
  UpdateSelections();
  // The requested position is shown on the next turn of the event loop, so that taking the
  // document and laying out the lines shown there are two separate slices of UI-thread work.
  QTimer::singleShot(1, q, [this, gen] {
    if (gen != generation) return;
    const Instruction* instruction = std::exchange(pending_instruction, nullptr);
    const Computation* computation = std::exchange(pending_computation, nullptr);
    if (computation != nullptr) ShowComputation(computation);
    if (instruction != nullptr) ShowInstruction(instruction);
    emit q->textLoaded();
  });
}

HloTextView::Impl::Impl(HloTextView* view) : q(view) {
  auto* layout = new QVBoxLayout(q);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);

  banner = new QLabel(q);
  banner->setObjectName(QStringLiteral("hloTextErrorBanner"));
  banner->setWordWrap(true);
  banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
  banner->setContentsMargins(8, 6, 8, 6);
  banner->setAutoFillBackground(true);
  {
    QPalette p = banner->palette();
    p.setColor(QPalette::Window, QColor(0xf8, 0xd7, 0xda));
    p.setColor(QPalette::WindowText, QColor(0x58, 0x15, 0x1c));
    banner->setPalette(p);
  }
  banner->hide();
  layout->addWidget(banner);

  editor = new HloTextEditor(q);
  editor->setObjectName(QStringLiteral("hloTextEditor"));
  editor->SetClient(this);
  layout->addWidget(editor, 1);

  find_bar = new QFrame(q);
  find_bar->setObjectName(QStringLiteral("hloTextFindBar"));
  find_bar->setFrameShape(QFrame::StyledPanel);
  auto* fl = new QHBoxLayout(find_bar);
  fl->setContentsMargins(4, 2, 4, 2);
  find_edit = new FindField(find_bar);
  find_edit->setPlaceholderText(HloTextView::tr("Find in text"));
  find_edit->setClearButtonEnabled(true);
  auto* prev = new QToolButton(find_bar);
  prev->setArrowType(Qt::UpArrow);
  prev->setToolTip(HloTextView::tr("Previous match (Shift+F3, Shift+Enter)"));
  auto* next = new QToolButton(find_bar);
  next->setArrowType(Qt::DownArrow);
  next->setToolTip(HloTextView::tr("Next match (F3, Enter)"));
  find_status = new QLabel(find_bar);
  auto* close = new QToolButton(find_bar);
  close->setIcon(q->style()->standardIcon(QStyle::SP_TitleBarCloseButton));
  close->setAutoRaise(true);
  close->setToolTip(HloTextView::tr("Close (Escape)"));
  fl->addWidget(find_edit, 1);
  fl->addWidget(prev);
  fl->addWidget(next);
  fl->addWidget(find_status);
  fl->addWidget(close);
  find_bar->hide();
  layout->addWidget(find_bar);

  QObject::connect(editor, &QPlainTextEdit::cursorPositionChanged, q, [this] { OnCursorMoved(); });
  find_edit->find = [this](bool backwards) { Find(find_edit->text(), backwards); };
  QObject::connect(find_edit, &QLineEdit::textEdited, q, [this](const QString& text) {
    if (text.isEmpty()) {
      SetFindStatus(QString(), false);
      return;
    }
    // Incremental: search again from where the current match starts.
    QTextCursor c = editor->textCursor();
    c.setPosition(c.selectionStart());
    ++programmatic;
    editor->setTextCursor(c);
    --programmatic;
    Find(text, false);
  });
  QObject::connect(prev, &QToolButton::clicked, q, [this] { Find(find_edit->text(), true); });
  QObject::connect(next, &QToolButton::clicked, q, [this] { Find(find_edit->text(), false); });
  QObject::connect(close, &QToolButton::clicked, q, [this] { HideFindBar(); });

  find_edit->leave = [this] { HideFindBar(); };

  q->setFocusProxy(editor);
}

void HloTextView::Impl::SetText(const QString& text, int line_count) {
  editor->highlighter()->Reset(line_count);
  editor->setPlainText(text);
  editor->RefreshDecorations();
}

void HloTextView::Impl::ResetState() {
  ++generation;
  loading = false;
  pending_instruction = nullptr;
  pending_computation = nullptr;
  diff_marks.clear();
  diff_selections.clear();
  search_selections.clear();
  module.reset();
  index = HloTextIndex();
  folded.clear();
  error_selections.clear();
  error_line = 0;
  hover_start = -1;
  hover_length = 0;
  last_target = nullptr;
  back.clear();
  forward.clear();
  banner->hide();
}

HloTextView::Impl::Target HloTextView::Impl::Resolve(int position) const {
  Target t;
  if (!module || !index.structured) return t;
  const QTextBlock block = editor->document()->findBlock(position);
  if (!block.isValid()) return t;
  const QString text = block.text();
  const int n = static_cast<int>(text.size());
  int col = position - block.position();
  auto is_name = [&](int i) { return i >= 0 && i < n && IsHloNameChar(text[i].unicode()); };
  if (col < n && text[col] == u'%') ++col;
  if (!is_name(col)) {
    if (!is_name(col - 1)) return t;
    --col;
  }
  int s = col;
  while (is_name(s - 1)) --s;
  int e = col;
  while (is_name(e)) ++e;

  const int line = block.blockNumber();
  const int ci = ComputationAtLine(line);
  const Computation* context = ci >= 0 ? index.computations[ci].computation : nullptr;
  const bool header = ci >= 0 && index.computations[ci].header_line == line;
  const bool sigil = s > 0 && text[s - 1] == u'%';
  const std::string name = text.mid(s, e - s).toStdString();
  if (!sigil) {
    // Parameter names in a signature: "%comp (p0: f32[2], p1: s32[]) -> ..."
    const bool param = header && e < n && text[e] == u':' && s > 0 &&
                       (text[s - 1] == u'(' || (s > 1 && text[s - 1] == u' ' &&
                                               text[s - 2] == u','));
    if (!param || InsideString(text, s)) return t;
    t.instruction = index.FindInstruction(name, context);
  } else {
    if (InsideString(text, s)) return t;
    if (header && s == index.computations[ci].name_column) {
      t.computation = context;
    } else {
      // The attribute this name is the value of, if any: "calls=%f", "branch_computations={%a,
      // %b}", "control-predecessors={%x}". Operands are preceded by their shape instead.
      QString attribute;
      int i = s - 2;
      while (i >= 0) {
        const QChar c = text[i];
        if (c == u' ' || c == u',' || c == u'%' || c == u'{' || IsHloNameChar(c.unicode())) {
          --i;
          continue;
        }
        if (c == u'=') {
          int k = i - 1;
          while (k >= 0 && IsHloNameChar(text[k].unicode())) --k;
          attribute = text.mid(k + 1, i - k - 1);
        }
        break;
      }
      if (IsComputationAttribute(attribute.toStdString())) {
        t.computation = index.FindComputation(name);
        if (t.computation == nullptr) t.instruction = index.FindInstruction(name, context);
      } else {
        t.instruction = index.FindInstruction(name, context);
        if (t.instruction == nullptr) t.computation = index.FindComputation(name);
      }
    }
  }
  if (t.instruction != nullptr || t.computation != nullptr) {
    t.start = block.position() + s;
    t.length = e - s;
  }
  return t;
}

bool HloTextView::Impl::LinkAt(int position, int* start, int* length) const {
  const Target t = Resolve(position);
  if (t.start < 0) return false;
  *start = t.start;
  *length = t.length;
  return true;
}

bool HloTextView::Impl::FollowLink(int position) {
  const Target t = Resolve(position);
  if (t.instruction != nullptr) {
    PushHistory();
    ShowInstruction(t.instruction);
    emit q->instructionActivated(t.instruction);
    return true;
  }
  if (t.computation != nullptr) {
    PushHistory();
    ShowComputation(t.computation);
    emit q->computationActivated(t.computation);
    return true;
  }
  return false;
}

void HloTextView::Impl::SetHoverLink(int start, int length) {
  if (start == hover_start && length == hover_length) return;
  hover_start = start;
  hover_length = length;
  UpdateSelections();
}

HloTextEditorClient::Fold HloTextView::Impl::FoldAt(int block_number) const {
  const int ci = ComputationAtLine(block_number);
  if (ci < 0) return Fold::kNone;
  const HloTextIndex::ComputationPos& cp = index.computations[ci];
  if (cp.header_line != block_number || cp.close_line <= cp.header_line + 1) return Fold::kNone;
  return folded[ci] ? Fold::kFolded : Fold::kExpanded;
}

void HloTextView::Impl::ToggleFold(int block_number) {
  const int ci = ComputationAtLine(block_number);
  if (ci >= 0) SetFolded(ci, !folded[ci]);
}

QString HloTextView::Impl::MarkerAt(int block_number) const {
  const int ci = ComputationAtLine(block_number);
  if (ci < 0 || !folded[ci] || index.computations[ci].close_line != block_number) return {};
  const int n = index.computations[ci].instruction_count;
  return n == 1 ? HloTextView::tr("\u2026 1 instruction")
                : HloTextView::tr("\u2026 %1 instructions").arg(n);
}

void HloTextView::Impl::AddContextActions(QMenu* menu, int position) {
  const Target t = Resolve(position);
  if (t.start >= 0) {
    const QString name = t.instruction ? QString::fromStdString(t.instruction->name())
                                       : QString::fromStdString(t.computation->name());
    QAction* go = menu->addAction(HloTextView::tr("Go to %1").arg(name));
    go->setShortcut(QKeySequence(Qt::Key_F2));
    QObject::connect(go, &QAction::triggered, q, [this, position] { FollowLink(position); });
  }
  const int ci = ComputationAtLine(editor->document()->findBlock(position).blockNumber());
  if (ci >= 0 && FoldAt(index.computations[ci].header_line) != Fold::kNone) {
    QAction* fold = menu->addAction(folded[ci] ? HloTextView::tr("Unfold computation")
                                               : HloTextView::tr("Fold computation"));
    QObject::connect(fold, &QAction::triggered, q, [this, ci] { SetFolded(ci, !folded[ci]); });
  }
  if (!index.computations.empty() && index.structured) {
    QAction* fold_all = menu->addAction(HloTextView::tr("Fold all but the entry"));
    QObject::connect(fold_all, &QAction::triggered, q, [this] {
      for (size_t i = 0; i < index.computations.size(); ++i) {
        SetFolded(static_cast<int>(i), !index.computations[i].computation->is_entry());
      }
    });
    QAction* unfold_all = menu->addAction(HloTextView::tr("Unfold all"));
    QObject::connect(unfold_all, &QAction::triggered, q, [this] {
      for (size_t i = 0; i < index.computations.size(); ++i) SetFolded(static_cast<int>(i), false);
    });
  }
  menu->addSeparator();
  QAction* find = menu->addAction(HloTextView::tr("Find\u2026"));
  find->setShortcut(QKeySequence::Find);
  QObject::connect(find, &QAction::triggered, q, [this] { ShowFindBar(); });
  QAction* back_action = menu->addAction(HloTextView::tr("Back"));
  back_action->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
  back_action->setEnabled(!back.empty());
  QObject::connect(back_action, &QAction::triggered, q, [this] { NavigateBack(); });
}

void HloTextView::Impl::FindKeyPressed(FindKey key) {
  if (key == FindKey::kOpen || find_edit->text().isEmpty()) {
    ShowFindBar();
  } else {
    Find(find_edit->text(), key == FindKey::kPrevious);
  }
}

void HloTextView::Impl::PushHistory() {
  back.push_back(editor->textCursor().position());
  if (back.size() > 200) back.erase(back.begin());
  forward.clear();
}

void HloTextView::Impl::MoveToHistory(int position) {
  QTextCursor c(editor->document());
  c.setPosition(std::clamp(position, 0, editor->document()->characterCount() - 1));
  const int ci = ComputationAtLine(c.blockNumber());
  if (!c.block().isVisible() && ci >= 0) SetFolded(ci, false);
  editor->setTextCursor(c);  // a user move: the line's instruction is activated
  editor->centerCursor();
}

void HloTextView::Impl::NavigateBack() {
  if (back.empty()) return;
  forward.push_back(editor->textCursor().position());
  const int pos = back.back();
  back.pop_back();
  MoveToHistory(pos);
}

void HloTextView::Impl::NavigateForward() {
  if (forward.empty()) return;
  back.push_back(editor->textCursor().position());
  const int pos = forward.back();
  forward.pop_back();
  MoveToHistory(pos);
}

void HloTextView::Impl::PlaceCursor(int line, int column, bool center) {
  QTextDocument* doc = editor->document();
  const QTextBlock block = doc->findBlockByNumber(line);
  if (!block.isValid()) return;
  QTextCursor c(block);
  c.setPosition(block.position() + std::clamp(column, 0, std::max(block.length() - 1, 0)));
  // Is the line on screen already? Then do not scroll more than needed.
  const QRectF r = editor->BlockRect(block);
  const bool visible = block.isVisible() && r.top() >= 0 &&
                       r.bottom() <= editor->viewport()->height() && editor->isVisible();
  ++programmatic;
  editor->setTextCursor(c);
  if (center && !visible) editor->centerCursor();
  --programmatic;
}

void HloTextView::Impl::ShowInstruction(const Instruction* instruction) {
  pending_computation = nullptr;
  if (loading) {
    pending_instruction = instruction;
    return;
  }
  pending_instruction = nullptr;
  const int ii = index.InstructionIndex(instruction);
  if (ii < 0 || index.instructions[ii].line < 0) return;
  const HloTextIndex::InstructionPos& ip = index.instructions[ii];
  if (folded[ip.computation]) SetFolded(ip.computation, false);
  PlaceCursor(ip.line, ip.name_column, true);
  last_target = instruction;
  UpdateSelections();
}

void HloTextView::Impl::ShowComputation(const Computation* computation) {
  pending_instruction = nullptr;
  if (loading) {
    pending_computation = computation;
    return;
  }
  pending_computation = nullptr;
  const int ci = index.ComputationIndex(computation);
  if (ci < 0 || index.computations[ci].header_line < 0) return;
  const HloTextIndex::ComputationPos& cp = index.computations[ci];
  PlaceCursor(cp.header_line, cp.name_column, true);
  // Put the header near the top so the body is visible below it.
  if (editor->isVisible()) {
    const QTextBlock block = editor->document()->findBlockByNumber(cp.header_line);
    const QRectF r = editor->BlockRect(block);
    if (r.top() < 0 || r.top() > editor->viewport()->height() / 2) {
      editor->verticalScrollBar()->setValue(editor->verticalScrollBar()->value() +
                                            static_cast<int>(r.top() / std::max(1.0, r.height())) -
                                            2);
    }
  }
  last_target = computation;
  UpdateSelections();
}

void HloTextView::Impl::ActivateCurrentLine() {
  if (!module || !index.structured) return;
  const int line = editor->textCursor().blockNumber();
  if (line < 0 || line >= static_cast<int>(index.line_instruction.size())) return;
  const int ii = index.line_instruction[line];
  if (ii >= 0) {
    const Instruction* instr = index.instructions[ii].instruction;
    if (instr != last_target) {
      last_target = instr;
      emit q->instructionActivated(instr);
    }
    return;
  }
  const int ci = index.line_computation[line];
  if (ci >= 0 && index.computations[ci].header_line == line) {
    const Computation* comp = index.computations[ci].computation;
    if (comp != last_target) {
      last_target = comp;
      emit q->computationActivated(comp);
    }
    return;
  }
  last_target = nullptr;
}

void HloTextView::Impl::OnCursorMoved() {
  UpdateSelections();
  if (programmatic > 0 || editor->holding_activation()) return;
  ActivateCurrentLine();
}

void HloTextView::Impl::UpdateSelections() {
  QList<QTextEdit::ExtraSelection> list;
  const QPalette pal = editor->palette();
  const QColor base = pal.color(QPalette::Base);
  QTextEdit::ExtraSelection current;
  current.format.setBackground(Mix(base, pal.color(QPalette::Highlight), 0.14));
  current.format.setProperty(QTextFormat::FullWidthSelection, true);
  current.cursor = editor->textCursor();
  current.cursor.clearSelection();
  list << diff_selections;
  list << current;
  list << search_selections;
  list << error_selections;
  if (hover_start >= 0 && hover_length > 0) {
    QTextEdit::ExtraSelection hover;
    hover.cursor = QTextCursor(editor->document());
    hover.cursor.setPosition(hover_start);
    hover.cursor.setPosition(hover_start + hover_length, QTextCursor::KeepAnchor);
    hover.format.setFontUnderline(true);
    list << hover;
  }
  editor->setExtraSelections(list);
}

void HloTextView::Impl::RebuildDiffSelections() {
  diff_selections.clear();
  if (loading || !index.structured) return;
  const QColor base = editor->palette().color(QPalette::Base);
  for (const auto& [instruction, mark] : diff_marks) {
    const int ii = index.InstructionIndex(instruction);
    if (ii < 0 || index.instructions[ii].line < 0 || (mark != 1 && mark != 2)) continue;
    const QTextBlock block = editor->document()->findBlockByNumber(index.instructions[ii].line);
    if (!block.isValid()) continue;
    QTextEdit::ExtraSelection line;
    line.format.setBackground(
        Mix(base, mark == 1 ? QColor(0x2E, 0xA0, 0x43) : QColor(0xE3, 0x8B, 0x00), 0.22));
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = QTextCursor(block);
    diff_selections << line;
  }
}

void HloTextView::Impl::RebuildSearchSelections() {
  search_selections.clear();
  if (loading || search_query.isEmpty()) return;
  // Enough for any screenful; a query that matches everywhere does not cost a long stall.
  constexpr int kMaxHighlights = 5000;
  QTextDocument* doc = editor->document();
  QTextEdit::ExtraSelection mark;
  mark.format.setBackground(QColor(0xFF, 0xEE, 0x58));
  mark.format.setForeground(QColor(0x21, 0x21, 0x21));
  for (QTextCursor c = doc->find(search_query, 0);
       !c.isNull() && search_selections.size() < kMaxHighlights; c = doc->find(search_query, c)) {
    mark.cursor = c;
    search_selections << mark;
  }
}

void HloTextView::Impl::SetFolded(int ci, bool fold) {
  if (ci < 0 || ci >= static_cast<int>(index.computations.size()) || !index.structured) return;
  if (folded[ci] == fold) return;
  const HloTextIndex::ComputationPos& cp = index.computations[ci];
  const int first = cp.header_line + 1;
  const int last = cp.close_line - 1;
  if (last < first) return;
  folded[ci] = fold;
  QTextDocument* doc = editor->document();
  // Hide or show the body. Lines are never wrapped, so a shown block is exactly one line.
  // Setting the line counts directly (instead of marking the range dirty) keeps the syntax
  // highlighter and the layout from reprocessing thousands of long lines.
  QTextBlock block = doc->findBlockByNumber(first);
  for (int n = first; block.isValid() && n <= last; ++n, block = block.next()) {
    block.setVisible(!fold);
    block.setLineCount(fold ? 0 : 1);
  }
  // Keep the cursor out of hidden text.
  const int cursor_line = editor->textCursor().blockNumber();
  if (fold && cursor_line >= first && cursor_line <= last) {
    PlaceCursor(cp.header_line, cp.name_column, false);
    last_target = cp.computation;
  }
  if (auto* layout = qobject_cast<QPlainTextDocumentLayout*>(doc->documentLayout())) {
    emit layout->documentSizeChanged(layout->documentSize());
    layout->requestUpdate();
  }
  editor->RefreshDecorations();
  UpdateSelections();
}

bool HloTextView::Impl::Find(const QString& query, bool backwards) {
  if (query.isEmpty()) return false;
  if (find_edit->text() != query) find_edit->setText(query);
  QTextDocument* doc = editor->document();
  QTextDocument::FindFlags flags;
  if (backwards) flags |= QTextDocument::FindBackward;
  QTextCursor found = doc->find(query, editor->textCursor(), flags);
  bool wrapped = false;
  if (found.isNull()) {
    QTextCursor from(doc);
    if (backwards) from.movePosition(QTextCursor::End);
    found = doc->find(query, from, flags);
    wrapped = true;
  }
  if (found.isNull()) {
    SetFindStatus(HloTextView::tr("Not found"), true);
    return false;
  }
  const int ci = ComputationAtLine(found.blockNumber());
  if (!found.block().isVisible() && ci >= 0) SetFolded(ci, false);
  editor->setTextCursor(found);  // a user action: activates the line's instruction
  // Names start the lines: a match far to the right (in metadata) does not scroll them away.
  editor->horizontalScrollBar()->setValue(0);
  SetFindStatus(wrapped ? HloTextView::tr("Wrapped") : QString(), false);
  return true;
}

void HloTextView::Impl::SetFindStatus(const QString& status, bool error) {
  find_status->setText(status);
  QPalette p = find_edit->palette();
  p.setColor(QPalette::Base, error ? Mix(q->palette().color(QPalette::Base), QColor(Qt::red), 0.25)
                                   : q->palette().color(QPalette::Base));
  find_edit->setPalette(p);
}

void HloTextView::Impl::ShowFindBar() {
  find_bar->show();
  const QString selected = editor->textCursor().selectedText();
  if (!selected.isEmpty() && !selected.contains(QChar::ParagraphSeparator)) {
    find_edit->setText(selected);
  }
  find_edit->setFocus(Qt::ShortcutFocusReason);
  find_edit->selectAll();
}

void HloTextView::Impl::HideFindBar() {
  find_bar->hide();
  SetFindStatus(QString(), false);
  editor->setFocus(Qt::OtherFocusReason);
}

// ---------------------------------------------------------------------------------------------

HloTextView::HloTextView(QWidget* parent) : QWidget(parent), impl_(std::make_unique<Impl>(this)) {}

HloTextView::~HloTextView() {
  // The editor calls back into impl_ while it is torn down (focus, cursor signals).
  impl_->editor->SetClient(nullptr);
  QObject::disconnect(impl_->editor, nullptr, this, nullptr);
}

void HloTextView::SetModule(std::shared_ptr<const Module> module) {
  // The module already shown (or loading): keep the cursor, folds and history.
  if (module && module == impl_->module && impl_->error_line == 0) return;
  ++impl_->programmatic;
  impl_->ResetState();
  if (module && module->instruction_count() >= impl_->async_threshold) {
    impl_->module = module;
    impl_->SetText(tr("Loading %1 instructions…").arg(module->instruction_count()), 1);
    --impl_->programmatic;
    impl_->StartLoad(std::move(module));
    return;
  }
  if (module) {
    impl_->index = HloTextIndex::Build(*module);
    impl_->module = std::move(module);
    impl_->folded.assign(impl_->index.computations.size(), false);
    impl_->SetText(Sanitize(QString::fromUtf8(impl_->index.text)), impl_->index.line_count);
    if (impl_->editor->document()->blockCount() != impl_->index.line_count) {
      impl_->index.structured = false;  // never link to wrong lines
    }
    // The printed text is only needed for building the index.
    std::string().swap(impl_->index.text);
    impl_->RebuildSearchSelections();
  } else {
    impl_->SetText(QString(), 1);
  }
  impl_->editor->moveCursor(QTextCursor::Start);
  --impl_->programmatic;
  impl_->UpdateSelections();
}

void HloTextView::SetErrorText(const QString& text, int line, int column, const QString& message) {
  ++impl_->programmatic;
  impl_->ResetState();
  const QString clean = Sanitize(text);
  impl_->SetText(clean, static_cast<int>(clean.count(QLatin1Char('\n'))) + 1);
  QTextDocument* doc = impl_->editor->document();
  const QTextBlock block = line >= 1 ? doc->findBlockByNumber(line - 1) : QTextBlock();
  QString where;
  if (block.isValid()) {
    impl_->error_line = line;
    where = column >= 1 ? tr("line %1, column %2").arg(line).arg(column) : tr("line %1").arg(line);
    const QPalette pal = impl_->editor->palette();
    const QColor base = pal.color(QPalette::Base);
    QTextEdit::ExtraSelection whole;
    whole.format.setBackground(Mix(base, QColor(0xe0, 0x30, 0x30), 0.22));
    whole.format.setProperty(QTextFormat::FullWidthSelection, true);
    whole.cursor = QTextCursor(block);
    impl_->error_selections << whole;
    // The column: the character there (or the last one when the column is past the end).
    const int length = block.length() - 1;
    int col = std::max(column, 1) - 1;
    if (length > 0) {
      col = std::min(col, length - 1);
      QTextEdit::ExtraSelection mark;
      mark.format.setBackground(QColor(0xe0, 0x30, 0x30));
      mark.format.setForeground(Qt::white);
      mark.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
      mark.format.setUnderlineColor(QColor(0xa0, 0x00, 0x00));
      mark.cursor = QTextCursor(block);
      mark.cursor.setPosition(block.position() + col);
      mark.cursor.setPosition(block.position() + col + 1, QTextCursor::KeepAnchor);
      impl_->error_selections << mark;
    } else {
      col = 0;
    }
    QTextCursor c(block);
    c.setPosition(block.position() + col);
    impl_->editor->setTextCursor(c);
    impl_->editor->centerCursor();
  }
  const QString text_message = message.toHtmlEscaped();
  impl_->banner->setText(where.isEmpty()
                             ? tr("<b>Parse error:</b> %1").arg(text_message)
                             : tr("<b>Parse error at %1:</b> %2").arg(where, text_message));
  impl_->banner->setToolTip(message);
  impl_->banner->show();
  --impl_->programmatic;
  impl_->UpdateSelections();
}

void HloTextView::Clear() {
  ++impl_->programmatic;
  impl_->ResetState();
  impl_->SetText(QString(), 1);
  --impl_->programmatic;
  impl_->UpdateSelections();
}

void HloTextView::ShowInstruction(const Instruction* instruction) {
  if (instruction != nullptr) impl_->ShowInstruction(instruction);
}

void HloTextView::ShowComputation(const Computation* computation) {
  if (computation != nullptr) impl_->ShowComputation(computation);
}

const Instruction* HloTextView::CurrentInstruction() const {
  if (!impl_->module || !impl_->index.structured) return nullptr;
  const int line = impl_->editor->textCursor().blockNumber();
  if (line < 0 || line >= static_cast<int>(impl_->index.line_instruction.size())) return nullptr;
  const int ii = impl_->index.line_instruction[line];
  return ii >= 0 ? impl_->index.instructions[ii].instruction : nullptr;
}

bool HloTextView::Find(const QString& query, bool backwards) {
  return impl_->Find(query, backwards);
}

void HloTextView::SetComputationFolded(const Computation* computation, bool folded) {
  impl_->SetFolded(impl_->index.ComputationIndex(computation), folded);
}

QString HloTextView::PlainText() const { return impl_->editor->toPlainText(); }

bool HloTextView::IsLoading() const { return impl_->loading; }

void HloTextView::SetDiffMarks(std::unordered_map<const Instruction*, uint8_t> marks) {
  impl_->diff_marks = std::move(marks);
  impl_->RebuildDiffSelections();
  impl_->UpdateSelections();
}

void HloTextView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  // After the editor has its new palette too (the order children hear of it is not fixed).
  QTimer::singleShot(0, this, [this] {
    impl_->RebuildDiffSelections();
    impl_->UpdateSelections();
  });
}

void HloTextView::SetSearchHighlight(const QString& query) {
  if (query == impl_->search_query) return;
  impl_->search_query = query;
  impl_->RebuildSearchSelections();
  impl_->UpdateSelections();
}

int HloTextView::SearchHighlightCount() const {
  return static_cast<int>(impl_->search_selections.size());
}

int HloTextView::DiffMarkedLineCount() const {
  return static_cast<int>(impl_->diff_selections.size());
}

void HloTextView::SetAsyncThreshold(int64_t instructions) {
  impl_->async_threshold = instructions;
}

QPlainTextEdit* HloTextView::editor() const { return impl_->editor; }

bool HloTextView::IsComputationFolded(const Computation* computation) const {
  const int ci = impl_->index.ComputationIndex(computation);
  return ci >= 0 && ci < static_cast<int>(impl_->folded.size()) && impl_->folded[ci];
}

int HloTextView::LineOf(const Instruction* instruction) const {
  const int ii = impl_->index.InstructionIndex(instruction);
  return ii >= 0 && impl_->index.instructions[ii].line >= 0 ? impl_->index.instructions[ii].line + 1
                                                            : 0;
}

int HloTextView::LineOf(const Computation* computation) const {
  const int ci = impl_->index.ComputationIndex(computation);
  return ci >= 0 && impl_->index.computations[ci].header_line >= 0
             ? impl_->index.computations[ci].header_line + 1
             : 0;
}

bool HloTextView::IsLineVisible(int line) const {
  const QTextBlock block = impl_->editor->document()->findBlockByNumber(line - 1);
  return block.isValid() && block.isVisible();
}

int HloTextView::ErrorLine() const { return impl_->error_line; }

void HloTextView::ShowFindBar() { impl_->ShowFindBar(); }

}  // namespace hlowb::viewer
