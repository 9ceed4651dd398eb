#include "viewer/text/artifact_names.h"

#include <algorithm>
#include <string>

#include "core/text/printer.h"

namespace hlowb::viewer {
namespace {

bool IsIdentifierChar(char16_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The longest HLO text a tooltip shows.
constexpr int kMaxToolTipText = 400;

}  // namespace

QString SanitizeArtifactName(QStringView name) {
  QString out = name.toString();
  for (QChar& c : out) {
    if (!IsIdentifierChar(c.unicode())) c = QLatin1Char('_');
  }
  return out;
}

ArtifactNameIndex::ArtifactNameIndex(const Module& module) {
  auto add_plain = [this](const std::string& name, const ArtifactLinkTarget& target) {
    if (name.empty()) return;
    const QString key = QString::fromStdString(name);
    if (plain_.contains(key)) return;
    plain_.insert(key, static_cast<int>(targets_.size()));
    targets_.push_back(target);
  };
  // Instructions first: they win over a computation of the same name.
  for (const auto& computation : module.computations()) {
    for (const Instruction* instruction : computation->instructions()) {
      add_plain(instruction->name(), ArtifactLinkTarget{instruction, computation.get()});
    }
  }
  for (const auto& computation : module.computations()) {
    add_plain(computation->name(), ArtifactLinkTarget{nullptr, computation.get()});
  }
  // Sanitizing keeps the length, so these bounds hold for both maps.
  for (auto it = plain_.cbegin(); it != plain_.cend(); ++it) {
    const int length = static_cast<int>(it.key().size());
    min_length_ = min_length_ == 0 ? length : std::min(min_length_, length);
    max_length_ = std::max(max_length_, length);
  }
  // Sanitized forms, in module order: the first name of a form keeps it, and a form that is
  // itself a plain name is found by the plain lookup first anyway.
  for (int i = 0; i < static_cast<int>(targets_.size()); ++i) {
    const ArtifactLinkTarget& t = targets_[i];
    const std::string& name =
        t.instruction != nullptr ? t.instruction->name() : t.computation->name();
    const QString key = SanitizeArtifactName(QString::fromStdString(name));
    if (!sanitized_.contains(key)) sanitized_.insert(key, i);
  }
}

const ArtifactLinkTarget* ArtifactNameIndex::Lookup(QStringView token) const {
  if (token.size() < min_length_ || token.size() > max_length_ || targets_.empty()) return nullptr;
  const QString key = token.toString();
  auto plain = plain_.constFind(key);
  if (plain != plain_.cend()) return &targets_[plain.value()];
  auto sanitized = sanitized_.constFind(key);
  if (sanitized != sanitized_.cend()) return &targets_[sanitized.value()];
  return nullptr;
}

const ArtifactLinkTarget* ArtifactNameIndex::Find(QStringView token) const { return Lookup(token); }

const ArtifactLinkTarget* ArtifactNameIndex::FindAllowingSuffix(QStringView token) const {
  if (const ArtifactLinkTarget* t = Lookup(token)) return t;
  QStringView rest = token;
  for (int parts = 0; parts < 2; ++parts) {
    qsizetype cut = -1;
    for (qsizetype i = rest.size() - 1; i > 0; --i) {
      if (rest[i] == u'.' || rest[i] == u'_') {
        cut = i;
        break;
      }
    }
    if (cut < 2) return nullptr;
    rest = rest.left(cut);
    if (const ArtifactLinkTarget* t = Lookup(rest)) return t;
  }
  return nullptr;
}

QString ArtifactLinkToolTip(const ArtifactLinkTarget& target) {
  if (target.instruction != nullptr) {
    PrintOptions options = PrintOptions::Short();
    options.print_metadata = false;
    options.print_backend_config = false;
    QString text = QString::fromStdString(PrintInstruction(*target.instruction, options));
    if (text.size() > kMaxToolTipText) text = text.left(kMaxToolTipText) + QChar(0x2026);
    const QString where =
        target.computation != nullptr
            ? QStringLiteral(" (in %1)").arg(QString::fromStdString(target.computation->name()))
            : QString();
    return QStringLiteral("%1%2\n%3\nClick to select it in the module.")
        .arg(QString::fromStdString(target.instruction->name()), where, text);
  }
  if (target.computation != nullptr) {
    const int n = target.computation->instruction_count();
    return QStringLiteral("computation %1 (%2 instruction%3)\nClick to select it in the module.")
        .arg(QString::fromStdString(target.computation->name()))
        .arg(n)
        .arg(n == 1 ? QString() : QStringLiteral("s"));
  }
  return QString();
}

}  // namespace hlowb::viewer
