// `hlowb literal FILE [--summary]`: prints a snapshot's arguments and result, or the literal in
// a literal file (binary or text LiteralProto, HLO literal text), in HLO literal syntax. With
// --summary, one line per array instead: shape, element count, min/max/mean over the finite
// values, and NaN/Inf counts (complex values count both components).
#include <cmath>
#include <iostream>
#include <limits>

#include "app/cli/cli.h"
#include "core/ir/float_types.h"
#include "core/proto/open_file.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb::cli {
namespace {

constexpr char kUsage[] =
    "usage: hlowb literal FILE [--summary] [--literal_format=xla|compact]\n"
    "Values print as XLA's Literal::ToString writes them (xla, the default) or on one line\n"
    "with the layout (compact).\n";

std::string Number(double v) {
  if (std::isnan(v)) return "-";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return StrCat(static_cast<int64_t>(v));
  return StrCat(v);
}

void Summarize(const std::string& name, const Literal& lit, std::ostream& os) {
  const Shape& shape = lit.shape();
  if (shape.IsTuple()) {
    if (lit.elided()) {
      os << name << ": " << PrintShape(shape) << " (data elided)\n";
      return;
    }
    for (size_t i = 0; i < lit.tuple_elements().size(); ++i) {
      Summarize(StrCat(name, " {", i, "}"), lit.tuple_elements()[i], os);
    }
    return;
  }
  os << name << ": " << PrintShape(shape);
  if (!shape.IsArray()) {
    os << "\n";
    return;
  }
  if (lit.elided()) {
    os << " (data elided)\n";
    return;
  }
  const PrimitiveType t = shape.element_type();
  const PrimitiveType component = ComplexComponentType(t);
  int64_t nan = 0, inf = 0, finite = 0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  double sum = 0;
  for (int64_t i = 0; i < lit.component_count(); ++i) {
    double v;
    if (IsFloatingPoint(component)) {
      v = FloatBitsToDouble(component, lit.GetBits(i));
    } else if (IsSignedIntegral(t)) {
      v = static_cast<double>(lit.GetInt(i));
    } else {
      v = static_cast<double>(lit.GetBits(i));
    }
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++inf;
    } else {
      ++finite;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
  }
  os << " elements=" << lit.element_count();
  if (finite > 0) {
    os << " min=" << Number(lo) << " max=" << Number(hi)
       << " mean=" << StrCat(sum / static_cast<double>(finite));
  } else {
    os << " min=- max=- mean=-";
  }
  if (IsFloatingPoint(component)) os << " nan=" << nan << " inf=" << inf;
  os << "\n";
}

}  // namespace

int RunLiteral(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"summary"}, {"literal_format"}, &args, &error) ||
      args.positional.size() != 1) {
    std::cerr << "hlowb literal: " << (error.empty() ? "expected exactly one FILE" : error) << "\n"
              << kUsage;
    return kUsageError;
  }
  const std::string format = args.Get("literal_format", "xla");
  if (format != "xla" && format != "compact") {
    std::cerr << "hlowb literal: --literal_format must be xla or compact\n" << kUsage;
    return kUsageError;
  }
  const bool compact = format == "compact";
  absl::StatusOr<LiteralFile> file = OpenLiteralFile(args.positional[0]);
  if (!file.ok()) {
    std::cerr << "error: " << file.status().message() << "\n";
    return kInputError;
  }
  for (const std::string& w : file->warnings) std::cerr << "warning: " << w << "\n";
  std::cout << "// " << file->description << "\n";
  for (const NamedLiteral& l : file->literals) {
    if (args.Has("summary")) {
      Summarize(l.name, l.literal, std::cout);
    } else {
      std::cout << l.name << ": "
                << (compact ? PrintShapedLiteral(l.literal) : PrintLiteralAsXla(l.literal))
                << "\n";
    }
  }
  return kOk;
}

}  // namespace hlowb::cli
