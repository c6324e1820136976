// norm_bench.c: the four calls section 3 of main.c times, on one set of
// tokens (see step2.h).
#include <stdlib.h>
#include "step2.h"
#include "nn/layers.h"

static void ln_fwd(void *p) {
    NormBench *b = p;
    layernorm_forward(b->out, b->mean, b->rstd, b->x, b->R, b->D, NORM_EPS);
}
static void rms_fwd(void *p) {
    NormBench *b = p;
    rmsnorm_forward(b->out, b->rms_rstd, b->x, NULL, b->R, b->D, NORM_EPS);
}
// The backward passes accumulate into dinp; the values drift but the work is
// the same every call, which is all a timing needs.
static void ln_bwd(void *p) {
    NormBench *b = p;
    layernorm_backward(b->dinp, b->dout, b->x, b->mean, b->rstd, b->R, b->D);
}
static void rms_bwd(void *p) {
    NormBench *b = p;
    rmsnorm_backward(b->dinp, NULL, b->dout, b->x, b->rms_rstd, NULL, b->R, b->D);
}

NormBench norm_bench_make(Rng *rng) {
    NormBench b = { .R = 128 * 64, .D = 128 };
    size_t n = (size_t)b.R * b.D;
    b.x = malloc(sizeof(float) * n); b.out = malloc(sizeof(float) * n);
    b.dout = malloc(sizeof(float) * n); b.dinp = calloc(n, sizeof(float));
    b.mean = malloc(sizeof(float) * b.R); b.rstd = malloc(sizeof(float) * b.R);
    b.rms_rstd = malloc(sizeof(float) * b.R);
    rng_fill_normal(rng, b.x, (long)n, 1.0f);
    rng_fill_normal(rng, b.dout, (long)n, 1.0f);
    ln_fwd(&b);   // fill the statistics once, so the backward passes read real values
    rms_fwd(&b);
    return b;
}

void norm_bench_free(NormBench *b) {
    free(b->x); free(b->out); free(b->dout); free(b->dinp);
    free(b->mean); free(b->rstd); free(b->rms_rstd);
}

void norm_bench_calls(NormBench *b, BenchFn fns[4]) {
    fns[0] = (BenchFn){ "LayerNorm forward", ln_fwd, b };
    fns[1] = (BenchFn){ "RMSNorm forward", rms_fwd, b };
    fns[2] = (BenchFn){ "LayerNorm backward", ln_bwd, b };
    fns[3] = (BenchFn){ "RMSNorm backward", rms_bwd, b };
}
