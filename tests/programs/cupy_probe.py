"""CuPy with its default memory pool: how many allocations does the fence see?"""
import cupy as cp

rng = cp.random.default_rng(0)
total = 0.0
for n in (1000, 4097, 1 << 20):
    x = rng.standard_normal(n, dtype=cp.float32)
    y = cp.sin(x) * 2.0 + x
    total += float(y.sum())
print(f"finished: total={total:.3f}")
