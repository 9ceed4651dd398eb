"""Real XLA CPU dumps of small JAX programs, for the compiler benchmark.

Usage: python jax_programs.py OUT_DIR

Runs each program once under jit with XLA's dump flags, so OUT_DIR receives, per program,
XLA's `before_optimizations.txt`, `cpu_after_optimizations.txt` and its buffer assignment.
The benchmark compiles each `before_optimizations` state with our `cpu` pipeline and compares
kernels and allocation bytes with what XLA made of the same module.
"""
import os
import sys

out = sys.argv[1]
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           f" --xla_dump_to={out} --xla_dump_hlo_as_text"
                           " --xla_dump_hlo_module_re=jit_prog_.*")
os.environ["JAX_PLATFORMS"] = "cpu"
# A cache hit would skip compilation and so the dumps.
os.environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

key = jax.random.PRNGKey(0)


def prog_mlp_train(w1, b1, w2, x, y):
  def loss(params):
    a, b, c = params
    h = jnp.tanh(x @ a + b)
    return jnp.mean((h @ c - y) ** 2)
  g = jax.grad(loss)((w1, b1, w2))
  return tuple(p - 0.01 * d for p, d in zip((w1, b1, w2), g))


def prog_layernorm_attention(x, wq, wk, wv):
  mu = jnp.mean(x, axis=-1, keepdims=True)
  var = jnp.var(x, axis=-1, keepdims=True)
  h = (x - mu) / jnp.sqrt(var + 1e-5)
  q, k, v = h @ wq, h @ wk, h @ wv
  s = jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)
  return s @ v + x


def prog_cnn(img, kernel, bias):
  y = jax.lax.conv_general_dilated(img, kernel, (1, 1), "SAME",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
  y = jax.nn.relu(y + bias)
  return jnp.mean(y, axis=(1, 2))


def prog_scan(xs):
  def body(c, x):
    c = jnp.tanh(c * 0.9 + x)
    return c, c.sum()
  return jax.lax.scan(body, jnp.zeros(xs.shape[1:]), xs)


def prog_elementwise(a, b, c):
  return jnp.exp(a) * b + jnp.sin(c) - a / (1.0 + jnp.abs(b))


def prog_reductions(a):
  return jnp.sum(a, axis=0), jnp.max(a, axis=1), jnp.mean(a * a)


def prog_gather_scatter(table, idx, upd):
  g = table[idx]
  return table.at[idx].add(upd), g * 2.0


def prog_sort_topk(a):
  return jnp.sort(a, axis=-1), jax.lax.top_k(a, 4)


PROGRAMS = [
    (prog_mlp_train, (jax.random.normal(key, (64, 128)), jnp.zeros(128),
                      jax.random.normal(key, (128, 10)), jnp.ones((32, 64)),
                      jnp.ones((32, 10)))),
    (prog_layernorm_attention, (jax.random.normal(key, (64, 128)),
                                jax.random.normal(key, (128, 64)),
                                jax.random.normal(key, (128, 64)),
                                jax.random.normal(key, (128, 128)))),
    (prog_cnn, (jnp.ones((2, 16, 16, 8)), jax.random.normal(key, (3, 3, 8, 16)),
                jnp.zeros(16))),
    (prog_scan, (jax.random.normal(key, (16, 32)),)),
    (prog_elementwise, (jnp.ones((256, 256)), jnp.ones((256, 256)), jnp.ones((256, 256)))),
    (prog_reductions, (jax.random.normal(key, (128, 96)),)),
    (prog_gather_scatter, (jnp.ones((100, 16)), jnp.arange(10) * 3, jnp.ones((10, 16)))),
    (prog_sort_topk, (jax.random.normal(key, (8, 64)),)),
]

for fn, args in PROGRAMS:
  jax.block_until_ready(jax.jit(fn)(*args))
print(f"jax {jax.__version__}: {len(PROGRAMS)} programs dumped to {out}")
