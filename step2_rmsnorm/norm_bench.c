// norm_bench.c: the four calls section 3 of main.c times, on one set of
// tokens (see step2.h). They are the calls the model's blocks train
// through: each norm fused with its adaLN modulation (norm_modulate_forward
// and _backward in common/nn/norms.c), which run the same per-row
// rmsnorm and layernorm functions as rmsnorm_forward and layernorm_forward.
#include <stdlib.h>
#include "step2.h"
#include "nn/layers.h"

static void norm_forward(NormBench *b, NormRows kind, float *mean, float *rstd) {
    norm_modulate_forward(b->out, kind, mean, rstd, b->x, b->ada, b->ada + b->D,
                          b->N, b->L, b->D, 2 * b->D, NORM_EPS);
}
// The backward passes accumulate into dinp and dada; the values drift but
// the work is the same every call, which is all a timing needs.
static void norm_backward(NormBench *b, NormRows kind, const float *mean, const float *rstd) {
    norm_modulate_backward(b->dinp, b->dada, b->dada + b->D, b->dout, kind, b->x, mean, rstd,
                           b->ada + b->D, b->N, b->L, b->D, 2 * b->D);
}

static void ln_fwd(void *p) { NormBench *b = p; norm_forward(b, NORM_ROWS_LAYERNORM, b->mean, b->rstd); }
static void rms_fwd(void *p) { NormBench *b = p; norm_forward(b, NORM_ROWS_RMSNORM, NULL, b->rms_rstd); }
static void ln_bwd(void *p) { NormBench *b = p; norm_backward(b, NORM_ROWS_LAYERNORM, b->mean, b->rstd); }
static void rms_bwd(void *p) { NormBench *b = p; norm_backward(b, NORM_ROWS_RMSNORM, NULL, b->rms_rstd); }

NormBench norm_bench_make(Rng *rng) {
    NormBench b = { .N = 128, .L = 64, .D = 128 };
    b.R = b.N * b.L;
    size_t n = (size_t)b.R * b.D, na = (size_t)b.N * 2 * b.D;
    b.x = malloc(sizeof(float) * n); b.out = malloc(sizeof(float) * n);
    b.dout = malloc(sizeof(float) * n); b.dinp = calloc(n, sizeof(float));
    b.ada = malloc(sizeof(float) * na); b.dada = calloc(na, sizeof(float));
    b.mean = malloc(sizeof(float) * b.R); b.rstd = malloc(sizeof(float) * b.R);
    b.rms_rstd = malloc(sizeof(float) * b.R);
    rng_fill_normal(rng, b.x, (long)n, 1.0f);
    rng_fill_normal(rng, b.dout, (long)n, 1.0f);
    rng_fill_normal(rng, b.ada, (long)na, 0.1f);   // shift and scale of each image
    ln_fwd(&b);   // fill the statistics once, so the backward passes read real values
    rms_fwd(&b);
    return b;
}

void norm_bench_free(NormBench *b) {
    free(b->x); free(b->out); free(b->dout); free(b->dinp); free(b->ada); free(b->dada);
    free(b->mean); free(b->rstd); free(b->rms_rstd);
}

void norm_bench_calls(NormBench *b, BenchFn fns[4]) {
    fns[0] = (BenchFn){ "LayerNorm forward", ln_fwd, b };
    fns[1] = (BenchFn){ "RMSNorm forward", rms_fwd, b };
    fns[2] = (BenchFn){ "LayerNorm backward", ln_bwd, b };
    fns[3] = (BenchFn){ "RMSNorm backward", rms_bwd, b };
}
