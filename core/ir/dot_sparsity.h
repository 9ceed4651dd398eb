// Older XLA's structured N:M sparsity on dot (the `sparsity=L.1@2:4_R.0@2:4` attribute,
// SparsityDescriptor in the proto): parsing the descriptor text and the compressed-storage
// arithmetic that shape inference and the evaluator share. It does not touch data; the
// evaluator decompresses operands itself.
//
// Storage (XLA / JAX nm_pack): the sparse operand keeps N of every M consecutive elements
// along its sparse dimension (a contracting dimension), so that dimension holds N/M of the
// dense size. Metadata operand i (dot operand 2 + i, for descriptor i) is u16 with the sparse
// operand's shape except along the sparse dimension, where one word covers
// GroupsPerWord() groups: the j-th kept element of a word (in order along the dimension) has
// its position inside its group in bits [j*b, j*b + b), b = log2(M). For 2:4 a word holds 8
// two-bit positions covering 16 dense elements.
#ifndef HLOWB_CORE_IR_DOT_SPARSITY_H_
#define HLOWB_CORE_IR_DOT_SPARSITY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace hlowb {

struct DotSparsity {
  int operand = 0;        // 0: lhs (`L.`), 1: rhs (`R.`)
  int64_t dimension = 0;  // the sparse (compressed) dimension of that operand
  int64_t n = 2;          // kept elements per group
  int64_t m = 4;          // group size

  std::string ToString() const;  // "L.1@2:4"
  int64_t BitsPerIndex() const;  // log2(m)
  // Groups one u16 metadata word covers: 16 / (n * log2(m)).
  int64_t GroupsPerWord() const { return 16 / (n * BitsPerIndex()); }
  int64_t KeptPerWord() const { return n * GroupsPerWord(); }
};

// Parses `L.1@2:4` or `L.1@2:4_R.0@2:4`. InvalidArgument for another form, an operand other
// than L/R, the same operand twice, or an N:M this storage cannot hold (M a power of two
// >= 2, 0 < N < M, and N*log2(M) <= 16 bits per group).
absl::StatusOr<std::vector<DotSparsity>> ParseDotSparsity(std::string_view text);

// The dense size of a sparse dimension holding `compressed` elements; InvalidArgument when
// `compressed` is not a multiple of N.
absl::StatusOr<int64_t> DenseSparseDimension(const DotSparsity& s, int64_t compressed);

// The metadata's size along the sparse dimension: ceil(compressed / KeptPerWord()).
int64_t MetadataDimension(const DotSparsity& s, int64_t compressed);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_DOT_SPARSITY_H_
