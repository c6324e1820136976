#!/usr/bin/python3
"""TinyDiT in PyTorch: the reference the C model is checked against.

The same model as common/nn (the parameter table of common/nn/model.c, the
forward pass of docs/step1_scorecard.md), written the plain PyTorch way, so
that autograd and torch.optim.AdamW supply the numbers the C code must
reproduce by hand. Needs Debian's python3-torch (1.13), CPU only.

    python3 tools/tinydit_ref.py golden [DIR]     the golden files (default tests/golden)
    python3 tools/tinydit_ref.py layers [DIR]     one file per layer a step teaches
                                                  (default tests/golden/layers)

A golden file is a safetensors file computed in float64 and stored as F32:
  metadata    the config (img, dim, norm, ... as --set would write them),
              adamw.lr/beta1/beta2/eps/weight_decay, adamw.steps, sample.steps
  param.*     the starting weights (random, larger than an init, so that
              every path carries signal)
  input.x1, input.x0, input.t    one batch: data, noise, times
  input.y                        class-conditional: its labels (floats holding
                                 integers; the last image's the null label)
  output.v, output.loss          the model's velocity and the flow-matching loss
  grad.*                         the loss's gradient at param.*
  adamw.*                        the weights after one AdamW step
  adamw<k>.grad.*, adamw<k>.*    k = 1..adamw.steps: the gradient at the
                                 weights after step k-1 (same batch), and the
                                 weights after step k
  sample.noise, sample.out       an Euler sample of sample.steps steps, with
                                 the weights after one step; class-conditional:
                                 of the labels sample.y, guided at the
                                 metadata's sample.guidance
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy
import torch
import torch.nn.functional as F
from torch import nn

DEFAULTS = dict(img=32, channels=3, patch=4, dim=128, depth=4, heads=4, mlp_ratio=4.0,
                freq_dim=256, norm="layernorm", qk_norm=False, mlp="gelu", mlp_multiple_of=1,
                pos="learned", rope_base=100.0, bias=True, ada="plain", classes=0)
EPS = 1e-6   # both block norms and QK-norm


# ---------------------------------------------------------------------------
# The model

def rms_norm(x, gain=None):
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    return x if gain is None else x * gain


def block_norm(cfg, x):   # no affine parameters: adaLN supplies scale and shift
    if cfg["norm"] == "rmsnorm":
        return rms_norm(x)
    return F.layer_norm(x, x.shape[-1:], eps=EPS)


def rope_tables(grid, head_dim, base, dtype=torch.float32):
    """cos, sin (tokens, head_dim): pair i turns by row·base^(-i/q) for i < q = head_dim/4,
    by col·base^(-(i-q)/q) for the others; both members of a pair share the angle."""
    q = head_dim // 4
    inv_freq = base ** (-torch.arange(q, dtype=dtype) / q)
    token = torch.arange(grid * grid)
    rows, cols = (token // grid).to(dtype), (token % grid).to(dtype)
    angle = torch.cat([rows[:, None] * inv_freq, cols[:, None] * inv_freq], dim=1)
    angle = angle.repeat_interleave(2, dim=1)
    return angle.cos(), angle.sin()


def rope(x, cos, sin):   # rot(x): (x0, x1) -> (-x1, x0) in every pair
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    rotated = torch.stack([-pairs[..., 1], pairs[..., 0]], dim=-1).reshape(x.shape)
    return x * cos + rotated * sin


class Gain(nn.Module):   # the learned gain of QK-norm's RMSNorm, starting at 1
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["dim"]
        self.heads, self.head_dim = cfg["heads"], d // cfg["heads"]
        self.qkv = nn.Linear(d, 3 * d, bias=cfg["bias"])
        self.proj = nn.Linear(d, d, bias=cfg["bias"])
        self.qk_norm = cfg["qk_norm"]
        if self.qk_norm:   # one gain per channel of a head, shared by all heads
            self.q_norm, self.k_norm = Gain(self.head_dim), Gain(self.head_dim)

    def forward(self, x, rope_cs):   # x (N, L, D)
        gains = (self.q_norm.weight, self.k_norm.weight) if self.qk_norm else None
        return self.proj(attention(self.qkv(x), self.heads, gains, rope_cs)[2])


def attention(qkv, heads, gains=None, rope_cs=None):
    """qkv (N, L, 3D) -> scores and weights (N, heads, L, L), out (N, L, D)."""
    n, length, d = qkv.shape[0], qkv.shape[1], qkv.shape[2] // 3
    q, k, v = qkv.reshape(n, length, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
    if gains is not None:   # QK-norm: each head's q and k to RMS 1, times a gain
        q, k = rms_norm(q, gains[0]), rms_norm(k, gains[1])
    if rope_cs is not None:
        q, k = rope(q, *rope_cs), rope(k, *rope_cs)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d // heads)
    weights = scores.softmax(-1)
    return scores, weights, (weights @ v).transpose(1, 2).reshape(n, length, d)


def mlp_hidden(cfg):
    if cfg["mlp"] == "gelu":
        return int(cfg["mlp_ratio"] * cfg["dim"])
    hidden, m = int(2 * cfg["mlp_ratio"] * cfg["dim"] / 3), cfg["mlp_multiple_of"]
    return m * math.ceil(hidden / m) if m > 1 else hidden


class Mlp(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, h, b = cfg["dim"], mlp_hidden(cfg), cfg["bias"]
        self.swiglu = cfg["mlp"] == "swiglu"
        if self.swiglu:   # w1 the gate, w2 the value
            self.w1, self.w2, self.w3 = nn.Linear(d, h, bias=b), nn.Linear(d, h, bias=b), nn.Linear(h, d, bias=b)
        else:
            self.fc1, self.fc2 = nn.Linear(d, h, bias=b), nn.Linear(h, d, bias=b)

    def forward(self, x):
        if self.swiglu:
            return self.w3(F.silu(self.w1(x)) * self.w2(x))
        return self.fc2(F.gelu(self.fc1(x)))   # exact GELU (erf)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.gated = cfg["ada"] == "zero"   # adaLN-Zero: a gate on each half's output
        self.ada = nn.Linear(cfg["dim"], (6 if self.gated else 4) * cfg["dim"], bias=cfg["bias"])
        self.attn, self.mlp = Attention(cfg), Mlp(cfg)

    def forward(self, h, c, rope_cs):   # h (N, L, D), c (N, D)
        chunks = self.ada(F.silu(c))[:, None, :].chunk(6 if self.gated else 4, dim=-1)
        if self.gated:
            shift_a, scale_a, gate_a, shift_m, scale_m, gate_m = chunks
        else:
            (shift_a, scale_a, shift_m, scale_m), gate_a, gate_m = chunks, 1, 1
        h = h + gate_a * self.attn(block_norm(self.cfg, h) * (1 + scale_a) + shift_a, rope_cs)
        return h + gate_m * self.mlp(block_norm(self.cfg, h) * (1 + scale_m) + shift_m)


class TinyDiT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        d, b, grid = cfg["dim"], cfg["bias"], cfg["img"] // cfg["patch"]
        patch_dim = cfg["channels"] * cfg["patch"] ** 2
        self.patch_embed = nn.Linear(patch_dim, d, bias=b)
        if cfg["pos"] == "learned":
            self.pos_row = nn.Parameter(0.02 * torch.randn(grid, d))
            self.pos_col = nn.Parameter(0.02 * torch.randn(grid, d))
            self.rope_cs = None
        else:
            self.rope_cs = rope_tables(grid, d // cfg["heads"], cfg["rope_base"])
        self.t_fc1 = nn.Linear(cfg["freq_dim"], d, bias=b)
        self.t_fc2 = nn.Linear(d, d, bias=b)
        if cfg["classes"] > 0:   # a row per class and one more, the null label (the last)
            self.y_embed = nn.Embedding(cfg["classes"] + 1, d)
            nn.init.normal_(self.y_embed.weight, std=0.02)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg["depth"]))
        self.ada_f = nn.Linear(d, 2 * d, bias=b)
        self.head = nn.Linear(d, patch_dim, bias=b)
        if cfg["ada"] == "zero":   # adaLN-Zero: every block the identity, the first output 0
            for layer in [blk.ada for blk in self.blocks] + [self.ada_f, self.head]:
                for p in layer.parameters():
                    nn.init.zeros_(p)

    def timestep_features(self, t):   # (N,) -> (N, freq_dim): cos then sin
        half = self.cfg["freq_dim"] // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        angle = 1000.0 * t[:, None] * freqs.to(t.dtype)
        return torch.cat([angle.cos(), angle.sin()], dim=1)

    def forward(self, x, t, y=None):   # x (N, C, img, img), t (N,), y (N,) labels -> velocity, x's shape
        n, channels, img, _ = x.shape
        p = self.cfg["patch"]; grid = img // p
        # patches in row-major grid order, each (channel, row-in-patch, col-in-patch)
        patches = x.reshape(n, channels, grid, p, grid, p).permute(0, 2, 4, 1, 3, 5)
        h = self.patch_embed(patches.reshape(n, grid * grid, -1))
        rope_cs = None
        if self.rope_cs is None:
            h = h + (self.pos_row[:, None, :] + self.pos_col[None, :, :]).reshape(grid * grid, -1)
        else:
            rope_cs = tuple(table.to(x.dtype) for table in self.rope_cs)
        c = self.t_fc2(F.silu(self.t_fc1(self.timestep_features(t))))
        if self.cfg["classes"] > 0:   # no labels: every image the null label
            if y is None:
                y = torch.full((n,), self.cfg["classes"], dtype=torch.long)
            c = c + self.y_embed(y)
        for block in self.blocks:
            h = block(h, c, rope_cs)
        shift, scale = self.ada_f(F.silu(c))[:, None, :].chunk(2, dim=-1)
        out = self.head(block_norm(self.cfg, h) * (1 + scale) + shift)
        out = out.reshape(n, grid, grid, channels, p, p).permute(0, 3, 1, 4, 2, 5)
        return out.reshape(n, channels, img, img)


def flow_loss(model, x1, x0, t, y=None):
    """x_t = (1-t)·x0 + t·x1; the model predicts the velocity x1 - x0."""
    tb = t[:, None, None, None]
    v = model((1 - tb) * x0 + tb * x1, t, y)
    return ((v - (x1 - x0)) ** 2).mean(), v


def guided_velocity(model, x, t, y, w):
    """Classifier-free guidance: v(null) + w·(v(y) − v(null)); w = 1 is the conditional model."""
    if w == 1.0:
        return model(x, t, y)
    v_null = model(x, t, torch.full_like(y, model.cfg["classes"]))
    return v_null + w * (model(x, t, y) - v_null)


def adamw(model, lr, weight_decay):   # decay on weight matrices only, as the C trainer does
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": matrices, "weight_decay": weight_decay},
                              {"params": vectors, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.999), eps=1e-8)


# ---------------------------------------------------------------------------
# safetensors, written exactly as common/io/safetensors.c writes it: compact
# JSON (metadata first, then each tensor's dtype, shape, data_offsets),
# padded with spaces to a multiple of 8 bytes, then the raw little-endian F32.

def save_safetensors(path, tensors, meta):
    header, blobs, offset = {"__metadata__": meta}, [], 0
    for name, t in tensors.items():
        data = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(path + ".tmp", path)


# ---------------------------------------------------------------------------
# Golden files

# Small models (a few hundred kB a file) that still have two blocks, two heads
# and a 4x4 grid; one file per switch, all four together, the "modern" block,
# and two shapes far from the default.
SMALL = dict(img=16, patch=4, dim=16, depth=2, heads=2, freq_dim=16)
GOLDEN = {
    "baseline": (1, {}),
    "rmsnorm": (2, dict(norm="rmsnorm")),
    "qknorm": (3, dict(qk_norm=True)),
    "swiglu": (4, dict(mlp="swiglu")),
    "rope2d": (5, dict(pos="rope2d")),
    "nobias": (6, dict(bias=False)),
    "allfour": (7, dict(norm="rmsnorm", qk_norm=True, mlp="swiglu", pos="rope2d")),
    "modern": (8, dict(norm="rmsnorm", qk_norm=True, mlp="swiglu", pos="rope2d", bias=False,
                       mlp_multiple_of=16)),
    # one grey channel, 3x3 patches, one block, one head of 24, RoPE at base 10,000
    "shape": (9, dict(img=12, channels=1, patch=3, dim=24, depth=1, heads=1, freq_dim=8,
                      mlp_ratio=2.0, pos="rope2d", qk_norm=True, rope_base=10000.0)),
    # two channels, 2x2 patches, three blocks of three heads of 4, GELU at ratio 3
    "shape2": (10, dict(img=8, channels=2, patch=2, dim=12, depth=3, heads=3, freq_dim=12,
                        mlp_ratio=3.0)),
    # adaLN-Zero's gates (the weights are random, as in every file, so no gate is 0)
    "adazero": (11, dict(ada="zero")),
    # class labels, each sampled with guidance (GUIDANCE): alone, and with
    # adaLN-Zero and RoPE (the step-7 model)
    "classes": (12, dict(classes=10)),
    "classes_adazero": (13, dict(classes=10, ada="zero", pos="rope2d")),
}
GUIDANCE = {"classes": 2.0, "classes_adazero": 3.0}   # w of the sample, two forward passes a step
# A file where every norm's eps matters: the residual stream and the queries
# and keys kept tiny (weights scaled down after the draw), so that the mean
# square each norm sees, about 1e-8 to 1e-6, is at or below eps = 1e-6. With
# eps 1e-5, or eps outside the square root, its output and gradients move by
# far more than the tolerances (the other files' norms see mean squares near 1,
# where eps is invisible). LayerNorm in the blocks and the final layer,
# RMSNorm in QK-norm: both norms' rows.
SMALL_NORMS = {
    "eps": (11, dict(qk_norm=True), {"patch_embed.": 1e-4, "pos_": 1e-4, "attn.qkv.": 1e-3,
                                     "attn.proj.": 1e-2, "mlp.fc2.": 1e-4}),
}
# Training and sampling like 2026 (step 8): logit-normal times (input.u, the
# normal draws the C model turns into times), the power-function EMA after
# each AdamW step (ema.*), Heun's sampler.
RECIPE = {
    "recipe": (14, dict(classes=10, ada="zero", pos="rope2d", qk_norm=True),
               dict(t_dist="logit_normal", t_mean=0.0, t_std=1.0, ema=0.25, sampler="heun"), 2.0),
    "recipe_heun": (15, {}, dict(sampler="heun"), 1.0),
    "recipe_ema": (16, dict(norm="rmsnorm"), dict(t_dist="logit_normal", t_mean=-0.5, t_std=0.8, ema=0.2), 1.0),
}
LR, WEIGHT_DECAY, ADAMW_STEPS, BATCH, SAMPLES, SAMPLE_STEPS = 1e-2, 1.0, 3, 3, 2, 4
# WEIGHT_DECAY: large, so that one step's decay, lr·wd·|p| (about 0.15·lr for
# a typical weight here), is several times the 5%-of-lr tolerance of the
# AdamW check: a missing or misplaced decay cannot hide inside it.


def meta_value(v):   # as the C config parser reads them: true/false, 4.0, 100.0
    return str(v).lower() if isinstance(v, bool) else str(v)


def ema_gamma(sigma_rel):
    """The power-function EMA's exponent: the largest real root of
    g^3 + 7 g^2 + (16 - 1/sigma_rel^2) g + (12 - 1/sigma_rel^2)."""
    k = sigma_rel ** -2
    return max(r.real for r in numpy.roots([1.0, 7.0, 16.0 - k, 12.0 - k]) if abs(r.imag) < 1e-12)


def golden_file(path, seed, overrides, scales=None, guidance=1.0, recipe=None):
    cfg = dict(DEFAULTS, **SMALL)
    cfg.update(overrides)
    torch.manual_seed(seed)
    model = TinyDiT(cfg).double()
    with torch.no_grad():   # weights larger than an init, norm gains around 1
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.15 if p.dim() >= 2 else 0.1) + (1.0 if "norm" in name else 0.0))
            for part, factor in (scales or {}).items():   # SMALL_NORMS: tensors scaled down
                if part in name:
                    p.mul_(factor)
    shape = (BATCH, cfg["channels"], cfg["img"], cfg["img"])
    x1 = torch.rand(shape, dtype=torch.float64) * 2 - 1
    x0 = torch.randn(shape, dtype=torch.float64)
    recipe = recipe or {}
    out = {"param." + n: p.detach().clone() for n, p in model.named_parameters()}
    if recipe.get("t_dist") == "logit_normal":   # t = sigmoid(mean + std u), u ~ N(0, 1)
        u = torch.randn(BATCH, dtype=torch.float64)
        t = torch.sigmoid(recipe["t_mean"] + recipe["t_std"] * u)
        out["input.u"] = u
    else:
        t = torch.rand(BATCH, dtype=torch.float64)
    out.update({"input.x1": x1, "input.x0": x0, "input.t": t})
    y = None
    if cfg["classes"] > 0:   # random classes, the last image the null label: its row gets a gradient too
        y = torch.randint(0, cfg["classes"], (BATCH,))
        y[-1] = cfg["classes"]
        out["input.y"] = y.to(torch.float64)

    opt = adamw(model, LR, WEIGHT_DECAY)
    sigma_rel = recipe.get("ema", 0.0)
    gamma = ema_gamma(sigma_rel) if sigma_rel > 0 else None
    ema = {n: p.detach().clone() for n, p in model.named_parameters()}
    for k in range(1, ADAMW_STEPS + 1):
        opt.zero_grad()
        loss, v = flow_loss(model, x1, x0, t, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        if k == 1:
            out.update({"output.v": v.detach(), "output.loss": loss.detach().reshape(1)})
            out.update({"grad." + n: g for n, g in grads.items()})
        opt.step()
        after = {n: p.detach().clone() for n, p in model.named_parameters()}
        if gamma is not None:   # after step k: ema <- beta ema + (1 - beta) p, beta = (1 - 1/k)^(gamma + 1)
            beta = (1.0 - 1.0 / k) ** (gamma + 1.0)
            for n, p in after.items():
                ema[n] = beta * ema[n] + (1.0 - beta) * p
        if k == 1:
            out.update({"adamw." + n: p for n, p in after.items()})
            sample = euler_sample(model, cfg, guidance, recipe.get("sampler", "euler"))
        out.update({f"adamw{k}.grad." + n: g for n, g in grads.items()})
        out.update({f"adamw{k}." + n: p for n, p in after.items()})
    out.update(sample)

    meta = {key: meta_value(cfg[key]) for key in DEFAULTS}
    meta.update({"seed": str(seed), "adamw.lr": str(LR), "adamw.beta1": "0.9", "adamw.beta2": "0.999",
                 "adamw.eps": str(1e-8), "adamw.weight_decay": str(WEIGHT_DECAY),
                 "adamw.steps": str(ADAMW_STEPS), "sample.steps": str(SAMPLE_STEPS)})
    if cfg["classes"] > 0:
        meta["sample.guidance"] = str(guidance)
    if gamma is not None:
        out.update({"ema." + n: p for n, p in ema.items()})
        meta.update({"ema": str(sigma_rel), "ema.gamma": repr(gamma)})
    if "t_dist" in recipe:
        meta.update({"t_dist": recipe["t_dist"], "t_mean": str(recipe["t_mean"]), "t_std": str(recipe["t_std"])})
    if recipe.get("sampler", "euler") != "euler":
        meta["sample.sampler"] = recipe["sampler"]
    save_safetensors(path, out, meta)
    params = sum(p.numel() for p in model.parameters())
    print(f"{path}: {params} parameters, loss {out['output.loss'].item():.6f}, {os.path.getsize(path)} bytes")


def euler_sample(model, cfg, guidance, sampler="euler"):
    """From noise at t = 0 to an image at t = 1: x += v(x, i/S) / S, or Heun's
    x += (v(x, i/S) + v(x + v(x, i/S)/S, (i+1)/S)) / (2S); class-conditional,
    every v guided toward the labels [1, classes - 1]."""
    labels = torch.tensor([1, cfg["classes"] - 1]) if cfg["classes"] > 0 else None
    with torch.no_grad():
        noise = torch.randn(SAMPLES, cfg["channels"], cfg["img"], cfg["img"], dtype=torch.float64)
        x = noise.clone()
        def velocity(x, time):
            t = torch.full((SAMPLES,), time, dtype=torch.float64)
            return model(x, t) if labels is None else guided_velocity(model, x, t, labels, guidance)
        for i in range(SAMPLE_STEPS):
            v = velocity(x, i / SAMPLE_STEPS)
            if sampler == "heun":
                v = (v + velocity(x + v / SAMPLE_STEPS, (i + 1) / SAMPLE_STEPS)) / 2
            x = x + v / SAMPLE_STEPS
    out = {"sample.noise": noise, "sample.out": x}
    if labels is not None:
        out["sample.y"] = labels.to(torch.float64)
    return out


def cmd_golden(a):
    os.makedirs(a.dir, exist_ok=True)
    for name, (seed, overrides) in GOLDEN.items():
        golden_file(os.path.join(a.dir, name + ".safetensors"), seed, overrides, guidance=GUIDANCE.get(name, 1.0))
    for name, (seed, overrides, scales) in SMALL_NORMS.items():
        golden_file(os.path.join(a.dir, name + ".safetensors"), seed, overrides, scales)
    for name, (seed, overrides, recipe, guidance) in RECIPE.items():
        golden_file(os.path.join(a.dir, name + ".safetensors"), seed, overrides, guidance=guidance, recipe=recipe)


# ---------------------------------------------------------------------------
# Layer files: each layer a step teaches, alone, as PyTorch computes it, for
# the parity line of steps 2 to 5 (common/eval/parity.c). Every file holds
# input.* (the layer's inputs and weights), upstream.dout (the gradient that
# arrives from above), and per variant V: V.out (and what else the forward
# gives) and V.d* (the gradients autograd sends back), in float64 stored F32.
# Metadata: torch.version, eps, and V.torch, the PyTorch that computed V
# (V.note: what to know about it, e.g. that this torch has no nn.RMSNorm).

def torch_rms_norm(x, gain):
    """torch.nn.RMSNorm where this torch has one (2.4 on), else the same
    formula in torch ops (rms_norm above); says which in the metadata."""
    if hasattr(torch.nn, "RMSNorm"):
        layer = torch.nn.RMSNorm(x.shape[-1], eps=EPS, dtype=x.dtype)
        layer.weight = nn.Parameter(gain)
        return layer(x), {"rmsnorm.torch": "torch.nn.RMSNorm"}
    return rms_norm(x, gain), {"rmsnorm.torch": "x * rsqrt(mean(x**2) + eps) * gain",
                               "rmsnorm.note": "which has no torch.nn.RMSNorm"}


def backward(out, dout, *leaves):
    """The gradients of sum(out · dout) at each leaf: autograd fed dout."""
    return torch.autograd.grad(out, leaves, dout)


def leaf(t):
    return t.detach().clone().requires_grad_(True)


def norms_file():
    """LayerNorm and RMSNorm over rows of 32. Rows of every scale, from
    mean(x²) = 1e-6 (as small as eps, so eps matters) to 25 with an offset."""
    scale = torch.tensor([1e-3, 2e-3, 5e-3, 1e-2, 0.1, 1.0, 2.0, 5.0], dtype=torch.float64)
    offset = torch.tensor([0, 0, 0, 0, 0.05, -1.0, 3.0, 0], dtype=torch.float64)
    x = torch.randn(8, 32, dtype=torch.float64) * scale[:, None] + offset[:, None]
    gain, dout = 1 + 0.2 * torch.randn(32, dtype=torch.float64), torch.randn(8, 32, dtype=torch.float64)
    out = {"input.x": x, "input.gain": gain, "upstream.dout": dout}
    xl = leaf(x)
    y = nn.LayerNorm(32, eps=EPS, elementwise_affine=False, dtype=torch.float64)(xl)
    out.update({"layernorm.out": y, "layernorm.dx": backward(y, dout, xl)[0]})
    xr, gr = leaf(x), leaf(gain)
    y, rms_meta = torch_rms_norm(xr, gr)
    dx, dgain = backward(y, dout, xr, gr)
    out.update({"rmsnorm.out": y, "rmsnorm.dx": dx, "rmsnorm.dgain": dgain})
    return out, dict(rms_meta, **{"layernorm.torch": "torch.nn.LayerNorm"})


def attention_file(scale=2.0):
    """Attention of 2 images, 2 heads of 8, 16 tokens, from qkv (2, 16, 48);
    q and k large enough that QK-norm changes the scores."""
    qkv = scale * torch.randn(2, 16, 48, dtype=torch.float64)
    gains = [1 + 0.2 * torch.randn(8, dtype=torch.float64) for _ in range(2)]
    dout = torch.randn(2, 16, 16, dtype=torch.float64)
    out = {"input.qkv": qkv, "input.q_gain": gains[0], "input.k_gain": gains[1], "upstream.dout": dout}
    for name, g in (("plain", None), ("qknorm", [leaf(gains[0]), leaf(gains[1])])):
        q = leaf(qkv)
        scores, weights, y = attention(q, 2, g)
        grads = backward(y, dout, q, *(g or []))
        out.update({name + ".scores": scores, name + ".weights": weights, name + ".out": y,
                    name + ".dqkv": grads[0]})
        if g:
            out.update({name + ".dq_gain": grads[1], name + ".dk_gain": grads[2]})
    return out, {"plain.torch": "softmax(q @ k.T / sqrt(d)) in torch",
                 "qknorm.torch": "rms_norm on q, k, then softmax(q @ k.T / sqrt(d)) in torch"}


def ffn_file():
    """The two FFNs of project's Mlp at D = 16 with mlp_ratio 4, so hidden
    widths 64 (GELU) and int(2/3 · 64) = 42 (SwiGLU), on 8 rows."""
    x, dout = torch.randn(8, 16, dtype=torch.float64), torch.randn(8, 16, dtype=torch.float64)
    out = {"input.x": x, "upstream.dout": dout}
    for kind in ("gelu", "swiglu"):
        mlp = Mlp(dict(DEFAULTS, dim=16, mlp=kind)).double()
        xl = leaf(x)
        y = mlp(xl)
        params = dict(mlp.named_parameters())
        grads = backward(y, dout, xl, *params.values())
        out.update({f"{kind}.{n}": p.detach() for n, p in params.items()})
        out.update({kind + ".out": y, kind + ".dx": grads[0]})
        out.update({f"{kind}.d{n}": g for n, g in zip(params, grads[1:])})
    return out, {"gelu.torch": "Mlp: fc2(F.gelu(fc1(x)))", "swiglu.torch": "Mlp: w3(F.silu(w1(x)) * w2(x))"}


def rope_file():
    """2D RoPE on a 4x4 grid of tokens, head_dim 16, base 100: x (2, 16, 16)."""
    cos, sin = rope_tables(4, 16, 100.0, torch.float64)
    x, dout = torch.randn(2, 16, 16, dtype=torch.float64), torch.randn(2, 16, 16, dtype=torch.float64)
    xl = leaf(x)
    y = rope(xl, cos, sin)
    out = {"input.x": x, "upstream.dout": dout, "rope.cos": cos, "rope.sin": sin,
           "rope.out": y, "rope.dx": backward(y, dout, xl)[0]}
    return out, {"rope.torch": "rope(x, cos, sin) in torch", "grid": "4", "head_dim": "16", "base": "100.0"}


def attention_eps_file():
    """The attention file with q and k of about 1e-3 (mean square about 1e-6,
    as small as eps): QK-norm's eps matters here."""
    return attention_file(1e-3)


LAYER_FILES = {"norms": (21, norms_file), "attention": (22, attention_file),
               "ffn": (23, ffn_file), "rope2d": (24, rope_file), "attention_eps": (25, attention_eps_file)}


def cmd_layers(a):
    os.makedirs(a.dir, exist_ok=True)
    for name, (seed, make) in LAYER_FILES.items():
        torch.manual_seed(seed)
        tensors, meta = make()
        meta.update({"torch.version": torch.__version__, "eps": str(EPS), "seed": str(seed)})
        path = os.path.join(a.dir, name + ".safetensors")
        save_safetensors(path, tensors, meta)
        print(f"{path}: {len(tensors)} tensors, {os.path.getsize(path)} bytes")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description="TinyDiT in PyTorch: golden files")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("golden", help="write the golden files")
    g.add_argument("dir", nargs="?", default=os.path.join(root, "tests", "golden"))
    y = sub.add_parser("layers", help="write the per-layer reference files")
    y.add_argument("dir", nargs="?", default=os.path.join(root, "tests", "golden", "layers"))
    a = ap.parse_args()
    {"golden": cmd_golden, "layers": cmd_layers}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
