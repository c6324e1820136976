#!/usr/bin/python3
"""C against PyTorch, training-step speed, measured fairly on one machine.

    scripts/speed_vs_torch.py [--batch 64 128] [--alternations 3] [--rounds 8] [--before DIR]

For each batch size it alternates, several times, the C program's fair race
(`lab speed --json`: the six variants in one process, timed in
turns, median per variant) with the PyTorch reference's race
(`tinydit_ref.py bench --json`, the same six variants, same scheme), so that a
change in the machine's background load hits both. Each side's figure is the
median over the alternations.

Threads: each side at its best setting. Both run twice in every
alternation, with 1 and with 2 threads (C: `speed --threads N`; PyTorch:
torch.set_num_threads(N), OPENBLAS_NUM_THREADS=2 both times; which goes first
alternates), and each variant's figure on each side is the faster of its two
settings' medians: on a quiet machine one thread was PyTorch's best, on a
busy one two threads were, and with a core taken by another process one
thread can be C's best too. The table says which won. With --before DIR, another checkout's C
build runs in the same alternations too (its best setting as well), for a
before/after of a change beside the race against PyTorch.
Both sides get the same OpenBLAS kernels, OPENBLAS_CORETYPE for this CPU's
instruction set unless the caller set it (common/io/blas_kernel.h says why).
Both sides run with OMP_WAIT_POLICY=passive unless the caller set it (the
value make gives everything it starts; spinning threads lose badly on a
shared machine).
Prints a table: variant, C with 1 and with 2 threads, the better of them
and its thread count, the same for PyTorch, C/PyTorch (best against best), C
vs baseline, C GFLOP/s (its best), and the matmul rates the C program
measured in the same rounds with 2 threads.
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C_BIN = os.path.join(ROOT, "lab", "lab")
TORCH_REF = os.path.join(ROOT, "tools", "tinydit_ref.py")   # the project's own PyTorch reference
VARIANTS = ["baseline", "+ RMSNorm", "+ QK-norm", "+ SwiGLU", "+ 2D RoPE", "all four"]
THREADS = (1, 2)       # each side's settings; its best per variant is compared
WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY", "passive")


def fitting_blas_kernel():
    """The OpenBLAS kernels for this CPU's instruction set (as the C programs
    choose them, common/io/blas_kernel.c), given to both sides: OpenBLAS does
    not know every new CPU and falls back to its slowest kernels."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return {}
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        return {}
    if "avx512f" in flags:
        return {"OPENBLAS_CORETYPE": "SkylakeX"}
    return {"OPENBLAS_CORETYPE": "Haswell"} if "avx2" in flags else {}


BLAS_ENV = fitting_blas_kernel()


def run_c(batch, rounds, threads, binary=C_BIN):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY=WAIT_POLICY, **BLAS_ENV)
    out = subprocess.run([binary, "speed", "--batch", str(batch), "--threads", str(threads),
                          "--rounds", str(rounds), "--json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    j = json.loads(out[out.index("{"):])
    return ({v["name"]: v["ms_per_step"] for v in j["variants"]},
            {v["name"]: v["gflops"] for v in j["variants"]},
            {g["shape"]: g["gflops"] for g in j.get("matmul", j.get("sgemm", []))})


def run_torch(batch, rounds, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS=str(threads),
               OMP_WAIT_POLICY=WAIT_POLICY, **BLAS_ENV)
    out = subprocess.run(["/usr/bin/python3", TORCH_REF, "bench", "--threads", str(threads), "--batch",
                          str(batch), "--steps", str(rounds), "--json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--alternations", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--before", metavar="DIR",
                    help="another checkout's build (DIR/lab/lab), raced in the same alternations: "
                         "its best and this build's time over it")
    a = ap.parse_args()
    before_bin = os.path.join(a.before, "lab", "lab") if a.before else None
    if before_bin and not os.path.exists(before_bin):
        sys.exit(f"no {before_bin}: build it first (make -C {a.before} lab)")
    if not os.path.exists(C_BIN):
        sys.exit(f"build the C program first: make lab  ({C_BIN} is missing)")
    kernel = BLAS_ENV.get("OPENBLAS_CORETYPE", os.environ.get("OPENBLAS_CORETYPE", "OpenBLAS's own choice"))
    print(f"OpenBLAS kernels on both sides: {kernel}", file=sys.stderr, flush=True)
    for batch in a.batch:
        c_ms = {n: {v: [] for v in VARIANTS} for n in THREADS}
        c_gf = {n: {v: [] for v in VARIANTS} for n in THREADS}
        t_ms = {n: {v: [] for v in VARIANTS} for n in THREADS}
        b_ms = {n: {v: [] for v in VARIANTS} for n in THREADS}
        gemm = {}
        for i in range(a.alternations):
            order = THREADS if i % 2 == 0 else THREADS[::-1]
            for n in order:
                ms, gf, gm = run_c(batch, a.rounds, n)
                for v in VARIANTS: c_ms[n][v].append(ms[v]); c_gf[n][v].append(gf[v])
                if n == 2:
                    for k, g in gm.items(): gemm.setdefault(k, []).append(g)
            for n in order[::-1]:
                tm = run_torch(batch, a.rounds, n)
                for v in VARIANTS: t_ms[n][v].append(tm[v])
            if before_bin:
                for n in order:
                    bm = run_c(batch, a.rounds, n, before_bin)[0]
                    for v in VARIANTS: b_ms[n][v].append(bm[v])
            print(f"batch {batch}, alternation {i + 1}/{a.alternations}: baseline "
                  + ", ".join(f"C {n} thr {c_ms[n]['baseline'][-1]:.1f} ms" for n in order) + ", "
                  + ", ".join(f"PyTorch {n} thr {t_ms[n]['baseline'][-1]:.1f} ms" for n in order[::-1]),
                  file=sys.stderr, flush=True)
        print(f"\nbatch {batch}: median of {a.alternations} alternations, each the median of "
              f"{a.rounds - 2} timed steps per variant; each side: the faster of 1 and 2 threads")
        print(f"{'variant':10s} {'C 1 thr':>8s} {'C 2 thr':>8s} {'C best':>8s} {'thr':>3s} "
              f"{'PyT 1 thr':>9s} {'PyT 2 thr':>9s} {'PyT best':>8s} {'thr':>3s} "
              f"{'C/PyTorch':>9s} {'C vs base':>9s} {'C GFLOP/s':>9s}"
              + (f" {'before':>8s} {'C/before':>8s}" if before_bin else ""))
        def best(med):
            n = min(THREADS, key=lambda k: med[k])
            return n, med[n]
        cmed = {v: {n: statistics.median(c_ms[n][v]) for n in THREADS} for v in VARIANTS}
        cb = best(cmed["baseline"])[1]
        for v in VARIANTS:
            tmed = {n: statistics.median(t_ms[n][v]) for n in THREADS}
            cn, c = best(cmed[v])
            tn, t = best(tmed)
            print(f"{v:10s} {cmed[v][1]:8.1f} {cmed[v][2]:8.1f} {c:8.1f} {cn:3d} "
                  f"{tmed[1]:9.1f} {tmed[2]:9.1f} {t:8.1f} {tn:3d} {c / t:8.2f}x "
                  f"{c / cb:8.2f}x {statistics.median(c_gf[cn][v]):9.1f}"
                  + (f" {best({n: statistics.median(b_ms[n][v]) for n in THREADS})[1]:8.1f}"
                     f" {c / best({n: statistics.median(b_ms[n][v]) for n in THREADS})[1]:7.2f}x"
                     if before_bin else ""))
        for k, g in gemm.items():
            print(f"matmul {k}: {statistics.median(g):.1f} GFLOP/s (same rounds as C, 2 threads)")

if __name__ == "__main__":
    main()
