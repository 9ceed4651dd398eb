#include "plugins/ffi/ffi_attributes.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "core/support/strings.h"
#include "absl/strings/str_join.h"
#include "core/ir/float_types.h"

namespace hlowb {
namespace {

// One literal token of a value list: an integer, a float, a boolean or a hex bit pattern.
struct Number {
  enum class Form { kInteger, kFloat, kBool, kHexBits } form = Form::kInteger;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  bool is_negative = false;
  double real = 0;
  uint64_t bits = 0;
};

class AttributeParser {
 public:
  explicit AttributeParser(std::string_view text) : text_(text) {}

  absl::StatusOr<FfiAttributeMap> ParseTop() {
    SkipSpace();
    if (AtEnd()) return FfiAttributeMap{};
    absl::StatusOr<FfiAttributeMap> map = ParseDictionary();
    if (!map.ok()) return map.status();
    SkipSpace();
    if (!AtEnd()) return Error("unexpected text after the attribute dictionary");
    return map;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) ||
                               text_[end] == '_')) {
      return false;
    }
    pos_ = end;
    return true;
  }
  absl::Status Error(std::string_view what) const {
    std::string near(text_.substr(pos_, 24));
    return absl::InvalidArgumentError(StrCat("FFI attributes, offset ", pos_, ": ", what,
                                                   AtEnd() ? " (at the end)" : "",
                                                   near.empty() ? "" : " near '", near,
                                                   near.empty() ? "" : "'"));
  }

  absl::StatusOr<std::string> ParseName() {
    SkipSpace();
    if (Peek() == '"') return ParseString();
    const size_t start = pos_;
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_' ||
                        Peek() == '$' || Peek() == '.' || Peek() == '-')) {
      ++pos_;
    }
    if (pos_ == start) return Error("expected an attribute name");
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::StatusOr<std::string> ParseString() {
    SkipSpace();
    if (Peek() != '"') return Error("expected a string");
    ++pos_;
    std::string out;
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      char c = text_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (AtEnd()) return Error("unterminated escape in a string");
      char e = text_[pos_++];
      switch (e) {
        case '\\': out.push_back('\\'); break;
        case '"': out.push_back('"'); break;
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        default: {
          // MLIR escapes other bytes as two hex digits.
          if (pos_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(e)) ||
              !std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
            --pos_;
            return Error("unknown escape in a string");
          }
          const char hex[3] = {e, text_[pos_++], '\0'};
          out.push_back(static_cast<char>(std::strtoul(hex, nullptr, 16)));
        }
      }
    }
    return out;
  }

  absl::StatusOr<FfiAttributeMap> ParseDictionary() {
    if (++depth_ > kMaxDepth) return Error("dictionaries nested too deeply");
    if (!Consume('{')) return Error("expected '{'");
    FfiAttributeMap map;
    if (!Consume('}')) {
      do {
        absl::StatusOr<std::string> name = ParseName();
        if (!name.ok()) return name.status();
        if (!Consume('=')) return Error(StrCat("expected '=' after '", *name, "'"));
        absl::StatusOr<FfiAttribute> value = ParseValue();
        if (!value.ok()) return value.status();
        for (const auto& [existing, unused] : map) {
          if (existing == *name) return Error(StrCat("attribute '", *name, "' repeated"));
        }
        map.emplace_back(std::move(*name), std::move(*value));
      } while (Consume(','));
      if (!Consume('}')) return Error("expected ',' or '}'");
    }
    std::sort(map.begin(), map.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    --depth_;
    return map;
  }

  // i1 -> pred, iN/siN -> sN, uiN -> uN, index -> s64, f16/bf16/f32/f64.
  absl::StatusOr<PrimitiveType> ParseType() {
    SkipSpace();
    const size_t start = pos_;
    while (!AtEnd() && std::isalnum(static_cast<unsigned char>(Peek()))) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    static const std::pair<std::string_view, PrimitiveType> kTypes[] = {
        {"i1", PrimitiveType::kPred},   {"i8", PrimitiveType::kS8},
        {"i16", PrimitiveType::kS16},   {"i32", PrimitiveType::kS32},
        {"i64", PrimitiveType::kS64},   {"si8", PrimitiveType::kS8},
        {"si16", PrimitiveType::kS16},  {"si32", PrimitiveType::kS32},
        {"si64", PrimitiveType::kS64},  {"ui8", PrimitiveType::kU8},
        {"ui16", PrimitiveType::kU16},  {"ui32", PrimitiveType::kU32},
        {"ui64", PrimitiveType::kU64},  {"index", PrimitiveType::kS64},
        {"f16", PrimitiveType::kF16},   {"bf16", PrimitiveType::kBF16},
        {"f32", PrimitiveType::kF32},   {"f64", PrimitiveType::kF64},
    };
    for (const auto& [name, type] : kTypes) {
      if (word == name) return type;
    }
    pos_ = start;
    return Error(word.empty() ? std::string("expected a type")
                              : StrCat("unsupported attribute type '", word, "'"));
  }

  absl::StatusOr<Number> ParseNumber() {
    SkipSpace();
    Number n;
    if (ConsumeWord("true")) {
      n.form = Number::Form::kBool;
      n.integer = 1;
      return n;
    }
    if (ConsumeWord("false")) {
      n.form = Number::Form::kBool;
      return n;
    }
    const size_t start = pos_;
    if (Peek() == '-' || Peek() == '+') ++pos_;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      if (start != pos_) return Error("a hex literal cannot have a sign");
      pos_ += 2;
      const size_t digits = pos_;
      while (!AtEnd() && std::isxdigit(static_cast<unsigned char>(Peek()))) ++pos_;
      if (pos_ == digits || pos_ - digits > 16) return Error("bad hex literal");
      n.form = Number::Form::kHexBits;
      n.bits = std::strtoull(std::string(text_.substr(digits, pos_ - digits)).c_str(), nullptr, 16);
      return n;
    }
    bool is_float = false;
    while (!AtEnd()) {
      const char c = Peek();
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        is_float = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && (Peek() == '-' || Peek() == '+')) ++pos_;
      } else {
        break;
      }
    }
    const std::string token(text_.substr(start, pos_ - start));
    if (token.empty() || token == "-" || token == "+") {
      pos_ = start;
      return Error("expected a number");
    }
    errno = 0;
    char* end = nullptr;
    if (is_float) {
      n.form = Number::Form::kFloat;
      n.real = std::strtod(token.c_str(), &end);
    } else {
      n.form = Number::Form::kInteger;
      n.is_negative = token[0] == '-';
      if (n.is_negative) {
        n.integer = std::strtoll(token.c_str(), &end, 10);
      } else {
        n.unsigned_integer = std::strtoull(token.c_str(), &end, 10);
        n.integer = static_cast<int64_t>(n.unsigned_integer);
      }
      n.real = n.is_negative ? static_cast<double>(n.integer)
                             : static_cast<double>(n.unsigned_integer);
    }
    if (end == nullptr || *end != '\0' || errno == ERANGE) {
      pos_ = start;
      return Error(StrCat("bad number '", token, "'"));
    }
    return n;
  }

  // Appends `n` as one element of `type`.
  absl::Status AppendElement(const Number& n, PrimitiveType type, std::vector<uint8_t>* bytes) {
    uint64_t bits = 0;
    const int width = ByteWidth(type);
    if (type == PrimitiveType::kPred) {
      if (n.form == Number::Form::kFloat) return Error("a float where i1 was expected");
      bits = (n.form == Number::Form::kHexBits ? n.bits : static_cast<uint64_t>(n.integer)) != 0;
    } else if (IsIntegral(type)) {
      if (n.form == Number::Form::kFloat) return Error("a float where an integer was expected");
      bits = n.form == Number::Form::kHexBits ? n.bits : static_cast<uint64_t>(n.integer);
      const int bit_width = BitWidth(type);
      if (bit_width < 64 && n.form == Number::Form::kInteger) {
        const bool fits = IsSignedIntegral(type)
                              ? n.integer >= -(int64_t{1} << (bit_width - 1)) &&
                                    (n.is_negative || n.unsigned_integer <
                                                          (uint64_t{1} << (bit_width - 1)))
                              : !n.is_negative && n.unsigned_integer < (uint64_t{1} << bit_width);
        if (!fits) {
          return Error(StrCat("value out of range for ", PrimitiveTypeName(type)));
        }
      }
    } else if (type == PrimitiveType::kF64) {
      double v = n.real;
      if (n.form == Number::Form::kHexBits) {
        std::memcpy(&v, &n.bits, sizeof(v));
      } else if (n.form == Number::Form::kBool) {
        return Error("a boolean where a float was expected");
      }
      std::memcpy(&bits, &v, sizeof(v));
    } else if (type == PrimitiveType::kF32) {
      if (n.form == Number::Form::kHexBits) {
        bits = n.bits;
      } else if (n.form == Number::Form::kBool) {
        return Error("a boolean where a float was expected");
      } else {
        const float v = static_cast<float>(n.real);
        uint32_t b = 0;
        std::memcpy(&b, &v, sizeof(b));
        bits = b;
      }
    } else if (IsFloatingPoint(type)) {
      if (n.form == Number::Form::kBool) return Error("a boolean where a float was expected");
      bits = n.form == Number::Form::kHexBits ? n.bits : DoubleToFloatBits(type, n.real);
    } else {
      return Error(StrCat("unsupported element type ", PrimitiveTypeName(type)));
    }
    for (int i = 0; i < width; ++i) bytes->push_back(static_cast<uint8_t>(bits >> (8 * i)));
    return absl::OkStatus();
  }

  // `array<T: v, v, ...>` or `array<T>`.
  absl::StatusOr<FfiAttribute> ParseDenseArray() {
    if (!Consume('<')) return Error("expected '<' after 'array'");
    absl::StatusOr<PrimitiveType> type = ParseType();
    if (!type.ok()) return type.status();
    FfiAttribute attr;
    attr.kind = FfiAttribute::Kind::kArray;
    attr.type = *type;
    if (Consume(':')) {
      do {
        absl::StatusOr<Number> n = ParseNumber();
        if (!n.ok()) return n.status();
        if (absl::Status st = AppendElement(*n, *type, &attr.bytes); !st.ok()) return st;
        ++attr.count;
      } while (Consume(','));
    }
    if (!Consume('>')) return Error("expected '>' to close array<...>");
    return attr;
  }

  // Values of a dense<...> body, flattened: nested [..] lists, one splat value, or a hex string.
  absl::Status ParseDenseValues(std::vector<Number>* values, int depth) {
    if (depth > kMaxDepth) return Error("dense value nested too deeply");
    if (Consume('[')) {
      if (Consume(']')) return absl::OkStatus();
      do {
        if (absl::Status st = ParseDenseValues(values, depth + 1); !st.ok()) return st;
      } while (Consume(','));
      if (!Consume(']')) return Error("expected ',' or ']'");
      return absl::OkStatus();
    }
    absl::StatusOr<Number> n = ParseNumber();
    if (!n.ok()) return n.status();
    values->push_back(*n);
    return absl::OkStatus();
  }

  // `dense<...> : tensor<AxBxT>`.
  absl::StatusOr<FfiAttribute> ParseDenseElements() {
    if (!Consume('<')) return Error("expected '<' after 'dense'");
    std::vector<Number> values;
    std::string hex;
    bool has_hex = false;
    SkipSpace();
    if (Peek() == '"') {
      absl::StatusOr<std::string> s = ParseString();
      if (!s.ok()) return s.status();
      if (s->size() < 2 || (*s)[0] != '0' || ((*s)[1] != 'x' && (*s)[1] != 'X') ||
          s->size() % 2 != 0) {
        return Error("expected a \"0x...\" hex string in dense<>");
      }
      for (size_t i = 2; i < s->size(); ++i) {
        if (!std::isxdigit(static_cast<unsigned char>((*s)[i]))) {
          return Error("bad hex digit in dense<>");
        }
      }
      hex = s->substr(2);
      has_hex = true;
    } else if (absl::Status st = ParseDenseValues(&values, 0); !st.ok()) {
      return st;
    }
    if (!Consume('>')) return Error("expected '>' to close dense<...>");
    if (!Consume(':')) return Error("expected ': tensor<...>' after dense<...>");
    if (!ConsumeWord("tensor") || !Consume('<')) return Error("expected 'tensor<'");
    // Dimensions: digits followed by 'x', then the element type.
    int64_t count = 1;
    while (true) {
      SkipSpace();
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) break;
      const size_t start = pos_;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
      if (Peek() != 'x') {
        pos_ = start;
        break;
      }
      const int64_t dim =
          std::strtoll(std::string(text_.substr(start, pos_ - start)).c_str(), nullptr, 10);
      ++pos_;  // 'x'
      if (dim < 0 || (dim > 0 && count > (int64_t{1} << 32) / dim)) {
        return Error("tensor too large for an attribute");
      }
      count *= dim;
    }
    absl::StatusOr<PrimitiveType> type = ParseType();
    if (!type.ok()) return type.status();
    if (!Consume('>')) return Error("expected '>' to close tensor<...>");
    FfiAttribute attr;
    attr.kind = FfiAttribute::Kind::kArray;
    attr.type = *type;
    attr.count = count;
    const size_t width = static_cast<size_t>(ByteWidth(*type));
    if (has_hex) {
      std::vector<uint8_t> raw;
      for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        raw.push_back(static_cast<uint8_t>(std::strtoul(hex.substr(i, 2).c_str(), nullptr, 16)));
      }
      if (raw.size() == width && count != 1) {  // a splat
        for (int64_t i = 0; i < count; ++i) attr.bytes.insert(attr.bytes.end(), raw.begin(), raw.end());
      } else if (raw.size() == width * static_cast<size_t>(count)) {
        attr.bytes = std::move(raw);
      } else {
        return Error(StrCat("dense<> hex data has ", raw.size(), " bytes; tensor needs ",
                                  width * static_cast<size_t>(count)));
      }
      return attr;
    }
    if (values.size() == 1 && count != 1) {
      for (int64_t i = 0; i < count; ++i) {
        if (absl::Status st = AppendElement(values[0], *type, &attr.bytes); !st.ok()) return st;
      }
    } else if (static_cast<int64_t>(values.size()) == count) {
      for (const Number& n : values) {
        if (absl::Status st = AppendElement(n, *type, &attr.bytes); !st.ok()) return st;
      }
    } else {
      return Error(StrCat("dense<> has ", values.size(), " values; tensor has ", count,
                                " elements"));
    }
    return attr;
  }

  absl::StatusOr<FfiAttribute> ParseValue() {
    SkipSpace();
    if (Peek() == '{') {
      absl::StatusOr<FfiAttributeMap> map = ParseDictionary();
      if (!map.ok()) return map.status();
      FfiAttribute attr;
      attr.kind = FfiAttribute::Kind::kDictionary;
      attr.entries = std::move(*map);
      return attr;
    }
    if (Peek() == '"') {
      absl::StatusOr<std::string> s = ParseString();
      if (!s.ok()) return s.status();
      FfiAttribute attr;
      attr.kind = FfiAttribute::Kind::kString;
      attr.text = std::move(*s);
      return attr;
    }
    if (ConsumeWord("array")) return ParseDenseArray();
    if (ConsumeWord("dense")) return ParseDenseElements();
    if (Peek() == '[') {
      return Error("a list attribute ([...]) has no FFI form; use array<T: ...>");
    }
    if (ConsumeWord("unit")) return Error("unit attributes have no FFI form");
    absl::StatusOr<Number> n = ParseNumber();
    if (!n.ok()) return n.status();
    PrimitiveType type = n->form == Number::Form::kBool    ? PrimitiveType::kPred
                         : n->form == Number::Form::kFloat ? PrimitiveType::kF64
                                                           : PrimitiveType::kS64;
    if (Consume(':')) {
      absl::StatusOr<PrimitiveType> t = ParseType();
      if (!t.ok()) return t.status();
      type = *t;
    } else if (n->form == Number::Form::kHexBits) {
      return Error("a hex literal needs a type");
    }
    FfiAttribute attr;
    attr.kind = FfiAttribute::Kind::kScalar;
    attr.type = type;
    attr.count = 1;
    if (absl::Status st = AppendElement(*n, type, &attr.bytes); !st.ok()) return st;
    return attr;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

std::string ElementToString(PrimitiveType type, const uint8_t* p) {
  uint64_t bits = 0;
  const int width = ByteWidth(type);
  for (int i = 0; i < width; ++i) bits |= static_cast<uint64_t>(p[i]) << (8 * i);
  if (type == PrimitiveType::kPred) return bits ? "true" : "false";
  if (IsFloatingPoint(type)) return FormatFloatBitsShortest(type, bits);
  if (IsSignedIntegral(type) && width < 8 && (bits >> (8 * width - 1)) & 1) {
    bits |= ~uint64_t{0} << (8 * width);
  }
  return IsSignedIntegral(type) ? std::to_string(static_cast<int64_t>(bits)) : std::to_string(bits);
}

}  // namespace

std::string FfiAttribute::ToString() const {
  switch (kind) {
    case Kind::kScalar:
      return StrCat(ElementToString(type, bytes.data()), " : ", PrimitiveTypeName(type));
    case Kind::kArray: {
      std::vector<std::string> parts;
      const int width = ByteWidth(type);
      for (int64_t i = 0; i < count; ++i) parts.push_back(ElementToString(type, &bytes[i * width]));
      return StrCat("[", absl::StrJoin(parts, ", "), "] : ", PrimitiveTypeName(type));
    }
    case Kind::kString: {
      std::string out = "\"";
      for (char c : text) {
        if (c == '"' || c == '\\') out.push_back('\\');
        out.push_back(c);
      }
      return out + "\"";
    }
    case Kind::kDictionary:
      return FfiAttributesToString(entries);
  }
  return "";
}

std::string FfiAttributesToString(const FfiAttributeMap& attributes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : attributes) parts.push_back(name + " = " + value.ToString());
  return StrCat("{", absl::StrJoin(parts, ", "), "}");
}

absl::StatusOr<FfiAttributeMap> ParseFfiAttributes(std::string_view config) {
  return AttributeParser(config).ParseTop();
}

}  // namespace hlowb
