#include "replay/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ir/float_types.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Component `c` (for complex: 2*i or 2*i+1) of a float-typed literal as a double.
inline double ComponentValue(const Literal& l, PrimitiveType component_type, int64_t c) {
  switch (component_type) {
    case PrimitiveType::kF32: return l.data_as<float>()[c];
    case PrimitiveType::kF64: return l.data_as<double>()[c];
    default: return FloatBitsToDouble(component_type, l.GetBits(c));
  }
}

std::vector<int64_t> MultiIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    int64_t size = shape.dimension(d);
    if (size <= 0) break;
    index[d] = linear % size;
    linear /= size;
  }
  return index;
}

struct Candidate {
  int64_t linear;
  double abs_error;
  double rel_error;
};

// Keeps the `k` candidates with the largest errors (abs first, then rel, then lower index).
class Worst {
 public:
  explicit Worst(int k) : k_(k) {}
  static bool Better(const Candidate& a, const Candidate& b) {
    if (a.abs_error != b.abs_error) return a.abs_error > b.abs_error;
    if (a.rel_error != b.rel_error) return a.rel_error > b.rel_error;
    return a.linear < b.linear;
  }
  void Add(const Candidate& c) {
    if (k_ <= 0) return;
    if (static_cast<int>(items_.size()) < k_) {
      items_.push_back(c);
      std::push_heap(items_.begin(), items_.end(), Better);
    } else if (Better(c, items_.front())) {
      std::pop_heap(items_.begin(), items_.end(), Better);
      items_.back() = c;
      std::push_heap(items_.begin(), items_.end(), Better);
    }
  }
  std::vector<Candidate> Sorted() {
    std::vector<Candidate> v = items_;
    std::sort(v.begin(), v.end(), Better);
    return v;
  }

 private:
  int k_;
  std::vector<Candidate> items_;  // heap whose front is the least bad kept
};

struct FloatErrors {
  double abs_error;
  double rel_error;
  bool nan_mismatch;
};

FloatErrors Errors(double expected, double actual, PrimitiveType type, const ErrorBounds& b) {
  if (expected == actual) return {0, 0, false};  // also +0 vs -0
  bool en = std::isnan(expected), an = std::isnan(actual);
  if (en || an) {
    if (en && an) return {0, 0, false};
    if (b.relaxed_nans && en) return {0, 0, false};
    return {kInf, kInf, true};
  }
  if (std::isinf(actual) && !std::isinf(expected) && b.fewer_infs_ok) {
    double finite = std::copysign(FloatTypeMaxFinite(type), actual);
    double abs_error = std::fabs(finite - expected);
    return {abs_error, expected != 0 ? abs_error / std::fabs(expected) : kInf, false};
  }
  if (std::isinf(expected) || std::isinf(actual)) return {kInf, kInf, false};
  double abs_error = std::fabs(actual - expected);
  return {abs_error, expected != 0 ? abs_error / std::fabs(expected) : kInf, false};
}

void CompareArrays(const Literal& expected, const Literal& actual, const ErrorBounds& bounds,
                   int max_worst, OutputComparison* out) {
  const PrimitiveType type = expected.shape().element_type();
  const int64_t n = expected.element_count();
  out->element_count = n;
  Worst worst(max_worst);
  if (IsFloatingPoint(type) || IsComplex(type)) {
    const PrimitiveType ct = ComplexComponentType(type);
    const int parts = IsComplex(type) ? 2 : 1;
    for (int64_t i = 0; i < n; ++i) {
      bool mismatch = false, nan_mismatch = false;
      double worst_abs = 0, worst_rel = 0;
      for (int p = 0; p < parts; ++p) {
        int64_t c = i * parts + p;
        double e = ComponentValue(expected, ct, c), a = ComponentValue(actual, ct, c);
        if (e == a && !std::isnan(e)) continue;  // fast path for equal values
        FloatErrors err = Errors(e, a, ct, bounds);
        out->max_abs_error = std::max(out->max_abs_error, err.abs_error);
        out->max_rel_error = std::max(out->max_rel_error, err.rel_error);
        if (err.abs_error > bounds.abs && err.rel_error > bounds.rel) {
          mismatch = true;
          nan_mismatch |= err.nan_mismatch;
          worst_abs = std::max(worst_abs, err.abs_error);
          worst_rel = std::max(worst_rel, err.rel_error);
        }
      }
      if (mismatch) {
        ++out->mismatches;
        if (nan_mismatch) ++out->nan_mismatches;
        worst.Add({i, worst_abs, worst_rel});
      }
    }
  } else {
    // pred and integers: exact.
    const bool is_signed = IsSignedIntegral(type);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t e = expected.GetBits(i), a = actual.GetBits(i);
      if (e == a) continue;
      double diff = is_signed ? std::fabs(static_cast<double>(expected.GetInt(i)) -
                                          static_cast<double>(actual.GetInt(i)))
                              : std::fabs(static_cast<double>(e) - static_cast<double>(a));
      double ev = is_signed ? static_cast<double>(expected.GetInt(i)) : static_cast<double>(e);
      double rel = ev != 0 ? diff / std::fabs(ev) : kInf;
      ++out->mismatches;
      out->max_abs_error = std::max(out->max_abs_error, diff);
      out->max_rel_error = std::max(out->max_rel_error, rel);
      worst.Add({i, diff, rel});
    }
  }
  for (const Candidate& c : worst.Sorted()) {
    ElementMismatch m;
    m.index = MultiIndex(expected.shape(), c.linear);
    m.expected = FormatElement(expected, c.linear);
    m.actual = FormatElement(actual, c.linear);
    m.abs_error = c.abs_error;
    m.rel_error = c.rel_error;
    out->worst.push_back(std::move(m));
  }
}

void CompareRecursive(const Literal& expected, const Literal& actual, const ErrorBounds& bounds,
                      int max_worst, ShapeIndex* path, ComparisonReport* report) {
  const Shape& es = expected.shape();
  const Shape& as = actual.shape();
  if (es.IsTuple() && as.IsTuple() && es.tuple_count() == as.tuple_count() &&
      !expected.elided() && !actual.elided()) {
    for (int i = 0; i < es.tuple_count(); ++i) {
      path->push_back(i);
      CompareRecursive(expected.tuple_elements()[i], actual.tuple_elements()[i], bounds, max_worst,
                       path, report);
      path->pop_back();
    }
    return;
  }
  OutputComparison out;
  out.output = *path;
  out.shape = PrintShape(es, false);
  if (!es.Compatible(as)) {
    out.error = StrCat("shape mismatch: expected ", PrintShape(es, false), ", actual ",
                       PrintShape(as, false));
  } else if (expected.elided() || actual.elided()) {
    out.error = StrCat(expected.elided() ? "expected" : "actual", " value has no data (elided)");
  } else if (es.IsArray()) {
    CompareArrays(expected, actual, bounds, max_worst, &out);
  }
  report->outputs.push_back(std::move(out));
}

std::string Num(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

void AccumulateStats(const Literal& l, LiteralStatistics* s, double* sum) {
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) AccumulateStats(e, s, sum);
    return;
  }
  if (!l.shape().IsArray() || l.elided()) return;
  const PrimitiveType t = l.shape().element_type();
  const PrimitiveType ct = ComplexComponentType(t);
  const int64_t n = l.component_count();
  s->elements += l.element_count();
  auto add = [&](double v) {
    if (std::isnan(v)) {
      ++s->nan_count;
    } else if (std::isinf(v)) {
      ++s->inf_count;
    } else {
      if (s->finite_count == 0) {
        s->min = s->max = v;
      } else {
        s->min = std::min(s->min, v);
        s->max = std::max(s->max, v);
      }
      ++s->finite_count;
      *sum += v;
    }
  };
  if (ct == PrimitiveType::kF32) {
    const float* f = l.data_as<float>();
    for (int64_t i = 0; i < n; ++i) add(f[i]);
  } else if (IsFloatingPoint(ct)) {
    for (int64_t i = 0; i < n; ++i) add(ComponentValue(l, ct, i));
  } else if (IsSignedIntegral(t)) {
    for (int64_t i = 0; i < n; ++i) add(static_cast<double>(l.GetInt(i)));
  } else {
    for (int64_t i = 0; i < n; ++i) add(static_cast<double>(l.GetBits(i)));
  }
}

}  // namespace

bool ComparisonReport::ok() const {
  return std::all_of(outputs.begin(), outputs.end(), [](const OutputComparison& o) { return o.ok(); });
}

int64_t ComparisonReport::total_mismatches() const {
  int64_t n = 0;
  for (const OutputComparison& o : outputs) n += o.mismatches;
  return n;
}

std::string FormatMultiIndex(const std::vector<int64_t>& index) {
  std::string s = "{";
  for (size_t i = 0; i < index.size(); ++i) StrAppend(&s, i ? "," : "", index[i]);
  return s + "}";
}

std::string FormatElement(const Literal& l, int64_t i) {
  const PrimitiveType t = l.shape().element_type();
  if (t == PrimitiveType::kPred) return l.GetBits(i) ? "true" : "false";
  if (IsSignedIntegral(t)) return StrCat(l.GetInt(i));
  if (IsUnsignedIntegral(t)) return StrCat(l.GetBits(i));
  if (IsComplex(t)) {
    PrimitiveType ct = ComplexComponentType(t);
    return StrCat("(", FormatFloatBitsShortest(ct, l.GetBits(2 * i)), ", ",
                  FormatFloatBitsShortest(ct, l.GetBits(2 * i + 1)), ")");
  }
  if (IsFloatingPoint(t)) return FormatFloatBitsShortest(t, l.GetBits(i));
  return "?";
}

ComparisonReport CompareLiterals(const Literal& expected, const Literal& actual,
                                 const ErrorBounds& bounds, int max_worst) {
  ComparisonReport report;
  report.bounds = bounds;
  ShapeIndex path;
  CompareRecursive(expected, actual, bounds, max_worst, &path, &report);
  return report;
}

std::string ComparisonReport::ToString() const {
  std::string s;
  int64_t elements = 0;
  for (const OutputComparison& o : outputs) elements += o.element_count;
  if (ok()) {
    StrAppend(&s, "OK: ", outputs.size(), outputs.size() == 1 ? " output, " : " outputs, ",
              elements, " elements within abs ", Num(bounds.abs), " / rel ", Num(bounds.rel), "\n");
    return s;
  }
  int failing = 0;
  for (const OutputComparison& o : outputs) failing += o.ok() ? 0 : 1;
  StrAppend(&s, "MISMATCH: ", failing, " of ", outputs.size(), " outputs differ (",
            total_mismatches(), " elements beyond abs ", Num(bounds.abs), " and rel ",
            Num(bounds.rel), ")\n");
  for (const OutputComparison& o : outputs) {
    if (o.ok()) continue;
    std::string name = o.output.empty() ? "result" : StrCat("result ", FormatMultiIndex(o.output));
    if (!o.error.empty()) {
      StrAppend(&s, "  ", name, ": ", o.error, "\n");
      continue;
    }
    StrAppend(&s, "  ", name, " ", o.shape, ": ", o.mismatches, " of ", o.element_count,
              " elements mismatch");
    if (o.nan_mismatches) StrAppend(&s, " (", o.nan_mismatches, " NaN vs number)");
    StrAppend(&s, "; max abs error ", Num(o.max_abs_error), ", max rel error ",
              Num(o.max_rel_error), "\n");
    for (const ElementMismatch& m : o.worst) {
      StrAppend(&s, "    at ", FormatMultiIndex(m.index), ": expected ", m.expected, ", actual ",
                m.actual, " (abs ", Num(m.abs_error), ", rel ", Num(m.rel_error), ")\n");
    }
  }
  return s;
}

LiteralStatistics ComputeStatistics(const Literal& literal) {
  LiteralStatistics s;
  double sum = 0;
  AccumulateStats(literal, &s, &sum);
  if (s.finite_count > 0) s.mean = sum / static_cast<double>(s.finite_count);
  return s;
}

}  // namespace hlowb
