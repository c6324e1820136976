#!/usr/bin/python3
"""The C trainer's recipe in PyTorch, to check the C training against.

    python3 tools/torch_train.py replay TRACE.safetensors
        TRACE comes from build/tools/trace_steps: the C run's starting weights,
        its batches, noise and times for K steps, and its losses. PyTorch
        takes the same K steps from the same weights on the same inputs and
        prints the two losses step by step, then the weights after step K.

    python3 tools/torch_train.py train --name NAME [--preset quick] [--set key=value]...
                                       [--out DIR] [--threads 1]
        a whole run with PyTorch's own random streams: the same data order
        scheme, flips, AdamW and constant lr as common/train/train_loop.c, and
        val MSE on the same exam (the C generator is ported below). Writes
        DIR/NAME/metrics.json and loss.tsv in the C trainer's schema, so that
        `step6_ablation table --compare DIR` sets these runs beside C's.

Needs Debian's python3-torch (and numpy, which comes with it). Data from
$CIFAR_DIR, as for the C programs.
"""

import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

from tinydit_ref import DEFAULTS, TinyDiT, adamw, flow_loss

VAL_SEED, VAL_IMAGES, EVAL_BATCH = 1234, 2000, 250     # common/eval/scorecard.h
CURVE_WINDOW = 250
PRESETS = {"smoke": dict(dim=32, depth=2, heads=2, freq_dim=32, batch=16, steps=60),
           "quick": dict(batch=64, steps=1000, val_every=250),
           "tutorial": dict(batch=128, steps=4000, val_every=500)}
# val_every and guidance are read and recorded like the C trainer's, but this
# trainer checks val MSE only at the end (it writes no val_curve) and draws no
# samples
TRAINING = dict(seed=0, data_seed=-1, lr=3e-4, weight_decay=0.0, batch=128, steps=4000, flip=True, label_drop=0.1,
                threads=0, val_every=0, guidance=1.0, t_dist="uniform", t_mean=0.0, t_std=1.0, ema=0.0,
                sampler="euler", sample_steps=20)


# ---------------------------------------------------------------------------
# Reading safetensors (F32 only, as common/io/safetensors.c writes it)

def load_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, h in header.items():
        if h["dtype"] != "F32":
            sys.exit(f"{path}: tensor {name} is {h['dtype']}, expected F32")
        lo, hi = h["data_offsets"]
        tensors[name] = torch.from_numpy(np.frombuffer(data[lo:hi], dtype="<f4").copy()).reshape(h["shape"])
    return tensors, meta


def parse_value(default, text):   # a --set value or a metadata string, typed like its default
    if isinstance(default, bool):
        if text not in ("true", "false"):
            sys.exit(f"expected true or false, got '{text}'")
        return text == "true"
    return type(default)(float(text)) if isinstance(default, int) and "." in text else type(default)(text)


def config_from(items):   # key=value strings on top of the defaults
    cfg = dict(DEFAULTS, **TRAINING)
    for key, text in items:
        if key not in cfg:
            sys.exit(f"unknown config key '{key}'; known: {', '.join(cfg)}")
        cfg[key] = parse_value(cfg[key], text)
    return cfg


# ---------------------------------------------------------------------------
# The C generator (common/nn/rng.c), vectorised: SplitMix64, uniforms from the
# top 24 bits, normals by Box-Muller in double from pairs of draws (cos first,
# then sin). Only the val-MSE exam needs it, so that both sit the same exam.

GAMMA = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(seed, start, n):   # draws start+1 .. start+n of the stream seeded with seed
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + GAMMA * np.arange(start + 1, start + n + 1, dtype=np.uint64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def exam(per_image, n_images):
    """scorecard_exam(): normals for every image's noise, then a time per image."""
    n_normals = per_image * n_images            # even here, so no spare is left over
    draws = splitmix64(VAL_SEED, 0, n_normals)
    u1 = 1.0 - (draws[0::2] >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    u2 = (draws[1::2] >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    rad, th = np.sqrt(-2.0 * np.log(u1)), 2.0 * math.pi * u2
    x0 = np.empty(n_normals, dtype=np.float32)
    x0[0::2], x0[1::2] = rad * np.cos(th), rad * np.sin(th)
    t = ((splitmix64(VAL_SEED, n_normals, n_images) >> np.uint64(40)).astype(np.float32)
         * np.float32(1.0 / 16777216.0))
    return torch.from_numpy(x0), torch.from_numpy(t)


# ---------------------------------------------------------------------------
# replay: the same K steps in both

def cmd_replay(a):
    tensors, meta = load_safetensors(a.trace)
    cfg = config_from((k[len("config."):], v) for k, v in meta.items() if k.startswith("config."))
    torch.set_num_threads(a.threads)
    model = TinyDiT(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(tensors["param." + name])
    opt = adamw(model, cfg["lr"], cfg["weight_decay"])
    c_loss = tensors["loss"].double()
    K = c_loss.shape[0]
    check_exam(tensors, cfg)
    print(f"{a.trace}: {K} steps of batch {tensors['x1'].shape[1]}, lr {cfg['lr']:g}, "
          f"{sum(p.numel() for p in model.parameters()):,} params")
    print(f"{'step':>5} {'C loss':>10} {'PyTorch':>10} {'|diff|/loss':>12}")
    rel = []
    for k in range(K):
        opt.zero_grad()
        y = tensors["y"][k].long() if "y" in tensors else None   # class-conditional: the labels C trained on
        loss = flow_loss(model, tensors["x1"][k], tensors["x0"][k], tensors["t"][k], y)[0]
        loss.backward()
        opt.step()
        rel.append(abs(loss.item() - c_loss[k].item()) / c_loss[k].item())
        if k + 1 in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500) or k + 1 == K:
            print(f"{k + 1:5d} {c_loss[k].item():10.6f} {loss.item():10.6f} {rel[-1]:12.2e}")
    first_over = {th: next((k + 1 for k, r in enumerate(rel) if r > th), None) for th in (1e-5, 1e-3)}
    print(f"largest |diff|/loss: steps 1-10 {max(rel[:10]):.2e}, all {K} steps {max(rel):.2e}; "
          f"first step above 1e-5: {first_over[1e-5]}, above 1e-3: {first_over[1e-3]}")
    # AdamW moves a weight by about lr a step whatever its gradient's size, so a
    # gradient that is nearly zero can step either way on a rounding
    # difference: lr is the natural unit for the weights' differences.
    worst = max(((p.detach() - tensors["after." + n]).abs().max().item(), n) for n, p in model.named_parameters())
    print(f"weights after step {K}: largest difference {worst[0] / cfg['lr']:.3f} lr ({worst[1]})")
    if "val_mse" in tensors and cfg["classes"] == 0 and os.path.isfile(os.path.join(os.environ.get("CIFAR_DIR", ""), "test_batch.bin")):
        c_val = tensors["val_mse"].item()
        t_val = val_mse(model, load_cifar(["test_batch.bin"])[:VAL_IMAGES], cfg)
        print(f"val MSE after step {K}: C {c_val:.6f}, PyTorch {t_val:.6f}, difference {t_val - c_val:+.6f}")
    return 0 if max(rel[:10]) < a.tol else 1


def check_exam(tensors, cfg):
    per = cfg["channels"] * cfg["img"] ** 2
    x0, t = exam(per, VAL_IMAGES)
    dx = (x0[:4 * per] - tensors["exam.x0_head"].reshape(-1)).abs().max().item()
    dt = (t - tensors["exam.t"]).abs().max().item()
    print(f"the val-MSE exam, ported: noise differs from C's by at most {dx:.1e}, times by {dt:.1e}")
    if dx > 1e-6 or dt > 0:
        sys.exit("the ported exam does not match the C one: val MSE would not be comparable")


# ---------------------------------------------------------------------------
# train: a whole run with PyTorch's random streams

def load_cifar(files):
    d = os.environ.get("CIFAR_DIR", "")
    raw = []
    for name in files:
        path = os.path.join(d, name)
        if not os.path.isfile(path):
            sys.exit(f"{path}: not found; set CIFAR_DIR to the folder holding the CIFAR-10 binary files")
        b = np.fromfile(path, dtype=np.uint8)
        if b.size % 3073:
            sys.exit(f"{path}: {b.size} bytes is not a whole number of 3,073-byte records")
        raw.append(b.reshape(-1, 3073)[:, 1:])
    x = torch.from_numpy(np.concatenate(raw).astype(np.float32).reshape(-1, 3, 32, 32))
    return x / 127.5 - 1.0           # as cifar_image_to_float: two float32 operations


class Batches:
    """As common/train/dataloader.c: a fresh permutation per epoch, batches cut
    back to back across epoch boundaries, each image mirrored with p = 1/2.
    draw="replacement" instead picks each batch's images independently, with
    replacement (an image may come twice in an epoch's worth of steps, or not
    at all): the other common recipe, to see whether it changes the spread."""

    def __init__(self, images, flip, draw="epoch"):
        self.images, self.flip, self.draw = images, flip, draw
        self.order = torch.empty(0, dtype=torch.long)

    def next(self, B):
        if self.draw == "replacement":
            idx = torch.randint(self.images.shape[0], (B,))
        else:
            while self.order.numel() < B:
                self.order = torch.cat([self.order, torch.randperm(self.images.shape[0])])
            idx, self.order = self.order[:B], self.order[B:]
        x = self.images[idx]
        if self.flip:
            mirror = torch.rand(B) < 0.5
            x[mirror] = x[mirror].flip(-1)
        return x


def val_mse(model, test, cfg):
    """scorecard_val_mse(): the exam over the first min(2,000, all) test images."""
    n, per = min(VAL_IMAGES, test.shape[0]), cfg["channels"] * cfg["img"] ** 2
    x0, t = exam(per, n)
    x0 = x0.reshape(n, cfg["channels"], cfg["img"], cfg["img"])
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, EVAL_BATCH):
            total += flow_loss(model, test[i:i + EVAL_BATCH], x0[i:i + EVAL_BATCH], t[i:i + EVAL_BATCH])[0].item() * \
                     min(EVAL_BATCH, n - i)
    return total / n


def run_record():
    """Where, when and how the run was made, as the C trainer records it
    (scripts/results_readme.sh writes a results folder's README from it)."""
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and ":" in line:
                cpu = line.split(":", 1)[1].strip()
                break
    return {"machine": f"{cpu}, {os.cpu_count()} cores",
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "command": " ".join(["python3"] + sys.argv)}


def loss_spikes(losses):   # common/eval/spikes.h: above 1.5x the median of the previous 100
    return sum(1 for i in range(100, len(losses)) if losses[i] > 1.5 * float(np.median(losses[i - 100:i])))


def config_strings(cfg, threads):   # as the C trainer writes "config" in metrics.json
    def text(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return f"{float(np.float32(v)):.12g}"
        return str(v)
    out = {k: text(v) for k, v in cfg.items()}
    out["threads"] = str(threads)
    return out


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def cmd_train(a):
    base = dict(PRESETS[a.preset])
    items = [(k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in base.items()]
    for s in a.set:
        if "=" not in s:
            sys.exit(f"--set {s}: expected key=value")
        items.append(tuple(s.split("=", 1)))
    cfg = config_from(items)
    if cfg["data_seed"] != -1:   # one torch generator draws the weights, the batches and the noise here
        sys.exit("data_seed: this trainer draws everything from the seed; only the C trainer sets the data order apart")
    if cfg["classes"] > 0:
        sys.exit("classes: this trainer trains the unconditional model; only the C trainer trains on labels")
    if cfg["t_dist"] != "uniform" or cfg["ema"] > 0:
        sys.exit("t_dist, ema: this trainer draws uniform times and keeps no EMA; only the C trainer trains "
                 "with step 8's recipe")
    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(a.threads)
    run_dir = os.path.join(a.out, a.name)
    os.makedirs(run_dir, exist_ok=True)
    train = load_cifar([f"data_batch_{i}.bin" for i in range(1, 6)])
    test = load_cifar(["test_batch.bin"])[:VAL_IMAGES]
    model = TinyDiT(cfg)
    opt = adamw(model, cfg["lr"], cfg["weight_decay"])
    batches = Batches(train, cfg["flip"], a.draw)
    B, steps, losses = cfg["batch"], cfg["steps"], []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        x1 = batches.next(B)
        opt.zero_grad()
        loss = flow_loss(model, x1, torch.randn_like(x1), torch.rand(B))[0]
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            sys.exit(f"error: step {step}: the loss is {losses[-1]}: training diverged")
        if step % 50 == 0 or step == steps:
            el = time.perf_counter() - start
            print(f"{a.name} step {step}/{steps} loss {losses[-1]:.4f} {step / el:.2f} it/s "
                  f"ETA {(steps - step) * el / step / 60:.1f} min", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    curve = [[e, round(float(np.mean(losses[e - CURVE_WINDOW:e])), 5)]
             for e in range(CURVE_WINDOW, steps + 1, CURVE_WINDOW)]
    metrics = {"name": a.name, "implementation": "pytorch " + torch.__version__,
               "params": sum(p.numel() for p in model.parameters()),
               "it_per_s": steps / seconds, "ms_per_step": 1000 * seconds / steps,
               "loss_spikes": loss_spikes(losses),
               # probe-FD needs the C project's probe classifier: not computed here
               "raw": {"val_mse": val_mse(model, test, cfg), "uncond": {"probe_fd": None}},
               "curve": curve, "curve_window": CURVE_WINDOW, "config": config_strings(cfg, a.threads),
               "preset": a.preset, "seed": cfg["seed"], "steps": steps, "batch": B, "threads": a.threads,
               "draw": a.draw,
               "train_seconds": seconds, "final_loss": losses[-1], "record": run_record()}
    write_atomic(os.path.join(run_dir, "loss.tsv"),
                 "step\tloss\n" + "".join(f"{i + 1}\t{v:.6f}\n" for i, v in enumerate(losses)))
    write_atomic(os.path.join(run_dir, "metrics.json"), json.dumps(metrics, indent=1) + "\n")
    print(f"[{a.name}] val MSE {metrics['raw']['val_mse']:.4f}, {metrics['ms_per_step']:.0f} ms/step, "
          f"{seconds / 60:.1f} min")
    return 0


def main():
    ap = argparse.ArgumentParser(description="the C trainer's recipe in PyTorch")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay", help="the steps of a trace_steps file, step by step against C")
    r.add_argument("trace")
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--tol", type=float, default=1e-4, help="largest |diff|/loss allowed over steps 1-10")
    t = sub.add_parser("train", help="a whole run, written like the C trainer's")
    t.add_argument("--name", required=True)
    t.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    t.add_argument("--out", default="runs/torch")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--draw", choices=["epoch", "replacement"], default="epoch",
                   help="batches cut from a fresh permutation per epoch (the C trainer's) or drawn with replacement")
    a = ap.parse_args()
    return {"replay": cmd_replay, "train": cmd_train}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
