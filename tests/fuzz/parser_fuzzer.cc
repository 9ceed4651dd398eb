// libFuzzer target for the HLO text front end. Any input must either fail to parse with a
// diagnostic or parse into a module that verifies without crashing, prints, and re-parses to an
// equal module whose printing is identical. Run with scripts/fuzz.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/analysis/verifier.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = hlowb::ParseModule(text);
  if (!module.ok()) return 0;
  (void)hlowb::VerifyModule(**module);
  for (auto options : {hlowb::PrintOptions::Long(), hlowb::PrintOptions::Short()}) {
    std::string printed = hlowb::PrintModule(**module, options);
    auto again = hlowb::ParseModule(printed);
    if (!again.ok()) {
      std::fprintf(stderr, "printed module does not re-parse:\n%s\n---\n%s\n", printed.c_str(),
                   std::string(again.status().message()).c_str());
      std::abort();
    }
    std::string why;
    if (!hlowb::ModulesEqual(**module, **again, &why)) {
      std::fprintf(stderr, "re-parsed module differs: %s\n%s\n", why.c_str(), printed.c_str());
      std::abort();
    }
    if (hlowb::PrintModule(**again, options) != printed) {
      std::fprintf(stderr, "printing is not idempotent:\n%s\n", printed.c_str());
      std::abort();
    }
  }
  return 0;
}
