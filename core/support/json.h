// Minimal JSON output helpers for the CLI's --format=json reports (writing only; the reports
// are flat enough that a builder would add nothing).
#ifndef HLOWB_CORE_SUPPORT_JSON_H_
#define HLOWB_CORE_SUPPORT_JSON_H_

#include <string>
#include <string_view>

namespace hlowb {

// A JSON string literal with quotes, escaping control characters, quotes and backslashes.
std::string JsonQuote(std::string_view s);

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_JSON_H_
