// String helpers that accept std::string_view. Debian's abseil is built with its own
// absl::string_view (not an alias of std::string_view), so absl::StrCat cannot take a
// std::string_view directly; these wrappers adapt the arguments.
#ifndef HLOWB_CORE_SUPPORT_STRINGS_H_
#define HLOWB_CORE_SUPPORT_STRINGS_H_

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace hlowb {

inline absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view AsStd(absl::string_view s) { return std::string_view(s.data(), s.size()); }

namespace strings_internal {
inline absl::string_view Adapt(std::string_view s) { return AsAbsl(s); }
template <typename T>
const T& Adapt(const T& value) {
  return value;
}
}  // namespace strings_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(strings_internal::Adapt(args)...);
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  absl::StrAppend(out, strings_internal::Adapt(args)...);
}

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_STRINGS_H_
