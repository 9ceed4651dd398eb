#include "viewer/text/artifact_loader.h"

#include <zlib.h>

#include <QByteArray>
#include <QFile>
#include <QFileInfo>
#include <algorithm>

namespace hlowb::viewer {
namespace {

constexpr qint64 kReadChunk = 256 * 1024;
// How much of the beginning decides whether a file is text.
constexpr qsizetype kSniffBytes = 8192;

// Makes '\n' the only line separator (CRLF becomes LF; a lone CR and Unicode line and paragraph
// separators become spaces) and NUL a visible symbol.
void Sanitize(QString* text) {
  if (text->contains(QLatin1Char('\r'))) text->replace(QLatin1String("\r\n"), QLatin1String("\n"));
  QChar* d = text->data();
  const qsizetype n = text->size();
  for (qsizetype i = 0; i < n; ++i) {
    const char16_t u = d[i].unicode();
    if (u == u'\r' || u == 0x2028 || u == 0x2029) {
      d[i] = QLatin1Char(' ');
    } else if (u == 0) {
      d[i] = QChar(0x2400);
    }
  }
}

// Text, or bytes that are not meant to be read as text: NUL bytes, many control characters or
// much invalid UTF-8 near the start.
bool LooksBinary(const QByteArray& data) {
  const qsizetype n = std::min(data.size(), kSniffBytes);
  if (n == 0) return false;
  qsizetype control = 0;
  for (qsizetype i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c == 0) return true;
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b) {
      ++control;
    }
  }
  if (control * 20 > n) return true;
  const QString head = QString::fromUtf8(data.constData(), n);
  const qsizetype bad = head.count(QChar(QChar::ReplacementCharacter));
  return bad > 4 && bad * 10 > head.size();
}

struct RawData {
  QByteArray bytes;
  bool more = false;  // the file holds more than `bytes`
  QString error;      // a read or decompression error (bytes may hold what came before it)
};

RawData ReadPlain(QFile& file, qint64 limit) {
  RawData r;
  r.bytes = file.read(limit + 1);
  if (r.bytes.isEmpty() && file.error() != QFileDevice::NoError) r.error = file.errorString();
  if (r.bytes.size() > limit) {
    r.more = true;
    r.bytes.truncate(limit);
  }
  return r;
}

// Inflates gzip (or zlib) data, several concatenated gzip members included, stopping once more
// than `limit` bytes came out. Bytes after the last member that start no new member are ignored.
RawData Inflate(QFile& file, qint64 limit) {
  RawData r;
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    r.error = QStringLiteral("zlib could not be initialized");
    return r;
  }
  QByteArray in(kReadChunk, Qt::Uninitialized);
  QByteArray& out = r.bytes;
  qint64 produced = 0;
  bool member_ended = false;
  while (true) {
    if (zs.avail_in == 0) {
      const qint64 got = file.read(in.data(), in.size());
      if (got < 0) {
        r.error = file.errorString();
        break;
      }
      if (got == 0) {
        if (!member_ended) r.error = QStringLiteral("the compressed data ends early");
        break;
      }
      zs.next_in = reinterpret_cast<Bytef*>(in.data());
      zs.avail_in = static_cast<uInt>(got);
    }
    if (member_ended) {
      if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b) break;
      if (inflateReset(&zs) != Z_OK) break;
      member_ended = false;
    }
    if (out.size() - produced < kReadChunk) {
      out.resize(std::max<qint64>(out.size() * 2, produced + kReadChunk));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out.size() - produced);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    produced = reinterpret_cast<char*>(zs.next_out) - out.data();
    if (rc == Z_STREAM_END) {
      member_ended = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      r.error = zs.msg != nullptr ? QString::fromLatin1(zs.msg)
                                  : QStringLiteral("the compressed data is damaged");
      break;
    }
    if (produced > limit) {
      r.more = true;
      break;
    }
  }
  inflateEnd(&zs);
  out.truncate(std::min(produced, limit));
  return r;
}

QString HexDump(const QByteArray& data, qsizetype count) {
  static const char kHex[] = "0123456789abcdef";
  QString out;
  out.reserve((count / 16 + 1) * 80);
  for (qsizetype row = 0; row < count; row += 16) {
    const auto offset = static_cast<quint32>(row);
    for (int shift = 28; shift >= 0; shift -= 4) out += QLatin1Char(kHex[(offset >> shift) & 15]);
    out += QLatin1String("  ");
    for (qsizetype i = row; i < row + 16; ++i) {
      if (i < count) {
        const auto b = static_cast<unsigned char>(data[i]);
        out += QLatin1Char(kHex[b >> 4]);
        out += QLatin1Char(kHex[b & 15]);
        out += QLatin1Char(' ');
      } else {
        out += QLatin1String("   ");
      }
      if (i == row + 7) out += QLatin1Char(' ');
    }
    out += QLatin1String(" |");
    for (qsizetype i = row; i < std::min(row + 16, count); ++i) {
      const auto b = static_cast<unsigned char>(data[i]);
      out += b >= 0x20 && b < 0x7f ? QLatin1Char(static_cast<char>(b)) : QLatin1Char('.');
    }
    out += QLatin1Char('|');
    if (row + 16 < count) out += QLatin1Char('\n');
  }
  return out;
}

QString BinaryWhat(const QByteArray& data, DumpFileKind kind, const QString& name) {
  if (data.startsWith("\x7f"
                      "ELF"))
    return QStringLiteral("an ELF object file");
  if (kind == DumpFileKind::kObjectFile) return QStringLiteral("an object file");
  QString stem = name;
  if (stem.endsWith(QLatin1String(".gz"))) stem.chop(3);
  if (stem.endsWith(QLatin1String(".pb")) || kind == DumpFileKind::kHloProto ||
      kind == DumpFileKind::kHloProtoGz || kind == DumpFileKind::kSnapshot ||
      kind == DumpFileKind::kUnoptimizedSnapshot) {
    return QStringLiteral("a binary protocol buffer");
  }
  return QStringLiteral("binary data");
}

QString WithThousands(qint64 n) {
  QString digits = QString::number(n);
  for (qsizetype i = digits.size() - 3; i > 0; i -= 3) digits.insert(i, QLatin1Char(','));
  return digits;
}

}  // namespace

int ArtifactText::LineEnd(int line) const {
  const int count = LineCount();
  if (line + 1 >= count) return static_cast<int>(text.size());
  const int next = line_starts[line + 1];
  return next > 0 && text[next - 1] == u'\n' ? next - 1 : next;
}

int ArtifactText::LineOf(int position) const {
  auto it = std::upper_bound(line_starts.begin(), line_starts.end(), position);
  return std::max(0, static_cast<int>(it - line_starts.begin()) - 1);
}

std::shared_ptr<ArtifactText> ArtifactText::Make(QString text) {
  auto t = std::make_shared<ArtifactText>();
  t->text = std::move(text);
  t->line_starts.clear();
  const QChar* d = t->text.constData();
  const int n = static_cast<int>(t->text.size());
  t->line_starts.reserve(static_cast<size_t>(n / 48 + 1));
  int source = 1;
  int start = 0;
  while (true) {
    int end = start;
    while (end < n && d[end] != u'\n') ++end;
    int pos = start;
    do {
      int piece_end = std::min(end, pos + kMaxArtifactLineChars);
      if (piece_end < end && piece_end > pos + 1 && d[piece_end].isLowSurrogate()) --piece_end;
      if (pos > start && t->source_lines.empty()) {
        // The first split line: from here on, display lines and source lines differ.
        t->source_lines.reserve(t->line_starts.capacity());
        for (size_t i = 0; i < t->line_starts.size(); ++i) {
          t->source_lines.push_back(static_cast<int>(i) + 1);
        }
      }
      t->line_starts.push_back(pos);
      if (!t->source_lines.empty() && t->source_lines.size() < t->line_starts.size()) {
        t->source_lines.push_back(pos == start ? source : 0);
      }
      int columns = 0;
      for (int i = pos; i < piece_end; ++i) {
        columns =
            d[i] == u'\t' ? (columns / kArtifactTabWidth + 1) * kArtifactTabWidth : columns + 1;
      }
      t->max_columns = std::max(t->max_columns, columns);
      pos = piece_end;
    } while (pos < end);
    if (end >= n) break;
    start = end + 1;
    ++source;
  }
  return t;
}

QString FormatArtifactBytes(qint64 bytes) {
  if (bytes < 1024)
    return bytes == 1 ? QStringLiteral("1 byte") : QStringLiteral("%1 bytes").arg(bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return QStringLiteral("%1 %2").arg(v, 0, 'f', 1).arg(QLatin1String(units[u]));
}

ArtifactContent LoadArtifact(const QString& path, DumpFileKind kind,
                             const ArtifactLoadOptions& options) {
  ArtifactContent c;
  c.text = std::make_shared<ArtifactText>();
  const QFileInfo info(path);
  const QString name = info.fileName();
  if (!info.exists()) {
    c.error = QStringLiteral("Cannot open %1: the file does not exist.").arg(path);
    return c;
  }
  if (info.isDir()) {
    c.error = QStringLiteral("Cannot open %1: it is a directory.").arg(path);
    return c;
  }
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    c.error = QStringLiteral("Cannot open %1: %2.").arg(path, file.errorString());
    return c;
  }
  c.file_bytes = info.size();
  const qint64 limit = std::max<qint64>(options.max_text_bytes, 1);
  const QByteArray magic = file.peek(2);
  c.compressed = magic.size() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                 static_cast<unsigned char>(magic[1]) == 0x8b;
  RawData raw = c.compressed ? Inflate(file, limit) : ReadPlain(file, limit);
  if (!raw.error.isEmpty() && raw.bytes.isEmpty()) {
    c.error = c.compressed ? QStringLiteral("Cannot decompress %1: %2.").arg(path, raw.error)
                           : QStringLiteral("Cannot read %1: %2.").arg(path, raw.error);
    return c;
  }
  QStringList notes;
  if (kind == DumpFileKind::kObjectFile || LooksBinary(raw.bytes)) {
    const qsizetype shown = std::min<qsizetype>(raw.bytes.size(), kArtifactHexDumpBytes);
    c.binary = true;
    c.syntax = ArtifactSyntax::kHexDump;
    const QString size =
        c.compressed && !raw.more
            ? QStringLiteral("%1 bytes decompressed").arg(WithThousands(raw.bytes.size()))
            : QStringLiteral("%1 bytes").arg(WithThousands(c.file_bytes));
    notes << QStringLiteral("Binary file (%1, %2): showing a hex dump of the first %3 bytes.")
                 .arg(BinaryWhat(raw.bytes, kind, name), size, WithThousands(shown));
    c.text = ArtifactText::Make(HexDump(raw.bytes, shown));
    c.note = notes.join(QLatin1Char('\n'));
    return c;
  }
  if (raw.more) {
    // Cut at a line end so that no line (or UTF-8 sequence) is shown in part.
    const qsizetype cut = raw.bytes.lastIndexOf('\n');
    if (cut > 0) raw.bytes.truncate(cut + 1);
    c.truncated = true;
    notes << (c.compressed
                  ? QStringLiteral("Showing the first %1 of the decompressed text; the file holds "
                                   "more, which is not loaded.")
                        .arg(FormatArtifactBytes(raw.bytes.size()))
                  : QStringLiteral(
                        "Showing the first %1 of %2; the rest of the file is not loaded.")
                        .arg(FormatArtifactBytes(raw.bytes.size()),
                             FormatArtifactBytes(c.file_bytes)));
  }
  if (!raw.error.isEmpty()) {
    notes << QStringLiteral("The file is damaged after %1 (%2); showing what could be read.")
                 .arg(FormatArtifactBytes(raw.bytes.size()), raw.error);
  }
  if (c.compressed) {
    notes << QStringLiteral("Decompressed from gzip (%1 on disk).")
                 .arg(FormatArtifactBytes(c.file_bytes));
  }
  if (raw.bytes.isEmpty()) notes << QStringLiteral("The file is empty.");
  QString text = QString::fromUtf8(raw.bytes);
  raw.bytes = QByteArray();
  Sanitize(&text);
  c.syntax = ArtifactSyntaxFor(kind, name, QStringView(text).left(512));
  c.text = ArtifactText::Make(std::move(text));
  if (!c.text->source_lines.empty()) {
    c.split_lines = true;
    notes << QStringLiteral("Lines longer than %1 characters are shown in pieces.")
                 .arg(WithThousands(kMaxArtifactLineChars));
  }
  c.note = notes.join(QLatin1Char('\n'));
  return c;
}

}  // namespace hlowb::viewer
