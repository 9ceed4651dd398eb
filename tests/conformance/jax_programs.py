"""JAX programs for the real-XLA conformance suite (tests/unit/replay/xla_conformance_test.cc).

Usage (the test runs it this way):

    hlowb capture -o DIR --pass-by-pass --snapshots --no-open -- \
        .venv/bin/python tests/conformance/jax_programs.py

Each program is a function named `conf_<name>`, jitted and run once, so its module is
`jit_conf_<name>` and the dump holds its HLO before and after every XLA CPU pass, its buffer
assignment and (single-device programs) an HloSnapshot of the run. Inputs come from numpy with fixed seeds (jax.random
would add modules of its own to the dump); the threefry program builds its key inside the
jitted function from an integer seed. Shapes are small so that the whole file, with every pass
dumped, runs in seconds.

The last program runs over 8 host devices (shard_map with psum, all_gather and ppermute); the
host device count is appended to XLA_FLAGS before jax is imported, so the flags that `hlowb
capture` set are kept. XLA's CPU client writes HloSnapshots only for single-device executions,
so for this program the script records the global argument and XLA's global result itself:
with `--literals-dir=DIR` it writes DIR/jit_conf_shard_map.literals.txt, a run_hlo_module
literals file (RunHloModuleLiterals text proto) that `hlowb replay --input_literals_file` reads.

The last line printed names every program that ran ("programs: conf_a conf_b ...").
"""
import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
try:
    from jax import shard_map  # noqa: E402
except ImportError:  # jax before 0.6 has it under jax.experimental
    from jax.experimental.shard_map import shard_map  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

rng = np.random.default_rng(2024)


def normal(*shape, dtype=np.float32):
  return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Networks


def conf_mlp_train(w1, b1, w2, b2, x, y):
  def loss(params):
    a, b, c, d = params
    h = jax.nn.relu(x @ a + b)
    out = h @ c + d
    return jnp.mean((out - y) ** 2)
  value, grads = jax.value_and_grad(loss)((w1, b1, w2, b2))
  new = tuple(p - 0.05 * g for p, g in zip((w1, b1, w2, b2), grads))
  return new, value


def conf_cnn(img, k1, b1, k2):
  y = lax.conv_general_dilated(img, k1, (1, 1), "SAME",
                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
  y = jax.nn.relu(y + b1)
  y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
  y = lax.conv_general_dilated(y, k2, (2, 2), "VALID",
                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
  y = jax.nn.relu(y)
  avg = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0
  return jnp.mean(avg, axis=(1, 2))


def conf_transformer_block(x, wq, wk, wv, wo, w1, w2, g1, g2):
  def layer_norm(h, g):
    mu = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.mean((h - mu) ** 2, axis=-1, keepdims=True)
    return (h - mu) * lax.rsqrt(var + 1e-5) * g
  heads, seq, dim = 2, x.shape[1], x.shape[2]
  h = layer_norm(x, g1)
  def split(t):
    return t.reshape(t.shape[0], seq, heads, dim // heads).transpose(0, 2, 1, 3)
  q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
  scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(dim // heads)
  mask = jnp.tril(jnp.ones((seq, seq), bool))
  scores = jnp.where(mask, scores, -1e9)
  attn = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
  x = x + attn.transpose(0, 2, 1, 3).reshape(x.shape) @ wo
  return x + jax.nn.gelu(layer_norm(x, g2) @ w1) @ w2


# ---------------------------------------------------------------------------------------------
# Control flow


def conf_scan(xs, w):
  def body(c, x):
    c = jnp.tanh(c @ w + x)
    return c, jnp.sum(c * c)
  return lax.scan(body, jnp.zeros(xs.shape[1:]), xs)


def conf_while_loop(x, limit):
  def cond(s):
    i, v = s
    return jnp.logical_and(i < limit, jnp.max(jnp.abs(v)) < 1e3)
  def body(s):
    i, v = s
    return i + 1, v * 1.5 + jnp.sin(v)
  return lax.while_loop(cond, body, (jnp.int32(0), x))


def conf_cond(pred, x, y):
  a = lax.cond(pred, lambda a, b: a @ b, lambda a, b: a - b.T, x, y)
  b = lax.cond(jnp.sum(x) > 0, lambda t: jnp.exp(t), lambda t: -t, y)
  return a, b


def conf_switch(index, x):
  branches = [lambda v: v + 1.0, lambda v: jnp.cos(v) * 2.0, lambda v: jnp.cumsum(v),
              lambda v: v[::-1]]
  return lax.switch(index, branches, x), lax.switch(index + 1, branches, x)


@jax.custom_vjp
def clipped_softplus(x):
  return jnp.log1p(jnp.exp(x))


def _softplus_fwd(x):
  return clipped_softplus(x), x


def _softplus_bwd(x, g):
  return (jnp.clip(jax.nn.sigmoid(x), 0.05, 0.95) * g,)


clipped_softplus.defvjp(_softplus_fwd, _softplus_bwd)


def conf_custom_vjp(x, w):
  def f(w):
    return jnp.sum(clipped_softplus(x @ w) ** 2)
  return jax.value_and_grad(f)(w)


# ---------------------------------------------------------------------------------------------
# Data movement


def conf_sort(keys, values, ints):
  sorted_keys, carried = lax.sort((keys, values), dimension=1, num_keys=1)
  return sorted_keys, carried, jnp.argsort(ints, axis=0), jnp.sort(ints[:, 0])[::-1]


def conf_top_k(x):
  values, indices = lax.top_k(x, 5)
  return values, indices, jnp.take_along_axis(x, indices, axis=-1) - values


def conf_gather(table, rows, cols, idx3):
  a = table[rows]
  b = table[rows, cols]
  c = jnp.take(table, idx3, axis=1, mode="clip")
  d = table[rows[:4], 2:6]
  return a, b, c, d * 2.0


def conf_scatter(base, idx, upd, ints, iidx, iupd):
  added = base.at[idx].add(upd)
  setted = base.at[idx[:3], 1].set(upd[:3, 0])
  maxed = ints.at[iidx].max(iupd)
  mined = ints.at[iidx].min(iupd, mode="drop")
  return added, setted, maxed, mined


def conf_dynamic_slice(x, i, j):
  piece = lax.dynamic_slice(x, (i, j), (3, 4))
  return lax.dynamic_update_slice(x, piece * 10.0, (j, i)), piece


# ---------------------------------------------------------------------------------------------
# Numerics


def conf_threefry(seed):
  key = jax.random.key(seed, impl="threefry2x32")
  k1, k2, k3, k4 = jax.random.split(key, 4)
  return (jax.random.normal(k1, (4, 8)), jax.random.uniform(k2, (16,), minval=-1.0, maxval=2.0),
          jax.random.bernoulli(k3, 0.3, (12,)), jax.random.randint(k4, (10,), 0, 100),
          jax.random.key_data(k1))


def conf_fft(x, z):
  spectrum = jnp.fft.fft(z)
  half = jnp.fft.rfft(x)
  back = jnp.fft.ifft(spectrum)
  return spectrum, half, back, jnp.fft.irfft(half, n=x.shape[-1])


def conf_cholesky(a):
  spd = a @ a.T + a.shape[0] * jnp.eye(a.shape[0])
  return jnp.linalg.cholesky(spd)


def conf_triangular_solve(a, b):
  lower = jnp.tril(a) + 4.0 * jnp.eye(a.shape[0])
  x = jax.scipy.linalg.solve_triangular(lower, b, lower=True)
  y = jax.scipy.linalg.solve_triangular(lower.T, b, lower=False, trans=1)
  return x, y


def conf_bf16_matmul(a, b, c):
  ab = jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
                  preferred_element_type=jnp.float32)
  h = jax.nn.relu(ab).astype(jnp.bfloat16)
  return lax.dot(h, c.astype(jnp.bfloat16), preferred_element_type=jnp.float32), h


def conf_integer_bitwise(a, b, u):
  return (a & b, a | b, a ^ b, ~a, a << 3, a >> 2, lax.shift_right_logical(a, 3),
          jnp.right_shift(u, 5), lax.population_count(u), lax.clz(a), a // 7, a % 7,
          jnp.maximum(a, b), (a * b).astype(jnp.int8), u.astype(jnp.float32))


def conf_reductions(x, ints):
  return (jnp.cumsum(x, axis=0), jnp.cumprod(x[:4] * 0.5 + 1.0, axis=1), jnp.argmax(x, axis=1),
          jnp.argmin(x, axis=0), jnp.sum(x, axis=1), jnp.max(x), jnp.min(ints, axis=0),
          jnp.prod(ints[:3] % 3 + 1, axis=0), jnp.any(x > 2.0), jnp.all(ints > -100),
          jax.nn.logsumexp(x, axis=-1), lax.cummax(x, axis=1))


# ---------------------------------------------------------------------------------------------
# 8 host devices


def make_shard_map_program():
  mesh = Mesh(np.array(jax.devices()[:8]), ("d",))

  def per_device(x):
    total = lax.psum(x, "d")
    gathered = lax.all_gather(x, "d", tiled=True)
    n = lax.psum(1, "d")
    shifted = lax.ppermute(x, "d", [(i, (i + 1) % n) for i in range(n)])
    return total * 0.5 + shifted, gathered

  def conf_shard_map(x):
    return shard_map(per_device, mesh=mesh, in_specs=P("d"), out_specs=(P("d"), P("d")))(x)

  sharding = NamedSharding(mesh, P("d"))
  return conf_shard_map, (jax.device_put(normal(16, 4), sharding),)


PROGRAMS = [
    (conf_mlp_train, (normal(16, 32) * 0.2, np.zeros(32, np.float32), normal(32, 4) * 0.2,
                      np.zeros(4, np.float32), normal(8, 16), normal(8, 4))),
    (conf_cnn, (normal(2, 12, 12, 3), normal(3, 3, 3, 8) * 0.3, normal(8) * 0.1,
                normal(3, 3, 8, 4) * 0.3)),
    (conf_transformer_block, (normal(2, 8, 16), normal(16, 16) * 0.25, normal(16, 16) * 0.25,
                              normal(16, 16) * 0.25, normal(16, 16) * 0.25,
                              normal(16, 32) * 0.25, normal(32, 16) * 0.25,
                              np.ones(16, np.float32), np.ones(16, np.float32))),
    (conf_scan, (normal(6, 8), normal(8, 8) * 0.3)),
    (conf_while_loop, (normal(10) * 0.1, np.int32(7))),
    (conf_cond, (np.bool_(True), normal(4, 4), normal(4, 4))),
    (conf_switch, (np.int32(2), normal(8))),
    (conf_custom_vjp, (normal(4, 6), normal(6, 3))),
    (conf_sort, (normal(4, 16), normal(4, 16),
                 rng.integers(-50, 50, (12, 3)).astype(np.int32))),
    (conf_top_k, (normal(3, 20),)),
    (conf_gather, (normal(10, 8), np.array([3, 1, 4, 1, 5, 9], np.int32),
                   np.array([2, 7, 1, 0, 6, 3], np.int32),
                   np.array([[0, 9], [5, 2], [7, 7]], np.int32))),
    (conf_scatter, (normal(8, 5), np.array([1, 6, 1, 3, 7], np.int32), normal(5, 5),
                    rng.integers(-20, 20, (10,)).astype(np.int32),
                    np.array([2, 2, 9, 0, 12], np.int32),
                    rng.integers(-30, 30, (5,)).astype(np.int32))),
    (conf_dynamic_slice, (normal(8, 8), np.int32(2), np.int32(3))),
    (conf_threefry, (np.int32(42),)),
    (conf_fft, (normal(3, 16), (normal(2, 8) + 1j * normal(2, 8)).astype(np.complex64))),
    (conf_cholesky, (normal(6, 6),)),
    (conf_triangular_solve, (normal(5, 5), normal(5, 3))),
    (conf_bf16_matmul, (normal(8, 16), normal(16, 12), normal(12, 4))),
    (conf_integer_bitwise, (rng.integers(-1000, 1000, (16,)).astype(np.int32),
                            rng.integers(1, 1000, (16,)).astype(np.int32),
                            rng.integers(0, 2**32, (16,), dtype=np.uint64).astype(np.uint32))),
    (conf_reductions, (normal(6, 10), rng.integers(-9, 9, (5, 4)).astype(np.int32))),
    make_shard_map_program(),
]


# ---------------------------------------------------------------------------------------------
# run_hlo_module literals files

_TEXT_TYPES = {np.dtype(np.float32): ("F32", "f32s"), np.dtype(np.int32): ("S32", "s32s")}


def _shape_text(a):
  element_type, _ = _TEXT_TYPES[a.dtype]
  dims = " ".join(f"dimensions: {d}" for d in a.shape)
  layout = " ".join(f"minor_to_major: {d}" for d in reversed(range(a.ndim)))
  return f"element_type: {element_type} {dims} layout {{ {layout} }}"


def _literal_text(value):
  """A LiteralProto in text form: an array (row-major values) or a tuple of arrays."""
  if isinstance(value, (tuple, list)):
    arrays = [np.asarray(v) for v in value]
    shapes = " ".join(f"tuple_shapes {{ {_shape_text(a)} }}" for a in arrays)
    parts = " ".join(f"tuple_literals {{ {_literal_text(a)} }}" for a in arrays)
    return f"shape {{ element_type: TUPLE {shapes} }} {parts}"
  a = np.asarray(value)
  _, field = _TEXT_TYPES[a.dtype]
  values = " ".join(f"{field}: {repr(x.item())}" for x in a.reshape(-1))
  return f"shape {{ {_shape_text(a)} }} {values}"


def write_literals_file(path, arguments, result):
  body = "".join(f"  arguments {{ {_literal_text(a)} }}\n" for a in arguments)
  body += f"  result {{ {_literal_text(result)} }}\n"
  with open(path, "w") as f:
    f.write(f"iterations {{\n{body}}}\n")


def main():
  literals_dir = None
  for arg in sys.argv[1:]:
    if arg.startswith("--literals-dir="):
      literals_dir = arg.split("=", 1)[1]
    else:
      sys.exit(f"usage: {sys.argv[0]} [--literals-dir=DIR]")
  names = []
  for fn, args in PROGRAMS:
    out = jax.jit(fn)(*args)
    jax.block_until_ready(out)
    names.append(fn.__name__)
    if literals_dir and fn.__name__ == "conf_shard_map":
      os.makedirs(literals_dir, exist_ok=True)
      write_literals_file(os.path.join(literals_dir, f"jit_{fn.__name__}.literals.txt"),
                          [np.asarray(a) for a in args], [np.asarray(o) for o in out])
  print(f"jax {jax.__version__}: {len(PROGRAMS)} conformance programs ran "
        f"on {jax.device_count()} devices", flush=True)
  print("programs: " + " ".join(names), flush=True)


if __name__ == "__main__":
  main()
