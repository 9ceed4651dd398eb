// The attributes of a typed-FFI custom call (api_version=API_VERSION_TYPED_FFI), read from its
// backend_config. XLA writes them as an MLIR dictionary attribute:
//   backend_config={eps = 9.99999974E-6 : f32, mode = "double", negate = true,
//                   weights = dense<[1, -2, 5]> : tensor<3xi64>, opts = {k = 1 : i32}}
// and hands them to the handler typed: integers, floats and booleans as scalars of their MLIR
// type (i1 = pred, iN/siN = sN, uiN = uN, f16/bf16/f32/f64; an integer without a type is i64,
// a float f64), `array<T: ...>` and `dense<...> : tensor<...>` as arrays (splats expanded, the
// hex form `dense<"0x...">` decoded), strings as bytes and nested dictionaries as dictionaries.
// Entries are kept sorted by name, the order the FFI call frame requires.
//
// Independent of the FFI headers, so it builds and is tested everywhere.
#ifndef HLOWB_PLUGINS_FFI_FFI_ATTRIBUTES_H_
#define HLOWB_PLUGINS_FFI_FFI_ATTRIBUTES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/primitive_type.h"

namespace hlowb {

struct FfiAttribute;
using FfiAttributeMap = std::vector<std::pair<std::string, FfiAttribute>>;

struct FfiAttribute {
  enum class Kind { kScalar, kArray, kString, kDictionary };
  Kind kind = Kind::kScalar;
  PrimitiveType type = PrimitiveType::kInvalid;  // scalar and array element type
  // Scalar: one element; array: `count` elements, each ByteWidth(type) bytes, little endian.
  std::vector<uint8_t> bytes;
  int64_t count = 0;
  std::string text;          // string
  FfiAttributeMap entries;   // dictionary, sorted by name

  // A readable rendering for messages and `hlowb info`: `3 : s64`, `[1, -2, 5] : s64`, ...
  std::string ToString() const;
};

// Parses a backend_config dictionary. An empty config (or `{}`) has no attributes. Errors name
// the offset into the config and what was expected there.
absl::StatusOr<FfiAttributeMap> ParseFfiAttributes(std::string_view config);

// The rendering of a whole map: `{eps = 1e-05 : f32, mode = "double"}`.
std::string FfiAttributesToString(const FfiAttributeMap& attributes);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_FFI_FFI_ATTRIBUTES_H_
