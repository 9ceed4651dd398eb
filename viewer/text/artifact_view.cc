#include "viewer/text/artifact_view.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QThreadPool>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <utility>

#include "viewer/text/artifact_names.h"
#include "viewer/text/find_field.h"
#include "viewer/text/artifact_text_area.h"

namespace hlowb::viewer {
namespace {

// Texts up to this many characters are searched on the UI thread (a few milliseconds).
constexpr qsizetype kSyncSearchChars = qsizetype{1} << 20;
// Matches counted at most; a query matching more says "N+".
constexpr size_t kMaxMatches = 2'000'000;
// Modules with fewer instructions are indexed for links on the UI thread.
constexpr int64_t kSyncNameIndexInstructions = 20'000;

// Every case-insensitive, non-overlapping match of `query`, in order. Stops early when
// `latest` says a newer search started.
std::vector<int> FindAll(const QString& text, const QString& query, bool* capped,
                         const std::atomic<std::uint64_t>* latest, std::uint64_t generation) {
  std::vector<int> out;
  *capped = false;
  qsizetype from = 0;
  while (true) {
    const qsizetype at = text.indexOf(query, from, Qt::CaseInsensitive);
    if (at < 0) break;
    out.push_back(static_cast<int>(at));
    if (out.size() >= kMaxMatches) {
      *capped = true;
      break;
    }
    if (latest != nullptr && (out.size() & 1023) == 0 && latest->load() != generation) break;
    from = at + query.size();
  }
  return out;
}

void PostToUi(std::function<void()> f) {
  if (QCoreApplication* app = QCoreApplication::instance()) {
    QMetaObject::invokeMethod(app, std::move(f), Qt::QueuedConnection);
  }
}

}  // namespace

QString ArtifactKindLabel(DumpFileKind kind) {
  switch (kind) {
    case DumpFileKind::kUnrecognized:
      return QStringLiteral("File");
    case DumpFileKind::kHloText:
      return QStringLiteral("HLO text");
    case DumpFileKind::kHloProto:
      return QStringLiteral("HLO proto");
    case DumpFileKind::kHloProtoGz:
      return QStringLiteral("HLO proto (gzip)");
    case DumpFileKind::kSnapshot:
      return QStringLiteral("HLO snapshot");
    case DumpFileKind::kUnoptimizedSnapshot:
      return QStringLiteral("Unoptimized snapshot");
    case DumpFileKind::kBufferAssignment:
      return QStringLiteral("Buffer assignment");
    case DumpFileKind::kBufferAssignmentValues:
      return QStringLiteral("Buffer values");
    case DumpFileKind::kLiveRange:
      return QStringLiteral("Live ranges");
    case DumpFileKind::kMemoryUsageReport:
      return QStringLiteral("Memory usage report");
    case DumpFileKind::kDot:
      return QStringLiteral("DOT graph");
    case DumpFileKind::kHtml:
      return QStringLiteral("HTML graph");
    case DumpFileKind::kUrl:
      return QStringLiteral("Graph URL");
    case DumpFileKind::kLlvmIr:
      return QStringLiteral("LLVM IR");
    case DumpFileKind::kPtx:
      return QStringLiteral("PTX");
    case DumpFileKind::kMlir:
      return QStringLiteral("MLIR");
    case DumpFileKind::kObjectFile:
      return QStringLiteral("Object file");
    case DumpFileKind::kThunkSequence:
      return QStringLiteral("Thunk sequence");
    case DumpFileKind::kDebugOptions:
      return QStringLiteral("Debug options");
    case DumpFileKind::kConfig:
      return QStringLiteral("Config");
    case DumpFileKind::kModuleMetadata:
      return QStringLiteral("Module metadata");
    case DumpFileKind::kAutotuneResults:
      return QStringLiteral("Autotune results");
    case DumpFileKind::kFusionVisualization:
      return QStringLiteral("Fusion visualization");
    case DumpFileKind::kCompileOptions:
      return QStringLiteral("Compile options");
    case DumpFileKind::kTopology:
      return QStringLiteral("Topology");
    case DumpFileKind::kOtherModuleFile:
      return QStringLiteral("Other file");
  }
  return QStringLiteral("File");
}

QString ArtifactTitle(const DumpFile& file, const DumpModule* module) {
  const QString label = ArtifactKindLabel(file.name.kind);
  QString rest = QString::fromStdString(file.path).section(QLatin1Char('/'), -1);
  if (!file.name.module_id_text.empty()) {
    // "module_0004.jit_f." before the part that tells the file apart. The module's own name is
    // preferred: a file's parsed name may include a kernel ("jit_f.fusion_kernel_module").
    const std::string& name = module != nullptr ? module->name : file.name.module_name;
    QString prefix =
        QStringLiteral("module_%1.").arg(QString::fromStdString(file.name.module_id_text));
    if (!name.empty()) prefix += QString::fromStdString(name) + QLatin1Char('.');
    const qsizetype at = rest.indexOf(prefix);
    if (at >= 0) rest = rest.mid(at + prefix.size());
  }
  // The recognised suffix says what the label says ("-buffer-assignment.txt"), except for any
  // dotted part before its extension (".top_level.html" keeps "top_level").
  QString suffix = QString::fromStdString(file.name.suffix);
  if (suffix.count(QLatin1Char('.')) > 1) suffix = suffix.mid(suffix.lastIndexOf(QLatin1Char('.')));
  if (!suffix.isEmpty() && rest.endsWith(suffix)) rest.chop(suffix.size());
  while (rest.startsWith(QLatin1Char('.')) || rest.startsWith(QLatin1Char('-'))) rest.remove(0, 1);
  // "debug_options", "topology": nothing the label does not say.
  if (QString(rest)
          .replace(QLatin1Char('_'), QLatin1Char(' '))
          .compare(label, Qt::CaseInsensitive) == 0) {
    rest.clear();
  }
  return rest.isEmpty() ? label : QStringLiteral("%1: %2").arg(label, rest);
}

struct ArtifactView::Loaded {
  ArtifactContent content;
};

ArtifactView::ArtifactView(QWidget* parent)
    : QWidget(parent),
      load_latest_(std::make_shared<std::atomic<std::uint64_t>>(0)),
      search_latest_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);

  auto* bar = new QWidget(this);
  bar->setObjectName(QStringLiteral("artifactSearchBar"));
  auto* bl = new QHBoxLayout(bar);
  bl->setContentsMargins(4, 2, 4, 2);
  auto* edit = new FindField(bar);
  search_ = edit;
  search_->setObjectName(QStringLiteral("artifactSearchField"));
  search_->setPlaceholderText(tr("Search (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  auto* prev = new QToolButton(bar);
  prev->setArrowType(Qt::UpArrow);
  prev->setAutoRaise(true);
  prev->setToolTip(tr("Previous match (Shift+Enter, Shift+F3)"));
  auto* next = new QToolButton(bar);
  next->setArrowType(Qt::DownArrow);
  next->setAutoRaise(true);
  next->setToolTip(tr("Next match (Enter, F3)"));
  search_status_ = new QLabel(bar);
  search_status_->setObjectName(QStringLiteral("artifactSearchStatus"));
  search_status_->setMinimumWidth(
      search_status_->fontMetrics().horizontalAdvance(QStringLiteral("000000 of 000000+")));
  bl->addWidget(search_, 1);
  bl->addWidget(prev);
  bl->addWidget(next);
  bl->addWidget(search_status_);
  layout->addWidget(bar);

  banner_ = new QLabel(this);
  banner_->setObjectName(QStringLiteral("artifactNote"));
  banner_->setWordWrap(true);
  banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  banner_->setContentsMargins(8, 4, 8, 4);
  banner_->setAutoFillBackground(true);
  banner_->hide();
  layout->addWidget(banner_);

  area_ = new ArtifactTextArea(this);
  layout->addWidget(area_, 1);
  setFocusProxy(area_);

  edit->find = [this](bool backwards) { backwards ? FindPrevious() : FindNext(); };
  edit->leave = [this] { area_->setFocus(Qt::ShortcutFocusReason); };
  connect(search_, &QLineEdit::textEdited, this, [this] { StartSearch(true); });
  // The clear button changes the text without an edit signal.
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
    if (text.isEmpty() && matches_) StartSearch(false);
  });
  connect(prev, &QToolButton::clicked, this, [this] { FindPrevious(); });
  connect(next, &QToolButton::clicked, this, [this] { FindNext(); });
  connect(area_, &ArtifactTextArea::linkActivated, this,
          [this](int position) { OnLinkActivated(position); });
  connect(area_, &ArtifactTextArea::findKeyPressed, this, [this](ArtifactTextArea::FindKey key) {
    if (key == ArtifactTextArea::FindKey::kOpen || search_->text().isEmpty()) {
      FocusSearch();
    } else if (key == ArtifactTextArea::FindKey::kNext) {
      FindNext();
    } else {
      FindPrevious();
    }
  });
  UpdateBanner();
  UpdateSearchStatus();
}

ArtifactView::~ArtifactView() {
  // Running loads and searches stop early or drop their results.
  load_latest_->store(~std::uint64_t{0});
  search_latest_->store(~std::uint64_t{0});
}

ArtifactSyntax ArtifactView::syntax() const { return area_->highlighter()->syntax(); }

const QString& ArtifactView::text() const { return area_->content().text; }

QString ArtifactView::Note() const { return error_.isEmpty() ? note_ : error_; }

void ArtifactView::SetMaxTextBytes(qint64 bytes) { max_text_bytes_ = std::max<qint64>(bytes, 1); }

void ArtifactView::OpenFile(const QString& path, DumpFileKind kind) {
  const std::uint64_t generation = ++generation_;
  path_ = path;
  kind_ = kind;
  loading_ = true;
  error_.clear();
  note_ = tr("Loading %1\u2026").arg(QFileInfo(path).fileName());
  binary_ = false;
  truncated_ = false;
  content_.reset();
  area_->SetContent(nullptr, ArtifactSyntax::kPlain);
  StartSearch(false);  // drops the old matches; the query is searched again once loaded
  UpdateBanner();
  ArtifactLoadOptions options;
  options.max_text_bytes = max_text_bytes_;
  load_latest_->store(generation);
  QPointer<ArtifactView> self(this);
  std::shared_ptr<const std::atomic<std::uint64_t>> latest = load_latest_;
  QThreadPool::globalInstance()->start([self, generation, path, kind, options, latest] {
    // A load that a newer one replaced is skipped, or dropped here rather than on the UI thread.
    if (latest->load() != generation) return;
    auto result = std::make_shared<Loaded>();
    result->content = LoadArtifact(path, kind, options);
    if (latest->load() != generation) return;
    PostToUi([self, generation, result] {
      if (self) self->FinishLoad(generation, result);
    });
  });
}

void ArtifactView::FinishLoad(std::uint64_t generation, const std::shared_ptr<Loaded>& result) {
  if (generation != generation_ || !loading_) return;  // replaced meanwhile
  loading_ = false;
  const ArtifactContent& c = result->content;
  error_ = c.error;
  note_ = c.note;
  binary_ = c.binary;
  truncated_ = c.truncated;
  content_ = c.text;
  area_->SetContent(content_, c.syntax);
  UpdateBanner();
  if (!search_->text().isEmpty()) StartSearch(true);
  emit loaded(error_.isEmpty());
}

void ArtifactView::Clear() {
  load_latest_->store(++generation_);
  loading_ = false;
  path_.clear();
  kind_ = DumpFileKind::kUnrecognized;
  error_.clear();
  note_.clear();
  binary_ = false;
  truncated_ = false;
  content_.reset();
  area_->SetContent(nullptr, ArtifactSyntax::kPlain);
  StartSearch(false);
  UpdateBanner();
}

void ArtifactView::SetModule(std::shared_ptr<const Module> module) {
  if (module == module_) return;
  const std::uint64_t generation = ++names_generation_;
  // The old index points into the old module: drop it before the module may go.
  area_->SetNames(nullptr);
  module_ = std::move(module);
  if (!module_) {
    emit linksReady();
    return;
  }
  if (module_->instruction_count() < kSyncNameIndexInstructions) {
    area_->SetNames(std::make_shared<const ArtifactNameIndex>(*module_));
    emit linksReady();
    return;
  }
  QPointer<ArtifactView> self(this);
  std::shared_ptr<const Module> m = module_;
  QThreadPool::globalInstance()->start([self, generation, m] {
    auto names = std::make_shared<const ArtifactNameIndex>(*m);
    PostToUi([self, generation, names, m] {
      if (!self || generation != self->names_generation_) return;
      self->area_->SetNames(names);
      emit self->linksReady();
    });
  });
}

QString ArtifactView::SearchText() const { return search_->text(); }

void ArtifactView::SetSearchText(const QString& query) {
  search_->setText(query);
  StartSearch(true);
}

void ArtifactView::StartSearch(bool select_first) {
  const std::uint64_t generation = ++search_generation_;
  search_latest_->store(generation);
  matches_.reset();
  matches_capped_ = false;
  current_match_ = -1;
  pending_step_ = 0;
  pending_select_ = select_first;
  area_->SetMatches(nullptr, 0, -1);
  const QString query = search_->text();
  if (query.isEmpty() || loading_ || !content_) {
    searching_ = false;
    UpdateSearchStatus();
    return;
  }
  std::shared_ptr<const ArtifactText> content = content_;
  if (content->text.size() <= kSyncSearchChars) {
    bool capped = false;
    auto matches = std::make_shared<const std::vector<int>>(
        FindAll(content->text, query, &capped, nullptr, generation));
    FinishSearch(generation, std::move(matches), capped, select_first);
    return;
  }
  searching_ = true;
  UpdateSearchStatus();
  QPointer<ArtifactView> self(this);
  std::shared_ptr<const std::atomic<std::uint64_t>> latest = search_latest_;
  QThreadPool::globalInstance()->start([self, generation, content, query, latest, select_first] {
    bool capped = false;
    auto matches = std::make_shared<const std::vector<int>>(
        FindAll(content->text, query, &capped, latest.get(), generation));
    if (latest->load() != generation) return;  // a newer search replaces this one
    PostToUi([self, generation, matches, capped, select_first] {
      if (self) self->FinishSearch(generation, matches, capped, select_first);
    });
  });
}

void ArtifactView::FinishSearch(std::uint64_t generation,
                                std::shared_ptr<const std::vector<int>> matches, bool capped,
                                bool select_first) {
  if (generation != search_generation_) return;
  searching_ = false;
  matches_ = std::move(matches);
  matches_capped_ = capped;
  const int step = std::exchange(pending_step_, 0);
  if (!matches_->empty() && (select_first || step != 0 || pending_select_)) {
    // From where the user is: typing on keeps a match that still matches.
    const int from = std::min(area_->CursorPosition(), area_->AnchorPosition());
    const int n = static_cast<int>(matches_->size());
    int index = static_cast<int>(std::lower_bound(matches_->begin(), matches_->end(), from) -
                                 matches_->begin());
    if (step < 0) index -= 1;
    SelectMatch(((index % n) + n) % n);
  } else {
    area_->SetMatches(matches_, static_cast<int>(search_->text().size()), -1);
  }
  pending_select_ = false;
  UpdateSearchStatus();
  emit searchFinished(static_cast<int>(matches_->size()));
}

void ArtifactView::SelectMatch(int index) {
  current_match_ = index;
  const int length = static_cast<int>(search_->text().size());
  const int start = (*matches_)[index];
  area_->SetMatches(matches_, length, index);
  area_->SelectRange(start, start + length);
  UpdateSearchStatus();
}

bool ArtifactView::FindNext() {
  if (search_->text().isEmpty()) return false;
  if (searching_) {
    pending_step_ = 1;
    return true;
  }
  if (!matches_ || matches_->empty()) return false;
  const int n = static_cast<int>(matches_->size());
  const int selection = std::min(area_->CursorPosition(), area_->AnchorPosition());
  int index;
  if (current_match_ >= 0 && (*matches_)[current_match_] == selection) {
    index = current_match_ + 1;
  } else {
    index = static_cast<int>(std::upper_bound(matches_->begin(), matches_->end(), selection) -
                             matches_->begin());
  }
  SelectMatch(index % n);
  return true;
}

bool ArtifactView::FindPrevious() {
  if (search_->text().isEmpty()) return false;
  if (searching_) {
    pending_step_ = -1;
    return true;
  }
  if (!matches_ || matches_->empty()) return false;
  const int n = static_cast<int>(matches_->size());
  const int selection = std::min(area_->CursorPosition(), area_->AnchorPosition());
  const int index =
      static_cast<int>(std::lower_bound(matches_->begin(), matches_->end(), selection) -
                       matches_->begin()) -
      1;
  SelectMatch((index + n) % n);
  return true;
}

int ArtifactView::MatchCount() const { return matches_ ? static_cast<int>(matches_->size()) : 0; }

QString ArtifactView::SearchStatus() const { return search_status_->text(); }

void ArtifactView::UpdateSearchStatus() {
  QString status;
  bool none = false;
  if (!search_->text().isEmpty()) {
    if (searching_ || loading_) {
      status = tr("Searching\u2026");
    } else if (!matches_ || matches_->empty()) {
      status = tr("No matches");
      none = matches_ != nullptr;
    } else {
      const QString total =
          QString::number(matches_->size()) + (matches_capped_ ? QStringLiteral("+") : QString());
      status = current_match_ >= 0 ? tr("%1 of %2").arg(current_match_ + 1).arg(total)
                                   : tr("%1 matches").arg(total);
    }
  }
  search_status_->setText(status);
  QPalette p = search_->palette();
  const QColor base = palette().color(QPalette::Base);
  p.setColor(QPalette::Base, none ? QColor::fromRgbF(static_cast<float>(base.redF()),
                                                     static_cast<float>(base.greenF() * 0.8),
                                                     static_cast<float>(base.blueF() * 0.8))
                                  : base);
  search_->setPalette(p);
}

void ArtifactView::UpdateBanner() {
  const QString text = Note();
  banner_->setVisible(!text.isEmpty());
  banner_->setText(text);
  QPalette p = banner_->palette();
  if (!error_.isEmpty()) {
    p.setColor(QPalette::Window, QColor(0xf8, 0xd7, 0xda));
    p.setColor(QPalette::WindowText, QColor(0x58, 0x15, 0x1c));
  } else {
    p.setColor(QPalette::Window, QColor(0xff, 0xf4, 0xce));
    p.setColor(QPalette::WindowText, QColor(0x3b, 0x2e, 0x00));
  }
  banner_->setPalette(p);
}

void ArtifactView::FocusSearch() {
  search_->setFocus(Qt::ShortcutFocusReason);
  search_->selectAll();
}

void ArtifactView::OnLinkActivated(int position) { ActivateLinkAt(position); }

bool ArtifactView::ActivateLinkAt(int position) {
  const std::optional<ArtifactLinkSpan> link = area_->LinkAt(position);
  if (!link) return false;
  const ArtifactLinkTarget& t = link->target;
  const QString computation =
      t.computation != nullptr ? QString::fromStdString(t.computation->name()) : QString();
  const QString instruction =
      t.instruction != nullptr ? QString::fromStdString(t.instruction->name()) : QString();
  emit instructionActivated(computation, instruction);
  return true;
}

QString ArtifactView::ToolTipAt(int position) const {
  const std::optional<ArtifactLinkSpan> link = area_->LinkAt(position);
  return link ? ArtifactLinkToolTip(link->target) : QString();
}

std::vector<QString> ArtifactView::LinkedNamesInView() const {
  std::vector<QString> names;
  const ArtifactText& t = area_->content();
  const int first = area_->FirstVisibleLine();
  const int last = std::min(t.LineCount() - 1, first + area_->VisibleLineCount() - 1);
  for (int line = first; line <= last; ++line) {
    for (const ArtifactLinkSpan& span : area_->LinksInLine(line)) {
      const QString name = t.text.mid(t.LineStart(line) + span.start, span.length);
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

void ArtifactView::ShowPosition(int position) {
  area_->EnsureVisible(position, true);
  area_->SetCursorPosition(position);
}

}  // namespace hlowb::viewer
