// "algsimp": the algebraic simplifier. Applies local, meaning-preserving rewrites to every
// computation of a module (fusion, reducer and control-flow bodies included) until a sweep
// finds nothing to do, or until a small sweep bound is reached.
//
// Deliberately not here: constant folding (operations whose operands are all constants are left
// to the constant-folding pass), fusion, layout assignment, and any rewrite whose result differs
// from the original in NaN propagation, overflow or rounding (the table says where the sign of a
// zero is the one exception accepted, as XLA accepts it). Instructions with side effects, and
// instructions whose operands have side effects, are never rewritten.
//
// Rewrite table. "c" is a constant or a broadcast of a scalar constant (all elements equal);
// "ints" means integer element types (pred included where it says so); "floats" means
// floating-point element types. Every rule replaces the matched instruction; operands it no
// longer uses become dead and are removed at the end of the sweep.
//
// Arithmetic
//   R1  add(x, 0)                      => x            any type; for floats x=-0.0 gives -0.0
//                                                      where the add gave +0.0 (XLA's choice)
//   R2  subtract(x, 0)                 => x            +0.0 only for floats (exact)
//   R3  subtract(0, x)                 => negate(x)    ints; floats only when the 0 is -0.0
//   R4  subtract(x, x)                 => 0            ints only (x-x is NaN for inf/NaN)
//   R5  multiply(x, 1)                 => x            any type (exact)
//   R6  multiply(x, 0)                 => 0            ints only (0*inf is NaN, 0*-1 is -0.0)
//   R7  multiply(x, -1)                => negate(x)    signed ints and floats (exact)
//   R8  divide(x, 1)                   => x            any type (exact)
//   R9  divide(x, -1)                  => negate(x)    floats (exact)
//   R10 divide(x, 2^k)                 => multiply(x, 2^-k)     floats, 2^-k a normal number
//   R11 divide(x, 2^k)                 => shift-right-logical(x, k)   unsigned ints
//   R12 multiply(x, 2^k), k >= 1       => shift-left(x, k)      ints (wraps the same way)
//   R13 remainder(x, 2^k)              => and(x, 2^k - 1)       unsigned ints
//   R14 remainder(x, 1)                => 0            ints
//   R15 negate(negate(x))              => x            any type
//   R16 not(not(x))                    => x            pred and ints
//   R17 add(x, negate(y))              => subtract(x, y)        any type (IEEE-exact)
//   R18 subtract(x, negate(y))         => add(x, y)             any type (IEEE-exact)
//   R19 multiply(negate(x), negate(y)) => multiply(x, y)        any type
//   R20 negate(subtract(a, b))         => subtract(b, a)        ints (floats differ at a==b)
//   R21 subtract(add(x, y), y)         => x            ints (also add(y, x)); wraps exactly
//   R22 add(subtract(x, y), y)         => x            ints (either operand order of the add)
//   R23 shift-*(x, 0)                  => x            ints
// Logic
//   R24 and(x, all-ones)               => x            pred (true) and ints
//   R25 and(x, 0)                      => 0            pred (false) and ints
//   R26 or(x, 0)                       => x            pred and ints
//   R27 or(x, all-ones)                => all-ones     pred and ints
//   R28 and(x, x)                      => x            pred and ints
//   R29 or(x, x)                       => x            pred and ints
//   R30 xor(x, x)                      => 0            pred and ints
//   R31 xor(x, 0)                      => x            pred and ints
//   R32 and(x, not(x))                 => 0            pred and ints (either order)
//   R33 or(x, not(x))                  => all-ones     pred and ints (either order)
//   R34 not(compare(a, b))             => compare(a, b) with the opposite direction
//                                                      pred/int operands (NaN breaks it)
// Min, max, select, compare, clamp
//   R35 maximum(x, x)                  => x            any type
//   R36 minimum(x, x)                  => x            any type
//   R37 maximum(x, lowest)             => x            -inf for floats, the minimum for ints
//   R38 minimum(x, highest)            => x            +inf for floats, the maximum for ints
//   R39 select(true, a, b)             => a            predicate a constant
//   R40 select(false, a, b)            => b            predicate a constant
//   R41 select(p, x, x)                => x
//   R42 select(not(p), a, b)           => select(p, b, a)
//   R43 select(p, true, false)         => p            pred result, p of the result's shape
//   R44 select(p, false, true)         => not(p)       pred result, p of the result's shape
//   R45 compare(x, x) EQ/GE/LE         => true         pred and int operands
//   R46 compare(x, x) NE/GT/LT         => false        pred and int operands
//   R47 compare(c, x)                  => compare(x, c) with the mirrored direction
//   R48 compare(x, true) EQ, compare(x, false) NE => x          pred operands
//   R49 maximum(minimum(x, hi), lo)    => clamp(lo, x, hi)      constants with lo <= hi
//   R50 minimum(maximum(x, lo), hi)    => clamp(lo, x, hi)      constants with lo <= hi
//   R51 clamp(lowest, x, highest)      => x            bounds as in R37/R38
// Unary pairs (only where exact: exp(log x), log(exp x) and friends round, so they stay)
//   R52 abs(abs(x))                    => abs(x)
//   R53 abs(negate(x))                 => abs(x)
//   R54 abs(x)                         => x            unsigned ints
//   R55 round(round'(x))               => round'(x)    round, round' in floor, ceil,
//                                                      round-nearest-even, round-nearest-afz
//   R56 sign(sign(x))                  => sign(x)
//   R57 real(complex(a, b))            => a
//   R58 imag(complex(a, b))            => b
//   R59 reduce-precision(x)            => x            exponent and mantissa bits at least the
//                                                      element type's own
// Power
//   R60 power(x, 1)                    => x
//   R61 power(x, 2)                    => multiply(x, x)
//   R62 power(x, 0)                    => 1            (pow(NaN, 0) is 1 too)
//   R63 power(x, -1)                   => divide(1, x)          floats
// Canonical form
//   R64 op(c, x)                       => op(x, c)     commutative op (add, multiply, and, or,
//                                                      xor, maximum, minimum), x not constant
// Shape operations
//   R65 reshape(x)                     => x            same dimensions as x
//   R66 reshape(reshape(x))            => reshape(x)
//   R67 transpose(x), identity         => x
//   R68 transpose(transpose(x))        => transpose(x) composed (or x when it is the identity)
//   R69 broadcast(broadcast(x))        => broadcast(x) composed dimensions
//   R70 broadcast(x), same dimensions  => x            includes scalar to scalar
//   R71 slice(x) of the full extent    => x
//   R72 slice(slice(x))                => slice(x) composed starts and strides
//   R73 slice(concatenate(..., y, ...)) inside y      => slice(y) (or y when it is all of y)
//   R74 concatenate(x)                 => x
//   R75 concatenate(..., empty, ...)   => concatenate without the zero-sized operands
//   R76 pad(x, v), all padding 0       => x
//   R77 reverse(x) over size-1 dims    => x
//   R78 reverse(reverse(x)), same dims => x
//   R79 copy(copy(x))                  => copy(x)
//   R80 copy(x), same layout as x      => x
//   R81 bitcast(bitcast(x))            => bitcast(x)
//   R82 bitcast(x), same shape         => x
//   R83 dynamic-slice(x, constant indices)            => slice(x) (indices clamped as
//                                                      dynamic-slice clamps them)
//   R84 dynamic-update-slice(x, u, ...), u the size of x       => u
//   R85 get-tuple-element(tuple(a0, ...), i)          => ai
//   R86 tuple(gte(t, 0), ..., gte(t, n-1)), n = size of t     => t
//   R87 reshape/transpose/slice/reverse(broadcast(scalar))    => broadcast(scalar)
//   R88 unary elementwise op(broadcast(scalar))       => broadcast(op(scalar))
// Conversions
//   R89 convert(x) / bitcast-convert(x) to x's own type       => x
//   R90 convert(convert(x)) back to x's type          => x    when the first convert is exact
//                                                      (widening ints, pred, f16->f32, ...)
// Reductions (reducer: add, multiply, maximum, minimum, and, or of the two parameters)
//   R91 reduce(x, init) over no dimensions            => op(x, broadcast(init))
//   R92 reduce(x, init) over size-1 dimensions only   => op(reshape(x), broadcast(init))
//   R93 reduce(broadcast(x), init) over exactly the broadcast's new dimensions
//                                                     => op(x, init)   maximum/minimum/and/or
//   R94 reduce(x, init) of a zero-element x           => broadcast(init)
// Dots (no batch dimensions)
//   R95 dot with a zero-sized contracting dimension   => 0
//   R96 dot whose contracting dimensions all have size 1 (or none)
//                                  => multiply(broadcast(reshape(a)), broadcast(reshape(b)))
//                                     same element types, no dot algorithm (option
//                                     enable_dot_strength_reduction)
// Miscellaneous
//   R97 iota whose iota dimension has size 1          => 0
//   R98 sort whose sort dimension has size <= 1      => the operand (tuple of the operands)
//   R99 dynamic-slice(x, ...) whose slice sizes are x's dimensions   => x
#ifndef HLOWB_CORE_PASSES_ALGEBRAIC_SIMPLIFIER_H_
#define HLOWB_CORE_PASSES_ALGEBRAIC_SIMPLIFIER_H_

#include <string_view>

#include "core/passes/hlo_pass.h"

namespace hlowb {

struct AlgebraicSimplifierOptions {
  // R96: rewrite dots with trivial contractions into elementwise multiplies.
  bool enable_dot_strength_reduction = true;
  // After layout assignment: replacements must keep layouts exactly, and rewrites that create
  // new shape-changing instructions (whose layouts this pass cannot choose) are skipped.
  bool is_layout_sensitive = false;
  // The target is a GPU (kept for target-dependent rewrites; none of the table's rules depends
  // on it today).
  bool is_gpu = false;
  // Sweeps over one computation before the pass stops even if rewrites keep applying.
  int max_sweeps = 16;
};

// Applies the rewrite table above. It deliberately does not evaluate constants, move
// instructions across computations, or change layouts.
class AlgebraicSimplifier : public HloPass {
 public:
  explicit AlgebraicSimplifier(AlgebraicSimplifierOptions options = {})
      : options_(options) {}
  std::string_view name() const override { return "algsimp"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;

  const AlgebraicSimplifierOptions& options() const { return options_; }

 private:
  AlgebraicSimplifierOptions options_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_ALGEBRAIC_SIMPLIFIER_H_
