#!/usr/bin/env python3
# perf_groups.py: groups the self time of a perf profile into the parts of a
# training step (docs/performance.md, "Where a step's time goes"):
#   perf record -F 999 -g -o step.data lab/lab speed ...
#   perf report -i step.data --no-children --sort symbol --stdio -g none | scripts/perf_groups.py
# Each symbol goes to the first group whose pattern it matches.
import re, sys
groups = [
  ("products (sgemm, OpenBLAS)", r"sgemm|cblas|blas_|gemm"),
  ("attention (split, softmax, merge, RoPE, QK-norm)", r"attention_|rope_|qk_norm"),
  ("norms and modulation", r"layernorm|rmsnorm|modulate|norm_modulate"),
  ("activations (GELU, SwiGLU, SiLU)", r"gelu|swiglu|silu"),
  ("AdamW", r"adamw"),
  ("residual adds, bias, copies, memset", r"add_inplace|linear_forward|linear_backward|memset|memmove|memcpy|patchify|unpatchify|pos_add"),
  ("threads waiting (libgomp, futex, scheduler)", r"gomp|futex|schedule|finish_task_switch|_raw_spin|do_sched|pick_next|omp_"),
  ("page faults (first touch of new buffers: setup, warm-up)", r"clear_page|page_fault|mm_fault|alloc_|memcg|anonymous_page|lru|folio|rmqueue|charge"),
  ("noise, loss, other", r"."),
]
tot = {g[0]: 0.0 for g in groups}
rows = []
for line in sys.stdin:
    m = re.match(r"\s+([0-9.]+)%\s+\[(.)\]\s+(\S+)", line)
    if not m: continue
    pct, kind, sym = float(m.group(1)), m.group(2), m.group(3)
    for name, pat in groups:
        if re.search(pat, sym):
            tot[name] += pct; break
for name, _ in groups:
    print(f"| {name} | {tot[name]:.1f}% |")
