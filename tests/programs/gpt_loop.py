"""An allocation-heavy GPT-style training loop for scripts/bench-run.sh: 6 layers,
d_model 768, 12 heads, sequence 512, batch 4, bf16 autocast, scaled_dot_product_attention,
AdamW, 30 steps, fixed seed. With PyTorch's caching allocator off (as the blocking and
fence rungs run it) every activation and gradient is its own cudaMalloc: thousands of
allocations a step.

Prints the loss every tenth step, the final loss with all digits (a fence must not change
it) and loop_seconds: the 30 steps from the first forward pass to the last synchronize,
without start-up.
"""
import os
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VOCAB, D, HEADS, SEQ, BATCH, LAYERS, STEPS = 8192, 768, 12, 512, 4, 6, 30


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(D, dim=-1)
        q, k, v = (t.view(b, s, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, D))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.randn(SEQ, D) * 0.02)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


torch.manual_seed(1234)
model = GPT().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda")
torch.cuda.synchronize()
loop_start = time.perf_counter()
for step in range(STEPS):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(data[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), data[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.6f}")
torch.cuda.synchronize()
loop_seconds = time.perf_counter() - loop_start
print(f"final_loss={loss.item():.10f}")
print(f"loop_seconds={loop_seconds:.3f}")
