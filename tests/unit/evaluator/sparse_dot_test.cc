// dot with older XLA's structured N:M sparsity (`sparsity=L.1@2:4`): a compressed operand and
// its u16 metadata, packed here the way JAX's nm_pack packs them, must give the same result as
// the plain dot of the dense operand with zeros where nothing is kept; plus a hand-worked case,
// the verifier's view of the metadata shape, and the errors for bad metadata.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/ir/float_types.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/evaluator/eval_test_util.h"

namespace hlowb::testing {
namespace {

// A sparse operand in both forms.
struct SparseOperand {
  Literal dense;       // kept values in place, zeros elsewhere
  Literal compressed;  // the kept values only, in order along the sparse dimension
  Literal meta;        // u16: in-group positions, log2(m) bits each, kept element j at j*bits
};

int64_t Bits(int m) {
  int64_t b = 0;
  while ((1 << b) < m) ++b;
  return b;
}

// Random N:M operand of `dense_dims`, sparse along `dim`, with small integers (exact in every
// float type). Positions are drawn per group; the metadata is packed as nm_pack does.
SparseOperand MakeSparse(PrimitiveType type, std::vector<int64_t> dense_dims, int dim, int n,
                         int m, std::mt19937* rng) {
  const int64_t bits = Bits(m);
  const int64_t per_word = n * (16 / (n * bits));
  const int64_t dense_k = dense_dims[dim];
  const int64_t compressed_k = dense_k / m * n;
  std::vector<int64_t> cdims = dense_dims, mdims = dense_dims;
  cdims[dim] = compressed_k;
  mdims[dim] = (compressed_k + per_word - 1) / per_word;
  SparseOperand s{Literal(Shape::Array(type, dense_dims)), Literal(Shape::Array(type, cdims)),
                  Literal(Shape::Array(PrimitiveType::kU16, mdims))};
  int64_t inner = 1;
  for (size_t d = dim + 1; d < dense_dims.size(); ++d) inner *= dense_dims[d];
  int64_t outer = 1;
  for (int d = 0; d < dim; ++d) outer *= dense_dims[d];
  std::uniform_int_distribution<int> value(-4, 4);
  std::vector<int> positions(m);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      for (int64_t g = 0; g < dense_k / m; ++g) {
        std::iota(positions.begin(), positions.end(), 0);
        std::shuffle(positions.begin(), positions.end(), *rng);
        std::sort(positions.begin(), positions.begin() + n);
        for (int t = 0; t < n; ++t) {
          int v = value(*rng);
          if (v == 0) v = 5;  // kept values are non-zero, so a misplaced one shows
          const uint64_t bits_v = DoubleToFloatBits(type, v);
          const int64_t c = g * n + t;
          s.dense.SetBits((o * dense_k + g * m + positions[t]) * inner + in, bits_v);
          s.compressed.SetBits((o * compressed_k + c) * inner + in, bits_v);
          const int64_t mi = (o * mdims[dim] + c / per_word) * inner + in;
          s.meta.SetBits(mi, s.meta.GetBits(mi) |
                                 (static_cast<uint64_t>(positions[t]) << ((c % per_word) * bits)));
        }
      }
    }
  }
  return s;
}

std::string ShapeText(const Literal& l) { return PrintShape(l.shape(), false); }

absl::StatusOr<Literal> Evaluate(const std::string& text, const std::vector<Literal>& args) {
  auto m = ParseModule(text);
  if (!m.ok()) return m.status();
  std::vector<VerifierDiagnostic> diags = VerifyModule(**m);
  for (const VerifierDiagnostic& d : diags) {
    if (d.severity == VerifierDiagnostic::Severity::kError) {
      return absl::InvalidArgumentError("verifier: " + d.ToString());
    }
  }
  return EvaluateModule(**m, args);
}

struct Case {
  PrimitiveType type;
  PrimitiveType result;
  bool lhs_sparse;
  int n, m;
  bool batch;
};

// The sparse dot of `c` against the dense dot, over several random patterns.
void CheckAgainstDense(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t K = c.m * 8 * (c.m <= 4 ? 2 : 1);  // several metadata words per row
  const std::string batch_dims = c.batch ? "lhs_batch_dims={0}, rhs_batch_dims={0}, " : "";
  // lhs [B,] M x K (sparse dim last); rhs [B,] K x N (sparse dim the contracting one, not last).
  std::vector<int64_t> ldims = c.batch ? std::vector<int64_t>{2, 3, K} : std::vector<int64_t>{3, K};
  std::vector<int64_t> rdims = c.batch ? std::vector<int64_t>{2, K, 5} : std::vector<int64_t>{K, 5};
  const int lk = c.batch ? 2 : 1, rk = c.batch ? 1 : 0;
  SparseOperand sp = c.lhs_sparse ? MakeSparse(c.type, ldims, lk, c.n, c.m, &rng)
                                  : MakeSparse(c.type, rdims, rk, c.n, c.m, &rng);
  // The dense operand: random small integers.
  Literal other(Shape::Array(c.type, c.lhs_sparse ? rdims : ldims));
  std::uniform_int_distribution<int> value(-3, 3);
  for (int64_t i = 0; i < other.element_count(); ++i) {
    other.SetBits(i, DoubleToFloatBits(c.type, value(rng)));
  }
  const Literal& dense_l = c.lhs_sparse ? sp.dense : other;
  const Literal& dense_r = c.lhs_sparse ? other : sp.dense;
  const Literal& comp_l = c.lhs_sparse ? sp.compressed : other;
  const Literal& comp_r = c.lhs_sparse ? other : sp.compressed;
  const std::string out_shape =
      PrintShape(Shape::Array(c.result, c.batch ? std::vector<int64_t>{2, 3, 5}
                                                : std::vector<int64_t>{3, 5}),
                 false);
  const std::string dims = batch_dims + "lhs_contracting_dims={" + std::to_string(lk) +
                           "}, rhs_contracting_dims={" + std::to_string(rk) + "}";
  const std::string sparsity = std::string(c.lhs_sparse ? "L." : "R.") +
                               std::to_string(c.lhs_sparse ? lk : rk) + "@" +
                               std::to_string(c.n) + ":" + std::to_string(c.m);
  const std::string dense_text = "HloModule dense\nENTRY e {\n  l = " + ShapeText(dense_l) +
                                 " parameter(0)\n  r = " + ShapeText(dense_r) +
                                 " parameter(1)\n  ROOT d = " + out_shape + " dot(l, r), " + dims +
                                 "\n}\n";
  const std::string sparse_text =
      "HloModule sparse\nENTRY e {\n  l = " + ShapeText(comp_l) + " parameter(0)\n  r = " +
      ShapeText(comp_r) + " parameter(1)\n  meta = " + ShapeText(sp.meta) +
      " parameter(2)\n  ROOT d = " + out_shape + " dot(l, r, meta), " + dims +
      ", sparsity=" + sparsity + "\n}\n";
  auto want = Evaluate(dense_text, {dense_l, dense_r});
  ASSERT_TRUE(want.ok()) << want.status() << "\n" << dense_text;
  auto got = Evaluate(sparse_text, {comp_l, comp_r, sp.meta});
  ASSERT_TRUE(got.ok()) << got.status() << "\n" << sparse_text;
  EXPECT_TRUE(*got == *want) << sparse_text << "\nsparse: " << PrintShapedLiteral(*got)
                             << "\ndense:  " << PrintShapedLiteral(*want);
  // The dense operand really is sparse: a dot that ignored the metadata would differ.
  int64_t zeros = 0;
  for (int64_t i = 0; i < sp.dense.element_count(); ++i) zeros += sp.dense.GetBits(i) == 0;
  EXPECT_EQ(zeros, sp.dense.element_count() / c.m * (c.m - c.n));
}

TEST(EvalSparseDot, MatchesTheDenseDotOnRandomPatterns) {
  using PT = PrimitiveType;
  const Case cases[] = {
      {PT::kF32, PT::kF32, true, 2, 4, false},  {PT::kF32, PT::kF32, false, 2, 4, false},
      {PT::kF32, PT::kF32, true, 2, 4, true},   {PT::kF32, PT::kF32, false, 2, 4, true},
      {PT::kBF16, PT::kF32, true, 2, 4, false}, {PT::kBF16, PT::kBF16, false, 2, 4, true},
      {PT::kF16, PT::kF32, true, 2, 4, true},   {PT::kF16, PT::kF16, false, 2, 4, false},
      {PT::kF32, PT::kF32, true, 1, 2, false},  {PT::kF32, PT::kF32, false, 4, 8, true},
  };
  for (const Case& c : cases) {
    for (unsigned seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(std::string(PrimitiveTypeName(c.type)) + (c.lhs_sparse ? " lhs " : " rhs ") +
                   std::to_string(c.n) + ":" + std::to_string(c.m) +
                   (c.batch ? " batched" : "") + " seed " + std::to_string(seed));
      CheckAgainstDense(c, seed);
    }
  }
}

// Worked by hand: lhs kept {1,2 | 3,4} at group positions {0,3 | 1,2}, so the dense lhs is
// [1,0,0,2, 0,3,4,0]; word = 0 | 3<<2 | 1<<4 | 2<<6 = 156 (one word covers 16 dense elements,
// so a K of 8 uses half of it). Against rhs 1..8: 1*1 + 2*4 + 3*6 + 4*7 = 55.
constexpr char kHandWorked[] = R"(HloModule hand
ENTRY e {
  l = f32[1,4] parameter(0)
  r = f32[8,1] parameter(1)
  meta = u16[1,1] parameter(2)
  ROOT d = f32[1,1] dot(l, r, meta), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=L.1@2:4
}
)";

constexpr char kHandLhs[] = "f32[1,4] {{1, 2, 3, 4}}";
constexpr char kHandRhs[] = "f32[8,1] {{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}}";

TEST(EvalSparseDot, HandWorkedTwoFour) {
  EXPECT_EQ(hlowb::testing::Run(kHandWorked, {kHandLhs, kHandRhs, "u16[1,1] {{156}}"}),
            "f32[1,1] { {55} }");
  // The same values with the positions of the second group swapped in the word (2, then 1):
  // 0 | 3<<2 | 2<<4 | 1<<6 = 108. Only the positions count: 3*7 + 4*6 instead.
  EXPECT_EQ(hlowb::testing::Run(kHandWorked, {kHandLhs, kHandRhs, "u16[1,1] {{108}}"}),
            "f32[1,1] { {54} }");
}

TEST(EvalSparseDot, CollidingPositionsNameTheInstruction) {
  // Group 0 keeps two elements at position 1: 1 | 1<<2 = 5.
  std::string r = hlowb::testing::Run(kHandWorked, {kHandLhs, kHandRhs, "u16[1,1] {{5}}"});
  EXPECT_NE(r.find("error:"), std::string::npos) << r;
  EXPECT_NE(r.find("%d"), std::string::npos) << r;
  EXPECT_NE(r.find("two kept elements of one group at position 1"), std::string::npos) << r;
  EXPECT_NE(r.find("element {0,1}"), std::string::npos) << r;
}

TEST(EvalSparseDot, MetadataOfTheWrongShapeIsAnError) {
  // Two words where the compressed K of 4 needs one.
  std::string text = kHandWorked;
  text.replace(text.find("meta = u16[1,1]"), 15, "meta = u16[1,2]");
  std::string r = hlowb::testing::Run(text, {kHandLhs, kHandRhs, "u16[1,2] {{156, 0}}"});
  EXPECT_NE(r.find("error:"), std::string::npos) << r;
  EXPECT_NE(r.find("%d"), std::string::npos) << r;
  EXPECT_NE(r.find("metadata must be u16[1,1]"), std::string::npos) << r;
  // The verifier says the same before anything runs.
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  std::string diags;
  for (const VerifierDiagnostic& d : VerifyModule(**m)) diags += d.ToString() + "\n";
  EXPECT_NE(diags.find("sparsity metadata"), std::string::npos) << diags;
  EXPECT_NE(diags.find("u16[1,1]"), std::string::npos) << diags;
}

TEST(EvalSparseDot, VerifierAcceptsXlaShapes) {
  // Shapes from XLA's own sparse-dot tests: rhs sparse along a major dimension with batch and
  // several contracting dimensions, and a batched rhs-sparse dot.
  for (const char* text : {R"(HloModule a
ENTRY main {
  lhs = f32[32,4,3,7] parameter(0)
  rhs = f32[16,4,5,7] parameter(1)
  meta = u16[2,4,5,7] parameter(2)
  ROOT dot = f32[7,3,5] dot(lhs, rhs, meta), sparsity=R.0@2:4, lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}, lhs_batch_dims={3}, rhs_batch_dims={3}
})",
                           R"(HloModule b
ENTRY main {
  lhs = f16[2,5,3200] parameter(0)
  rhs = f16[2,1600,10] parameter(1)
  meta = u16[2,200,10] parameter(2)
  ROOT dot = f32[2,5,10] dot(lhs, rhs, meta), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, sparsity=R.1@2:4
})"}) {
    auto m = ParseModule(text);
    ASSERT_TRUE(m.ok()) << m.status();
    std::string diags;
    for (const VerifierDiagnostic& d : VerifyModule(**m)) diags += d.ToString() + "\n";
    EXPECT_EQ(diags, "") << text;
  }
}

TEST(EvalSparseDot, BadDescriptorsAreErrors) {
  auto with = [](const std::string& sparsity) {
    std::string text = kHandWorked;
    text.replace(text.find("L.1@2:4"), 7, sparsity);
    return hlowb::testing::Run(text, {kHandLhs, kHandRhs, "u16[1,1] {{156}}"});
  };
  // M not a power of two, and more index bits than a word holds: named in the error.
  std::string r = with("L.1@2:3");
  EXPECT_NE(r.find("L.1@2:3"), std::string::npos) << r;
  EXPECT_NE(r.find("power of two"), std::string::npos) << r;
  r = with("L.1@9:16");
  EXPECT_NE(r.find("more than a u16 metadata word holds"), std::string::npos) << r;
  // A sparse dimension that is not contracting.
  r = with("L.0@2:4");
  EXPECT_NE(r.find("error:"), std::string::npos) << r;
  EXPECT_NE(r.find("not contracting"), std::string::npos) << r;
  // Not a descriptor at all.
  r = with("X.1@2:4");
  EXPECT_NE(r.find("expected L.<dimension>@<N>:<M>"), std::string::npos) << r;
}

}  // namespace
}  // namespace hlowb::testing
