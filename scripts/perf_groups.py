#!/usr/bin/env python3
# perf_groups.py: groups the self time of a perf profile into the parts of a
# training step (docs/performance.md, "Where a step's time goes"):
#   perf record -F 999 -g -o step.data lab/lab speed ...
#   perf report -i step.data --no-children --sort dso,symbol --stdio -g none | scripts/perf_groups.py
# Each sample line ("12.3%  dso  [.] symbol") goes to the first group whose
# pattern matches its dso and symbol. oneDNN's products run as code it writes
# at run time ("[JIT] tid N" in perf's dso column, no symbol names).
import re, sys
groups = [
  ("the race's yardsticks (FMA peak loop, the lone matmul rates)", r"fma_peak|gemm_call"),
  ("products (oneDNN's JIT code, OpenBLAS)", r"\[JIT\]|libdnnl|libopenblas|sgemm|cblas|blas_|gemm|matmul"),
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
    m = re.match(r"\s+([0-9.]+)%\s+(.*?)\s+\[(.)\]\s+(\S+)", line)
    if not m: continue
    pct, dso, sym = float(m.group(1)), m.group(2), m.group(4)
    sym = dso + " " + sym
    for name, pat in groups:
        if re.search(pat, sym):
            tot[name] += pct; break
for name, _ in groups:
    print(f"| {name} | {tot[name]:.1f}% |")
