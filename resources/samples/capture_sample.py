#!/usr/bin/env python3
"""A small JAX program to try `hlowb capture` on: one jitted MLP training step, run twice.

    hlowb capture --pass-by-pass -- .venv/bin/python resources/samples/capture_sample.py

The step (two dense layers, tanh, mean squared error, SGD update) compiles once and runs twice,
so the dump holds one training-step module with every pass and, with --snapshots, one snapshot
per execution. Inputs are made with numpy so that the dump is not crowded with the small
modules jax.random compiles. It prints the loss of each step so the output shows it ran.
"""
import jax
import jax.numpy as jnp
import numpy as np


def loss_fn(params, x, y):
    w1, b1, w2, b2 = params
    hidden = jnp.tanh(x @ w1 + b1)
    out = hidden @ w2 + b2
    return jnp.mean((out - y) ** 2)


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    new_params = tuple(p - 0.05 * g for p, g in zip(params, grads))
    return new_params, loss


def main():
    rng = np.random.default_rng(0)
    params = (
        rng.standard_normal((16, 32), dtype=np.float32) * 0.1,
        np.zeros((32,), dtype=np.float32),
        rng.standard_normal((32, 4), dtype=np.float32) * 0.1,
        np.zeros((4,), dtype=np.float32),
    )
    x = rng.standard_normal((8, 16), dtype=np.float32)
    y = rng.standard_normal((8, 4), dtype=np.float32)
    for step in range(2):
        params, loss = train_step(params, x, y)
        print(f"step {step}: loss {float(loss):.6f}", flush=True)


if __name__ == "__main__":
    main()
