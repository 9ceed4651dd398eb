// Comparison of two literals with XLA's rules (xla/literal_comparison.cc, NearComparator), as
// run_hlo_module applies them with --abs_error_bound / --rel_error_bound:
//
//  * Floating-point elements (every float type, compared in double) and each part of a complex
//    element: abs_error = |actual - expected|, rel_error = abs_error / |expected| (infinite
//    when expected is 0). An element mismatches only when BOTH abs_error > abs bound AND
//    rel_error > rel bound. Bitwise-equal values, and +0 vs -0, never mismatch.
//  * NaN: NaN against NaN matches whatever the sign or payload; NaN against a number mismatches
//    (both errors infinite). With relaxed_nans, an expected NaN matches anything.
//  * Inf: an infinity matches only the same infinity; against anything else both errors are
//    infinite. With fewer_infs_ok, an actual ±inf where a finite value was expected is compared
//    as the type's largest finite value of that sign.
//  * pred and integers: exact equality.
//  * A complex element whose two parts both mismatch counts once.
//  * Tuples: element by element, each leaf its own report; shapes (ignoring layout) must match.
//
// The report gives, per output leaf, the number of mismatches, the largest errors, and the
// worst mismatching elements (largest abs_error first) with multi-index, expected and actual.
#ifndef HLOWB_REPLAY_COMPARE_COMPARE_H_
#define HLOWB_REPLAY_COMPARE_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/literal.h"

namespace hlowb {

struct ErrorBounds {
  double abs = 1e-3;
  double rel = 1e-3;
  bool relaxed_nans = false;
  bool fewer_infs_ok = false;
};

struct ElementMismatch {
  std::vector<int64_t> index;  // multi-index, dimension 0 first
  std::string expected;
  std::string actual;
  double abs_error = 0;
  double rel_error = 0;
};

struct OutputComparison {
  ShapeIndex output;          // tuple path of this leaf ({} for an array result)
  std::string shape;          // expected shape text
  std::string error;          // set when the leaves cannot be compared (shape mismatch, ...)
  int64_t element_count = 0;
  int64_t mismatches = 0;
  int64_t nan_mismatches = 0;  // mismatches where exactly one side is NaN
  double max_abs_error = 0;    // over all elements (infinite for NaN/Inf disagreements)
  double max_rel_error = 0;
  std::vector<ElementMismatch> worst;
  bool ok() const { return error.empty() && mismatches == 0; }
};

struct ComparisonReport {
  ErrorBounds bounds;
  std::vector<OutputComparison> outputs;
  bool ok() const;
  int64_t total_mismatches() const;
  // Human-readable: one verdict line, then per failing output its mismatches and worst elements.
  std::string ToString() const;
};

// Compares `actual` against `expected`; `max_worst` bounds the elements listed per output.
ComparisonReport CompareLiterals(const Literal& expected, const Literal& actual,
                                 const ErrorBounds& bounds = {}, int max_worst = 5);

// "{1,2,0}" for a multi-index.
std::string FormatMultiIndex(const std::vector<int64_t>& index);
// One element as text: numbers as the shortest round-tripping form, pred as true/false,
// complex as (re, im).
std::string FormatElement(const Literal& literal, int64_t linear_index);

// Statistics of a literal's values (every array leaf; complex values count both parts).
struct LiteralStatistics {
  int64_t elements = 0;
  int64_t nan_count = 0;
  int64_t inf_count = 0;
  int64_t finite_count = 0;
  double min = 0;  // over finite values; 0 when there are none
  double max = 0;
  double mean = 0;
};
LiteralStatistics ComputeStatistics(const Literal& literal);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_COMPARE_COMPARE_H_
