#include "core/text/lexer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace hlowb {
namespace {

// Character classes, looked up per byte on the lexer's hot paths.
enum : uint8_t { kIdentStartBit = 1, kIdentCharBit = 2, kSpaceBit = 4, kTypeStartBit = 8 };
constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kIdentStartBit | kIdentCharBit;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kIdentStartBit | kIdentCharBit;
  t['_'] = kIdentStartBit | kIdentCharBit;
  for (int c = '0'; c <= '9'; ++c) t[c] = kIdentCharBit;
  t['.'] = kIdentCharBit;
  t['-'] = kIdentCharBit;
  t[' '] = t['\t'] = t['\r'] = t['\f'] = t['\v'] = kSpaceBit;
  for (char c : std::string_view("bcfopstu")) t[static_cast<uint8_t>(c)] |= kTypeStartBit;
  return t;
}();
inline bool IsIdentStart(char c) { return kCharClass[static_cast<uint8_t>(c)] & kIdentStartBit; }
inline bool IsIdentChar(char c) { return kCharClass[static_cast<uint8_t>(c)] & kIdentCharBit; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view TokKindName(TokKind kind) {
  switch (kind) {
    case TokKind::kEof: return "end of input";
    case TokKind::kError: return "invalid token";
    case TokKind::kIdent: return "identifier";
    case TokKind::kName: return "name";
    case TokKind::kAttrName: return "attribute name";
    case TokKind::kPrimType: return "element type";
    case TokKind::kInt: return "integer";
    case TokKind::kDecimal: return "decimal number";
    case TokKind::kNegInf: return "'-inf'";
    case TokKind::kString: return "string";
    case TokKind::kDimLabels: return "dimension labels";
    case TokKind::kDxD: return "window sizes (NxM)";
    case TokKind::kPad: return "padding (lo_hi)";
    case TokKind::kEqual: return "'='";
    case TokKind::kComma: return "','";
    case TokKind::kColon: return "':'";
    case TokKind::kStar: return "'*'";
    case TokKind::kHash: return "'#'";
    case TokKind::kPlus: return "'+'";
    case TokKind::kTilde: return "'~'";
    case TokKind::kLsquare: return "'['";
    case TokKind::kRsquare: return "']'";
    case TokKind::kLbrace: return "'{'";
    case TokKind::kRbrace: return "'}'";
    case TokKind::kLparen: return "'('";
    case TokKind::kRparen: return "')'";
    case TokKind::kQuestion: return "'?'";
    case TokKind::kArrow: return "'->'";
    case TokKind::kLeq: return "'<='";
    case TokKind::kDots: return "'...'";
  }
  return "token";
}

TokKind Lexer::Next() {
  Lex();
  return tok_.kind;
}

void Lexer::SeekTo(size_t offset) {
  pos_ = offset < text_.size() ? offset : text_.size();
  tok_.end = pos_;
  saw_newline_ = false;
  Lex();
}

void Lexer::Error(size_t start, std::string msg) {
  tok_.kind = TokKind::kError;
  tok_.offset = start;
  tok_.end = pos_ > start ? pos_ : start + 1;
  tok_.text = text_.substr(start, tok_.end - start);
  tok_.str = std::move(msg);
  pos_ = text_.size();  // nothing after an error is meaningful
}

void Lexer::SkipSpaceAndComments() {
  const size_t n = text_.size();
  while (pos_ < n) {
    char c = text_[pos_];
    if (kCharClass[static_cast<uint8_t>(c)] & kSpaceBit) {
      ++pos_;
    } else if (c == '\n') {
      saw_newline_ = true;
      ++pos_;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '/') {
      const void* nl = std::memchr(text_.data() + pos_, '\n', n - pos_);
      pos_ = nl ? static_cast<const char*>(nl) - text_.data() : n;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
      size_t close = text_.find("*/", pos_ + 2);
      if (close == std::string_view::npos) return;  // reported by Lex()
      for (size_t i = pos_; i < close; ++i) {
        if (text_[i] == '\n') saw_newline_ = true;
      }
      pos_ = close + 2;
    } else {
      return;
    }
  }
}

void Lexer::Lex() {
  prev_end_ = tok_.end;
  saw_newline_ = false;
  // Most tokens follow zero or one space; only call the general skipper when needed.
  if (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  if (pos_ < text_.size() &&
      ((kCharClass[static_cast<uint8_t>(text_[pos_])] & kSpaceBit) || text_[pos_] == '\n' ||
       text_[pos_] == '/')) {
    SkipSpaceAndComments();
  }
  tok_.newline_before = saw_newline_;
  tok_.has_nan_payload = false;
  tok_.int_overflow = false;
  const size_t n = text_.size();
  const size_t start = pos_;
  tok_.offset = start;
  if (pos_ >= n) {
    tok_.kind = TokKind::kEof;
    tok_.text = {};
    tok_.end = n;
    return;
  }
  char c = text_[pos_];
  auto punct = [&](TokKind k, size_t len) {
    pos_ += len;
    tok_.kind = k;
    tok_.text = text_.substr(start, len);
    tok_.end = pos_;
  };
  switch (c) {
    case '=': return punct(TokKind::kEqual, 1);
    case ',': return punct(TokKind::kComma, 1);
    case ':': return punct(TokKind::kColon, 1);
    case '*': return punct(TokKind::kStar, 1);
    case '#': return punct(TokKind::kHash, 1);
    case '+': return punct(TokKind::kPlus, 1);
    case '~': return punct(TokKind::kTilde, 1);
    case '[': return punct(TokKind::kLsquare, 1);
    case ']': return punct(TokKind::kRsquare, 1);
    case '{': return punct(TokKind::kLbrace, 1);
    case '}': return punct(TokKind::kRbrace, 1);
    case '(': return punct(TokKind::kLparen, 1);
    case ')': return punct(TokKind::kRparen, 1);
    default: break;
  }
  if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
    pos_ = n;
    return Error(start, "unterminated /* comment");
  }
  if (c == '?') {
    if (TryDimLabels(start)) return;
    return punct(TokKind::kQuestion, 1);
  }
  if (c == '<') {
    if (pos_ + 1 < n && text_[pos_ + 1] == '=') return punct(TokKind::kLeq, 2);
    ++pos_;
    return Error(start, "unexpected '<'");
  }
  if (c == '.') {
    if (text_.substr(pos_, 3) == "...") return punct(TokKind::kDots, 3);
    if (pos_ + 1 < n && IsDigit(text_[pos_ + 1]) && LexNumber(start)) return;
    ++pos_;
    return Error(start, "unexpected '.'");
  }
  if (c == '-' && pos_ + 1 < n && text_[pos_ + 1] == '>') return punct(TokKind::kArrow, 2);
  if (c == '"' || c == '\'') return LexString(start);
  if (c == '%') {
    size_t p = pos_ + 1;
    while (p < n && IsIdentChar(text_[p])) ++p;
    if (p == pos_ + 1) {
      ++pos_;
      return Error(start, "expected a name after '%'");
    }
    pos_ = p;
    tok_.kind = TokKind::kName;
    tok_.text = text_.substr(start + 1, p - start - 1);
    tok_.end = p;
    return;
  }
  if (IsDigit(c) || c == '-') {
    if (c == '-') {
      std::string_view rest = text_.substr(pos_ + 1);
      auto word = [&](std::string_view w) {
        return rest.substr(0, w.size()) == w &&
               (rest.size() == w.size() || !IsIdentChar(rest[w.size()]));
      };
      if (word("inf")) {
        pos_ += 4;
        tok_.kind = TokKind::kNegInf;
        tok_.text = text_.substr(start, 4);
        tok_.end = pos_;
        return;
      }
      if (rest.substr(0, 3) == "nan") {
        ++pos_;
        LexIdentifierOrKeyword(pos_);
        if (tok_.kind == TokKind::kDecimal) {
          tok_.decimal = -tok_.decimal;
          tok_.offset = start;
          tok_.text = text_.substr(start, tok_.end - start);
          return;
        }
        return Error(start, "malformed '-nan'");
      }
    }
    if (IsDigit(c) && TryDimLabels(start)) return;
    if (LexNumber(start)) return;
    if (tok_.kind == TokKind::kError) return;
    ++pos_;
    return Error(start, "malformed number");
  }
  if (IsIdentStart(c)) {
    if ((c == 'b' || c == 'f') && TryDimLabels(start)) return;
    return LexIdentifierOrKeyword(start);
  }
  ++pos_;
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
    return Error(start, "unexpected byte 0x" + std::string(1, "0123456789abcdef"[(c >> 4) & 15]) +
                            std::string(1, "0123456789abcdef"[c & 15]));
  }
  Error(start, std::string("unexpected character '") + c + "'");
}

bool Lexer::TryDimLabels(size_t start) {
  // [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
  const size_t n = text_.size();
  size_t p = start;
  auto run = [&](char a, char b) {
    size_t s = p;
    while (p < n && (IsDigit(text_[p]) || text_[p] == a || text_[p] == b || text_[p] == '?')) ++p;
    return p - s;
  };
  // Quick reject: labels have a second character from the same set as the first.
  if (start + 1 >= n) return false;
  {
    char c1 = text_[start + 1];
    if (!(IsDigit(c1) || c1 == 'b' || c1 == 'f' || c1 == '?')) return false;
  }
  if (run('b', 'f') < 2) return false;
  if (p >= n || text_[p] != '_') return false;
  ++p;
  if (run('i', 'o') < 2) return false;
  if (p + 1 >= n || text_[p] != '-' || text_[p + 1] != '>') return false;
  p += 2;
  if (run('b', 'f') < 2) return false;
  if (p < n && IsIdentChar(text_[p])) return false;
  pos_ = p;
  tok_.kind = TokKind::kDimLabels;
  tok_.text = text_.substr(start, p - start);
  tok_.end = p;
  return true;
}

bool Lexer::LexNumber(size_t start) {
  const size_t n = text_.size();
  size_t p = start;
  bool neg = false;
  if (p < n && text_[p] == '-') {
    neg = true;
    ++p;
  }
  size_t digits_start = p;
  while (p < n && IsDigit(text_[p])) ++p;
  size_t int_digits = p - digits_start;
  auto exponent_at = [&](size_t q) {
    if (q < n && (text_[q] == 'e' || text_[q] == 'E')) {
      size_t r = q + 1;
      if (r < n && (text_[r] == '+' || text_[r] == '-')) ++r;
      if (r < n && IsDigit(text_[r])) {
        while (r < n && IsDigit(text_[r])) ++r;
        return r;
      }
    }
    return size_t{0};
  };
  bool is_decimal = false;
  size_t end = p;
  if (p < n && text_[p] == '.' && !(p + 1 < n && text_[p + 1] == '.')) {
    size_t q = p + 1;
    while (q < n && IsDigit(text_[q])) ++q;
    if (int_digits > 0 || q > p + 1) {
      is_decimal = true;
      end = q;
      if (size_t e = exponent_at(q)) end = e;
    }
  } else if (int_digits > 0) {
    if (size_t e = exponent_at(p)) {
      is_decimal = true;
      end = e;
    }
  }
  if (is_decimal) {
    if (end < n && IsIdentStart(text_[end])) return false;
    double v = 0;
    const char* first = text_.data() + start + (neg ? 1 : 0);
    auto res = std::from_chars(first, text_.data() + end, v);
    if (res.ec == std::errc::result_out_of_range) {
      v = HUGE_VAL;  // the parser range-checks against the element type
    } else if (res.ec != std::errc() || res.ptr != text_.data() + end) {
      return false;
    }
    pos_ = end;
    tok_.kind = TokKind::kDecimal;
    tok_.decimal = neg ? -v : v;
    tok_.text = text_.substr(start, end - start);
    tok_.end = end;
    return true;
  }
  if (int_digits == 0) return false;
  // Padding: -?N_-?N(_N)?(x-?N_-?N(_N)?)*
  if (p < n && text_[p] == '_') {
    size_t q = start;
    auto num = [&](bool allow_neg) {
      size_t s = q;
      if (allow_neg && q < n && text_[q] == '-') ++q;
      size_t d = q;
      while (q < n && IsDigit(text_[q])) ++q;
      if (q == d) {
        q = s;
        return false;
      }
      return true;
    };
    bool ok = true;
    while (true) {
      if (!num(true) || q >= n || text_[q] != '_') { ok = false; break; }
      ++q;
      if (!num(true)) { ok = false; break; }
      if (q < n && text_[q] == '_') {
        ++q;
        if (!num(false)) { ok = false; break; }
      }
      if (q < n && text_[q] == 'x' && q + 1 < n &&
          (IsDigit(text_[q + 1]) || text_[q + 1] == '-')) {
        ++q;
        continue;
      }
      break;
    }
    if (ok && !(q < n && IsIdentChar(text_[q]))) {
      pos_ = q;
      tok_.kind = TokKind::kPad;
      tok_.text = text_.substr(start, q - start);
      tok_.end = q;
      return true;
    }
    return false;
  }
  // DxD: [0-9]+(x[0-9]+)+
  if (!neg && p + 1 < n && text_[p] == 'x' && IsDigit(text_[p + 1])) {
    size_t q = p;
    while (q + 1 < n && text_[q] == 'x' && IsDigit(text_[q + 1])) {
      ++q;
      while (q < n && IsDigit(text_[q])) ++q;
    }
    if (q < n && IsIdentChar(text_[q])) return false;
    pos_ = q;
    tok_.kind = TokKind::kDxD;
    tok_.text = text_.substr(start, q - start);
    tok_.end = q;
    return true;
  }
  if (p < n && IsIdentStart(text_[p])) return false;
  uint64_t v = 0;
  bool overflow = false;
  for (size_t i = digits_start; i < p; ++i) {
    uint64_t d = static_cast<uint64_t>(text_[i] - '0');
    if (v > (UINT64_MAX - d) / 10) overflow = true;
    v = v * 10 + d;
  }
  pos_ = p;
  tok_.kind = TokKind::kInt;
  tok_.int_bits = v;
  tok_.int_negative = neg;
  tok_.int_overflow = overflow || (neg && v > (uint64_t{1} << 63));
  tok_.text = text_.substr(start, p - start);
  tok_.end = p;
  return true;
}

void Lexer::LexIdentifierOrKeyword(size_t start) {
  const size_t n = text_.size();
  size_t p = start;
  const char* data = text_.data();
  while (p < n && IsIdentChar(data[p])) {
    if (data[p] == '-' && p + 1 < n && data[p + 1] == '>') break;
    ++p;
  }
  std::string_view word = text_.substr(start, p - start);
  pos_ = p;
  tok_.end = p;
  tok_.text = word;
  if (p < n && text_[p] == ':' && !(p + 1 < n && text_[p + 1] == ':')) {
    ++pos_;
    tok_.end = pos_;
    tok_.kind = TokKind::kName;
    return;
  }
  if (p < n && text_[p] == '=' && !(p + 1 < n && text_[p + 1] == '=')) {
    ++pos_;
    tok_.end = pos_;
    tok_.kind = TokKind::kAttrName;
    return;
  }
  if (word == "nan") {
    tok_.kind = TokKind::kDecimal;
    tok_.decimal = std::numeric_limits<double>::quiet_NaN();
    if (p + 2 < n && text_[p] == '(' && text_[p + 1] == '0' &&
        (text_[p + 2] == 'x' || text_[p + 2] == 'X')) {
      size_t q = p + 3;
      uint64_t payload = 0;
      int digits = 0;
      while (q < n && HexValue(text_[q]) >= 0) {
        if (digits >= 16) return Error(start, "NaN payload has too many hex digits");
        payload = payload * 16 + HexValue(text_[q]);
        ++q;
        ++digits;
      }
      if (digits == 0 || q >= n || text_[q] != ')') {
        return Error(start, "malformed NaN payload; expected nan(0x<hex digits>)");
      }
      pos_ = q + 1;
      tok_.end = pos_;
      tok_.text = text_.substr(start, pos_ - start);
      tok_.has_nan_payload = true;
      tok_.nan_payload = payload;
    }
    return;
  }
  // Element type names are short, lowercase alphanumerics starting with one of these letters;
  // most identifiers (names with '.', '_', '-', capitals) are rejected without a lookup.
  if (word.size() <= 13 && (kCharClass[static_cast<uint8_t>(word[0])] & kTypeStartBit)) {
    bool plain = true;
    for (char ch : word) plain &= (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (plain) {
      if (auto prim = ParsePrimitiveType(word)) {
        tok_.kind = TokKind::kPrimType;
        tok_.prim = *prim;
        return;
      }
    }
  }
  tok_.kind = TokKind::kIdent;
}

void Lexer::LexString(size_t start) {
  const size_t n = text_.size();
  char quote = text_[start];
  size_t p = start + 1;
  tok_.str.clear();
  while (p < n && text_[p] != quote) {
    char c = text_[p];
    if (c != '\\') {
      // Fast path: copy a run of plain characters at once.
      const void* qp = std::memchr(text_.data() + p, quote, n - p);
      size_t q = qp ? static_cast<const char*>(qp) - text_.data() : n;
      const void* bp = std::memchr(text_.data() + p, '\\', q - p);
      if (bp) q = static_cast<const char*>(bp) - text_.data();
      tok_.str.append(text_.data() + p, q - p);
      p = q;
      continue;
    }
    if (p + 1 >= n) break;
    char e = text_[p + 1];
    p += 2;
    switch (e) {
      case 'n': tok_.str.push_back('\n'); break;
      case 't': tok_.str.push_back('\t'); break;
      case 'r': tok_.str.push_back('\r'); break;
      case 'a': tok_.str.push_back('\a'); break;
      case 'b': tok_.str.push_back('\b'); break;
      case 'f': tok_.str.push_back('\f'); break;
      case 'v': tok_.str.push_back('\v'); break;
      case '\\': tok_.str.push_back('\\'); break;
      case '"': tok_.str.push_back('"'); break;
      case '\'': tok_.str.push_back('\''); break;
      case '?': tok_.str.push_back('?'); break;
      case 'x': {
        int v = 0, digits = 0;
        while (p < n && digits < 2 && HexValue(text_[p]) >= 0) {
          v = v * 16 + HexValue(text_[p++]);
          ++digits;
        }
        if (digits == 0) {
          pos_ = p;
          return Error(start, "malformed \\x escape in string");
        }
        tok_.str.push_back(static_cast<char>(v));
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', digits = 1;
          while (p < n && digits < 3 && text_[p] >= '0' && text_[p] <= '7') {
            v = v * 8 + (text_[p++] - '0');
            ++digits;
          }
          tok_.str.push_back(static_cast<char>(v & 0xff));
        } else {
          pos_ = p;
          return Error(start, std::string("unknown escape '\\") + e + "' in string");
        }
    }
  }
  if (p >= n) {
    pos_ = n;
    return Error(start, "unterminated string");
  }
  pos_ = p + 1;
  tok_.kind = TokKind::kString;
  tok_.text = text_.substr(start, pos_ - start);
  tok_.end = pos_;
}

bool Lexer::TakeBalancedBraces(std::string_view* out) {
  const size_t n = text_.size();
  size_t p = tok_.offset;
  int depth = 0;
  while (p < n) {
    char c = text_[p];
    if (c == '"' || c == '\'') {
      char q = c;
      ++p;
      while (p < n && text_[p] != q) p += (text_[p] == '\\') ? 2 : 1;
      if (p >= n) return false;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) {
        *out = text_.substr(tok_.offset, p + 1 - tok_.offset);
        SeekTo(p + 1);
        return true;
      }
    }
    ++p;
  }
  return false;
}

std::string_view Lexer::TakeRawValue() {
  const size_t n = text_.size();
  size_t start = tok_.offset;
  size_t p = start;
  int depth = 0;
  while (p < n) {
    char c = text_[p];
    if (c == '"' || c == '\'') {
      char q = c;
      ++p;
      while (p < n && text_[p] != q) p += (text_[p] == '\\') ? 2 : 1;
      p = p < n ? p + 1 : n;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ')' || c == ']') {
      if (depth == 0) break;
      --depth;
    } else if (depth == 0 && (c == ',' || c == '\n')) {
      break;
    }
    ++p;
  }
  size_t end = p;
  while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\t' ||
                         text_[end - 1] == '\r')) {
    --end;
  }
  SeekTo(p);
  return text_.substr(start, end - start);
}

}  // namespace hlowb
