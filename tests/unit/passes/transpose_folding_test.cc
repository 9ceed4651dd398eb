// "transpose-folding": transposes feeding dots become dimension numbers.
#include "core/passes/transpose_folding.h"
#include "gtest/gtest.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

using testing::ExpectNoChange;
using testing::ExpectRewrite;

TEST(TransposeFolding, FoldsBothOperandsOfAMatmul) {
  TransposeFolding pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  ta = f32[2,3]{1,0} transpose(a), dimensions={1,0}
  tb = f32[3,4]{1,0} transpose(b), dimensions={1,0}
  ROOT d = f32[2,4]{1,0} dot(ta, tb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                R"(
HloModule m
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  ROOT d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})");
}

TEST(TransposeFolding, MapsBatchDimensionsAndKeepsATransposeOthersRead) {
  TransposeFolding pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[5,2,3]{2,1,0} parameter(0)
  b = f32[2,3,4]{2,1,0} parameter(1)
  ta = f32[2,5,3]{2,1,0} transpose(a), dimensions={1,0,2}
  d = f32[2,5,4]{2,1,0} dot(ta, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[2,5,4]{2,1,0}, f32[2,5,3]{2,1,0}) tuple(d, ta)
})",
                R"(
HloModule m
ENTRY e {
  a = f32[5,2,3]{2,1,0} parameter(0)
  b = f32[2,3,4]{2,1,0} parameter(1)
  ta = f32[2,5,3]{2,1,0} transpose(a), dimensions={1,0,2}
  d = f32[2,5,4]{2,1,0} dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[2,5,4]{2,1,0}, f32[2,5,3]{2,1,0}) tuple(d, ta)
})");
}

TEST(TransposeFolding, KeepsTransposesThatReorderFreeDimensions) {
  TransposeFolding pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2,4]{2,1,0} parameter(0)
  b = f32[4,6]{1,0} parameter(1)
  ta = f32[2,3,4]{2,1,0} transpose(a), dimensions={1,0,2}
  ROOT d = f32[2,3,6]{2,1,0} dot(ta, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})");
}

TEST(TransposeFolding, NoFuelNoChange) {
  TransposeFolding pass;
  PassContext ctx = testing::MakeTestContext();
  ctx.mutable_options().fuel["transpose-folding"] = 0;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  a = f32[3,2]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  ta = f32[2,3]{1,0} transpose(a), dimensions={1,0}
  ROOT d = f32[2,4]{1,0} dot(ta, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                 &ctx);
}

}  // namespace
}  // namespace hlowb

namespace hlowb {
namespace {

TEST(TransposeFolding, TransposeOfAMatrixProductSwapsItsOperands) {
  TransposeFolding pass;
  testing::ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  a = f32[32,128]{1,0} parameter(0)
  b = f32[32,64]{1,0} parameter(1)
  d = f32[128,64]{1,0} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = f32[64,128]{1,0} transpose(d), dimensions={1,0}
})",
                         R"(
HloModule m
ENTRY e {
  a = f32[32,128]{1,0} parameter(0)
  b = f32[32,64]{1,0} parameter(1)
  ROOT d.1 = f32[64,128]{1,0} dot(b, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
}

}  // namespace
}  // namespace hlowb
