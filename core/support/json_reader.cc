#include "core/support/json_reader.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/support/strings.h"

namespace hlowb {

// Recursive-descent parser over the text; positions in errors are byte offsets.
class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    if (absl::Status st = ParseValue(&v, 0); !st.ok()) return st;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(StrCat("backend_config JSON at offset ", pos_, ": ", what));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Take(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  absl::Status ParseValue(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return Error("nesting deeper than 64 levels");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of text");
    char c = text_[pos_];
    if (c == '{') return ParseObject(v, depth);
    if (c == '[') return ParseArray(v, depth);
    if (c == '"') {
      v->kind_ = JsonValue::Kind::kString;
      return ParseString(&v->text_);
    }
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
      return ParseNumber(v);
    }
    std::string word = ParseWord();
    if (word == "true" || word == "false") {
      v->kind_ = JsonValue::Kind::kBool;
      v->bool_ = word == "true";
      return absl::OkStatus();
    }
    if (word == "null") {
      v->kind_ = JsonValue::Kind::kNull;
      return absl::OkStatus();
    }
    if (word == "nan" || word == "NaN" || word == "inf" || word == "Infinity") {
      v->kind_ = JsonValue::Kind::kNumber;
      v->number_ = word[0] == 'n' || word[0] == 'N' ? std::nan("") : INFINITY;
      v->text_ = word;
      return absl::OkStatus();
    }
    return Error(word.empty() ? StrCat("unexpected character '", std::string(1, c), "'")
                              : StrCat("unexpected word '", word, "'"));
  }

  std::string ParseWord() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '$' || text_[pos_] == '.' || text_[pos_] == '-')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::Status ParseNumber(JsonValue* v) {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
            text_[pos_] == '+' || text_[pos_] == '.')) {
      ++pos_;
    }
    std::string spelled(text_.substr(start, pos_ - start));
    char* end = nullptr;
    double d = std::strtod(spelled.c_str(), &end);
    if (end == spelled.c_str() || *end != '\0') return Error(StrCat("bad number '", spelled, "'"));
    v->kind_ = JsonValue::Kind::kNumber;
    v->number_ = d;
    v->text_ = std::move(spelled);
    return absl::OkStatus();
  }

  absl::Status ParseString(std::string* out) {
    ++pos_;  // opening quote
    out->clear();
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return Error("truncated \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            char h = text_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') {
              code |= h - '0';
            } else if (h >= 'a' && h <= 'f') {
              code |= h - 'a' + 10;
            } else if (h >= 'A' && h <= 'F') {
              code |= h - 'A' + 10;
            } else {
              return Error("bad \\u escape");
            }
          }
          // UTF-8 encode (surrogate pairs are kept as two code units; configs never use them).
          if (code < 0x80) {
            out->push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (code >> 6)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (code >> 12)));
            out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default: return Error(StrCat("bad escape '\\", std::string(1, e), "'"));
      }
    }
    return Error("unterminated string");
  }

  absl::Status ParseArray(JsonValue* v, int depth) {
    ++pos_;
    v->kind_ = JsonValue::Kind::kArray;
    if (Take(']')) return absl::OkStatus();
    while (true) {
      JsonValue element;
      if (absl::Status st = ParseValue(&element, depth + 1); !st.ok()) return st;
      v->array_.push_back(std::move(element));
      if (Take(',')) continue;
      if (Take(']')) return absl::OkStatus();
      return Error("expected ',' or ']' in an array");
    }
  }

  absl::Status ParseObject(JsonValue* v, int depth) {
    ++pos_;
    v->kind_ = JsonValue::Kind::kObject;
    if (Take('}')) return absl::OkStatus();
    while (true) {
      SkipSpace();
      std::string key;
      if (pos_ < text_.size() && text_[pos_] == '"') {
        if (absl::Status st = ParseString(&key); !st.ok()) return st;
      } else {
        key = ParseWord();  // unquoted key, as in hand-written configs
        if (key.empty()) return Error("expected a key in an object");
      }
      if (!Take(':')) return Error(StrCat("expected ':' after key \"", key, "\""));
      JsonValue member;
      if (absl::Status st = ParseValue(&member, depth + 1); !st.ok()) return st;
      v->object_.emplace_back(std::move(key), std::move(member));
      if (Take(',')) continue;
      if (Take('}')) return absl::OkStatus();
      return Error("expected ',' or '}' in an object");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<JsonValue> JsonValue::Parse(std::string_view text) {
  return JsonParser(text).ParseDocument();
}

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& [k, v] : object_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<double> JsonValue::AsNumber() const {
  if (kind_ == Kind::kNumber) return number_;
  if (kind_ == Kind::kString && !text_.empty()) {
    char* end = nullptr;
    double d = std::strtod(text_.c_str(), &end);
    if (end != text_.c_str() && *end == '\0') return d;
  }
  return std::nullopt;
}

std::optional<int64_t> JsonValue::AsInt() const {
  if (kind_ == Kind::kString && !text_.empty()) {
    char* end = nullptr;
    long long v = std::strtoll(text_.c_str(), &end, 10);
    if (end != text_.c_str() && *end == '\0') return static_cast<int64_t>(v);
    return std::nullopt;
  }
  if (kind_ != Kind::kNumber || !std::isfinite(number_) || std::floor(number_) != number_ ||
      std::fabs(number_) > 9.0e18) {
    return std::nullopt;
  }
  return static_cast<int64_t>(number_);
}

std::optional<bool> JsonValue::AsBool() const {
  if (kind_ == Kind::kBool) return bool_;
  if (kind_ == Kind::kString && (text_ == "true" || text_ == "false")) return text_ == "true";
  return std::nullopt;
}

std::optional<std::string> JsonValue::AsText() const {
  switch (kind_) {
    case Kind::kString:
    case Kind::kNumber: return text_;
    case Kind::kBool: return std::string(bool_ ? "true" : "false");
    default: return std::nullopt;
  }
}

std::optional<std::vector<int64_t>> JsonValue::AsIntArray() const {
  if (kind_ != Kind::kArray) return std::nullopt;
  std::vector<int64_t> out;
  for (const JsonValue& e : array_) {
    std::optional<int64_t> v = e.AsInt();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

}  // namespace hlowb
