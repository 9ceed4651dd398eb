// The typed-FFI custom calls jax lowers linear algebra to on CPU (jaxlib's LAPACK kernels),
// computed with the routines in plugins/lapack/lapack_kernels.h:
//
//   lapack_{s,d,c,z}potrf_ffi  (a) -> (factor, info s32[batch...]); uplo
//   lapack_{s,d,c,z}trsm_ffi   (a, b[, alpha]) -> x; side, uplo, trans_x, diag
//   lapack_{s,d,c,z}getrf_ffi  (a) -> (lu, ipiv s32[batch..., min(m,n)], info s32[batch...])
//   lapack_{s,d,c,z}geqrf_ffi  (a) -> (qr, tau [batch..., min(m,n)])
//   lapack_{s,d}orgqr_ffi, lapack_{c,z}ungqr_ffi  (a, tau) -> q
//
// s/d/c/z are f32/f64/c64/c128. The attributes are the backend_config dictionary's ui8
// characters: uplo 'L' (76) / 'U' (85), side 'L' / 'R' (82), trans_x 'N' (78) / 'T' (84) /
// 'C' (67), diag 'N' / 'U'. ipiv and info are LAPACK's, 1-based; jax turns them into its own
// results in plain HLO around the call.
//
// Like the jaxlib kernel, a handler sees each array as the bytes XLA hands it: laid out by the
// operand's layout (operand_layout_constraints, else the operand's shape; jax asks for
// column-major matrices), and splits them into [batch..., rows, cols] blocks of rows * cols
// elements read column-major, whatever the layout says. The first result starts as a copy of
// the aliased operand's bytes (output_to_operand_aliasing), so what LAPACK does not write
// keeps the input's values, and every result is read back through its own layout. Values are
// computed in double precision and rounded once to the element type.
//
// Not here: the other jaxlib targets (eigen- and singular-value decompositions, Schur, Hessenberg,
// tridiagonal), the legacy descriptor-operand LAPACK custom calls of older jaxlib, tiled layouts,
// and GPU solver targets.
#ifndef HLOWB_PLUGINS_LAPACK_LAPACK_PLUGIN_H_
#define HLOWB_PLUGINS_LAPACK_LAPACK_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterLapackPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_LAPACK_LAPACK_PLUGIN_H_
