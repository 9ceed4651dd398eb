// A small JSON reader for the backend_config strings custom-call handlers interpret
// (GpuBackendConfig, CudnnConvBackendConfig, the CPU BackendConfig, ...). XLA writes these with
// protobuf's JSON printer, so 64-bit integers arrive as strings ("1") and enums as names; the
// accessors accept either spelling. It is lenient where hand-edited configs are sloppy
// (unquoted keys such as `{conv_result_scale:1}`) and strict about everything else: a config
// that does not parse is an error naming the position, never a guess.
//
// It reads only; it does not write JSON, keep comments, or preserve key order beyond the input
// order, and it caps nesting depth so a hostile config cannot exhaust the stack.
#ifndef HLOWB_CORE_SUPPORT_JSON_READER_H_
#define HLOWB_CORE_SUPPORT_JSON_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace hlowb {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  // Parses a complete JSON text (surrounding whitespace allowed).
  static absl::StatusOr<JsonValue> Parse(std::string_view text);

  Kind kind() const { return kind_; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_string() const { return kind_ == Kind::kString; }

  // Member of an object by key; nullptr when absent or when this is not an object.
  const JsonValue* Find(std::string_view key) const;
  // A number, or a string holding a number ("1", "-2.5").
  std::optional<double> AsNumber() const;
  // An integral number, or a string holding one.
  std::optional<int64_t> AsInt() const;
  // true/false, or the strings "true"/"false".
  std::optional<bool> AsBool() const;
  // Strings verbatim; numbers and bools in their JSON spelling; nullopt otherwise.
  std::optional<std::string> AsText() const;
  // Integers of an array of numbers or numeric strings; nullopt if any element is not one.
  std::optional<std::vector<int64_t>> AsIntArray() const;

  const std::string& string_value() const { return text_; }
  const std::vector<JsonValue>& array() const { return array_; }
  const std::vector<std::pair<std::string, JsonValue>>& object() const { return object_; }

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string text_;  // string value, or a number's original spelling
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> object_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_JSON_READER_H_
