// Corpus runs: the corpus files (CorpusFiles) and deterministic small-valued inputs (Pattern).
#ifndef HLOWB_TESTS_UNIT_EVALUATOR_CORPUS_INPUTS_H_
#define HLOWB_TESTS_UNIT_EVALUATOR_CORPUS_INPUTS_H_

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/ir/float_types.h"
#include "core/ir/literal.h"

namespace hlowb::testing {

// Small values: ints 0,1,2 (valid as indices for any non-empty dimension >= 3, and clamped or
// skipped otherwise), floats in [-0.75, 0.75], pred alternating.
inline Literal Pattern(const Shape& shape, int salt) {
  if (shape.IsTuple()) {
    Literal t(shape, false);
    t.mutable_tuple_elements()->clear();
    for (int i = 0; i < shape.tuple_count(); ++i) {
      t.mutable_tuple_elements()->push_back(Pattern(shape.tuple_shape(i), salt + i));
    }
    return t;
  }
  Literal l(shape);
  if (!shape.IsArray()) return l;
  PrimitiveType t = shape.element_type();
  if (t == PrimitiveType::kF32) {  // the common case, typed for speed
    float* f = l.mutable_data_as<float>();
    for (int64_t i = 0; i < l.element_count(); ++i) {
      f[i] = static_cast<float>((static_cast<double>((i + salt) % 7) - 3) * 0.25);
    }
    return l;
  }
  for (int64_t i = 0; i < l.element_count(); ++i) {
    int64_t v = (i + salt) % 3;
    if (t == PrimitiveType::kPred) {
      l.SetBits(i, v & 1);
    } else if (IsIntegral(t)) {
      l.SetBits(i, static_cast<uint64_t>(v));
    } else {
      double d = (static_cast<double>((i + salt) % 7) - 3) * 0.25;
      if (t == PrimitiveType::kF32) {
        float f = static_cast<float>(d);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        l.SetBits(i, b);
      } else if (t == PrimitiveType::kF64) {
        uint64_t b;
        std::memcpy(&b, &d, 8);
        l.SetBits(i, b);
      } else if (IsComplex(t)) {
        int cb = l.component_bytes();
        for (int c = 0; c < 2; ++c) {
          if (cb == 4) {
            float f = static_cast<float>(d);
            std::memcpy(l.mutable_data()->data() + (2 * i + c) * 4, &f, 4);
          } else {
            std::memcpy(l.mutable_data()->data() + (2 * i + c) * 8, &d, 8);
          }
        }
      } else {
        l.SetBits(i, DoubleToFloatBits(t, t == PrimitiveType::kF8E8M0FNU ? 1.0 : d));
      }
    }
  }
  return l;
}

// The corpus's .hlo and .txt files under `root`, sorted; empty when the folder is absent.
inline std::vector<std::string> CorpusFiles(const std::string& root) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, ec)) {
    if (!entry.is_regular_file()) continue;
    std::string ext = entry.path().extension().string();
    if (ext == ".hlo" || ext == ".txt") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_EVALUATOR_CORPUS_INPUTS_H_
