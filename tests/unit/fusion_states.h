// Two states of one module around a fusion pass, shared by the diff's unit tests and the
// window's tests of what a removed instruction says.
#ifndef HLOWB_TESTS_UNIT_FUSION_STATES_H_
#define HLOWB_TESTS_UNIT_FUSION_STATES_H_

namespace hlowb::testing {

// Two states of a fusion pass: add.2 is fused into a fusion that already existed (its
// computation grows), add.3 into a new one; both fusions hold an add.
inline constexpr char kBeforeFusion[] = R"(HloModule jit_fuse

fused_computation {
  param_0 = f32[8] parameter(0)
  ROOT neg.1 = f32[8] negate(param_0)
}

ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  add.2 = f32[8] add(p0, p1)
  fusion = f32[8] fusion(add.2), kind=kLoop, calls=fused_computation
  add.3 = f32[8] add(p1, p1)
  ROOT t = (f32[8], f32[8]) tuple(fusion, add.3)
}
)";

inline constexpr char kAfterFusion[] = R"(HloModule jit_fuse

fused_computation {
  param_0 = f32[8] parameter(0)
  param_1 = f32[8] parameter(1)
  add.5 = f32[8] add(param_0, param_1)
  ROOT neg.1 = f32[8] negate(add.5)
}

fused_computation.1 {
  param_0.1 = f32[8] parameter(0)
  add.6 = f32[8] add(param_0.1, param_0.1)
  ROOT exponential.7 = f32[8] exponential(add.6)
}

ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  fusion = f32[8] fusion(p0, p1), kind=kLoop, calls=fused_computation
  fusion.1 = f32[8] fusion(p1), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[8], f32[8]) tuple(fusion, fusion.1)
}
)";

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_FUSION_STATES_H_
