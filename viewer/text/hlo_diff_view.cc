#include "viewer/text/hlo_diff_view.h"

#include <QCoreApplication>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextDocumentLayout>
#include <QPlainTextEdit>
#include <QPointer>
#include <QScrollBar>
#include <QSplitter>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace hlowb::viewer {
namespace {

QString Q(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<int>(s.size())); }

// Line separators other than '\n' would split a QTextDocument block in two and break the
// alignment of the sides.
QString Sanitize(QString text) {
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

QFont MonoFont() {
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleStrategy(QFont::PreferNoShaping);
  return mono;
}

// The background of one side of a line: the kind's colour where that side has text, the filler
// colour where the other side has an instruction and this one has none.
QColor Background(const SideBySideLine& line, bool left, bool dark) {
  const bool has_text = !(left ? line.left : line.right).empty();
  if (line.type == SideBySideLine::Type::kSpacer) return QColor();
  if (!has_text) {
    return line.type == SideBySideLine::Type::kInstruction ||
                   line.kind != DiffKind::kUnchanged
               ? HloDiffView::FillerColor(dark)
               : QColor();
  }
  if (line.kind == DiffKind::kUnchanged) return QColor();
  return HloDiffView::KindColor(line.kind, dark);
}

// One side's document: the text and the line backgrounds (as block formats, which
// QPlainTextEdit paints across the whole width).
QTextDocument* BuildDocument(const std::vector<SideBySideLine>& lines, bool left, bool dark,
                             const QFont& font) {
  QString text;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) text += QLatin1Char('\n');
    text += Q(left ? lines[i].left : lines[i].right);
  }
  auto* doc = new QTextDocument;
  doc->setUndoRedoEnabled(false);
  doc->setDocumentLayout(new QPlainTextDocumentLayout(doc));
  doc->setDefaultFont(font);
  doc->setPlainText(Sanitize(std::move(text)));
  QTextCursor cursor(doc);
  QTextBlock block = doc->begin();
  for (size_t i = 0; i < lines.size() && block.isValid(); ++i, block = block.next()) {
    const QColor bg = Background(lines[i], left, dark);
    if (!bg.isValid()) continue;
    QTextBlockFormat format;
    format.setBackground(bg);
    cursor.setPosition(block.position());
    cursor.setBlockFormat(format);
  }
  return doc;
}

}  // namespace

class HloDiffView::Impl {
 public:
  explicit Impl(HloDiffView* view);

  // What a build hands back; documents not taken are deleted with deleteLater.
  struct Built {
    // What the lines point into, kept alive until the view has taken them.
    std::shared_ptr<const Module> a, b;
    std::shared_ptr<const ModuleDiff> diff;
    std::vector<SideBySideLine> lines;
    QTextDocument* left = nullptr;
    QTextDocument* right = nullptr;
    ~Built() {
      if (left != nullptr) left->deleteLater();
      if (right != nullptr) right->deleteLater();
    }
  };
  static std::shared_ptr<Built> Build(const ModuleDiff& diff, bool dark, const QFont& font);
  void Adopt(std::uint64_t gen, const std::shared_ptr<Built>& built);
  void MoveTo(int line);
  void UpdateCurrentLine();
  void OnCursor(QPlainTextEdit* editor);
  bool Dark() const { return q->palette().color(QPalette::Base).lightness() < 128; }

  HloDiffView* q;
  QLabel* left_label = nullptr;
  QLabel* right_label = nullptr;
  QLabel* note = nullptr;
  QPlainTextEdit* left = nullptr;
  QPlainTextEdit* right = nullptr;

  std::shared_ptr<const Module> a, b;
  std::shared_ptr<const ModuleDiff> diff;
  std::vector<SideBySideLine> lines;
  std::unordered_map<const Instruction*, int> line_of;
  QString label_a, label_b;
  bool built_dark = false;   // the palette the documents' colours were made for
  std::vector<int> changes;  // lines that are not unchanged instructions
  // Those of them outside fused computations (a fusion pass adds hundreds of fused lines).
  std::vector<int> top_level_changes;
  int current = -1;
  int64_t async_threshold = 2000;
  std::uint64_t generation = 0;
  bool loading = false;
  int programmatic = 0;
  bool syncing_scroll = false;
};

HloDiffView::Impl::Impl(HloDiffView* view) : q(view) {
  auto* layout = new QVBoxLayout(q);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  auto* splitter = new QSplitter(Qt::Horizontal, q);
  splitter->setChildrenCollapsible(false);
  const QFont font = MonoFont();
  auto side = [&](QLabel** label, QPlainTextEdit** editor, const QString& name) {
    auto* w = new QWidget(splitter);
    auto* l = new QVBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    l->setSpacing(0);
    *label = new QLabel(w);
    (*label)->setContentsMargins(6, 2, 6, 2);
    (*label)->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Long state labels are cut, never a reason for the pane (and the window) to grow.
    (*label)->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    *editor = new QPlainTextEdit(w);
    (*editor)->setObjectName(name);
    (*editor)->setReadOnly(true);
    (*editor)->setUndoRedoEnabled(false);
    (*editor)->setLineWrapMode(QPlainTextEdit::NoWrap);
    (*editor)->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    (*editor)->setFont(font);
    (*editor)->document()->setDefaultFont(font);
    l->addWidget(*label);
    l->addWidget(*editor, 1);
    splitter->addWidget(w);
  };
  side(&left_label, &left, QStringLiteral("diffLeft"));
  side(&right_label, &right, QStringLiteral("diffRight"));
  layout->addWidget(splitter, 1);
  // What happened to the instruction on the current line.
  note = new QLabel(q);
  note->setObjectName(QStringLiteral("diffNote"));
  note->setContentsMargins(6, 2, 6, 2);
  note->setTextInteractionFlags(Qt::TextSelectableByMouse);
  note->setWordWrap(true);
  note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  layout->addWidget(note);

  // The sides scroll together (they have the same lines, so the same ranges).
  auto sync = [this](QScrollBar* from, QScrollBar* to) {
    QObject::connect(from, &QScrollBar::valueChanged, q, [this, to](int value) {
      if (syncing_scroll) return;
      syncing_scroll = true;
      to->setValue(value);
      syncing_scroll = false;
    });
  };
  sync(left->verticalScrollBar(), right->verticalScrollBar());
  sync(right->verticalScrollBar(), left->verticalScrollBar());
  sync(left->horizontalScrollBar(), right->horizontalScrollBar());
  sync(right->horizontalScrollBar(), left->horizontalScrollBar());
  for (QPlainTextEdit* e : {left, right}) {
    QObject::connect(e, &QPlainTextEdit::cursorPositionChanged, q, [this, e] { OnCursor(e); });
  }
}

std::shared_ptr<HloDiffView::Impl::Built> HloDiffView::Impl::Build(const ModuleDiff& diff,
                                                                    bool dark, const QFont& font) {
  auto built = std::make_shared<Built>();
  built->lines = BuildSideBySide(diff);
  built->left = BuildDocument(built->lines, true, dark, font);
  built->right = BuildDocument(built->lines, false, dark, font);
  return built;
}

void HloDiffView::Impl::Adopt(std::uint64_t gen, const std::shared_ptr<Built>& built) {
  if (gen != generation) return;  // replaced meanwhile: `built` cleans up
  loading = false;
  ++programmatic;
  lines = std::move(built->lines);
  line_of.clear();
  changes.clear();
  top_level_changes.clear();
  std::unordered_set<const Computation*> fused;
  for (const Module* m : {a.get(), b.get()}) {
    if (m == nullptr) continue;
    for (const auto& c : m->computations()) {
      for (const Instruction* i : c->instructions()) {
        if (i->opcode() != Opcode::kFusion) continue;
        for (const Computation* called : i->called_computations()) fused.insert(called);
      }
    }
  }
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const SideBySideLine& l = lines[i];
    if (l.type != SideBySideLine::Type::kInstruction) continue;
    if (l.a != nullptr) line_of.emplace(l.a, i);
    if (l.b != nullptr) line_of.emplace(l.b, i);
    if (l.kind == DiffKind::kUnchanged) continue;
    changes.push_back(i);
    const Instruction* at = l.b != nullptr ? l.b : l.a;
    if (at != nullptr && !fused.count(at->parent())) top_level_changes.push_back(i);
  }
  for (auto [editor, doc] : {std::pair{left, built->left}, std::pair{right, built->right}}) {
    // The editor's own first document is deleted by setDocument; ours (parented to the editor)
    // are deleted here.
    QPointer<QTextDocument> old = editor->document();
    doc->setParent(editor);
    editor->setDocument(doc);
    if (old && old != doc && old->parent() == editor) delete old.data();
  }
  built->left = built->right = nullptr;
  current = -1;
  --programmatic;
  UpdateCurrentLine();
}

void HloDiffView::Impl::MoveTo(int line) {
  if (line < 0 || line >= static_cast<int>(lines.size())) return;
  current = line;
  ++programmatic;
  for (QPlainTextEdit* e : {left, right}) {
    QTextCursor c(e->document()->findBlockByNumber(line));
    e->setTextCursor(c);
  }
  // The same scroll position on both: centre the line on the right and let the left follow.
  right->centerCursor();
  left->verticalScrollBar()->setValue(right->verticalScrollBar()->value());
  --programmatic;
  UpdateCurrentLine();
}

void HloDiffView::Impl::UpdateCurrentLine() {
  note->setText(current >= 0 && current < static_cast<int>(lines.size())
                    ? Q(lines[current].note)
                    : QString());
  for (QPlainTextEdit* e : {left, right}) {
    QList<QTextEdit::ExtraSelection> selections;
    if (current >= 0) {
      QTextEdit::ExtraSelection s;
      s.cursor = QTextCursor(e->document()->findBlockByNumber(current));
      s.format.setProperty(QTextFormat::FullWidthSelection, true);
      QColor c = q->palette().color(QPalette::Highlight);
      c.setAlpha(70);
      s.format.setBackground(c);
      selections.push_back(s);
    }
    e->setExtraSelections(selections);
  }
}

void HloDiffView::Impl::OnCursor(QPlainTextEdit* editor) {
  if (programmatic > 0 || loading) return;
  const int line = editor->textCursor().blockNumber();
  if (line < 0 || line >= static_cast<int>(lines.size())) return;
  current = line;
  ++programmatic;
  QPlainTextEdit* other = editor == left ? right : left;
  QTextCursor c(other->document()->findBlockByNumber(line));
  other->setTextCursor(c);
  --programmatic;
  UpdateCurrentLine();
  if (const Instruction* b = lines[line].b) emit q->instructionActivated(b);
}

// ---------------------------------------------------------------------------------------------

HloDiffView::HloDiffView(QWidget* parent) : QWidget(parent), impl_(std::make_unique<Impl>(this)) {}

HloDiffView::~HloDiffView() {
  // The editors outlive impl_ (they are child widgets): their signals must not reach it while
  // they are torn down.
  for (QPlainTextEdit* e : {impl_->left, impl_->right}) {
    QObject::disconnect(e, nullptr, this, nullptr);
    QObject::disconnect(e->verticalScrollBar(), nullptr, this, nullptr);
    QObject::disconnect(e->horizontalScrollBar(), nullptr, this, nullptr);
  }
}

void HloDiffView::SetDiff(std::shared_ptr<const Module> a, std::shared_ptr<const Module> b,
                          std::shared_ptr<const ModuleDiff> diff, const QString& label_a,
                          const QString& label_b) {
  Impl& d = *impl_;
  if (!a || !b || !diff) {
    Clear();
    return;
  }
  const std::uint64_t gen = ++d.generation;
  d.a = std::move(a);
  d.b = std::move(b);
  d.diff = std::move(diff);
  d.label_a = label_a;
  d.label_b = label_b;
  d.left_label->setText(tr("Base: %1").arg(label_a));
  d.right_label->setText(tr("Shown: %1").arg(label_b));
  d.loading = true;
  const bool dark = d.Dark();
  d.built_dark = dark;
  const QFont font = MonoFont();
  const int64_t size = std::max(d.a->instruction_count(), d.b->instruction_count());
  if (size < d.async_threshold) {
    d.Adopt(gen, Impl::Build(*d.diff, dark, font));
    return;
  }
  d.lines.clear();
  d.line_of.clear();
  d.changes.clear();
  d.top_level_changes.clear();
  d.current = -1;
  ++d.programmatic;
  for (QPlainTextEdit* e : {d.left, d.right}) {
    e->setPlainText(tr("Building the side-by-side diff…"));
    e->setExtraSelections({});
  }
  --d.programmatic;
  QThread* ui_thread = QThread::currentThread();
  QPointer<HloDiffView> view(this);
  // The modules and the diff stay alive with the copies held here.
  std::thread([a = d.a, b = d.b, diff = d.diff, gen, dark, font, ui_thread, view] {
    std::shared_ptr<Impl::Built> built = Impl::Build(*diff, dark, font);
    built->a = a;
    built->b = b;
    built->diff = diff;
    built->left->moveToThread(ui_thread);
    built->right->moveToThread(ui_thread);
    // Posted to the application (the view may be gone by now; the pointer is checked on the UI
    // thread, where the view is deleted).
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [view, gen, built] {
          if (!view) return;
          const bool was_loading = view->impl_->loading && view->impl_->generation == gen;
          view->impl_->Adopt(gen, built);
          if (was_loading) emit view->diffLoaded();
        },
        Qt::QueuedConnection);
  }).detach();
}

void HloDiffView::Clear() {
  Impl& d = *impl_;
  ++d.generation;
  d.loading = false;
  ++d.programmatic;
  d.lines.clear();
  d.line_of.clear();
  d.changes.clear();
  d.top_level_changes.clear();
  d.current = -1;
  for (QPlainTextEdit* e : {d.left, d.right}) {
    e->clear();
    e->setExtraSelections({});
  }
  d.left_label->clear();
  d.right_label->clear();
  d.note->clear();
  --d.programmatic;
  d.diff.reset();
  d.a.reset();
  d.b.reset();
}

bool HloDiffView::IsLoading() const { return impl_->loading; }

void HloDiffView::SetAsyncThreshold(int64_t instructions) { impl_->async_threshold = instructions; }

int HloDiffView::GoToChange(bool backwards, bool top_level_only) {
  Impl& d = *impl_;
  const std::vector<int>& changes = top_level_only ? d.top_level_changes : d.changes;
  if (changes.empty()) return -1;
  int target = -1;
  if (backwards) {
    auto it = std::lower_bound(changes.begin(), changes.end(), d.current);
    target = it == changes.begin() || d.current < 0 ? changes.back() : *std::prev(it);
  } else {
    auto it = std::upper_bound(changes.begin(), changes.end(), d.current);
    target = it == changes.end() ? changes.front() : *it;
  }
  d.MoveTo(target);
  return target;
}

bool HloDiffView::ShowInstruction(const Instruction* instruction) {
  const int line = LineOf(instruction);
  if (line < 0) return false;
  impl_->MoveTo(line);
  return true;
}

void HloDiffView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  QTimer::singleShot(0, this, [this] {
    Impl& d = *impl_;
    if (!d.diff || d.loading || d.Dark() == d.built_dark) return;
    const int line = d.current;
    SetDiff(d.a, d.b, d.diff, d.label_a, d.label_b);
    if (line >= 0 && !d.loading) d.MoveTo(line);
  });
}

int HloDiffView::LineCount() const { return static_cast<int>(impl_->lines.size()); }
int HloDiffView::ChangeCount() const { return static_cast<int>(impl_->changes.size()); }
int HloDiffView::TopLevelChangeCount() const {
  return static_cast<int>(impl_->top_level_changes.size());
}
int HloDiffView::CurrentLine() const { return impl_->current; }

int HloDiffView::LineOf(const Instruction* instruction) const {
  auto it = impl_->line_of.find(instruction);
  return it == impl_->line_of.end() ? -1 : it->second;
}

QString HloDiffView::LeftText(int line) const {
  const QTextBlock block = impl_->left->document()->findBlockByNumber(line);
  return block.isValid() ? block.text() : QString();
}

QString HloDiffView::RightText(int line) const {
  const QTextBlock block = impl_->right->document()->findBlockByNumber(line);
  return block.isValid() ? block.text() : QString();
}

QColor HloDiffView::LeftBackground(int line) const {
  const QTextBlock block = impl_->left->document()->findBlockByNumber(line);
  if (!block.isValid() || block.blockFormat().background().style() == Qt::NoBrush) return {};
  return block.blockFormat().background().color();
}

QColor HloDiffView::RightBackground(int line) const {
  const QTextBlock block = impl_->right->document()->findBlockByNumber(line);
  if (!block.isValid() || block.blockFormat().background().style() == Qt::NoBrush) return {};
  return block.blockFormat().background().color();
}

const SideBySideLine* HloDiffView::LineAt(int line) const {
  if (line < 0 || line >= LineCount()) return nullptr;
  return &impl_->lines[line];
}

QString HloDiffView::CurrentNote() const { return impl_->note->text(); }

QPlainTextEdit* HloDiffView::left() const { return impl_->left; }
QPlainTextEdit* HloDiffView::right() const { return impl_->right; }

QColor HloDiffView::KindColor(DiffKind kind, bool dark) {
  switch (kind) {
    case DiffKind::kAdded:
      return dark ? QColor(0x1E, 0x4D, 0x2B) : QColor(0xD4, 0xF4, 0xDC);
    case DiffKind::kRemoved:
      return dark ? QColor(0x5C, 0x22, 0x22) : QColor(0xFA, 0xD4, 0xD4);
    case DiffKind::kChanged:
      return dark ? QColor(0x5C, 0x40, 0x12) : QColor(0xFD, 0xE5, 0xBF);
    case DiffKind::kUnchanged:
      break;
  }
  return {};
}

QColor HloDiffView::FillerColor(bool dark) {
  return dark ? QColor(0x26, 0x26, 0x28) : QColor(0xEE, 0xEE, 0xEE);
}

}  // namespace hlowb::viewer
