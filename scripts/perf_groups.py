#!/usr/bin/env python3
# perf_groups.py: the samples of a perf profile, grouped into the parts of a
# training step (docs/performance.md, "Where a step's time goes"):
#   perf record -F 999 -g -D 6000 -o step.data lab/lab speed ...
#   perf script -i step.data -F comm,tid,ip,sym,dso | scripts/perf_groups.py
# A sample whose call chain passes through munmap or a page fault counts as
# memory handed out or back (the first touch of buffers, their release at
# exit); every other sample goes by its own function (the chain's first
# frame) to the first group whose pattern matches "dso symbol". oneDNN's
# products run as code it writes at run time ("[JIT] tid N" in perf's dso
# column, "perf-PID.map" in perf script's, no symbol names).
import re, sys
groups = [
  ("products", r"\[JIT\]|perf-[0-9]+\.map|libdnnl|libopenblas|sgemm|cblas|blas_|gemm|matmul"),
  ("attention (split, softmax, merge, RoPE, QK-norm)", r"attention_|softmax|rope_|qk_norm|transpose_head|copy_head"),
  ("norms and modulation", r"layernorm|rmsnorm|modulate"),
  ("activations (GELU, SwiGLU, SiLU)", r"gelu|swiglu|silu"),
  ("AdamW", r"adamw"),
  ("residual adds, bias, copies, clearing", r"add_inplace|linear_forward|linear_backward|memset|memmove|memcpy|patchify|pos_add|clear"),
  ("noise and times (rng)", r"rng_|sincos|__ieee754_log|log_fma"),
  ("threads waiting (libgomp, futex, scheduler)", r"gomp|futex|schedule|finish_task_switch|_raw_spin|do_sched|pick_next|omp_"),
  ("memory (page faults, buffers returned at exit)", r"^$"),
  ("loss, malloc and free, other", r"."),
]
MEMORY = re.compile(r"munmap|page_fault|exc_page")
count = {name: 0 for name, _ in groups}
total = 0
for block in sys.stdin.read().split("\n\n"):
    frames = [l.split(None, 1) for l in block.strip().split("\n")[1:] if l.strip()]
    if not frames:
        continue
    total += 1
    if any(MEMORY.search(f[1]) for f in frames if len(f) > 1):
        count["memory (page faults, buffers returned at exit)"] += 1
        continue
    leaf = frames[0][1] if len(frames[0]) > 1 else ""
    m = re.match(r"(\S+)\s+\((.*)\)", leaf)
    key = f"{m.group(2)} {m.group(1)}" if m else leaf
    for name, pat in groups:
        if pat != r"^$" and re.search(pat, key):
            count[name] += 1
            break
print("| where the samples fall | share |")
print("|---|---:|")
for name, _ in groups:
    print(f"| {name} | {100.0 * count[name] / total:.1f}% |")
