#!/usr/bin/python3
"""C against PyTorch, training-step speed, measured fairly on one machine.

    scripts/speed_vs_torch.py [--batch 64 128] [--alternations 3] [--rounds 8]

For each batch size it alternates, several times, the C program's fair race
(`step6_ablation speed --json`: the six variants in one process, turns
interleaved, median per variant) with the PyTorch reference's race
(`tinydit_ref.py bench --json`, the same six variants, same scheme), so that a
change in the machine's background load hits both. Each side's figure is the
median over the alternations. Threads: C with 2 OpenMP threads; PyTorch in the
setting that was its best here (--threads 1 with OPENBLAS_NUM_THREADS=2).
Prints a table: variant, C ms/step, PyTorch ms/step, C/PyTorch, C GFLOP/s,
and the cblas_sgemm rates the C program measured in the same rounds.
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C_BIN = os.path.join(ROOT, "step6_ablation", "step6_ablation")
TORCH_REF = os.path.join(ROOT, "tools", "tinydit_ref.py")   # the project's own PyTorch reference
VARIANTS = ["baseline", "+ RMSNorm", "+ QK-norm", "+ SwiGLU", "+ 2D RoPE", "all four"]


def run_c(batch, rounds):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([C_BIN, "speed", "--batch", str(batch), "--threads", "2",
                          "--rounds", str(rounds), "--json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    j = json.loads(out[out.index("{"):])
    return ({v["name"]: v["ms_per_step"] for v in j["variants"]},
            {v["name"]: v["gflops"] for v in j["variants"]},
            {g["shape"]: g["gflops"] for g in j["sgemm"]})


def run_torch(batch, rounds):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="1")
    out = subprocess.run(["/usr/bin/python3", TORCH_REF, "bench", "--threads", "1", "--batch",
                          str(batch), "--steps", str(rounds), "--json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--alternations", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args()
    if not os.path.exists(C_BIN):
        sys.exit(f"build the C program first: make step6  ({C_BIN} is missing)")
    for batch in a.batch:
        c_ms = {v: [] for v in VARIANTS}; t_ms = {v: [] for v in VARIANTS}
        c_gf = {v: [] for v in VARIANTS}; gemm = {}
        for i in range(a.alternations):
            ms, gf, gm = run_c(batch, a.rounds)
            for v in VARIANTS: c_ms[v].append(ms[v]); c_gf[v].append(gf[v])
            for k, g in gm.items(): gemm.setdefault(k, []).append(g)
            tm = run_torch(batch, a.rounds)
            for v in VARIANTS: t_ms[v].append(tm[v])
            print(f"batch {batch}, alternation {i + 1}/{a.alternations}: C baseline {ms['baseline']:.1f} ms, "
                  f"PyTorch baseline {tm['baseline']:.1f} ms", file=sys.stderr, flush=True)
        print(f"\nbatch {batch}: median of {a.alternations} alternations, each the median of "
              f"{a.rounds - 2} timed steps per variant")
        print(f"{'variant':10s} {'C ms/step':>10s} {'PyTorch':>10s} {'C/PyTorch':>10s} {'C vs base':>10s} {'C GFLOP/s':>10s}")
        cb = statistics.median(c_ms["baseline"])
        for v in VARIANTS:
            c, t = statistics.median(c_ms[v]), statistics.median(t_ms[v])
            print(f"{v:10s} {c:10.1f} {t:10.1f} {c / t:9.2f}x {c / cb:9.2f}x {statistics.median(c_gf[v]):10.1f}")
        for k, g in gemm.items():
            print(f"cblas_sgemm {k}: {statistics.median(g):.1f} GFLOP/s (same rounds as C)")


if __name__ == "__main__":
    main()
