#include "viewer/text/artifact_highlighter.h"

#include <QColor>
#include <QFont>
#include <QTextBlock>
#include <QTextDocument>
#include <algorithm>
#include <initializer_list>
#include <string>

#include "core/ir/primitive_type.h"

namespace hlowb::viewer {
namespace {

using Token = ArtifactHighlighter::Token;

bool IsDigit(QChar c) { return c.unicode() >= '0' && c.unicode() <= '9'; }
bool IsAlpha(QChar c) {
  const char16_t u = c.unicode();
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
}
bool IsHexDigit(QChar c) {
  const char16_t u = c.unicode();
  return IsDigit(c) || (u >= 'a' && u <= 'f') || (u >= 'A' && u <= 'F');
}
bool IsIdentStart(QChar c) { return IsAlpha(c) || c == u'_'; }
bool IsIdentChar(QChar c) { return IsAlpha(c) || IsDigit(c) || c == u'_'; }
bool IsSpace(QChar c) { return c == u' ' || c == u'\t'; }
// Characters of an HLO name ("fusion.3", "all-reduce-start.1").
bool IsHloNameChar(QChar c) { return IsIdentChar(c) || c == u'.' || c == u'-'; }
// Characters of an LLVM IR name after its sigil.
bool IsLlvmNameChar(QChar c) { return IsIdentChar(c) || c == u'.' || c == u'$' || c == u'-'; }

// A sorted list of words, looked up without allocating.
class WordSet {
 public:
  WordSet(std::initializer_list<const char*> words) {
    for (const char* w : words) words_.push_back(QString::fromLatin1(w));
    std::sort(words_.begin(), words_.end());
  }
  bool Contains(QStringView word) const {
    auto it = std::lower_bound(words_.begin(), words_.end(), word,
                               [](const QString& a, QStringView b) { return QStringView(a) < b; });
    return it != words_.end() && QStringView(*it) == word;
  }

 private:
  std::vector<QString> words_;
};

const WordSet& LlvmKeywords() {
  static const WordSet words{"define",
                             "declare",
                             "global",
                             "constant",
                             "private",
                             "internal",
                             "external",
                             "linkonce",
                             "linkonce_odr",
                             "weak",
                             "weak_odr",
                             "common",
                             "appending",
                             "extern_weak",
                             "available_externally",
                             "dso_local",
                             "dso_preemptable",
                             "hidden",
                             "protected",
                             "default",
                             "unnamed_addr",
                             "local_unnamed_addr",
                             "target",
                             "datalayout",
                             "triple",
                             "source_filename",
                             "attributes",
                             "type",
                             "align",
                             "to",
                             "nsw",
                             "nuw",
                             "exact",
                             "inbounds",
                             "nnan",
                             "ninf",
                             "nsz",
                             "arcp",
                             "contract",
                             "afn",
                             "reassoc",
                             "fast",
                             "noalias",
                             "nocapture",
                             "readonly",
                             "readnone",
                             "writeonly",
                             "nonnull",
                             "dereferenceable",
                             "dereferenceable_or_null",
                             "noundef",
                             "zeroext",
                             "signext",
                             "inreg",
                             "byval",
                             "sret",
                             "returned",
                             "nest",
                             "immarg",
                             "tail",
                             "musttail",
                             "notail",
                             "volatile",
                             "atomic",
                             "unordered",
                             "monotonic",
                             "acquire",
                             "release",
                             "acq_rel",
                             "seq_cst",
                             "syncscope",
                             "section",
                             "comdat",
                             "personality",
                             "uwtable",
                             "nounwind",
                             "true",
                             "false",
                             "null",
                             "undef",
                             "poison",
                             "zeroinitializer",
                             "addrspace",
                             "eq",
                             "ne",
                             "ugt",
                             "uge",
                             "ult",
                             "ule",
                             "sgt",
                             "sge",
                             "slt",
                             "sle",
                             "oeq",
                             "ogt",
                             "oge",
                             "olt",
                             "ole",
                             "one",
                             "ord",
                             "ueq",
                             "une",
                             "uno",
                             "distinct",
                             "disjoint",
                             "nneg",
                             "thread_local",
                             "externally_initialized",
                             "alwaysinline",
                             "noinline",
                             "gc",
                             "prefix",
                             "prologue",
                             "ptx_kernel",
                             "fastcc",
                             "ccc",
                             "coldcc",
                             "inrange",
                             "samesign"};
  return words;
}

const WordSet& LlvmInstructions() {
  static const WordSet words{"ret",
                             "br",
                             "switch",
                             "indirectbr",
                             "invoke",
                             "resume",
                             "unreachable",
                             "fneg",
                             "add",
                             "fadd",
                             "sub",
                             "fsub",
                             "mul",
                             "fmul",
                             "udiv",
                             "sdiv",
                             "fdiv",
                             "urem",
                             "srem",
                             "frem",
                             "shl",
                             "lshr",
                             "ashr",
                             "and",
                             "or",
                             "xor",
                             "extractelement",
                             "insertelement",
                             "shufflevector",
                             "extractvalue",
                             "insertvalue",
                             "alloca",
                             "load",
                             "store",
                             "fence",
                             "cmpxchg",
                             "atomicrmw",
                             "getelementptr",
                             "trunc",
                             "zext",
                             "sext",
                             "fptrunc",
                             "fpext",
                             "fptoui",
                             "fptosi",
                             "uitofp",
                             "sitofp",
                             "ptrtoint",
                             "inttoptr",
                             "bitcast",
                             "addrspacecast",
                             "icmp",
                             "fcmp",
                             "phi",
                             "select",
                             "freeze",
                             "call",
                             "va_arg",
                             "landingpad",
                             "catchpad",
                             "cleanuppad",
                             "callbr"};
  return words;
}

const WordSet& LlvmTypes() {
  static const WordSet words{"void",     "half",     "bfloat",    "float",   "double",
                             "fp128",    "x86_fp80", "ppc_fp128", "x86_amx", "label",
                             "metadata", "token",    "ptr",       "opaque"};
  return words;
}

bool IsLlvmType(QStringView word) {
  if (LlvmTypes().Contains(word)) return true;
  if (word.size() < 2 || word[0] != u'i') return false;
  return std::all_of(word.begin() + 1, word.end(), [](QChar c) { return IsDigit(c); });
}

const WordSet& MlirKeywords() {
  static const WordSet words{"module",  "func",           "return",     "attributes", "loc",
                             "dense",   "public",         "private",    "nested",     "to",
                             "applies", "across",         "dimensions", "unknown",    "callsite",
                             "at",      "init",           "dims",       "true",       "false",
                             "unit",    "affine_map",     "affine_set", "fused",      "array",
                             "sparse",  "dense_resource", "step",       "iter_args",  "cond",
                             "do",      "else",           "then",       "inf",        "nan"};
  return words;
}

bool IsMlirType(QStringView word) {
  static const WordSet types{"tensor", "memref", "vector", "tuple", "complex",
                             "index",  "none",   "f16",    "f32",   "f64",
                             "f80",    "f128",   "bf16",   "tf32",  "token"};
  if (types.Contains(word)) return true;
  auto int_type = [](QStringView w) {
    if (w.size() < 2 || w[0] != u'i') return false;
    return std::all_of(w.begin() + 1, w.end(), [](QChar c) { return IsDigit(c); });
  };
  if (int_type(word)) return true;
  if ((word.startsWith(u"si") || word.startsWith(u"ui")) && int_type(word.mid(1))) return true;
  // Small floats: f8E4M3FN, f8E5M2, f6E3M2FN, f4E2M1FN.
  return word.size() > 3 && word[0] == u'f' && IsDigit(word[1]) && word[2] == u'E';
}

const WordSet& ReportKeywords() {
  static const WordSet words{"parameter",    "output",   "maybe-live-out",
                             "thread-local", "constant", "preallocated-temp",
                             "live-out",     "tuple"};
  return words;
}

const WordSet& DotKeywords() {
  static const WordSet words{"digraph", "graph", "subgraph", "node", "edge", "strict"};
  return words;
}

bool IsPrimitiveTypeName(QStringView word) {
  if (word.isEmpty() || word.size() > 16) return false;
  return ParsePrimitiveType(word.toString().toStdString()).has_value();
}

// Tokens of one line, recorded as format ranges.
class Scanner {
 public:
  Scanner(QStringView s, const QTextCharFormat* formats, QList<QTextLayout::FormatRange>* out)
      : s(s),
        n(static_cast<int>(s.size())),
        limit(std::min(n, kMaxArtifactHighlightColumn)),
        formats_(formats),
        out_(out) {}

  QChar At(int i) const { return i >= 0 && i < n ? s[i] : QChar(); }
  void Add(Token token, int start, int end) {
    if (out_ == nullptr || end <= start) return;
    QTextLayout::FormatRange range;
    range.start = start;
    range.length = end - start;
    range.format = formats_[static_cast<int>(token)];
    out_->append(range);
  }
  // A /* */ comment from `start` whose "*/" is looked for from `from` (past the "/*", or 0 on a
  // line that continues one): marks it and returns the index past "*/", or -1 when it runs on
  // past the line's end (all of the rest marked).
  int BlockComment(int start, int from) {
    const int end = static_cast<int>(s.indexOf(u"*/", from));
    if (end < 0) {
      Add(Token::kComment, start, n);
      return -1;
    }
    Add(Token::kComment, start, end + 2);
    return end + 2;
  }
  // From an opening quote, the index just past its closing quote (or the line's end).
  int SkipString(int i) const {
    const QChar quote = s[i];
    int j = i + 1;
    while (j < n && s[j] != quote) j += s[j] == u'\\' ? 2 : 1;
    return std::min(j + 1, n);
  }
  template <typename Pred>
  int SkipWhile(int i, Pred pred) const {
    while (i < n && pred(s[i])) ++i;
    return i;
  }
  int SkipSpaces(int i) const { return SkipWhile(i, IsSpace); }
  // A decimal, float or 0x hex number starting at a digit.
  int ScanNumber(int i) const {
    if (At(i) == u'0' && (At(i + 1) == u'x' || At(i + 1) == u'X') && IsHexDigit(At(i + 2))) {
      return SkipWhile(i + 2, [](QChar c) { return IsHexDigit(c) || c == u'_'; });
    }
    int j = SkipWhile(i, IsDigit);
    if (At(j) == u'.' && IsDigit(At(j + 1))) j = SkipWhile(j + 1, IsDigit);
    if ((At(j) == u'e' || At(j) == u'E') &&
        (IsDigit(At(j + 1)) || ((At(j + 1) == u'+' || At(j + 1) == u'-') && IsDigit(At(j + 2))))) {
      j = SkipWhile(j + 2, IsDigit);
    }
    return j;
  }
  // A number may start here: a digit not glued to a word before it.
  bool NumberStart(int i) const {
    const QChar c = At(i);
    const bool digit = IsDigit(c) || ((c == u'-' || c == u'+') && IsDigit(At(i + 1)));
    return digit && !IsIdentChar(At(i - 1)) && At(i - 1) != u'.';
  }
  // An HLO shape from its element type: f32[8,16]{1,0}. Returns the end, or -1.
  int ScanShape(int i, int word_end) const {
    if (At(word_end) != u'[' || !IsPrimitiveTypeName(s.mid(i, word_end - i))) return -1;
    int j = SkipBalanced(word_end, u'[', u']');
    if (At(j) == u'{') j = SkipBalanced(j, u'{', u'}');
    return j;
  }
  int SkipBalanced(int i, QChar open, QChar close) const {
    int depth = 0;
    for (; i < n; ++i) {
      if (s[i] == open) {
        ++depth;
      } else if (s[i] == close && --depth == 0) {
        return i + 1;
      }
    }
    return n;
  }

  const QStringView s;
  const int n;
  const int limit;

 private:
  const QTextCharFormat* formats_;
  QList<QTextLayout::FormatRange>* out_;
};

void HighlightLlvm(Scanner& sc) {
  const QStringView s = sc.s;
  int i = 0;
  // A basic-block label starts the line: "7:" or "entry:".
  if (sc.n > 0 && IsLlvmNameChar(s[0])) {
    const int j = sc.SkipWhile(0, IsLlvmNameChar);
    if (sc.At(j) == u':') {
      sc.Add(Token::kLabel, 0, j + 1);
      i = j + 1;
    }
  }
  while (i < sc.limit) {
    const QChar c = s[i];
    if (c == u';') {
      sc.Add(Token::kComment, i, sc.n);
      return;
    }
    if (c == u'"') {
      const int j = sc.SkipString(i);
      sc.Add(Token::kString, i, j);
      i = j;
    } else if (c == u'@' || c == u'%') {
      const int j =
          sc.At(i + 1) == u'"' ? sc.SkipString(i + 1) : sc.SkipWhile(i + 1, IsLlvmNameChar);
      sc.Add(c == u'@' ? Token::kGlobal : Token::kLocal, i, j);
      i = std::max(j, i + 1);
    } else if (c == u'!') {
      const int j =
          sc.At(i + 1) == u'"' ? sc.SkipString(i + 1) : sc.SkipWhile(i + 1, IsLlvmNameChar);
      sc.Add(Token::kMetadata, i, std::max(j, i + 1));
      i = std::max(j, i + 1);
    } else if (c == u'#' && IsDigit(sc.At(i + 1))) {
      const int j = sc.SkipWhile(i + 1, IsDigit);
      sc.Add(Token::kAttribute, i, j);
      i = j;
    } else if (sc.NumberStart(i)) {
      const int j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
      sc.Add(Token::kNumber, i, j);
      i = j;
    } else if (IsIdentStart(c) && !IsLlvmNameChar(sc.At(i - 1))) {
      const int j = sc.SkipWhile(i, [](QChar ch) { return IsIdentChar(ch) || ch == u'.'; });
      const QStringView word = s.mid(i, j - i);
      if (LlvmKeywords().Contains(word)) {
        sc.Add(Token::kKeyword, i, j);
      } else if (LlvmInstructions().Contains(word)) {
        sc.Add(Token::kInstruction, i, j);
      } else if (IsLlvmType(word)) {
        sc.Add(Token::kType, i, j);
      }
      i = j;
    } else {
      ++i;
    }
  }
}

// State bit 1: inside a /* */ comment.
int HighlightPtx(Scanner& sc, int state) {
  const QStringView s = sc.s;
  int i = 0;
  if (state & 1) {
    i = sc.BlockComment(0, 0);
    if (i < 0) return 1;
  }
  bool statement_start = true;  // the next word is an opcode
  while (i < sc.limit) {
    const QChar c = s[i];
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    if (c == u'/' && sc.At(i + 1) == u'/') {
      sc.Add(Token::kComment, i, sc.n);
      return 0;
    }
    if (c == u'/' && sc.At(i + 1) == u'*') {
      i = sc.BlockComment(i, i + 2);
      if (i < 0) return 1;
      continue;
    }
    if (c == u'"') {
      const int j = sc.SkipString(i);
      sc.Add(Token::kString, i, j);
      i = j;
      statement_start = false;
    } else if (c == u'.' && IsIdentStart(sc.At(i + 1))) {
      const int j = sc.SkipWhile(i + 1, IsIdentChar);
      sc.Add(Token::kDirective, i, j);
      i = j;
      statement_start = false;
    } else if (c == u'%') {
      // A register, with a special register's component: %r12, %rd3, %tid.x.
      int j = sc.SkipWhile(i + 1, [](QChar ch) { return IsIdentChar(ch) || ch == u'$'; });
      if (sc.At(j) == u'.' && IsAlpha(sc.At(j + 1))) j = sc.SkipWhile(j + 1, IsIdentChar);
      sc.Add(Token::kLocal, i, j);
      i = std::max(j, i + 1);
      statement_start = false;
    } else if (c == u'@') {
      // A predicate guard: @%p1 or @!%p1. The opcode follows.
      int j = i + 1;
      if (sc.At(j) == u'!') ++j;
      if (sc.At(j) == u'%') j = sc.SkipWhile(j + 1, IsIdentChar);
      sc.Add(Token::kAttribute, i, j);
      i = j;
    } else if (sc.NumberStart(i)) {
      int j;
      if (c == u'0' &&
          (sc.At(i + 1) == u'f' || sc.At(i + 1) == u'F' || sc.At(i + 1) == u'd' ||
           sc.At(i + 1) == u'D') &&
          IsHexDigit(sc.At(i + 2))) {
        j = sc.SkipWhile(i + 2, IsHexDigit);  // a float as hex bits: 0f3F800000
      } else {
        j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
      }
      sc.Add(Token::kNumber, i, j);
      i = j;
      statement_start = false;
    } else if (IsIdentStart(c) || c == u'$') {
      int j = sc.SkipWhile(i + 1, [](QChar ch) { return IsIdentChar(ch) || ch == u'$'; });
      if (sc.At(j) == u':' && statement_start) {
        sc.Add(Token::kLabel, i, j + 1);
        i = j + 1;
        continue;
      }
      if (c == u'$') {
        sc.Add(Token::kLabel, i, j);
      } else if (statement_start) {
        while (sc.At(j) == u'.' && IsIdentChar(sc.At(j + 1))) j = sc.SkipWhile(j + 1, IsIdentChar);
        sc.Add(Token::kInstruction, i, j);
      }
      i = j;
      statement_start = false;
    } else {
      statement_start = c == u';' || c == u'{' || c == u'}';
      ++i;
    }
  }
  return 0;
}

void HighlightMlir(Scanner& sc) {
  const QStringView s = sc.s;
  int i = 0;
  auto symbol_char = [](QChar ch) {
    return IsIdentChar(ch) || ch == u'.' || ch == u'$' || ch == u'-';
  };
  while (i < sc.limit) {
    const QChar c = s[i];
    if (c == u'/' && sc.At(i + 1) == u'/') {
      sc.Add(Token::kComment, i, sc.n);
      return;
    }
    int j = i + 1;
    if (c == u'"') {
      j = sc.SkipString(i);
      sc.Add(Token::kString, i, j);
    } else if (c == u'%') {
      j = sc.SkipWhile(i + 1, symbol_char);
      if (sc.At(j) == u'#' && IsDigit(sc.At(j + 1))) j = sc.SkipWhile(j + 1, IsDigit);
      sc.Add(Token::kLocal, i, j);
    } else if (c == u'^') {
      j = sc.SkipWhile(i + 1, symbol_char);
      sc.Add(Token::kLabel, i, j);
    } else if (c == u'@') {
      j = sc.At(i + 1) == u'"' ? sc.SkipString(i + 1) : sc.SkipWhile(i + 1, symbol_char);
      sc.Add(Token::kGlobal, i, j);
    } else if (c == u'#' || c == u'!') {
      j = sc.SkipWhile(i + 1, [](QChar ch) { return IsIdentChar(ch) || ch == u'.'; });
      sc.Add(c == u'#' ? Token::kAttribute : Token::kType, i, j);
    } else if (sc.NumberStart(i)) {
      // Dimensions run into the element type: 8x16xf32, ?x4xi1.
      j = sc.SkipWhile(i, IsDigit);
      bool shape = false;
      while (IsDigit(c) && sc.At(j) == u'x') {
        if (IsDigit(sc.At(j + 1))) {
          j = sc.SkipWhile(j + 1, IsDigit);
        } else if (sc.At(j + 1) == u'?') {
          j += 2;
        } else if (IsAlpha(sc.At(j + 1))) {
          j = sc.SkipWhile(j + 1, IsIdentChar);
          shape = true;
          break;
        } else {
          break;
        }
      }
      if (shape) {
        sc.Add(Token::kType, i, j);
      } else {
        j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
        sc.Add(Token::kNumber, i, j);
      }
    } else if (IsIdentStart(c) && !symbol_char(sc.At(i - 1))) {
      j = sc.SkipWhile(i, [](QChar ch) { return IsIdentChar(ch) || ch == u'.' || ch == u'$'; });
      const QStringView word = s.mid(i, j - i);
      const int k = sc.SkipSpaces(j);
      if (sc.At(k) == u'=' && sc.At(k + 1) != u'=') {
        sc.Add(Token::kAttribute, i, j);
      } else if (word.contains(u'.')) {
        sc.Add(Token::kInstruction, i, j);
      } else if (IsMlirType(word)) {
        sc.Add(Token::kType, i, j);
      } else if (MlirKeywords().Contains(word)) {
        sc.Add(Token::kKeyword, i, j);
      }
    }
    i = std::max(j, i + 1);
  }
}

// Tokens the report-like syntaxes share: strings, %names, shapes, numbers with units, key=.
// Returns the index after the token, or -1 when `i` starts none of them.
int CommonReportToken(Scanner& sc, int i) {
  const QStringView s = sc.s;
  const QChar c = s[i];
  if (c == u'"') {
    const int j = sc.SkipString(i);
    sc.Add(Token::kString, i, j);
    return j;
  }
  if (c == u'%' && IsIdentStart(sc.At(i + 1))) {
    const int j = sc.SkipWhile(i + 1, IsHloNameChar);
    sc.Add(Token::kLocal, i, j);
    return j;
  }
  if (sc.NumberStart(i)) {
    int j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
    // Units: 512B, 1.0KiB, 3.2MiB, 100%.
    for (const char16_t* unit : {u"KiB", u"MiB", u"GiB", u"TiB", u"KB", u"MB", u"GB", u"B"}) {
      const QStringView u(unit);
      if (s.mid(j).startsWith(u) && !IsIdentChar(sc.At(j + static_cast<int>(u.size())))) {
        j += static_cast<int>(u.size());
        break;
      }
    }
    if (sc.At(j) == u'%') ++j;
    sc.Add(Token::kNumber, i, j);
    return j;
  }
  if (IsIdentStart(c) && !IsHloNameChar(sc.At(i - 1))) {
    int j = sc.SkipWhile(i, IsHloNameChar);
    while (j > i + 1 && (s[j - 1] == u'.' || s[j - 1] == u'-')) --j;
    const int shape_end = sc.ScanShape(i, j);
    if (shape_end >= 0) {
      sc.Add(Token::kType, i, shape_end);
      return shape_end;
    }
    if (sc.At(j) == u'=') {
      sc.Add(Token::kAttribute, i, j);
    } else if (ReportKeywords().Contains(s.mid(i, j - i))) {
      sc.Add(Token::kKeyword, i, j);
    }
    return j;
  }
  return -1;
}

// A label that a line starts with: words, then ':' at the end or before a space.
int LeadingLabelEnd(const Scanner& sc, int start) {
  if (!IsAlpha(sc.At(start))) return -1;
  int j = start;
  while (j < sc.n && j - start < 60) {
    const QChar c = sc.s[j];
    if (c == u':') {
      return j + 1 == sc.n || IsSpace(sc.At(j + 1)) ? j + 1 : -1;
    }
    if (!(IsIdentChar(c) || c == u' ' || c == u'-' || c == u'(' || c == u')')) return -1;
    ++j;
  }
  return -1;
}

void HighlightReport(Scanner& sc) {
  const QStringView s = sc.s;
  int i = 0;
  if (s.startsWith(u"allocation ") && IsDigit(sc.At(11))) {
    i = sc.SkipWhile(11, IsDigit);
    sc.Add(Token::kHeader, 0, i);
  } else if (sc.n > 0 && !IsSpace(s[0])) {
    // Section headers start at column 0: "BufferAssignment:", "Total bytes used: 1068".
    const int colon = static_cast<int>(s.indexOf(u':'));
    if (colon > 0 && colon < 80 && IsAlpha(s[0])) {
      const QStringView head = s.left(colon);
      const bool words_only = std::none_of(head.begin(), head.end(), [](QChar c) {
        return c == u'%' || c == u'<' || c == u'=' || c == u'{' || c == u'|' || c == u'.';
      });
      if (words_only) {
        sc.Add(Token::kHeader, 0, colon + 1);
        i = colon + 1;
      }
    }
  } else {
    // Indented labels: " value:", " from instruction:", "  InstructionSequence:".
    const int start = sc.SkipSpaces(0);
    const int end = LeadingLabelEnd(sc, start);
    if (end > 0) {
      sc.Add(Token::kField, start, end);
      i = end;
    }
  }
  while (i < sc.limit) {
    const QChar c = s[i];
    if (c == u'<' && IsDigit(sc.At(i + 1))) {  // a value's id: <12 y.1 @0>
      const int j = sc.SkipWhile(i + 1, IsDigit);
      sc.Add(Token::kAttribute, i, j);
      i = j;
    } else if (c == u'@' && IsDigit(sc.At(i + 1))) {
      int j = sc.SkipWhile(i + 1, IsDigit);
      if (sc.At(j) == u'>') ++j;
      sc.Add(Token::kAttribute, i, j);
      i = j;
    } else {
      const int j = CommonReportToken(sc, i);
      i = j > i ? j : i + 1;
    }
  }
}

void HighlightThunks(Scanner& sc) {
  const QStringView s = sc.s;
  int i = sc.SkipSpaces(0);
  // "003: kKernel ..." — the thunk's index.
  if (IsDigit(sc.At(i))) {
    const int j = sc.SkipWhile(i, IsDigit);
    if (sc.At(j) == u':') {
      sc.Add(Token::kNumber, i, j);
      i = j + 1;
    }
  }
  while (i < sc.limit) {
    const QChar c = s[i];
    if (c == u'/' && sc.At(i + 1) == u'/') {
      sc.Add(Token::kComment, i, sc.n);
      return;
    }
    if (c == u'k' && IsAlpha(sc.At(i + 1)) && sc.At(i + 1).isUpper() &&
        !IsHloNameChar(sc.At(i - 1))) {
      const int j = sc.SkipWhile(i, IsIdentChar);  // a thunk kind: kKernel, kSequential
      sc.Add(Token::kKeyword, i, j);
      i = j;
      continue;
    }
    if (IsIdentStart(c) && !IsHloNameChar(sc.At(i - 1))) {
      const int j = sc.SkipWhile(i, IsIdentChar);
      if (sc.At(j) == u':' && (j + 1 == sc.n || IsSpace(sc.At(j + 1)))) {
        sc.Add(Token::kField, i, j + 1);
        i = j + 1;
        continue;
      }
    }
    const int j = CommonReportToken(sc, i);
    i = j > i ? j : i + 1;
  }
}

void HighlightTextProto(Scanner& sc) {
  const QStringView s = sc.s;
  int i = sc.SkipSpaces(0);
  if (s.mid(i).startsWith(u"--") && IsIdentStart(sc.At(i + 2))) {  // a flag file: --xla_x=1
    const int j = sc.SkipWhile(i + 2, IsIdentChar);
    sc.Add(Token::kField, i, j);
    i = j;
  }
  while (i < sc.limit) {
    const QChar c = s[i];
    int j = i + 1;
    if (c == u'#') {
      sc.Add(Token::kComment, i, sc.n);
      return;
    }
    if (c == u'"' || c == u'\'') {
      j = sc.SkipString(i);
      sc.Add(Token::kString, i, j);
    } else if (c == u'[' && IsIdentStart(sc.At(i + 1))) {
      // An extension or Any type: [type.googleapis.com/xla.GpuBackendConfig]
      j = sc.SkipWhile(i + 1, [](QChar ch) { return IsIdentChar(ch) || ch == u'.' || ch == u'/'; });
      if (sc.At(j) == u']') {
        ++j;
        sc.Add(Token::kType, i, j);
      }
    } else if (sc.NumberStart(i)) {
      j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
      sc.Add(Token::kNumber, i, j);
    } else if (IsIdentStart(c) && !IsIdentChar(sc.At(i - 1))) {
      j = sc.SkipWhile(i, IsIdentChar);
      const QStringView word = s.mid(i, j - i);
      const int k = sc.SkipSpaces(j);
      const QChar next = sc.At(k);
      if (next == u':' || next == u'{' || next == u'<') {
        sc.Add(Token::kField, i, j);
      } else if (word == u"true" || word == u"false" || word == u"inf" || word == u"nan") {
        sc.Add(Token::kKeyword, i, j);
      } else if (word.size() > 1 && std::all_of(word.begin(), word.end(), [](QChar ch) {
                   return ch.isUpper() || IsDigit(ch) || ch == u'_';
                 })) {
        sc.Add(Token::kKeyword, i, j);  // an enum value
      }
    }
    i = j;
  }
}

void HighlightJson(Scanner& sc) {
  const QStringView s = sc.s;
  int i = 0;
  while (i < sc.limit) {
    const QChar c = s[i];
    int j = i + 1;
    if (c == u'"') {
      j = sc.SkipString(i);
      sc.Add(sc.At(sc.SkipSpaces(j)) == u':' ? Token::kField : Token::kString, i, j);
    } else if (sc.NumberStart(i)) {
      j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
      sc.Add(Token::kNumber, i, j);
    } else if (IsAlpha(c)) {
      j = sc.SkipWhile(i, IsAlpha);
      const QStringView word = s.mid(i, j - i);
      if (word == u"true" || word == u"false" || word == u"null") sc.Add(Token::kKeyword, i, j);
    }
    i = j;
  }
}

// State bit 1: inside a /* */ comment.
int HighlightDot(Scanner& sc, int state) {
  const QStringView s = sc.s;
  int i = 0;
  if (state & 1) {
    i = sc.BlockComment(0, 0);
    if (i < 0) return 1;
  }
  const int first = sc.SkipSpaces(0);
  if (i == 0 && sc.At(first) == u'#') {  // a preprocessor-style comment line
    sc.Add(Token::kComment, first, sc.n);
    return 0;
  }
  while (i < sc.limit) {
    const QChar c = s[i];
    int j = i + 1;
    if (c == u'/' && sc.At(i + 1) == u'/') {
      sc.Add(Token::kComment, i, sc.n);
      return 0;
    }
    if (c == u'/' && sc.At(i + 1) == u'*') {
      j = sc.BlockComment(i, i + 2);
      if (j < 0) return 1;
    } else if (c == u'"') {
      j = sc.SkipString(i);
      sc.Add(Token::kString, i, j);
    } else if (c == u'<' && (IsAlpha(sc.At(i + 1)) || sc.At(i + 1) == u'/')) {
      // An HTML-like label's tag: <b>, </b>, <br/>.
      j = sc.SkipWhile(i + 1 + (sc.At(i + 1) == u'/' ? 1 : 0), IsIdentChar);
      sc.Add(Token::kKeyword, i, j);
    } else if ((c == u'-' && (sc.At(i + 1) == u'>' || sc.At(i + 1) == u'-'))) {
      j = i + 2;
      sc.Add(Token::kKeyword, i, j);
    } else if (sc.NumberStart(i)) {
      j = sc.ScanNumber(IsDigit(c) ? i : i + 1);
      sc.Add(Token::kNumber, i, j);
    } else if (IsIdentStart(c) && !IsIdentChar(sc.At(i - 1))) {
      j = sc.SkipWhile(i, IsIdentChar);
      if (DotKeywords().Contains(s.mid(i, j - i).toString().toLower())) {
        sc.Add(Token::kKeyword, i, j);
      } else if (sc.At(sc.SkipSpaces(j)) == u'=') {
        sc.Add(Token::kAttribute, i, j);
      }
    }
    i = j;
  }
  return 0;
}

// State bit 1: inside <!-- -->; bit 2: inside a tag.
int HighlightMarkup(Scanner& sc, int state) {
  const QStringView s = sc.s;
  bool in_comment = state & 1;
  bool in_tag = state & 2;
  int i = 0;
  while (i < sc.limit) {
    if (in_comment) {
      const int end = static_cast<int>(s.indexOf(u"-->", i));
      if (end < 0) {
        sc.Add(Token::kComment, i, sc.n);
        return 1;
      }
      sc.Add(Token::kComment, i, end + 3);
      i = end + 3;
      in_comment = false;
      continue;
    }
    const QChar c = s[i];
    int j = i + 1;
    if (in_tag) {
      if (c == u'>') {
        sc.Add(Token::kKeyword, i, j);
        in_tag = false;
      } else if (c == u'/' && sc.At(i + 1) == u'>') {
        j = i + 2;
        sc.Add(Token::kKeyword, i, j);
        in_tag = false;
      } else if (c == u'"' || c == u'\'') {
        j = sc.SkipString(i);
        sc.Add(Token::kString, i, j);
      } else if (IsIdentStart(c)) {
        j = sc.SkipWhile(i, [](QChar ch) { return IsIdentChar(ch) || ch == u'-' || ch == u':'; });
        sc.Add(Token::kAttribute, i, j);
      }
    } else if (s.mid(i).startsWith(u"<!--")) {
      in_comment = true;
      continue;
    } else if (c == u'<' && (IsAlpha(sc.At(i + 1)) || sc.At(i + 1) == u'/' ||
                             sc.At(i + 1) == u'!' || sc.At(i + 1) == u'?')) {
      j = sc.SkipWhile(i + 2, [](QChar ch) { return IsIdentChar(ch) || ch == u'-' || ch == u':'; });
      sc.Add(Token::kKeyword, i, j);
      in_tag = true;
    } else if (c == u'&') {
      const int end = sc.SkipWhile(i + 1, [](QChar ch) { return IsIdentChar(ch) || ch == u'#'; });
      if (sc.At(end) == u';' && end > i + 1) {
        j = end + 1;
        sc.Add(Token::kNumber, i, j);
      }
    }
    i = j;
  }
  return (in_comment ? 1 : 0) | (in_tag ? 2 : 0);
}

void HighlightHexDump(Scanner& sc) {
  const QStringView s = sc.s;
  const int offset_end = sc.SkipWhile(0, IsHexDigit);
  if (offset_end != 8) return;  // the note lines around the dump
  sc.Add(Token::kLabel, 0, offset_end);
  const int bar = static_cast<int>(s.indexOf(u'|', offset_end));
  const int bytes_end = bar < 0 ? sc.n : bar;
  for (int i = offset_end; i + 1 < bytes_end; ++i) {
    if (IsHexDigit(s[i]) && IsHexDigit(s[i + 1])) {
      sc.Add(Token::kNumber, i, i + 2);
      ++i;
    }
  }
  if (bar >= 0) sc.Add(Token::kString, bar, sc.n);
}

}  // namespace

QString ArtifactSyntaxName(ArtifactSyntax syntax) {
  switch (syntax) {
    case ArtifactSyntax::kPlain:
      return QStringLiteral("Plain text");
    case ArtifactSyntax::kLlvmIr:
      return QStringLiteral("LLVM IR");
    case ArtifactSyntax::kPtx:
      return QStringLiteral("PTX");
    case ArtifactSyntax::kMlir:
      return QStringLiteral("MLIR");
    case ArtifactSyntax::kBufferReport:
      return QStringLiteral("Buffer report");
    case ArtifactSyntax::kThunkSequence:
      return QStringLiteral("Thunk sequence");
    case ArtifactSyntax::kTextProto:
      return QStringLiteral("Text proto");
    case ArtifactSyntax::kJson:
      return QStringLiteral("JSON");
    case ArtifactSyntax::kDot:
      return QStringLiteral("DOT");
    case ArtifactSyntax::kMarkup:
      return QStringLiteral("HTML");
    case ArtifactSyntax::kHexDump:
      return QStringLiteral("Hex dump");
  }
  return QString();
}

ArtifactSyntax ArtifactSyntaxFor(DumpFileKind kind, QStringView file_name, QStringView head) {
  QStringView name = file_name;
  if (name.endsWith(u".gz")) name.chop(3);
  const int first = static_cast<int>(
      std::find_if(head.begin(), head.end(), [](QChar c) { return !c.isSpace(); }) - head.begin());
  const bool json_like =
      first < head.size() && (head[first] == u'{' || head[first] == u'[') && [&] {
        for (qsizetype i = first + 1; i < head.size(); ++i) {
          if (!head[i].isSpace()) {
            return head[i] == u'"' || head[i] == u'}' || head[i] == u']';
          }
        }
        return false;
      }();
  switch (kind) {
    case DumpFileKind::kLlvmIr:
      return ArtifactSyntax::kLlvmIr;
    case DumpFileKind::kPtx:
      return ArtifactSyntax::kPtx;
    case DumpFileKind::kMlir:
      return ArtifactSyntax::kMlir;
    case DumpFileKind::kBufferAssignment:
    case DumpFileKind::kBufferAssignmentValues:
    case DumpFileKind::kLiveRange:
    case DumpFileKind::kMemoryUsageReport:
    case DumpFileKind::kHloText:
      return ArtifactSyntax::kBufferReport;
    case DumpFileKind::kThunkSequence:
      return ArtifactSyntax::kThunkSequence;
    case DumpFileKind::kDebugOptions:
    case DumpFileKind::kConfig:
    case DumpFileKind::kModuleMetadata:
    case DumpFileKind::kAutotuneResults:
    case DumpFileKind::kCompileOptions:
    case DumpFileKind::kTopology:
      return json_like ? ArtifactSyntax::kJson : ArtifactSyntax::kTextProto;
    case DumpFileKind::kDot:
      return ArtifactSyntax::kDot;
    case DumpFileKind::kHtml:
      return ArtifactSyntax::kMarkup;
    default:
      break;
  }
  auto ends = [&](const char16_t* suffix) { return name.endsWith(QStringView(suffix)); };
  if (ends(u".ll")) return ArtifactSyntax::kLlvmIr;
  if (ends(u".ptx")) return ArtifactSyntax::kPtx;
  if (ends(u".mlir")) return ArtifactSyntax::kMlir;
  if (ends(u".json") || json_like) return ArtifactSyntax::kJson;
  if (ends(u".dot")) return ArtifactSyntax::kDot;
  if (ends(u".html") || ends(u".htm") || ends(u".svg") || ends(u".xml")) {
    return ArtifactSyntax::kMarkup;
  }
  if (ends(u".pbtxt") || ends(u".textproto") || ends(u".txtpb") || ends(u".flagfile")) {
    return ArtifactSyntax::kTextProto;
  }
  return ArtifactSyntax::kPlain;
}

ArtifactHighlighter::ArtifactHighlighter(QObject* parent) : QSyntaxHighlighter(parent) {
  SetPalette(QPalette());
}

ArtifactHighlighter::ArtifactHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
  SetPalette(QPalette());
}

void ArtifactHighlighter::SetSyntax(ArtifactSyntax syntax) {
  if (syntax == syntax_) return;
  syntax_ = syntax;
  if (document() != nullptr) rehighlight();
}

void ArtifactHighlighter::SetNames(std::shared_ptr<const ArtifactNameIndex> names) {
  names_ = std::move(names);
  if (document() != nullptr) rehighlight();
}

void ArtifactHighlighter::SetPalette(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  auto set = [&](Token t, const char* light, const char* dark_color, bool bold = false,
                 bool italic = false) {
    QTextCharFormat f;
    f.setForeground(QColor(dark ? dark_color : light));
    if (bold) f.setFontWeight(QFont::Bold);
    if (italic) f.setFontItalic(true);
    formats_[static_cast<int>(t)] = f;
  };
  set(Token::kKeyword, "#8250df", "#d2a8ff", true);
  set(Token::kInstruction, "#0550ae", "#79c0ff", true);
  set(Token::kType, "#116329", "#7ee787");
  set(Token::kLocal, "#953800", "#ffa657");
  set(Token::kGlobal, "#0a3069", "#a5d6ff", true);
  set(Token::kLabel, "#7d4e00", "#e3b341");
  set(Token::kDirective, "#cf222e", "#ff7b72");
  set(Token::kAttribute, "#6e4c9e", "#c5a5f5");
  set(Token::kMetadata, "#57606a", "#9198a1", false, true);
  set(Token::kField, "#0550ae", "#79c0ff");
  set(Token::kHeader, "#1f2328", "#f0f6fc", true);
  set(Token::kString, "#a31515", "#e8a08a");
  set(Token::kNumber, "#0b6e73", "#56d4dd");
  set(Token::kComment, "#6e7781", "#8b949e", false, true);
  QTextCharFormat link;
  link.setForeground(QColor(dark ? "#58a6ff" : "#0969da"));
  link.setFontUnderline(true);
  link.setUnderlineColor(link.foreground().color());
  formats_[static_cast<int>(Token::kLink)] = link;
  if (document() != nullptr) rehighlight();
}

bool ArtifactHighlighter::HasMultiLineState() const {
  return syntax_ == ArtifactSyntax::kPtx || syntax_ == ArtifactSyntax::kDot ||
         syntax_ == ArtifactSyntax::kMarkup;
}

void ArtifactHighlighter::HighlightLine(QStringView line, int state_in, int* state_out,
                                        QList<QTextLayout::FormatRange>* formats) const {
  Scanner sc(line, formats_, formats);
  int state = 0;
  switch (syntax_) {
    case ArtifactSyntax::kPlain:
      break;
    case ArtifactSyntax::kLlvmIr:
      HighlightLlvm(sc);
      break;
    case ArtifactSyntax::kPtx:
      state = HighlightPtx(sc, state_in);
      break;
    case ArtifactSyntax::kMlir:
      HighlightMlir(sc);
      break;
    case ArtifactSyntax::kBufferReport:
      HighlightReport(sc);
      break;
    case ArtifactSyntax::kThunkSequence:
      HighlightThunks(sc);
      break;
    case ArtifactSyntax::kTextProto:
      HighlightTextProto(sc);
      break;
    case ArtifactSyntax::kJson:
      HighlightJson(sc);
      break;
    case ArtifactSyntax::kDot:
      state = HighlightDot(sc, state_in);
      break;
    case ArtifactSyntax::kMarkup:
      state = HighlightMarkup(sc, state_in);
      break;
    case ArtifactSyntax::kHexDump:
      HighlightHexDump(sc);
      break;
  }
  if (state_out != nullptr) *state_out = state;
  if (formats == nullptr) return;
  for (const ArtifactLinkSpan& link : LinksIn(line)) {
    QTextLayout::FormatRange range;
    range.start = link.start;
    range.length = link.length;
    range.format = FormatFor(Token::kLink);
    formats->append(range);
  }
}

std::vector<ArtifactLinkSpan> ArtifactHighlighter::LinksIn(QStringView s) const {
  std::vector<ArtifactLinkSpan> links;
  if (names_ == nullptr || names_->empty() || syntax_ == ArtifactSyntax::kHexDump) return links;
  const int n = static_cast<int>(s.size());
  const int limit = std::min(n, kMaxArtifactHighlightColumn);
  auto at = [&](int i) { return i >= 0 && i < n ? s[i] : QChar(); };
  auto add = [&](int start, int end, const ArtifactLinkTarget* target) {
    if (target != nullptr && end > start) links.push_back({start, end - start, *target});
  };
  auto skip_string = [&](int i) {
    const QChar quote = s[i];
    int j = i + 1;
    while (j < n && s[j] != quote) j += s[j] == u'\\' ? 2 : 1;
    return std::min(j + 1, n);
  };

  switch (syntax_) {
    case ArtifactSyntax::kLlvmIr: {
      // Only '@' and '%' names: a bare word is an opcode or a keyword.
      for (int i = 0; i < limit;) {
        const QChar c = s[i];
        if (c == u'"') {
          i = skip_string(i);
        } else if ((c == u'@' || c == u'%') && !IsLlvmNameChar(at(i - 1))) {
          if (at(i + 1) == u'"') {
            const int end = skip_string(i + 1);
            if (end - 1 > i + 2) {
              add(i + 2, end - 1, names_->FindAllowingSuffix(s.mid(i + 2, end - 1 - (i + 2))));
            }
            i = end;
          } else {
            int j = i + 1;
            while (j < n && IsLlvmNameChar(s[j])) ++j;
            if (j > i + 1 && !IsDigit(s[i + 1])) {
              add(i + 1, j, names_->FindAllowingSuffix(s.mid(i + 1, j - i - 1)));
            }
            i = j;
          }
        } else {
          ++i;
        }
      }
      break;
    }
    case ArtifactSyntax::kPtx: {
      // Identifiers that are not opcodes, directives, registers or labels.
      bool statement_start = true;
      for (int i = 0; i < limit;) {
        const QChar c = s[i];
        if (c == u'/' && (at(i + 1) == u'/' || at(i + 1) == u'*')) break;
        if (c == u'"') {
          i = skip_string(i);
          statement_start = false;
        } else if (c == u'@') {  // predicate guard: the opcode still follows
          ++i;
          if (at(i) == u'!') ++i;
          if (at(i) == u'%') {
            ++i;
            while (i < n && IsIdentChar(s[i])) ++i;
          }
        } else if (IsIdentStart(c) || c == u'$' || c == u'%' || c == u'.') {
          int j = i + 1;
          while (j < n && (IsIdentChar(s[j]) || s[j] == u'$')) ++j;
          const bool plain = IsIdentStart(c);
          if (plain && at(j) == u':' && statement_start) {
            i = j + 1;  // a label definition
            continue;
          }
          if (plain && statement_start) {
            while (at(j) == u'.' && IsIdentChar(at(j + 1))) {
              ++j;
              while (j < n && IsIdentChar(s[j])) ++j;
            }
          } else if (plain && at(j) != u'.') {
            add(i, j, names_->FindAllowingSuffix(s.mid(i, j - i)));
          }
          i = j;
          statement_start = false;
        } else {
          if (!IsSpace(c)) statement_start = c == u';' || c == u'{' || c == u'}';
          ++i;
        }
      }
      break;
    }
    case ArtifactSyntax::kMlir: {
      for (int i = 0; i < limit;) {
        const QChar c = s[i];
        if (c == u'@') {
          if (at(i + 1) == u'"') {
            const int end = skip_string(i + 1);
            if (end - 1 > i + 2) add(i + 2, end - 1, names_->Find(s.mid(i + 2, end - 1 - (i + 2))));
            i = end;
          } else {
            int j = i + 1;
            while (j < n && IsLlvmNameChar(s[j])) ++j;
            if (j > i + 1) add(i + 1, j, names_->Find(s.mid(i + 1, j - i - 1)));
            i = j;
          }
        } else if (c == u'"') {
          i = skip_string(i);
        } else {
          ++i;
        }
      }
      break;
    }
    default: {
      // Words: the plain or sanitized name. Report vocabulary ("size 4", "value:") and text
      // proto field names are words too, but never links.
      const bool report =
          syntax_ == ArtifactSyntax::kBufferReport || syntax_ == ArtifactSyntax::kThunkSequence;
      const bool proto = syntax_ == ArtifactSyntax::kTextProto;
      for (int i = 0; i < limit;) {
        if (!IsHloNameChar(s[i])) {
          ++i;
          continue;
        }
        int j = i;
        while (j < n && IsHloNameChar(s[j])) ++j;
        const int run_end = j;
        while (j > i + 1 && (s[j - 1] == u'.' || s[j - 1] == u'-')) --j;
        if (IsIdentStart(s[i])) {
          const QStringView word = s.mid(i, j - i);
          bool vocabulary = false;
          if (report && std::all_of(word.begin(), word.end(), [](QChar ch) {
                return (ch >= u'a' && ch <= u'z') || ch == u'-';
              })) {
            const QChar next = at(j);
            vocabulary =
                next == u':' || (next == u' ' && (IsDigit(at(j + 1)) || at(j + 1) == u'|'));
          }
          if (proto) {
            int k = j;
            while (k < n && IsSpace(s[k])) ++k;
            vocabulary = at(k) == u':' || at(k) == u'{';
          }
          if (!vocabulary) add(i, j, names_->Find(word));
        }
        i = run_end;
      }
      break;
    }
  }
  return links;
}

void ArtifactHighlighter::highlightBlock(const QString& text) {
  QList<QTextLayout::FormatRange> ranges;
  int state = 0;
  HighlightLine(text, std::max(previousBlockState(), 0), &state, &ranges);
  for (const QTextLayout::FormatRange& r : ranges) {
    if (r.format == FormatFor(Token::kLink)) {
      QTextCharFormat merged = format(r.start);
      merged.merge(r.format);
      setFormat(r.start, r.length, merged);
    } else {
      setFormat(r.start, r.length, r.format);
    }
  }
  setCurrentBlockState(state);
}

}  // namespace hlowb::viewer
