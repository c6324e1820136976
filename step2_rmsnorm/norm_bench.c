// norm_bench.c: the tokens sections 1 and 2 of main.c look at, and the
// four calls section 3 times, on one set of
// tokens (see step2.h). They are the calls the model's blocks train
// through: each norm fused with its adaLN modulation (norm_modulate_forward
// and _backward in common/nn/layers.c), which run the same per-row
// rmsnorm and layernorm functions as rmsnorm_forward and layernorm_forward.
#include <math.h>
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

ShiftedTokens shifted_tokens(Rng *rng) {
    ShiftedTokens s = { .N = 4, .L = 64, .D = 128 };
    s.R = s.N * s.L;
    size_t n = (size_t)s.R * s.D;
    s.x = malloc(sizeof(float) * n);
    s.y_ln = malloc(sizeof(float) * n);
    s.y_rms = malloc(sizeof(float) * n);
    s.mean = malloc(sizeof(float) * s.R);
    s.rstd = malloc(sizeof(float) * s.R);
    rng_fill_normal(rng, s.x, (long)n, 3.0f);
    for (size_t i = 0; i < n; i++) s.x[i] += 1.0f;
    return s;
}

void shifted_tokens_free(ShiftedTokens *s) {
    free(s->x); free(s->y_ln); free(s->y_rms); free(s->mean); free(s->rstd);
}

// Per-token statistics of y (R, D), averaged over the R tokens:
// the mean |mean of a token| and the mean RMS of a token.
void token_stats(const float *y, int R, int D, double *mean_abs, double *mean_rms) {
    double sm = 0.0, sr = 0.0;
    for (int r = 0; r < R; r++) {
        double m = 0.0, q = 0.0;
        for (int i = 0; i < D; i++) {
            double v = y[(size_t)r * D + i];
            m += v; q += v * v;
        }
        sm += fabs(m / D);
        sr += sqrt(q / D);
    }
    *mean_abs = sm / R;
    *mean_rms = sr / R;
}

