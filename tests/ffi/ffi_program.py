"""A JAX program that calls the FFI handlers of ffi_test_handlers.cc, for the FFI tests.

Usage: python ffi_program.py HANDLER_LIBRARY OUT.npz

Registers the library's handlers as jax.ffi targets, runs one jitted function that calls each of
them (one f32 and one f64 call of `mix`), and saves the results as OUT.npz so the tests can
compare them with our replay of the dumped module. Run it with XLA's dump flags to get the
module and its snapshot.
"""
import ctypes
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

lib = ctypes.cdll.LoadLibrary(sys.argv[1])
for target, symbol in [("hlowb_rms_norm", "HlowbTestRmsNorm"), ("hlowb_mix", "HlowbTestMix"),
                       ("hlowb_dict_scale", "HlowbTestDictScale")]:
  jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)), platform="cpu")


def ffi_prog(x, x64, idx):
  y = jax.ffi.ffi_call("hlowb_rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(
      x, eps=np.float32(1e-5))
  mixed, idx2 = jax.ffi.ffi_call(
      "hlowb_mix", (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(idx.shape, idx.dtype)))(
          y * 2.0, idx, offset=np.int64(3), weights=np.array([1, -2, 5], np.int64), mode="double",
          negate=True)
  mixed64, idx3 = jax.ffi.ffi_call(
      "hlowb_mix", (jax.ShapeDtypeStruct(x64.shape, x64.dtype), jax.ShapeDtypeStruct(idx.shape, idx.dtype)))(
          x64, idx2, offset=np.int64(-7), weights=np.array([4], np.int64), mode="increment",
          negate=False)
  scaled = jax.ffi.ffi_call("hlowb_dict_scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(
      mixed, scale=np.float32(0.5), bias=np.float64(0.25))
  return scaled + 1.0, mixed64, idx3


x = jnp.asarray(np.linspace(-3.0, 4.0, 24, dtype=np.float32).reshape(4, 6))
x64 = jnp.asarray(np.linspace(-1.0, 1.0, 10, dtype=np.float64))
idx = jnp.arange(5, dtype=jnp.int32) - 2
out = jax.jit(ffi_prog)(x, x64, idx)
np.savez(sys.argv[2], *[np.asarray(o) for o in out])
print("ok", [o.shape for o in out])
