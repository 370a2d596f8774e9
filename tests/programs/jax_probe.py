"""JAX on the GPU with the platform allocator: do its allocations reach the fence?"""
import jax
import jax.numpy as jnp

key = jax.random.PRNGKey(0)
a = jax.random.normal(key, (512, 512))
b = jax.random.normal(jax.random.PRNGKey(1), (512, 512))
total = 0.0
for _ in range(5):
    c = jnp.tanh(a @ b) + 1.0
    total += float(c.sum())
print(f"devices={jax.devices()} finished: total={total:.3f}")
