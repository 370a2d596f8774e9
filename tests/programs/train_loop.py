"""A clean, deterministic training loop: a small transformer, 20 steps, fixed seed.

Prints the loss of every fifth step and the final loss with all digits: a fence must
not change it; then the loop's own time (loop_seconds, the 20 steps from the first
forward pass to the last synchronize, without start-up). Dimensions are multiples of 64 so every matrix is 256-byte aligned even
when its buffer is placed flush against a guard at 16-byte alignment (cuBLAS chooses
kernels by alignment).
"""
import os
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VOCAB, D, HEADS, FF, SEQ, BATCH, LAYERS, STEPS = 256, 128, 4, 512, 64, 8, 2, 20


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, FF), nn.GELU(), nn.Linear(FF, D))

    def forward(self, x, causal):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(D, dim=-1)
        q, k, v = (t.view(b, s, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (D // HEADS) ** 0.5
        attn = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, s, D))
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.randn(SEQ, D) * 0.02)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.head = nn.Linear(D, VOCAB)

    def forward(self, tokens):
        causal = torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool, device=tokens.device), 1)
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x, causal)
        return self.head(x)


torch.manual_seed(1234)
torch.use_deterministic_algorithms(True, warn_only=True)  # a nondeterministic op is named, not fatal
model = Model().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda")
torch.cuda.synchronize()
loop_start = time.perf_counter()
for step in range(STEPS):
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.6f}")
torch.cuda.synchronize()
loop_seconds = time.perf_counter() - loop_start
print(f"final_loss={loss.item():.10f}")
print(f"loop_seconds={loop_seconds:.3f}")
