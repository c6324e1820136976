#!/usr/bin/python3
"""C against PyTorch: one training step of the six variants, on this machine.

    env -u OPENBLAS_CORETYPE scripts/speed_vs_torch.py [--batch 64] [--alternations 3] [--rounds 8]

PyTorch runs in this process (tools/tinydit_ref.py's model, its autograd,
torch.optim.AdamW); the C step runs as `lab/lab speed`, the six variants
taking turns in its own process. The two sides alternate, each with 1 and
with 2 threads, who goes first swapping each time, so that a change of load
hits both; each variant's figure on each side is the median over the
alternations of its faster thread count. Each side keeps its own wait
policy: the C programs set passive themselves, PyTorch runs with libgomp's
default (spinning), its faster one on a quiet machine.
"""
import argparse, os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import torch  # noqa: E402
from tinydit_ref import DEFAULTS, TinyDiT, flow_loss  # noqa: E402

VARIANTS = {"baseline": {}, "+ RMSNorm": dict(norm="rmsnorm"), "+ QK-norm": dict(qk_norm=True),
            "+ SwiGLU": dict(mlp="swiglu"), "+ 2D RoPE": dict(pos="rope2d"),
            "all four": dict(norm="rmsnorm", qk_norm=True, mlp="swiglu", pos="rope2d")}
THREADS = (1, 2)


def c_speed(batch, rounds, threads):
    out = subprocess.run([os.path.join(ROOT, "lab", "lab"), "speed", "--batch", str(batch), "--threads",
                          str(threads), "--rounds", str(rounds + 2), "--warmup", "2"],
                         check=True, capture_output=True, text=True).stdout
    ms = {}
    for name in VARIANTS:
        m = re.search(r"^  " + re.escape(name) + r"\s+([0-9.]+)", out, re.M)
        ms[name] = float(m.group(1))
    return ms


def torch_speed(models, batch, rounds, threads):
    """The median ms of `rounds` steps per variant, the variants taking turns."""
    torch.set_num_threads(threads)
    x1 = torch.rand(batch, 3, 32, 32) * 2 - 1
    times = {name: [] for name in models}
    for rnd in range(rounds + 2):
        for name, (model, opt) in models.items():
            start = time.perf_counter()
            opt.zero_grad()
            flow_loss(model, x1, torch.randn_like(x1), torch.rand(batch))[0].backward()
            opt.step()
            if rnd >= 2:   # two warm-up rounds
                times[name].append(1000 * (time.perf_counter() - start))
    return {name: statistics.median(ts) for name, ts in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--alternations", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args()
    torch.manual_seed(0)
    models = {}
    for name, v in VARIANTS.items():
        model = TinyDiT(dict(DEFAULTS, **v))
        models[name] = (model, torch.optim.AdamW(model.parameters(), lr=3e-4))
    runs = {(side, t): [] for side in ("C", "PyTorch") for t in THREADS}
    for k in range(a.alternations):
        sides = ("C", "PyTorch") if k % 2 == 0 else ("PyTorch", "C")
        for side in sides:
            for t in (THREADS if k % 2 == 0 else THREADS[::-1]):
                f = c_speed if side == "C" else (lambda b, r, t: torch_speed(models, b, r, t))
                runs[(side, t)].append(f(a.batch, a.rounds, t))
                print(f"alternation {k + 1}: {side}, {t} thread(s) done", file=sys.stderr)
    med = {key: {n: statistics.median(r[n] for r in rs) for n in VARIANTS} for key, rs in runs.items()}
    print(f"batch {a.batch}: median of {a.alternations} alternations, each the median of {a.rounds} "
          f"timed steps per variant; each side: the faster of 1 and 2 threads; torch {torch.__version__}")
    print(f"{'variant':10s} {'C 1 thr':>8s} {'C 2 thr':>8s} {'PyT 1 thr':>9s} {'PyT 2 thr':>9s} {'C/PyTorch':>9s}")
    for n in VARIANTS:
        c = [med[("C", t)][n] for t in THREADS]
        p = [med[("PyTorch", t)][n] for t in THREADS]
        print(f"{n:10s} {c[0]:8.1f} {c[1]:8.1f} {p[0]:9.1f} {p[1]:9.1f} {min(c) / min(p):8.2f}x")


if __name__ == "__main__":
    main()
