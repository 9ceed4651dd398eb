// Where a scatter's updates go (eval::ScatterPairs, shared by the interpreter and the cpu
// platform), checked against a plain enumeration of the semantics for windows that end the
// update shape (listed a row at a time) and windows that do not, batching dimensions, several
// index components, out-of-bounds and repeated indices, and scalar updates.
#include "replay/evaluator/scatter_pairs.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

bool Has(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t y : v) {
    if (y == x) return true;
  }
  return false;
}

// Every update element in row-major order: the window it belongs to, from the index vector and
// the batching dimensions, and its place in the window; windows that do not fit are skipped.
std::vector<std::pair<int64_t, int64_t>> Enumerate(const Instruction& scatter,
                                                   const Literal& indices) {
  const ScatterDimensionNumbers& d = *scatter.attrs_or_default().scatter_dimension_numbers;
  const Shape& os = scatter.operand(0)->shape();
  const Shape& us = scatter.operand(2)->shape();
  const std::vector<int64_t>& idims = indices.shape().dimensions();
  const int irank = static_cast<int>(idims.size());
  std::vector<int64_t> update_scatter_dims, index_batch_dims, window_operand_dims;
  for (int i = 0; i < us.rank(); ++i) {
    if (!Has(d.update_window_dims, i)) update_scatter_dims.push_back(i);
  }
  for (int i = 0; i < irank; ++i) {
    if (i != d.index_vector_dim) index_batch_dims.push_back(i);
  }
  for (int i = 0; i < os.rank(); ++i) {
    if (!Has(d.inserted_window_dims, i) && !Has(d.input_batching_dims, i)) {
      window_operand_dims.push_back(i);
    }
  }
  const std::vector<int64_t> ostr = Strides(os.dimensions()), istr = Strides(idims);
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t count = us.ElementCount();
  for (int64_t ui = 0; ui < count; ++ui) {
    std::vector<int64_t> u(us.rank());
    for (int k = us.rank() - 1, rest = 0; k >= 0; --k) {
      (void)rest;
      u[k] = (ui / Strides(us.dimensions())[k]) % us.dimension(k);
    }
    std::vector<int64_t> start(os.rank(), 0);
    for (size_t k = 0; k < d.scatter_dims_to_operand_dims.size(); ++k) {
      int64_t at = 0;
      for (size_t b = 0; b < index_batch_dims.size(); ++b) {
        at += u[update_scatter_dims[b]] * istr[index_batch_dims[b]];
      }
      if (d.index_vector_dim < irank) at += static_cast<int64_t>(k) * istr[d.index_vector_dim];
      start[d.scatter_dims_to_operand_dims[k]] = indices.GetInt(at);
    }
    for (size_t j = 0; j < d.input_batching_dims.size(); ++j) {
      for (size_t b = 0; b < index_batch_dims.size(); ++b) {
        if (index_batch_dims[b] == d.scatter_indices_batching_dims[j]) {
          start[d.input_batching_dims[j]] = u[update_scatter_dims[b]];
        }
      }
    }
    bool fits = true;
    int64_t lin = 0;
    for (int od = 0; od < os.rank(); ++od) {
      int64_t size = 1, offset = 0;
      for (size_t k = 0; k < window_operand_dims.size(); ++k) {
        if (window_operand_dims[k] == od) {
          size = us.dimension(static_cast<int>(d.update_window_dims[k]));
          offset = u[d.update_window_dims[k]];
        }
      }
      fits = fits && start[od] >= 0 && start[od] + size <= os.dimension(od);
      lin += (start[od] + offset) * ostr[od];
    }
    if (fits) out.emplace_back(lin, ui);
  }
  return out;
}

struct Case {
  const char* name;
  const char* operand;
  const char* indices;
  const char* updates;
  const char* attributes;
  int64_t index_low, index_high;
};

TEST(ScatterPairs, MatchThePlainEnumeration) {
  const Case cases[] = {
      {"rows of an embedding gradient", "f32[10,6]", "s32[7,1]", "f32[7,6]",
       "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
       "index_vector_dim=1",
       -2, 11},
      {"a row of updates down a column", "f32[8,3]", "s32[4,1]", "f32[4,5]",
       "update_window_dims={1}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
       "index_vector_dim=1",
       -1, 3},
      {"window first, scatter dimension last", "f32[5,8]", "s32[4]", "f32[3,4]",
       "update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
       "index_vector_dim=1",
       -1, 9},
      {"batching dimensions", "f32[3,7,5]", "s32[3,2,1]", "f32[3,2,5]",
       "update_window_dims={2}, inserted_window_dims={1}, input_batching_dims={0}, "
       "scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=2",
       -1, 8},
      {"a three-dimensional window from two index components", "f32[6,7,8]", "s32[5,2]",
       "f32[5,2,3,8]",
       "update_window_dims={1,2,3}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, "
       "index_vector_dim=1",
       -1, 6},
      {"one scalar update", "f32[6]", "s32[]", "f32[]",
       "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
       "index_vector_dim=0",
       0, 5},
  };
  for (const Case& c : cases) {
    const std::string text =
        std::string("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                    "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p0 = ") +
        c.operand + " parameter(0)\n  p1 = " + c.indices + " parameter(1)\n  p2 = " + c.updates +
        " parameter(2)\n  ROOT r = " + c.operand + " scatter(p0, p1, p2), " + c.attributes +
        ", to_apply=add\n}\n";
    auto m = ParseModule(text);
    ASSERT_TRUE(m.ok()) << c.name << ": " << m.status();
    const Instruction& s = *(*m)->entry()->root();
    ASSERT_EQ(s.opcode(), Opcode::kScatter) << c.name;
    Literal indices(s.operand(1)->shape());
    const int64_t span = c.index_high - c.index_low + 1;
    for (int64_t i = 0; i < indices.element_count(); ++i) {
      indices.SetBits(i, static_cast<uint64_t>(c.index_low + (i * 7 + 3) % span));
    }
    auto got = eval::ScatterPairs(s, s.operand(0)->shape(), indices, s.operand(2)->shape());
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    const std::vector<std::pair<int64_t, int64_t>> want = Enumerate(s, indices);
    EXPECT_FALSE(want.empty()) << c.name;
    EXPECT_EQ(*got, want) << c.name;
  }
}

}  // namespace
}  // namespace hlowb
