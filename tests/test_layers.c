// test_layers.c: every layer of layers.h on its own.
//
// The backward passes are checked against finite differences (testutil.h's
// grad_check): each layer is wrapped as the scalar f = Σ out · w with a fixed
// random w, so the analytic gradient of any input is what the backward pass
// returns for dout = w. Every input and every parameter gradient is checked.
// Because a backward ACCUMULATES into its gradients (layers.h), each layer is
// also run backward twice, which must give twice the gradient (to float32
// rounding), and a slot the layer does not own must stay untouched.
//
// The forward passes get value checks where a property is easy to state:
// linear against the triple loop, the norms' mean/variance/RMS, the zero
// row, patchify's order on a hand-made image, the timestep features against
// the formula, the RoPE tables against the spec's angles.
//
// The finite-difference checks run on one OpenMP thread: they call each
// forward thousands of times on tiny tensors, where fork/join costs more
// than the work (and a loaded machine makes two threads crawl). What the
// thread count does is the threads_* cases' job: every layer, at sizes
// where its loops do split, must give the same bits on 1, 2 and 3 threads.
#include <omp.h>
#include <stdbool.h>
#include "testutil.h"
#include "nn/layers.h"
#include "nn/ema.h"
#include "nn/flow.h"

// The references the layers are held to, which the model does not run.
// The textbook Linear: one dot product per output. Slow, obviously right.
static void linear_forward_naive(float *out, const float *inp, const float *weight, const float *bias,
                                 int R, int IC, int OC) {
    for (int r = 0; r < R; r++) {
        for (int o = 0; o < OC; o++) {
            float acc = bias ? bias[o] : 0.0f;   // out[r, o] = bias[o] + inp[r, :] · weight[o, :]
            for (int i = 0; i < IC; i++) acc += inp[(size_t)r * IC + i] * weight[(size_t)o * IC + i];
            out[(size_t)r * OC + o] = acc;
        }
    }
}

// adaLN modulation on its own: out[n,l,:] = x[n,l,:] · (1 + scale[n,:]) + shift[n,:],
// shift and scale rows of `stride` floats per image. The model runs it fused
// with the norm (norm_modulate_forward / _backward), which must give the same bits.
static void modulate_forward(float *out, const float *x, const float *shift, const float *scale,
                             int N, int L, int D, int stride) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++) {
        for (int l = 0; l < L; l++) {
            const float *sh = shift + (size_t)n * stride, *sc = scale + (size_t)n * stride;  // (D) image n's
            const float *xi = x + ((size_t)n * L + l) * D;  // (D) token l of image n
            float *o = out + ((size_t)n * L + l) * D;       // (D)
            for (int i = 0; i < D; i++) o[i] = xi[i] * (1.0f + sc[i]) + sh[i];
        }
    }
}

// dx += dout·(1 + scale); dshift[n] += Σ_l dout; dscale[n] += Σ_l dout·x.
// One image per iteration, tokens summed in order: deterministic.
static void modulate_backward(float *dx, float *dshift, float *dscale, const float *dout,
                              const float *x, const float *scale, int N, int L, int D, int stride) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *sc = scale + (size_t)n * stride;                                  // (D)
        float *dsh = dshift + (size_t)n * stride, *dsc = dscale + (size_t)n * stride;  // (D) each
        for (int l = 0; l < L; l++) {
            const float *g = dout + ((size_t)n * L + l) * D;   // (D) each: token l of image n
            const float *xi = x + ((size_t)n * L + l) * D;
            float *dxi = dx + ((size_t)n * L + l) * D;
            for (int i = 0; i < D; i++) {
                dxi[i] += g[i] * (1.0f + sc[i]);
                dsh[i] += g[i];
                dsc[i] += g[i] * xi[i];
            }
        }
    }
}

#define EPS 1e-6f

// Σ a·b in double: the scalar every wrapper returns.
static double dot(const float *a, const float *b, size_t n) { return dot_fd(a, b, n); }

// A backward run twice must give twice the gradient of one run: it adds to
// what is there. Not bit for bit: a parameter gradient summed row by row into
// the buffer rounds against the running value, so the second run's sum lands
// within float32 rounding of the first. An overwrite (=) instead of += would
// be off by 100% of the gradient; the tolerance is 1e-5 of its largest value.
// A gradient that is zero everywhere compares nothing (0 = 2·0), so it fails:
// a slot the layer must leave alone is checked with expect_all_zero instead.
static void expect_doubled(const char *what, const float *once, const float *twice, size_t n) {
    float scale = 0.0f;
    for (size_t i = 0; i < n; i++) if (fabsf(once[i]) > scale) scale = fabsf(once[i]);
    ck_assert_msg(scale > 0.0f, "%s: the gradient is zero everywhere; nothing to compare", what);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(twice[i] - 2.0f * once[i]) <= 1e-5f * scale,
                      "%s: backward twice gave %g at %zu, once gave %g: it must accumulate (+=)",
                      what, twice[i], i, once[i]);
}

static void expect_all_zero(const char *what, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(x[i] == 0.0f, "%s: element %zu is %g, should be 0", what, i, x[i]);
}

static float *copy_floats(const float *x, size_t n) {
    float *y = alloc_floats(n);
    memcpy(y, x, n * sizeof(float));
    return y;
}

// ===========================================================================
// Linear
typedef struct {
    int R, IC, OC;
    float *inp, *weight, *bias, *out, *w;
} LinearCtx;

static double linear_f(void *p) {
    LinearCtx *c = p;
    linear_forward(c->out, c->inp, c->weight, c->bias, c->R, c->IC, c->OC);
    return dot(c->out, c->w, (size_t)c->R * c->OC);
}

static void check_linear(int with_bias) {
    LinearCtx c = { 3, 5, 4, NULL, NULL, NULL, NULL, NULL };
    size_t ni = (size_t)c.R * c.IC, nw = (size_t)c.OC * c.IC, no = (size_t)c.R * c.OC;
    c.inp = alloc_floats(ni); c.weight = alloc_floats(nw); c.out = alloc_floats(no);
    c.w = alloc_floats(no);
    fill_normal(c.inp, ni, 1.0f, 1); fill_normal(c.weight, nw, 0.5f, 2); fill_normal(c.w, no, 1.0f, 3);
    if (with_bias) { c.bias = alloc_floats(c.OC); fill_normal(c.bias, c.OC, 0.5f, 4); }
    float *dinp = alloc_floats(ni), *dw = alloc_floats(nw), *db = alloc_floats(c.OC);
    linear_backward(dinp, dw, with_bias ? db : NULL, c.w, c.inp, c.weight, c.R, c.IC, c.OC, ADD_TO_DINP);
    grad_check("linear dinp", linear_f, &c, c.inp, dinp, ni, 0);
    grad_check("linear dweight", linear_f, &c, c.weight, dw, nw, 0);
    if (with_bias) grad_check("linear dbias", linear_f, &c, c.bias, db, c.OC, 0);
    else expect_all_zero("linear without bias: dbias slot", db, c.OC);
    // accumulation
    float *dinp1 = copy_floats(dinp, ni), *dw1 = copy_floats(dw, nw), *db1 = copy_floats(db, c.OC);
    linear_backward(dinp, dw, with_bias ? db : NULL, c.w, c.inp, c.weight, c.R, c.IC, c.OC, ADD_TO_DINP);
    expect_doubled("linear dinp", dinp1, dinp, ni);
    expect_doubled("linear dweight", dw1, dw, nw);
    if (with_bias) expect_doubled("linear dbias", db1, db, c.OC);
    else expect_all_zero("linear without bias, backward twice: dbias slot", db, c.OC);
    // a NULL dinp (the first layer: the image needs no gradient) is allowed
    memset(dw, 0, nw * sizeof(float));
    linear_backward(NULL, dw, NULL, c.w, c.inp, c.weight, c.R, c.IC, c.OC, ADD_TO_DINP);
    for (size_t i = 0; i < nw; i++) ck_assert(dw[i] == dw1[i]);
    // CLEAR_DINP: whatever dinp held, it ends as one backward from zeros, bit for bit
    for (size_t i = 0; i < ni; i++) dinp[i] = NAN;
    memset(dw, 0, nw * sizeof(float));
    linear_backward(dinp, dw, NULL, c.w, c.inp, c.weight, c.R, c.IC, c.OC, CLEAR_DINP);
    ck_assert_msg(memcmp(dinp, dinp1, ni * sizeof(float)) == 0, "linear CLEAR_DINP: not the backward from zeros");
    free(c.inp); free(c.weight); free(c.bias); free(c.out); free(c.w);
    free(dinp); free(dw); free(db); free(dinp1); free(dw1); free(db1);
}

START_TEST(test_linear_grad_bias) { check_linear(1); }
END_TEST
START_TEST(test_linear_grad_nobias) { check_linear(0); }
END_TEST

// sgemm against the triple loop, on sizes that are not multiples of any
// vector width, with and without bias. The two sum in different orders, so
// they agree to float32 rounding, not bit for bit.
START_TEST(test_linear_matches_naive) {
    int R = 37, IC = 50, OC = 29;
    float *x = alloc_floats((size_t)R * IC), *wt = alloc_floats((size_t)OC * IC), *b = alloc_floats(OC);
    float *y = alloc_floats((size_t)R * OC), *yn = alloc_floats((size_t)R * OC);
    fill_normal(x, (size_t)R * IC, 1.0f, 5); fill_normal(wt, (size_t)OC * IC, 0.2f, 6);
    fill_normal(b, OC, 1.0f, 7);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        linear_forward(y, x, wt, with_bias ? b : NULL, R, IC, OC);
        linear_forward_naive(yn, x, wt, with_bias ? b : NULL, R, IC, OC);
        for (int i = 0; i < R * OC; i++)
            ck_assert_msg(fabsf(y[i] - yn[i]) <= 1e-5f * (1.0f + fabsf(yn[i])),
                          "linear vs naive at %d: %g vs %g", i, y[i], yn[i]);
    }
    free(x); free(wt); free(b); free(y); free(yn);
}
END_TEST

// ===========================================================================
// LayerNorm and RMSNorm
typedef struct {
    int R, D, rms;
    float *inp, *gain, *out, *stat_a, *stat_b, *w;
} NormCtx;

static double norm_f(void *p) {
    NormCtx *c = p;
    if (c->rms) rmsnorm_forward(c->out, c->stat_b, c->inp, c->gain, c->R, c->D, EPS);
    else layernorm_forward(c->out, c->stat_a, c->stat_b, c->inp, c->R, c->D, EPS);
    return dot(c->out, c->w, (size_t)c->R * c->D);
}

static void norm_backward_call(NormCtx *c, float *dinp, float *dgain) {
    norm_f(c);   // fresh statistics for the unperturbed input
    if (c->rms) rmsnorm_backward(dinp, dgain, c->w, c->inp, c->stat_b, c->gain, c->R, c->D);
    else layernorm_backward(dinp, c->w, c->inp, c->stat_a, c->stat_b, c->R, c->D);
}

// rms: 0 LayerNorm, 1 RMSNorm without gain, 2 RMSNorm with gain.
static void check_norm(int kind) {
    NormCtx c = { 4, 8, kind > 0, NULL, NULL, NULL, NULL, NULL, NULL };
    size_t n = (size_t)c.R * c.D;
    c.inp = alloc_floats(n); c.out = alloc_floats(n); c.w = alloc_floats(n);
    c.stat_a = alloc_floats(c.R); c.stat_b = alloc_floats(c.R);
    // rows with a non-zero mean and a spread unlike 1: the mean and the scale
    // must both matter to the gradient
    fill_normal(c.inp, n, 1.5f, 11);
    for (size_t i = 0; i < n; i++) c.inp[i] += 0.7f;
    fill_normal(c.w, n, 1.0f, 12);
    if (kind == 2) {
        c.gain = alloc_floats(c.D);
        fill_normal(c.gain, c.D, 0.3f, 13);
        for (int i = 0; i < c.D; i++) c.gain[i] += 1.0f;
    }
    const char *name = kind == 0 ? "layernorm" : kind == 1 ? "rmsnorm" : "rmsnorm+gain";
    float *dinp = alloc_floats(n), *dgain = alloc_floats(c.D);
    norm_backward_call(&c, dinp, kind == 2 ? dgain : NULL);
    char what[64];
    snprintf(what, sizeof what, "%s dinp", name);
    grad_check(what, norm_f, &c, c.inp, dinp, n, 0);
    if (kind == 2) grad_check("rmsnorm dgain", norm_f, &c, c.gain, dgain, c.D, 0);
    float *dinp1 = copy_floats(dinp, n), *dgain1 = copy_floats(dgain, c.D);
    norm_backward_call(&c, dinp, kind == 2 ? dgain : NULL);
    expect_doubled(what, dinp1, dinp, n);
    if (kind == 2) expect_doubled("rmsnorm dgain", dgain1, dgain, c.D);
    free(c.inp); free(c.out); free(c.w); free(c.stat_a); free(c.stat_b); free(c.gain);
    free(dinp); free(dgain); free(dinp1); free(dgain1);
}

START_TEST(test_layernorm_grad) { check_norm(0); }
END_TEST
START_TEST(test_rmsnorm_grad) { check_norm(1); }
END_TEST
START_TEST(test_rmsnorm_gain_grad) { check_norm(2); }
END_TEST

// LayerNorm rows come out with mean 0 and variance 1 (the eps of 1e-6 pulls
// the variance below 1 by eps/var, far under the tolerance for these rows);
// RMSNorm rows without gain come out with RMS 1.
START_TEST(test_norm_statistics) {
    int R = 6, D = 64;
    float *x = alloc_floats((size_t)R * D), *y = alloc_floats((size_t)R * D);
    float *ma = alloc_floats(R), *rs = alloc_floats(R);
    fill_normal(x, (size_t)R * D, 1.0f, 21);
    for (int r = 0; r < R; r++)   // each row its own offset and spread
        for (int i = 0; i < D; i++) x[r * D + i] = x[r * D + i] * (0.5f + r) + 3.0f * (r - 2);
    layernorm_forward(y, ma, rs, x, R, D, EPS);
    for (int r = 0; r < R; r++) {
        double m = 0, v = 0;
        for (int i = 0; i < D; i++) m += y[r * D + i];
        m /= D;
        for (int i = 0; i < D; i++) v += (y[r * D + i] - m) * (y[r * D + i] - m);
        v /= D;
        ck_assert_msg(fabs(m) < 1e-5, "layernorm output row %d: mean got %g, expected 0 (tolerance 1e-5)", r, m);
        ck_assert_msg(fabs(v - 1.0) < 1e-4, "layernorm output row %d: variance got %g, expected 1 (off by %.3g; "
                      "tolerance 1e-4)", r, v, v - 1.0);
    }
    rmsnorm_forward(y, rs, x, NULL, R, D, EPS);
    for (int r = 0; r < R; r++) {
        double ss = 0;
        for (int i = 0; i < D; i++) ss += (double)y[r * D + i] * y[r * D + i];
        double rms = sqrt(ss / D);
        ck_assert_msg(fabs(rms - 1.0) < 1e-4, "rmsnorm output row %d: rms got %g, expected 1 (off by %.3g; "
                      "tolerance 1e-4)", r, rms, rms - 1.0);
        double ms = 0;   // the saved rstd: 1 / sqrt(mean(x²) + eps), in double
        for (int i = 0; i < D; i++) ms += (double)x[r * D + i] * x[r * D + i];
        double want = 1.0 / sqrt(ms / D + EPS);
        ck_assert_msg(fabs(rs[r] - want) <= 1e-6 * want, "rmsnorm rstd[%d]: got %.9g, expected %.9g, "
                      "1 / sqrt(mean(x^2) + eps) (off by %.3g)", r, rs[r], want, rs[r] - want);
    }
    free(x); free(y); free(ma); free(rs);
}
END_TEST

// An all-zero row has no direction to normalise: eps keeps the division
// finite, and the output must be zeros, not NaN (0/0). Its gradient must be
// finite too.
START_TEST(test_norm_zero_row) {
    int R = 2, D = 16;
    float *x = alloc_floats((size_t)R * D), *y = alloc_floats((size_t)R * D);
    float *ma = alloc_floats(R), *rs = alloc_floats(R), *g = alloc_floats(D);
    float *dy = alloc_floats((size_t)R * D), *dx = alloc_floats((size_t)R * D);
    fill_normal(x + D, D, 1.0f, 31);     // row 0 zero, row 1 not
    fill_normal(dy, (size_t)R * D, 1.0f, 32);
    for (int i = 0; i < D; i++) g[i] = 1.0f + 0.1f * i;
    const char *names[3] = { "layernorm", "rmsnorm", "rmsnorm with a gain" };
    for (int kind = 0; kind < 3; kind++) {
        for (int i = 0; i < R * D; i++) y[i] = NAN;
        if (kind == 0) layernorm_forward(y, ma, rs, x, R, D, EPS);
        else rmsnorm_forward(y, rs, x, kind == 2 ? g : NULL, R, D, EPS);
        for (int i = 0; i < D; i++)
            ck_assert_msg(y[i] == 0.0f, "%s of an all-zero row: output [%d] got %g, expected 0", names[kind], i, y[i]);
        double want = 1.0 / sqrt(EPS);   // eps inside the root: 1000, not 1/eps
        ck_assert_msg(fabs(rs[0] - want) <= 1e-3 * want, "%s of an all-zero row: rstd got %g, expected "
                      "1 / sqrt(eps) = %g (off by %.3g)", names[kind], rs[0], want, rs[0] - want);
        for (int i = D; i < R * D; i++) ck_assert(isfinite(y[i]));
        memset(dx, 0, sizeof(float) * R * D);
        if (kind == 0) layernorm_backward(dx, dy, x, ma, rs, R, D);
        else rmsnorm_backward(dx, NULL, dy, x, rs, kind == 2 ? g : NULL, R, D);
        for (int i = 0; i < R * D; i++)
            ck_assert_msg(isfinite(dx[i]), "%s of an all-zero row: dinp [%d] got %g, expected a finite number",
                          names[kind], i, dx[i]);
    }
    free(x); free(y); free(ma); free(rs); free(g); free(dy); free(dx);
}
END_TEST

// ===========================================================================
// adaLN modulation. shift and scale are slices of a per-image row of `stride`
// floats (the ada Linear's output); the test puts them at offsets 1 and D+2
// of an 11-wide row, so a wrong stride or offset shows, and checks the
// gradient of the whole row (the floats that are neither shift nor scale
// must get exactly zero).
typedef struct {
    int N, L, D, stride, sh_off, sc_off;
    float *x, *ada, *out, *w;
} ModCtx;

static double mod_f(void *p) {
    ModCtx *c = p;
    modulate_forward(c->out, c->x, c->ada + c->sh_off, c->ada + c->sc_off, c->N, c->L, c->D, c->stride);
    return dot(c->out, c->w, (size_t)c->N * c->L * c->D);
}

START_TEST(test_modulate_grad) {
    ModCtx c = { 2, 3, 4, 11, 1, 6, NULL, NULL, NULL, NULL };
    size_t nx = (size_t)c.N * c.L * c.D, na = (size_t)c.N * c.stride;
    c.x = alloc_floats(nx); c.ada = alloc_floats(na); c.out = alloc_floats(nx); c.w = alloc_floats(nx);
    fill_normal(c.x, nx, 1.0f, 41); fill_normal(c.ada, na, 0.5f, 42); fill_normal(c.w, nx, 1.0f, 43);
    float *dx = alloc_floats(nx), *dada = alloc_floats(na);
    modulate_backward(dx, dada + c.sh_off, dada + c.sc_off, c.w, c.x, c.ada + c.sc_off,
                      c.N, c.L, c.D, c.stride);
    grad_check("modulate dx", mod_f, &c, c.x, dx, nx, 0);
    grad_check("modulate dshift/dscale (whole ada row)", mod_f, &c, c.ada, dada, na, 0);
    for (int n = 0; n < c.N; n++)
        for (int j = 0; j < c.stride; j++) {
            int used = (j >= c.sh_off && j < c.sh_off + c.D) || (j >= c.sc_off && j < c.sc_off + c.D);
            if (!used) ck_assert_msg(dada[n * c.stride + j] == 0.0f, "modulate wrote outside its slices");
        }
    float *dx1 = copy_floats(dx, nx), *dada1 = copy_floats(dada, na);
    modulate_backward(dx, dada + c.sh_off, dada + c.sc_off, c.w, c.x, c.ada + c.sc_off,
                      c.N, c.L, c.D, c.stride);
    expect_doubled("modulate dx", dx1, dx, nx);
    expect_doubled("modulate dshift/dscale", dada1, dada, na);
    free(c.x); free(c.ada); free(c.out); free(c.w); free(dx); free(dada); free(dx1); free(dada1);
}
END_TEST

// ===========================================================================
// Norm and modulation fused (norm_modulate_forward / _backward, what the
// model runs). The gradient of x and of the whole ada row by finite
// differences, for LayerNorm and RMSNorm, on the same 11-wide ada row as
// above; then against the separate functions the steps teach.
typedef struct {
    int N, L, D, stride, sh_off, sc_off, rms;
    float *x, *ada, *out, *w, *mean, *rstd;
} NormModCtx;

static double normmod_f(void *p) {
    NormModCtx *c = p;
    norm_modulate_forward(c->out, c->rms ? NORM_ROWS_RMSNORM : NORM_ROWS_LAYERNORM, c->mean, c->rstd,
                          c->x, c->ada + c->sh_off,
                          c->ada + c->sc_off, c->N, c->L, c->D, c->stride, EPS);
    return dot(c->out, c->w, (size_t)c->N * c->L * c->D);
}

static void normmod_backward(NormModCtx *c, float *dx, float *dada) {
    normmod_f(c);   // fresh statistics for the unperturbed input
    norm_modulate_backward(dx, dada + c->sh_off, dada + c->sc_off, c->w,
                           c->rms ? NORM_ROWS_RMSNORM : NORM_ROWS_LAYERNORM, c->x, c->mean, c->rstd, c->ada + c->sc_off, c->N, c->L, c->D, c->stride);
}

static void check_norm_modulate(int rms) {
    NormModCtx c = { 2, 3, 4, 11, 1, 6, rms, NULL, NULL, NULL, NULL, NULL, NULL };
    size_t nx = (size_t)c.N * c.L * c.D, na = (size_t)c.N * c.stride, R = (size_t)c.N * c.L;
    c.x = alloc_floats(nx); c.ada = alloc_floats(na); c.out = alloc_floats(nx); c.w = alloc_floats(nx);
    c.mean = alloc_floats(R); c.rstd = alloc_floats(R);
    fill_normal(c.x, nx, 1.5f, 44); fill_normal(c.ada, na, 0.5f, 45); fill_normal(c.w, nx, 1.0f, 46);
    for (size_t i = 0; i < nx; i++) c.x[i] += 0.7f;   // a mean and a spread that matter
    float *dx = alloc_floats(nx), *dada = alloc_floats(na);
    normmod_backward(&c, dx, dada);
    const char *name = rms ? "rmsnorm+modulate" : "layernorm+modulate";
    char what[64];
    snprintf(what, sizeof what, "%s dx", name);
    grad_check(what, normmod_f, &c, c.x, dx, nx, 0);
    snprintf(what, sizeof what, "%s dshift/dscale", name);
    grad_check(what, normmod_f, &c, c.ada, dada, na, 0);
    for (int n = 0; n < c.N; n++)
        for (int j = 0; j < c.stride; j++) {
            int used = (j >= c.sh_off && j < c.sh_off + c.D) || (j >= c.sc_off && j < c.sc_off + c.D);
            if (!used) ck_assert_msg(dada[n * c.stride + j] == 0.0f, "%s wrote outside its slices", name);
        }
    float *dx1 = copy_floats(dx, nx), *dada1 = copy_floats(dada, na);
    normmod_backward(&c, dx, dada);
    expect_doubled(name, dx1, dx, nx);
    expect_doubled(name, dada1, dada, na);
    free(c.x); free(c.ada); free(c.out); free(c.w); free(c.mean); free(c.rstd);
    free(dx); free(dada); free(dx1); free(dada1);
}

START_TEST(test_layernorm_modulate_grad) { check_norm_modulate(0); }
END_TEST
START_TEST(test_rmsnorm_modulate_grad) { check_norm_modulate(1); }
END_TEST

// The fused pass against the three functions the steps teach, norm then
// modulate, forward and backward, at the model's width. With gcc and the
// project's flags they agree bit for bit (the fused code does the same
// arithmetic in the same order); the test allows 1e-6 of each tensor's
// scale so that another compiler's choice of fused multiply-adds does not
// fail it, while a wrong formula is off by far more.
static void expect_close(const char *what, const float *a, const float *b, size_t n) {
    float scale = 0.0f;
    for (size_t i = 0; i < n; i++) if (fabsf(b[i]) > scale) scale = fabsf(b[i]);
    ck_assert_msg(scale > 0.0f, "%s: zero everywhere", what);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(a[i] - b[i]) <= 1e-6f * scale, "%s [%zu]: got %g (fused), expected %g (norm, then "
                      "modulate, separately; off by %.3g, tolerance 1e-6 of its scale %g)",
                      what, i, a[i], b[i], a[i] - b[i], scale);
}

START_TEST(test_norm_modulate_matches_parts) {
    enum { N = 3, L = 5, D = 128, S = 4 * D };
    size_t nx = (size_t)N * L * D, na = (size_t)N * S, R = (size_t)N * L;
    float *x = alloc_floats(nx), *ada = alloc_floats(na), *dy = alloc_floats(nx);
    float *y = alloc_floats(nx), *out = alloc_floats(nx), *ref = alloc_floats(nx);
    float *mean = alloc_floats(R), *rstd = alloc_floats(R), *mean2 = alloc_floats(R), *rstd2 = alloc_floats(R);
    float *dx = alloc_floats(nx), *dxr = alloc_floats(nx), *dn = alloc_floats(nx);
    float *dada = alloc_floats(na), *dadar = alloc_floats(na);
    fill_normal(x, nx, 2.0f, 47); fill_normal(ada, na, 0.5f, 48); fill_normal(dy, nx, 1.0f, 49);
    for (size_t i = 0; i < nx; i++) x[i] += 0.3f;
    for (int rms = 0; rms < 2; rms++) {
        const char *name = rms ? "rmsnorm+modulate" : "layernorm+modulate";
        // separate: norm, then modulate with shift at 0 and scale at D of each ada row
        if (rms) rmsnorm_forward(y, rstd, x, NULL, (int)R, D, EPS);
        else layernorm_forward(y, mean, rstd, x, (int)R, D, EPS);
        modulate_forward(ref, y, ada, ada + D, N, L, D, S);
        memset(dn, 0, nx * sizeof(float)); memset(dxr, 0, nx * sizeof(float));
        memset(dadar, 0, na * sizeof(float));
        modulate_backward(dn, dadar, dadar + D, dy, y, ada + D, N, L, D, S);
        if (rms) rmsnorm_backward(dxr, NULL, dn, x, rstd, NULL, (int)R, D);
        else layernorm_backward(dxr, dn, x, mean, rstd, (int)R, D);
        // fused
        NormRows kind = rms ? NORM_ROWS_RMSNORM : NORM_ROWS_LAYERNORM;
        norm_modulate_forward(out, kind, mean2, rstd2, x, ada, ada + D, N, L, D, S, EPS);
        memset(dx, 0, nx * sizeof(float)); memset(dada, 0, na * sizeof(float));
        norm_modulate_backward(dx, dada, dada + D, dy, kind, x, mean2, rstd2, ada + D, N, L, D, S);
        char what[96];
        snprintf(what, sizeof what, "%s out", name); expect_close(what, out, ref, nx);
        snprintf(what, sizeof what, "%s rstd", name); expect_close(what, rstd2, rstd, R);
        if (!rms) { snprintf(what, sizeof what, "%s mean", name); expect_close(what, mean2, mean, R); }
        snprintf(what, sizeof what, "%s dx", name); expect_close(what, dx, dxr, nx);
        for (int n = 0; n < N; n++) {   // dshift, dscale: the first 2D of each image's ada row
            snprintf(what, sizeof what, "%s dshift of image %d", name, n);
            expect_close(what, dada + (size_t)n * S, dadar + (size_t)n * S, D);
            snprintf(what, sizeof what, "%s dscale of image %d", name, n);
            expect_close(what, dada + (size_t)n * S + D, dadar + (size_t)n * S + D, D);
        }
    }
    free(x); free(ada); free(dy); free(y); free(out); free(ref); free(mean); free(rstd);
    free(mean2); free(rstd2); free(dx); free(dxr); free(dn); free(dada); free(dadar);
}
END_TEST

// ===========================================================================
// Activations
typedef struct {
    int kind;            // 0 gelu, 1 silu, 2 swiglu
    size_t n;
    float *a, *b, *out, *w;   // a: input (gate), b: value (swiglu)
} ActCtx;

static double act_f(void *p) {
    ActCtx *c = p;
    if (c->kind == 0) gelu_forward(c->out, c->a, c->n);
    else if (c->kind == 1) silu_forward(c->out, c->a, c->n);
    else swiglu_forward(c->out, c->a, c->b, c->n);
    return dot(c->out, c->w, c->n);
}

static void act_backward(ActCtx *c, float *da, float *db) {
    if (c->kind == 0) gelu_backward(da, c->w, c->a, c->n, ADD_TO_DINP);
    else if (c->kind == 1) silu_backward(da, c->w, c->a, c->n);
    else swiglu_backward(da, db, c->w, c->a, c->b, c->n);
}

static void check_act(int kind) {
    const char *names[] = { "gelu", "silu", "swiglu dgate" };
    ActCtx c = { kind, 41, NULL, NULL, NULL, NULL };
    c.a = alloc_floats(c.n); c.b = alloc_floats(c.n); c.out = alloc_floats(c.n); c.w = alloc_floats(c.n);
    // inputs across [-4, 4]: both tails and the bend in the middle
    for (size_t i = 0; i < c.n; i++) c.a[i] = -4.0f + 8.0f * (float)i / (float)(c.n - 1) + 0.013f;
    fill_normal(c.b, c.n, 1.0f, 51); fill_normal(c.w, c.n, 1.0f, 52);
    float *da = alloc_floats(c.n), *db = alloc_floats(c.n);
    act_backward(&c, da, db);
    grad_check(names[kind], act_f, &c, c.a, da, c.n, 0);
    if (kind == 2) grad_check("swiglu dvalue", act_f, &c, c.b, db, c.n, 0);
    float *da1 = copy_floats(da, c.n), *db1 = copy_floats(db, c.n);
    act_backward(&c, da, db);
    expect_doubled(names[kind], da1, da, c.n);
    if (kind == 2) expect_doubled("swiglu dvalue", db1, db, c.n);
    if (kind == 0) {   // CLEAR_DINP: whatever da held, it ends as one backward from zeros, bit for bit
        for (size_t i = 0; i < c.n; i++) da[i] = NAN;
        gelu_backward(da, c.w, c.a, c.n, CLEAR_DINP);
        ck_assert_msg(memcmp(da, da1, c.n * sizeof(float)) == 0, "gelu CLEAR_DINP: not the backward from zeros");
    }
    free(c.a); free(c.b); free(c.out); free(c.w); free(da); free(db); free(da1); free(db1);
}

START_TEST(test_gelu_grad) { check_act(0); }
END_TEST
START_TEST(test_silu_grad) { check_act(1); }
END_TEST
START_TEST(test_swiglu_grad) { check_act(2); }
END_TEST

// A few values by hand: GELU(x) = x·Φ(x) (exact, erf), SiLU(x) = x·σ(x).
START_TEST(test_activation_values) {
    float x[4] = { -2.0f, -0.5f, 0.0f, 1.5f }, y[4];
    gelu_forward(y, x, 4);
    for (int i = 0; i < 4; i++) {
        double ref = 0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0)));
        ck_assert_msg(fabs(y[i] - ref) < 1e-6, "gelu(%g) = %g, want %g", x[i], y[i], ref);
    }
    silu_forward(y, x, 4);
    for (int i = 0; i < 4; i++) {
        double ref = x[i] / (1.0 + exp(-x[i]));
        ck_assert_msg(fabs(y[i] - ref) < 1e-6, "silu(%g) = %g, want %g", x[i], y[i], ref);
    }
    enum { n = 37 };   // an odd count: a loop that ends one short leaves the last one out
    float gate[n], value[n], out[n];
    fill_normal(gate, n, 2.0f, 441); fill_normal(value, n, 1.0f, 442);
    for (int i = 0; i < n; i++) out[i] = NAN;
    swiglu_forward(out, gate, value, n);
    for (int i = 0; i < n; i++) {
        double ref = gate[i] / (1.0 + exp(-gate[i])) * value[i];
        ck_assert_msg(fabs(out[i] - ref) < 1e-6 * (1.0 + fabs(ref)), "swiglu out[%d] (gate %g, value %g): got %g, "
                      "expected SiLU(gate) value = %g (off by %.3g)", i, gate[i], value[i], out[i], ref, out[i] - ref);
    }
}
END_TEST

// ===========================================================================
// RoPE
typedef struct {
    int B, L, hd;
    float *x, *out, *w, *cos_t, *sin_t;
} RopeCtx;

static double rope_f(void *p) {
    RopeCtx *c = p;
    rope_forward(c->out, c->x, c->cos_t, c->sin_t, c->B, c->L, c->hd);
    return dot(c->out, c->w, (size_t)c->B * c->L * c->hd);
}

START_TEST(test_rope_grad) {
    // grid 3 with one prefix token: L = 10, head_dim 8 (two pairs per axis)
    int grid = 3, prefix = 1;
    RopeCtx c = { 2, prefix + grid * grid, 8, NULL, NULL, NULL, NULL, NULL };
    size_t n = (size_t)c.B * c.L * c.hd;
    c.x = alloc_floats(n); c.out = alloc_floats(n); c.w = alloc_floats(n);
    c.cos_t = alloc_floats((size_t)c.L * c.hd); c.sin_t = alloc_floats((size_t)c.L * c.hd);
    rope2d_tables(c.cos_t, c.sin_t, grid, c.hd, 100.0f, prefix);
    fill_normal(c.x, n, 1.0f, 61); fill_normal(c.w, n, 1.0f, 62);
    float *dx = alloc_floats(n);
    rope_backward(dx, c.w, c.cos_t, c.sin_t, c.B, c.L, c.hd);
    grad_check("rope dx", rope_f, &c, c.x, dx, n, 0);
    float *dx1 = copy_floats(dx, n);
    rope_backward(dx, c.w, c.cos_t, c.sin_t, c.B, c.L, c.hd);
    expect_doubled("rope dx", dx1, dx, n);
    // in place (out == x) is allowed: same result as out of place
    rope_forward(c.out, c.x, c.cos_t, c.sin_t, c.B, c.L, c.hd);
    rope_forward(c.x, c.x, c.cos_t, c.sin_t, c.B, c.L, c.hd);
    ck_assert(memcmp(c.x, c.out, n * sizeof(float)) == 0);
    free(c.x); free(c.out); free(c.w); free(c.cos_t); free(c.sin_t); free(dx); free(dx1);
}
END_TEST

// The tables against the spec: pair i < hd/4 turns by row·base^(-i/(hd/4)),
// pair i >= hd/4 by col·base^(-(i-hd/4)/(hd/4)); prefix tokens do not turn.
// And a rotation keeps each pair's length.
START_TEST(test_rope_tables) {
    int grid = 4, hd = 16, prefix = 1, L = prefix + grid * grid, q = hd / 4;
    float base = 100.0f;
    float *ct = alloc_floats((size_t)L * hd), *st = alloc_floats((size_t)L * hd);
    rope2d_tables(ct, st, grid, hd, base, prefix);
    for (int tok = 0; tok < L; tok++)
        for (int i = 0; i < hd / 2; i++) {
            double ang = 0.0;
            if (tok >= prefix) {
                int r = (tok - prefix) / grid, col = (tok - prefix) % grid;
                ang = i < q ? r * pow(base, -(double)i / q) : col * pow(base, -(double)(i - q) / q);
            }
            for (int k = 0; k < 2; k++) {
                float c = ct[tok * hd + 2 * i + k], sn = st[tok * hd + 2 * i + k];
                ck_assert_msg(fabs(c - cos(ang)) < 1e-5, "rope cos table [token %d][%d] (pair %d, %s): got %.6g, "
                              "expected cos(%.6g) = %.6g (off by %.3g)", tok, 2 * i + k, i, i < q ? "row" : "column",
                              c, ang, cos(ang), c - cos(ang));
                ck_assert_msg(fabs(sn - sin(ang)) < 1e-5, "rope sin table [token %d][%d] (pair %d, %s): got %.6g, "
                              "expected sin(%.6g) = %.6g (off by %.3g)", tok, 2 * i + k, i, i < q ? "row" : "column",
                              sn, ang, sin(ang), sn - sin(ang));
            }
        }
    float *x = alloc_floats((size_t)L * hd), *y = alloc_floats((size_t)L * hd);
    fill_normal(x, (size_t)L * hd, 1.0f, 63);
    rope_forward(y, x, ct, st, 1, L, hd);
    for (int j = 0; j < L * hd; j += 2) {
        double a = (double)x[j] * x[j] + (double)x[j + 1] * x[j + 1];
        double b = (double)y[j] * y[j] + (double)y[j + 1] * y[j + 1];
        ck_assert_msg(fabs(a - b) < 1e-5 * (1 + a), "rope changed a pair's length");
    }
    for (int j = 0; j < prefix * hd; j++) ck_assert(y[j] == x[j]);
    free(ct); free(st); free(x); free(y);
}
END_TEST

// ===========================================================================
// QueryKeyNorm
typedef struct {
    int N, H, L, hd;
    QueryKeyNorm m;
    float *q, *k, *qo, *ko, *qr, *kr, *wq, *wk;
} QkCtx;

static double qk_f(void *p) {
    QkCtx *c = p;
    size_t n = (size_t)c->N * c->H * c->L * c->hd;
    qk_norm_forward(&c->m, c->qo, c->ko, c->qr, c->kr, c->q, c->k, c->N, c->H, c->L);
    return dot(c->qo, c->wq, n) + dot(c->ko, c->wk, n);
}

static void qk_backward(QkCtx *c, float *dq, float *dk, float *dgq, float *dgk) {
    qk_f(c);
    qk_norm_backward(&c->m, dq, dk, dgq, dgk, c->wq, c->wk, c->q, c->k, c->qr, c->kr, c->N, c->H, c->L);
}

START_TEST(test_qk_norm_grad) {
    QkCtx c;
    memset(&c, 0, sizeof c);
    c.N = 2; c.H = 2; c.L = 3; c.hd = 8;
    size_t n = (size_t)c.N * c.H * c.L * c.hd, rows = (size_t)c.N * c.H * c.L;
    float *qg = alloc_floats(c.hd), *kg = alloc_floats(c.hd);
    fill_normal(qg, c.hd, 0.3f, 71); fill_normal(kg, c.hd, 0.3f, 72);
    for (int i = 0; i < c.hd; i++) { qg[i] += 1.0f; kg[i] += 1.0f; }
    c.m = qk_norm_make(c.hd, EPS, qg, kg);
    ck_assert_int_eq(c.m.head_dim, c.hd);
    ck_assert(c.m.q_gain == qg && c.m.k_gain == kg && c.m.eps == EPS);
    c.q = alloc_floats(n); c.k = alloc_floats(n); c.qo = alloc_floats(n); c.ko = alloc_floats(n);
    c.qr = alloc_floats(rows); c.kr = alloc_floats(rows); c.wq = alloc_floats(n); c.wk = alloc_floats(n);
    fill_normal(c.q, n, 2.0f, 73); fill_normal(c.k, n, 0.5f, 74);
    fill_normal(c.wq, n, 1.0f, 75); fill_normal(c.wk, n, 1.0f, 76);
    float *dq = alloc_floats(n), *dk = alloc_floats(n), *dgq = alloc_floats(c.hd), *dgk = alloc_floats(c.hd);
    qk_backward(&c, dq, dk, dgq, dgk);
    grad_check("qk_norm dq", qk_f, &c, c.q, dq, n, 0);
    grad_check("qk_norm dk", qk_f, &c, c.k, dk, n, 0);
    grad_check("qk_norm dq_gain", qk_f, &c, qg, dgq, c.hd, 0);
    grad_check("qk_norm dk_gain", qk_f, &c, kg, dgk, c.hd, 0);
    float *dq1 = copy_floats(dq, n), *dk1 = copy_floats(dk, n);
    float *dgq1 = copy_floats(dgq, c.hd), *dgk1 = copy_floats(dgk, c.hd);
    qk_backward(&c, dq, dk, dgq, dgk);
    expect_doubled("qk_norm dq", dq1, dq, n);
    expect_doubled("qk_norm dk", dk1, dk, n);
    expect_doubled("qk_norm dq_gain", dgq1, dgq, c.hd);
    expect_doubled("qk_norm dk_gain", dgk1, dgk, c.hd);
    free(qg); free(kg); free(c.q); free(c.k); free(c.qo); free(c.ko); free(c.qr); free(c.kr);
    free(c.wq); free(c.wk); free(dq); free(dk); free(dgq); free(dgk);
    free(dq1); free(dk1); free(dgq1); free(dgk1);
}
END_TEST

// ===========================================================================
// Attention, in its four forms: plain, QK-norm, RoPE, both.
typedef struct {
    int N, L, D, H, qk, rope;
    AttentionCache cache;
    float *cache_mem, *qkv, *out, *w, *qg, *kg, *cos_t, *sin_t, *scratch;
} AttCtx;

static double att_f(void *p) {
    AttCtx *c = p;
    attention_forward(c->out, &c->cache, c->qkv, c->qk ? c->qg : NULL, c->qk ? c->kg : NULL, EPS,
                      c->rope ? c->cos_t : NULL, c->rope ? c->sin_t : NULL, c->N, c->L, c->D, c->H);
    return dot(c->out, c->w, (size_t)c->N * c->L * c->D);
}

static void att_backward(AttCtx *c, float *dqkv, float *dgq, float *dgk, DinpStart start) {
    att_f(c);
    attention_backward(dqkv, dgq, dgk, c->w, &c->cache, c->scratch,
                       c->qk ? c->qg : NULL, c->qk ? c->kg : NULL,
                       c->rope ? c->cos_t : NULL, c->rope ? c->sin_t : NULL, c->N, c->L, c->D, c->H, start);
}

static void check_attention(int qk, int rope) {
    AttCtx c;
    memset(&c, 0, sizeof c);
    int grid = 2;
    c.N = 2; c.L = grid * grid; c.D = 16; c.H = 2; c.qk = qk; c.rope = rope;
    int hd = c.D / c.H;
    size_t nqkv = (size_t)c.N * c.L * 3 * c.D, nout = (size_t)c.N * c.L * c.D;
    c.cache_mem = alloc_floats(attention_cache_floats(c.N, c.L, c.D, c.H, qk));
    attention_cache_init(&c.cache, c.cache_mem, c.N, c.L, c.D, c.H, qk);
    c.scratch = alloc_floats(attention_backward_scratch_floats(c.N, c.L, c.D, c.H));
    c.qkv = alloc_floats(nqkv); c.out = alloc_floats(nout); c.w = alloc_floats(nout);
    c.qg = alloc_floats(hd); c.kg = alloc_floats(hd);
    c.cos_t = alloc_floats((size_t)c.L * hd); c.sin_t = alloc_floats((size_t)c.L * hd);
    rope2d_tables(c.cos_t, c.sin_t, grid, hd, 100.0f, 0);
    fill_normal(c.qkv, nqkv, 1.0f, 81); fill_normal(c.w, nout, 1.0f, 82);
    fill_normal(c.qg, hd, 0.3f, 83); fill_normal(c.kg, hd, 0.3f, 84);
    for (int i = 0; i < hd; i++) { c.qg[i] += 1.0f; c.kg[i] += 1.0f; }
    float *dqkv = alloc_floats(nqkv), *dgq = alloc_floats(hd), *dgk = alloc_floats(hd);
    att_backward(&c, dqkv, dgq, dgk, ADD_TO_DINP);
    char what[64];
    snprintf(what, sizeof what, "attention%s%s dqkv", qk ? " +qk_norm" : "", rope ? " +rope" : "");
    grad_check(what, att_f, &c, c.qkv, dqkv, nqkv, 0);
    if (qk) {
        grad_check("attention dq_gain", att_f, &c, c.qg, dgq, hd, 0);
        grad_check("attention dk_gain", att_f, &c, c.kg, dgk, hd, 0);
    } else {
        expect_all_zero("attention without qk_norm: dq_gain", dgq, hd);
        expect_all_zero("attention without qk_norm: dk_gain", dgk, hd);
    }
    float *d1 = copy_floats(dqkv, nqkv), *dgq1 = copy_floats(dgq, hd), *dgk1 = copy_floats(dgk, hd);
    att_backward(&c, dqkv, dgq, dgk, ADD_TO_DINP);
    expect_doubled(what, d1, dqkv, nqkv);
    if (qk) {
        expect_doubled("attention dq_gain", dgq1, dgq, hd);
        expect_doubled("attention dk_gain", dgk1, dgk, hd);
    } else {
        expect_all_zero("attention without qk_norm, backward twice: dq_gain", dgq, hd);
        expect_all_zero("attention without qk_norm, backward twice: dk_gain", dgk, hd);
    }
    // CLEAR_DINP: whatever dqkv held, it ends as one backward from zeros, bit for bit
    for (size_t i = 0; i < nqkv; i++) dqkv[i] = NAN;
    att_backward(&c, dqkv, dgq, dgk, CLEAR_DINP);
    ck_assert_msg(memcmp(dqkv, d1, nqkv * sizeof(float)) == 0, "%s, CLEAR_DINP: not the backward from zeros", what);
    // the softmax rows are probabilities
    for (size_t r = 0; r < (size_t)c.N * c.H * c.L; r++) {
        double s = 0;
        for (int j = 0; j < c.L; j++) s += c.cache.att[r * c.L + j];
        ck_assert_msg(fabs(s - 1.0) < 1e-5, "attention row %zu sums to %g", r, s);
    }
    free(c.cache_mem); free(c.scratch); free(c.qkv); free(c.out); free(c.w); free(c.qg); free(c.kg);
    free(c.cos_t); free(c.sin_t); free(dqkv); free(dgq); free(dgk); free(d1); free(dgq1); free(dgk1);
}

START_TEST(test_attention_grad_plain) { check_attention(0, 0); }
END_TEST
START_TEST(test_attention_grad_qknorm) { check_attention(1, 0); }
END_TEST
START_TEST(test_attention_grad_rope) { check_attention(0, 1); }
END_TEST
START_TEST(test_attention_grad_both) { check_attention(1, 1); }
END_TEST

// ===========================================================================
// Patches

// A hand-made 1 x 2 x 4 x 4 image, patch 2: pixel (c, y, x) holds c·100 +
// y·10 + x. Token (gr, gc) is number gr·2 + gc, and its vector runs channel
// by channel, then row, then column inside the patch (the order of
// nn/embed.c and of tools/tinydit_ref.py).
START_TEST(test_patchify_order) {
    float img[2 * 4 * 4], tok[4 * 8];
    for (int c = 0; c < 2; c++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) img[(c * 4 + y) * 4 + x] = c * 100 + y * 10 + x;
    const float want[4][8] = {
        {   0,   1,  10,  11, 100, 101, 110, 111 },   // token 0: rows 0-1, cols 0-1
        {   2,   3,  12,  13, 102, 103, 112, 113 },   // token 1: rows 0-1, cols 2-3
        {  20,  21,  30,  31, 120, 121, 130, 131 },   // token 2: rows 2-3, cols 0-1
        {  22,  23,  32,  33, 122, 123, 132, 133 },   // token 3: rows 2-3, cols 2-3
    };
    patchify(tok, img, 1, 2, 4, 2);
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 8; j++)
            ck_assert_msg(tok[t * 8 + j] == want[t][j], "patchify of a 2x4x4 image, patch 2: token %d "
                          "element %d: got %g, expected %g (pixel c*100 + y*10 + x)", t, j, tok[t * 8 + j], want[t][j]);
    float back[2 * 4 * 4];
    unpatchify(back, tok, 1, 2, 4, 2);
    ck_assert(memcmp(back, img, sizeof img) == 0);
}
END_TEST

// unpatchify's own order: the tokens of test_patchify_order, written by
// hand, make the image of pixel c·100 + y·10 + x.
START_TEST(test_unpatchify_order) {
    const float tok[4][8] = {
        {   0,   1,  10,  11, 100, 101, 110, 111 },
        {   2,   3,  12,  13, 102, 103, 112, 113 },
        {  20,  21,  30,  31, 120, 121, 130, 131 },
        {  22,  23,  32,  33, 122, 123, 132, 133 },
    };
    float img[2 * 4 * 4];
    for (int i = 0; i < 2 * 4 * 4; i++) img[i] = NAN;
    unpatchify(img, &tok[0][0], 1, 2, 4, 2);
    for (int c = 0; c < 2; c++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) {
                float got = img[(c * 4 + y) * 4 + x], want = c * 100 + y * 10 + x;
                ck_assert_msg(got == want, "unpatchify into a 2x4x4 image, patch 2: pixel (c %d, y %d, x %d): "
                              "got %g, expected %g", c, y, x, got, want);
            }
}
END_TEST

// Both are permutations: unpatchify(patchify(x)) == x bit for bit, every
// token slot is written, and each is the other's adjoint (so the backward of
// unpatchify is patchify, as model_backward uses it).
START_TEST(test_patchify_roundtrip) {
    int shapes[][4] = { { 2, 3, 8, 4 }, { 3, 3, 32, 4 }, { 1, 1, 6, 3 }, { 2, 2, 4, 1 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int N = shapes[s][0], C = shapes[s][1], S = shapes[s][2], p = shapes[s][3];
        size_t n = (size_t)N * C * S * S;
        float *x = alloc_floats(n), *t = alloc_floats(n), *y = alloc_floats(n), *w = alloc_floats(n);
        fill_normal(x, n, 1.0f, 91 + s); fill_normal(w, n, 1.0f, 95 + s);
        int g = S / p, P = C * p * p, L = g * g;
        for (size_t i = 0; i < n; i++) t[i] = NAN;
        crash_context("patchify(tokens, img, N = %d, C = %d, S = %d, p = %d)", N, C, S, p);
        patchify(t, x, N, C, S, p);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(!isnan(t[i]), "patchify(N = %d, C = %d, S = %d, p = %d) left token %zu of image %zu, "
                          "element %zu, unwritten (tokens (N, L, C·p·p) = (%d, %d, %d))", N, C, S, p,
                          i / P % L, i / P / L, i % P, N, L, P);
        crash_context("unpatchify(img, tokens, N = %d, C = %d, S = %d, p = %d)", N, C, S, p);
        unpatchify(y, t, N, C, S, p);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(memcmp(&x[i], &y[i], sizeof(float)) == 0, "unpatchify(patchify(x)) is not x (N = %d, "
                          "C = %d, S = %d, p = %d): image %zu, channel %zu, row %zu, column %zu holds %g, x has %g",
                          N, C, S, p, i / ((size_t)C * S * S), i / ((size_t)S * S) % C, i / S % S, i % S, y[i], x[i]);
        // <patchify(x), w> == <x, unpatchify(w)>
        unpatchify(y, w, N, C, S, p);
        // (the same products, summed in another order: equal to double rounding)
        double a = dot(t, w, n), b = dot(x, y, n);
        ck_assert_msg(fabs(a - b) <= 1e-12 * (1.0 + fabs(a)), "patchify is not unpatchify's adjoint (N = %d, C = %d, "
                      "S = %d, p = %d): <patchify(x), w> = %.12g, <x, unpatchify(w)> = %.12g", N, C, S, p, a, b);
        free(x); free(t); free(y); free(w);
    }
}
END_TEST

// ===========================================================================
// Learned position tables
typedef struct {
    int N, g, D;
    float *h0, *h, *pr, *pc, *w;
} PosCtx;

static double pos_f(void *p) {
    PosCtx *c = p;
    size_t n = (size_t)c->N * c->g * c->g * c->D;
    memcpy(c->h, c->h0, n * sizeof(float));
    pos_add_forward(c->h, c->pr, c->pc, c->N, c->g, c->D);
    return dot(c->h, c->w, n);
}

START_TEST(test_pos_add_grad) {
    PosCtx c = { 2, 3, 4, NULL, NULL, NULL, NULL, NULL };
    size_t n = (size_t)c.N * c.g * c.g * c.D, nt = (size_t)c.g * c.D;
    c.h0 = alloc_floats(n); c.h = alloc_floats(n); c.w = alloc_floats(n);
    c.pr = alloc_floats(nt); c.pc = alloc_floats(nt);
    fill_normal(c.h0, n, 1.0f, 101); fill_normal(c.w, n, 1.0f, 102);
    fill_normal(c.pr, nt, 1.0f, 103); fill_normal(c.pc, nt, 1.0f, 104);
    // the forward adds, token (r, c) of every image gets pos_row[r] + pos_col[c]
    pos_f(&c);
    for (int im = 0; im < c.N; im++)
        for (int tok = 0; tok < c.g * c.g; tok++)
            for (int i = 0; i < c.D; i++) {
                size_t j = ((size_t)im * c.g * c.g + tok) * c.D + i;
                ck_assert(c.h[j] == c.h0[j] + (c.pr[(tok / c.g) * c.D + i] + c.pc[(tok % c.g) * c.D + i]));
            }
    float *dr = alloc_floats(nt), *dc = alloc_floats(nt);
    pos_add_backward(dr, dc, c.w, c.N, c.g, c.D);
    grad_check("pos_add dpos_row", pos_f, &c, c.pr, dr, nt, 0);
    grad_check("pos_add dpos_col", pos_f, &c, c.pc, dc, nt, 0);
    float *dr1 = copy_floats(dr, nt), *dc1 = copy_floats(dc, nt);
    pos_add_backward(dr, dc, c.w, c.N, c.g, c.D);
    expect_doubled("pos_add dpos_row", dr1, dr, nt);
    expect_doubled("pos_add dpos_col", dc1, dc, nt);
    free(c.h0); free(c.h); free(c.w); free(c.pr); free(c.pc); free(dr); free(dc); free(dr1); free(dc1);
}
END_TEST

// ===========================================================================
// Timestep features against their formula: e = [cos(1000·t·f_j), sin(1000·t·f_j)],
// f_j = exp(-ln(10000)·j/(F/2)). The reference rounds f_j to float32 before
// the product, which moves an angle of up to 1000 by up to ~6e-5, so the
// comparison with the all-double formula allows 1e-4. t = 0 is exact.
START_TEST(test_timestep_embedding) {
    enum { N = 5, F = 16 };
    float t[N] = { 0.0f, 0.001f, 0.25f, 0.5f, 1.0f }, e[N * F];
    timestep_embedding(e, t, N, F);
    int half = F / 2;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < half; j++) {
            double f = exp(-log(10000.0) * j / half);
            double arg = 1000.0 * t[n] * f;
            ck_assert_msg(fabs(e[n * F + j] - cos(arg)) < 1e-4, "time embedding e[%d][%d], the cosine of "
                          "frequency %d at t = %g: got %.6g, expected %.6g (off by %.3g; tolerance 1e-4)",
                          n, j, j, t[n], e[n * F + j], cos(arg), e[n * F + j] - cos(arg));
            ck_assert_msg(fabs(e[n * F + half + j] - sin(arg)) < 1e-4, "time embedding e[%d][%d], the sine of "
                          "frequency %d at t = %g: got %.6g, expected %.6g (off by %.3g; tolerance 1e-4)",
                          n, half + j, j, t[n], e[n * F + half + j], sin(arg), e[n * F + half + j] - sin(arg));
        }
    for (int j = 0; j < half; j++) { ck_assert(e[j] == 1.0f); ck_assert(e[half + j] == 0.0f); }
    // f_0 = 1: the first pair is exactly cos/sin(1000·t)
    ck_assert(fabs(e[2 * F] - cos(250.0)) < 1e-5);
}
END_TEST

// The angle 1000·t·f in double. With F = 2 there is one frequency, f = 1
// exactly however it is computed, and the angle is 1000·t, up to 1000. In
// float32 its rounding alone moves it by up to 3e-5 (half a unit in the last
// place of a number near 1000), and its cosine and sine by as much; in
// double the features are right to float32's rounding of a number below 1,
// 6e-8. The tolerance, 1e-6, lies between the two.
START_TEST(test_timestep_angle_in_double) {
    enum { N = 8 };
    const float t[N] = { 0.7071068f, 0.3183099f, 0.9876543f, 0.5772157f, 0.8660254f, 0.6931472f, 0.1234567f,
                         0.9999999f };
    float e[N * 2];
    crash_context("timestep_embedding(e, t, N = %d, F = 2)", N);
    timestep_embedding(e, t, N, 2);
    for (int n = 0; n < N; n++) {
        double arg = 1000.0 * (double)t[n];
        double want[2] = { cos(arg), sin(arg) };
        for (int k = 0; k < 2; k++)
            ck_assert_msg(fabs(e[2 * n + k] - want[k]) <= 1e-6, "time embedding e[%d][%d] with F = 2, the %s of "
                          "1000·t at t = %.7g: got %.9g, expected %.9g (off by %.3g; tolerance 1e-6: the angle "
                          "1000·t·f must be computed in double, where float32 rounds it by up to 3e-5)", n, k,
                          k ? "sine" : "cosine", t[n], e[2 * n + k], want[k], e[2 * n + k] - want[k]);
    }
}
END_TEST

// ===========================================================================
// The flow-matching loss: mean((v − target)²) over n values, in double, and
// its gradient dv = 2·(v − target)/n, written (not added: the loss is where
// the backward pass starts).

START_TEST(test_flow_loss_values) {
    enum { n = 777 };
    float *v = alloc_floats(n), *target = alloc_floats(n), *dv = alloc_floats(n);
    fill_normal(v, n, 1.0f, 301); fill_normal(target, n, 2.0f, 302);
    double want = 0.0;
    for (int i = 0; i < n; i++) want += ((double)v[i] - target[i]) * ((double)v[i] - target[i]);
    want /= n;
    for (int i = 0; i < n; i++) dv[i] = 1e6f;   // what was there before is overwritten
    double got = flow_mse(dv, v, target, n);
    // 1e-9 of the loss: a sum in double is right to ~1e-15 of it, a sum in
    // float32 is off by ~7e-8 of it here
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "flow_mse: the loss of %d values: got %.9g, expected "
                  "%.9g, the mean of (v - target)^2 (off by %.3g, %.2g of it; tolerance 1e-9 of it: a float32 "
                  "sum is off by more, sum in double)", n, got, want, got - want, (got - want) / want);
    for (int i = 0; i < n; i++) {
        double g = 2.0 * ((double)v[i] - target[i]) / n;
        ck_assert_msg(fabs(dv[i] - g) <= 1e-6 * fabs(g) + 1e-12, "flow_mse: dv[%d]: got %.6g, expected %.6g, "
                      "2 (v - target) / n (off by %.3g)", i, dv[i], g, dv[i] - g);
    }
    ck_assert_msg(flow_mse(NULL, v, target, n) == got, "flow_mse with dv = NULL (the loss alone): "
                  "a different loss");
    free(v); free(target); free(dv);
}
END_TEST

// Logit-normal times: t = σ(mean + std·u) against the formula in double, at
// a mean and a scale that are neither 0 nor 1 (so each one's place shows).
START_TEST(test_logit_normal_times) {
    enum { n = 301 };
    float u[n], t[n];
    fill_normal(u, n, 1.0f, 331);
    const float mean = -0.7f, std = 1.6f;
    flow_logit_normal_times(t, u, n, mean, std);
    for (int i = 0; i < n; i++) {
        double want = 1.0 / (1.0 + exp(-((double)mean + (double)std * u[i])));
        ck_assert_msg(fabs(t[i] - want) <= 1e-6, "logit-normal t[%d] from u = %.6g (mean %g, std %g): got %.7g, "
                      "expected sigmoid(mean + std*u) = %.7g", i, u[i], mean, std, t[i], want);
    }
    float same[n];   // in place, as train_step calls it
    memcpy(same, u, sizeof same);
    flow_logit_normal_times(same, same, n, mean, std);
    ck_assert_msg(memcmp(same, t, sizeof t) == 0, "logit-normal times in place (t = u): other values");
}
END_TEST

// The EMA over a run of steps against its definition in double: β_k =
// (1 − 1/k)^(γ+1), so the first step copies the weights; γ of σ_rel = 0.10
// is 6.9372 (EDM2's table).
START_TEST(test_ema_update) {
    ck_assert_msg(fabs(ema_gamma(0.10) - 6.9372) < 1e-4, "ema_gamma(0.10) = %.6f, not 6.9372", ema_gamma(0.10));
    ck_assert_msg(fabs(ema_gamma(0.05) - 16.9722) < 1e-4, "ema_gamma(0.05) = %.6f, not 16.9722", ema_gamma(0.05));
    enum { n = 257, steps = 40 };
    float ema[n], p[n];
    double want[n];
    const double gamma = 3.5;
    fill_normal(ema, n, 5.0f, 341);   // anything: step 1 overwrites it
    for (int k = 1; k <= steps; k++) {
        fill_normal(p, n, 1.0f, 342 + k);   // the weights after step k
        ema_update(ema, p, n, k, gamma);
        double beta = pow(1.0 - 1.0 / k, gamma + 1.0);
        for (int i = 0; i < n; i++) want[i] = k == 1 ? p[i] : beta * want[i] + (1.0 - beta) * p[i];
        for (int i = 0; i < n; i++)
            ck_assert_msg(fabs(ema[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])), "EMA after step %d, ema[%d]: got %.7g, "
                          "expected %.7g (beta_k = (1 - 1/k)^(gamma+1) = %.6g, ema = beta ema + (1 - beta) p)", k, i,
                          ema[i], want[i], beta);
    }
}
END_TEST

// Heun's corrector: x + h·(v₁ + v₂)/2, then on a flow whose answer is
// known, dx/dt = −(1 + t)·x from x(0) = 1 to x(1) = e^(−1.5): halving the
// step must quarter Heun's error (second order), where Euler's halves.
static double ode_error(int steps, bool heun) {
    float x = 1.0f, h = 1.0f / steps;
    for (int i = 0; i < steps; i++) {
        float t = (float)i / steps, v1 = -(1.0f + t) * x;
        if (!heun) { flow_euler_step(&x, &v1, h, 1); continue; }
        float guess = x + h * v1, v2 = -(1.0f + t + h) * guess;
        flow_heun_step(&x, &v1, &v2, h, 1);
    }
    return fabs(x - exp(-1.5));
}

START_TEST(test_heun_step) {
    enum { n = 333 };
    float x[n], v1[n], v2[n];
    fill_normal(x, n, 1.0f, 351); fill_normal(v1, n, 1.0f, 352); fill_normal(v2, n, 1.0f, 353);
    float x0[n];
    memcpy(x0, x, sizeof x);
    flow_heun_step(x, v1, v2, 0.125f, n);
    for (int i = 0; i < n; i++) {
        double want = x0[i] + 0.125 * 0.5 * ((double)v1[i] + v2[i]);
        ck_assert_msg(fabs(x[i] - want) <= 1e-6 * (1 + fabs(want)), "heun x[%d]: got %.7g, expected x + h (v1 + v2)/2 "
                      "= %.7g", i, x[i], want);
    }
    double e8 = ode_error(8, true), e16 = ode_error(16, true);
    ck_assert_msg(e8 / e16 > 3.5 && e8 / e16 < 4.5, "heun on dx/dt = -(1+t)x: error %.3g at 8 steps, %.3g at 16: a "
                  "ratio of %.2f, not about 4 (second order)", e8, e16, e8 / e16);
    double u8 = ode_error(8, false), u16 = ode_error(16, false);
    ck_assert_msg(u8 / u16 > 1.7 && u8 / u16 < 2.3, "euler on dx/dt = -(1+t)x: error ratio %.2f, not about 2", u8 / u16);
}
END_TEST

typedef struct { float *v, *target; size_t n; } FlowCtx;
static double flow_f(void *p) { FlowCtx *c = p; return flow_mse(NULL, c->v, c->target, c->n); }

START_TEST(test_flow_loss_grad) {
    FlowCtx c = { alloc_floats(96), alloc_floats(96), 96 };
    fill_normal(c.v, c.n, 1.0f, 311); fill_normal(c.target, c.n, 1.0f, 312);
    float *dv = alloc_floats(c.n);
    flow_mse(dv, c.v, c.target, c.n);
    grad_check("flow_mse dv", flow_f, &c, c.v, dv, c.n, 0);
    free(c.v); free(c.target); free(dv);
}
END_TEST

// ===========================================================================
// The softmax of attention, forward and backward, against the formulas in
// double, on rows of scores from -120 to 100: exp(89) already overflows float32
// (and exp_fast clamps at e^88), so a softmax that does not subtract the
// row's max first gets the rows with a score of 100 wrong.

static void softmax_rows_double(double *p, const float *s, int L) {
    for (int i = 0; i < L; i++) {
        double mx = -INFINITY, sum = 0.0;
        for (int j = 0; j < L; j++) if (s[i * L + j] > mx) mx = s[i * L + j];
        for (int j = 0; j < L; j++) sum += exp((double)s[i * L + j] - mx);
        for (int j = 0; j < L; j++) p[i * L + j] = exp((double)s[i * L + j] - mx) / sum;
    }
}

// The forward's probabilities must be what the backward pass computes again
// from row_max and row_inv (softmax_rows_with, attention.c) bit for bit, or
// the backward differentiates another function than the one the forward ran.
START_TEST(test_softmax_forward) {
    enum { L = 9 };
    float att[L * L], scores[L * L], row_max[L], row_inv[L];
    fill_normal(scores, L * L, 1.5f, 321);
    scores[3 * L + 4] = 100.0f; scores[5 * L + 1] = -120.0f; scores[7 * L + 2] = 95.0f; scores[7 * L + 6] = 93.5f;
    memcpy(att, scores, sizeof att);
    double p[L * L];
    softmax_rows_double(p, scores, L);
    crash_context("softmax_forward(att, row_max, row_inv, L = %d)", L);
    float big = softmax_forward(att, row_max, row_inv, L);
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++)
            ck_assert_msg(fabs(att[i * L + j] - p[i * L + j]) <= 1e-5, "softmax_forward: probability [%d][%d] "
                          "(its score %g): got %.6g, expected %.6g (off by %.3g; tolerance 1e-5)", i, j,
                          scores[i * L + j], att[i * L + j], p[i * L + j], att[i * L + j] - p[i * L + j]);
    for (int i = 0; i < L; i++) {
        float mx = -INFINITY;
        double sum = 0.0;
        for (int j = 0; j < L; j++) if (scores[i * L + j] > mx) mx = scores[i * L + j];
        for (int j = 0; j < L; j++) sum += exp((double)scores[i * L + j] - mx);
        ck_assert_msg(row_max[i] == mx, "softmax_forward: row_max[%d]: got %.6g, expected %.6g, the row's "
                      "largest score (off by %.3g)", i, row_max[i], mx, row_max[i] - mx);
        ck_assert_msg(fabs(row_inv[i] - 1.0 / sum) <= 1e-5 / sum, "softmax_forward: row_inv[%d]: got %.6g, "
                      "expected %.6g, 1 / sum_j exp(s_ij - max) (off by %.3g)", i, row_inv[i], 1.0 / sum,
                      row_inv[i] - 1.0 / sum);
    }
    float again[L * L];
    memcpy(again, scores, sizeof again);
    softmax_rows_with(again, row_max, row_inv, L);
    for (int i = 0; i < L * L; i++)
        ck_assert_msg(memcmp(&again[i], &att[i], sizeof(float)) == 0, "softmax_forward: probability [%d][%d] is "
                      "%.9g, but the backward pass computes it again from row_max and row_inv as %.9g: not the "
                      "same bits (write them with the file's helper, softmax_rows_with, or its arithmetic)", i / L, i % L,
                      att[i], again[i]);
    float want_big = 0.0f;
    for (int i = 0; i < L * L; i++) if (fabsf(scores[i]) > want_big) want_big = fabsf(scores[i]);
    ck_assert_msg(big == want_big, "softmax_forward: the return value, the largest |score|: got %g, expected %g",
                  big, want_big);
}
END_TEST

START_TEST(test_softmax_backward) {
    enum { L = 9 };
    float scores[L * L], att[L * L], d[L * L], dp[L * L];
    fill_normal(scores, L * L, 2.0f, 331); fill_normal(dp, L * L, 1.0f, 332);
    double p[L * L];
    softmax_rows_double(p, scores, L);
    for (int i = 0; i < L * L; i++) att[i] = (float)p[i];
    memcpy(d, dp, sizeof d);
    float scale = 0.25f;
    softmax_backward(d, att, L, scale);
    for (int i = 0; i < L; i++) {
        double dot = 0.0;
        for (int k = 0; k < L; k++) dot += (double)att[i * L + k] * dp[i * L + k];
        for (int j = 0; j < L; j++) {
            double want = att[i * L + j] * (dp[i * L + j] - dot) * scale;
            ck_assert_msg(fabs(d[i * L + j] - want) <= 1e-6, "softmax_backward: dL/dscore [%d][%d]: got %.6g, "
                          "expected %.6g, p_ij (dp_ij - sum_k p_ik dp_ik) scale (off by %.3g; tolerance 1e-6)",
                          i, j, d[i * L + j], want, d[i * L + j] - want);
        }
    }
}
END_TEST

// ===========================================================================
// Thread-count invariance: every layer, forward and backward, must give the
// same bits on 1, 2 and 3 threads. The sizes are chosen so that every OpenMP
// loop really splits (each has an `if` on the size: 8 images x 64 tokens x
// 128 wide clears them all), and 3 threads split the (image, token) pairs
// inside an image: a loop that sums an image's tokens from several threads
// (into dshift, say) gives other bits there, while 2 threads split the
// images evenly and would not show it. Our loops keep each output's sum on
// one thread, in a fixed order; this test is what holds them to it, and
// `make grade` runs the part of each exercise (its threads check).
//
// One exception, by design of the test: a product library may split its own
// work over threads once a product is big enough, and then round
// differently on 1 and 2 threads (test_model.c measures it). So the Linear
// here is 512 x 3 -> 128: its bias sums (which are ours) split over threads,
// its products stay small.

typedef struct {
    float *buf;            // every output, one after another
    size_t used, cap;
    const char *names[64]; // which layer wrote each segment
    size_t ends[64];
    int n;
} Record;

static void rec(Record *r, const char *name, const float *x, size_t n) {
    ck_assert(r->n < 64);
    if (r->used + n > r->cap) {
        r->cap = 2 * (r->used + n);
        r->buf = realloc(r->buf, r->cap * sizeof(float));
        ck_assert_ptr_nonnull(r->buf);
    }
    memcpy(r->buf + r->used, x, n * sizeof(float));
    r->used += n;
    r->names[r->n] = name;
    r->ends[r->n++] = r->used;
}

enum { TN = 8, TL = 64, TD = 128, TH = 4, THD = TD / TH, THID = 4 * TD, TG = 8, TF = 64 };
#define TNLD ((size_t)TN * TL * TD)

// The inputs every part shares, the same numbers on every run.
typedef struct { float *x, *dy, *gain, *ada; } TInputs;

static TInputs tinputs(void) {
    TInputs in = { alloc_floats(TNLD), alloc_floats(TNLD), alloc_floats(TD), alloc_floats((size_t)TN * 4 * TD) };
    fill_normal(in.x, TNLD, 1.0f, 201); fill_normal(in.dy, TNLD, 1.0f, 202);
    fill_normal(in.gain, TD, 0.3f, 203); fill_normal(in.ada, (size_t)TN * 4 * TD, 0.5f, 204);
    return in;
}

static void tinputs_free(TInputs *in) { free(in->x); free(in->dy); free(in->gain); free(in->ada); }

// Linear with bias: 512 rows x 3 -> 128 (see above)
static void part_linear(Record *r) {
    TInputs in = tinputs();
    int R = 512, IC = 3, OC = 128;
    float *w = alloc_floats((size_t)OC * IC), *b = alloc_floats(OC), *o = alloc_floats((size_t)R * OC);
    float *di = alloc_floats((size_t)R * IC), *dw = alloc_floats((size_t)OC * IC), *db = alloc_floats(OC);
    fill_normal(w, (size_t)OC * IC, 0.5f, 205); fill_normal(b, OC, 0.5f, 206);
    linear_forward(o, in.x, w, b, R, IC, OC);
    linear_backward(di, dw, db, in.dy, in.x, w, R, IC, OC, ADD_TO_DINP);
    rec(r, "linear forward", o, (size_t)R * OC);
    rec(r, "linear dinp", di, (size_t)R * IC);
    rec(r, "linear dweight", dw, (size_t)OC * IC);
    rec(r, "linear dbias", db, OC);
    free(w); free(b); free(o); free(di); free(dw); free(db);
    tinputs_free(&in);
}

// LayerNorm and RMSNorm (with a gain), row by row, forward and backward
static void part_norms(Record *r) {
    TInputs in = tinputs();
    float *y = alloc_floats(TNLD), *dx = alloc_floats(TNLD), *dgain = alloc_floats(TD);
    float *st_a = alloc_floats((size_t)TN * TL), *st_b = alloc_floats((size_t)TN * TL);
    layernorm_forward(y, st_a, st_b, in.x, TN * TL, TD, EPS);
    layernorm_backward(dx, in.dy, in.x, st_a, st_b, TN * TL, TD);
    rec(r, "layernorm forward", y, TNLD); rec(r, "layernorm backward", dx, TNLD);
    rmsnorm_forward(y, st_b, in.x, in.gain, TN * TL, TD, EPS);
    memset(dx, 0, TNLD * sizeof(float));
    rmsnorm_backward(dx, dgain, in.dy, in.x, st_b, in.gain, TN * TL, TD);
    rec(r, "rmsnorm forward", y, TNLD); rec(r, "rmsnorm rstd", st_b, (size_t)TN * TL);
    rec(r, "rmsnorm dinp", dx, TNLD); rec(r, "rmsnorm dgain", dgain, TD);
    free(y); free(dx); free(dgain); free(st_a); free(st_b);
    tinputs_free(&in);
}

// adaLN's modulation alone, and fused with each norm (what the model runs):
// norm_modulate_backward sums every image's tokens into its dshift, dscale
static void part_norm_modulate(Record *r) {
    TInputs in = tinputs();
    size_t na = (size_t)TN * 4 * TD;
    float *y = alloc_floats(TNLD), *dx = alloc_floats(TNLD), *dada = alloc_floats(na);
    float *st_a = alloc_floats((size_t)TN * TL), *st_b = alloc_floats((size_t)TN * TL);
    modulate_forward(y, in.x, in.ada, in.ada + TD, TN, TL, TD, 4 * TD);
    modulate_backward(dx, dada, dada + TD, in.dy, in.x, in.ada + TD, TN, TL, TD, 4 * TD);
    rec(r, "modulate forward", y, TNLD); rec(r, "modulate dx", dx, TNLD);
    rec(r, "modulate dshift/dscale", dada, na);
    for (int rms = 0; rms < 2; rms++) {
        NormRows kind = rms ? NORM_ROWS_RMSNORM : NORM_ROWS_LAYERNORM;
        crash_context("norm_modulate_backward(dx, dshift, dscale, dout, %s, x, mean, rstd, scale, N = %d, L = %d, "
                      "D = %d, stride = %d), on %d threads", rms ? "RMSNorm" : "LayerNorm", TN, TL, TD, 4 * TD,
                      omp_get_max_threads());
        norm_modulate_forward(y, kind, st_a, st_b, in.x, in.ada, in.ada + TD, TN, TL, TD, 4 * TD, EPS);
        memset(dx, 0, TNLD * sizeof(float)); memset(dada, 0, na * sizeof(float));
        norm_modulate_backward(dx, dada, dada + TD, in.dy, kind, in.x, st_a, st_b, in.ada + TD, TN, TL, TD, 4 * TD);
        rec(r, rms ? "rmsnorm+modulate forward" : "layernorm+modulate forward", y, TNLD);
        rec(r, rms ? "rmsnorm+modulate dx" : "layernorm+modulate dx", dx, TNLD);
        rec(r, rms ? "rmsnorm+modulate dshift/dscale" : "layernorm+modulate dshift/dscale", dada, na);
    }
    free(y); free(dx); free(dada); free(st_a); free(st_b);
    tinputs_free(&in);
}

// the activations on an (N, L, 4D) hidden layer
static void part_activations(Record *r) {
    size_t NLH = (size_t)TN * TL * THID;
    float *a = alloc_floats(NLH), *v = alloc_floats(NLH), *o = alloc_floats(NLH), *g = alloc_floats(NLH);
    float *da = alloc_floats(NLH), *dv = alloc_floats(NLH);
    fill_normal(a, NLH, 2.0f, 207); fill_normal(v, NLH, 1.0f, 208); fill_normal(g, NLH, 1.0f, 209);
    gelu_forward(o, a, NLH); gelu_backward(da, g, a, NLH, ADD_TO_DINP);
    rec(r, "gelu forward", o, NLH); rec(r, "gelu backward", da, NLH);
    memset(da, 0, NLH * sizeof(float));
    silu_forward(o, a, NLH); silu_backward(da, g, a, NLH);
    rec(r, "silu forward", o, NLH); rec(r, "silu backward", da, NLH);
    memset(da, 0, NLH * sizeof(float));
    crash_context("swiglu_forward(out, gate, value, n = %zu), then swiglu_backward, on %d threads", NLH,
                  omp_get_max_threads());
    swiglu_forward(o, a, v, NLH); swiglu_backward(da, dv, g, a, v, NLH);
    rec(r, "swiglu forward", o, NLH); rec(r, "swiglu dgate", da, NLH); rec(r, "swiglu dvalue", dv, NLH);
    free(a); free(v); free(o); free(g); free(da); free(dv);
}

// RoPE, QK-norm, and attention (plain, QK-norm, RoPE, both) on (N, H, L, hd):
// the softmax, QK-norm's RMSNorm and RoPE's backward run inside its loop
// over (image, head) pairs
static void part_attention(Record *r) {
    TInputs in = tinputs();
    size_t NQKV = 3 * TNLD;
    float *y = alloc_floats(TNLD), *dx = alloc_floats(TNLD);
    float *ct = alloc_floats((size_t)TL * THD), *stb = alloc_floats((size_t)TL * THD);
    float *qg = alloc_floats(THD), *kg = alloc_floats(THD), *dqg = alloc_floats(THD), *dkg = alloc_floats(THD);
    float *k = alloc_floats(TNLD), *ko = alloc_floats(TNLD), *dk = alloc_floats(TNLD);
    float *qr = alloc_floats((size_t)TN * TL * TH), *kr = alloc_floats((size_t)TN * TL * TH);
    rope2d_tables(ct, stb, TG, THD, 100.0f, 0);
    rec(r, "rope2d_tables cos", ct, (size_t)TL * THD); rec(r, "rope2d_tables sin", stb, (size_t)TL * THD);
    fill_normal(qg, THD, 0.3f, 210); fill_normal(kg, THD, 0.3f, 211); fill_normal(k, TNLD, 1.0f, 212);
    for (int i = 0; i < THD; i++) { qg[i] += 1.0f; kg[i] += 1.0f; }
    rope_forward(y, in.x, ct, stb, TN * TH, TL, THD);
    rope_backward(dx, in.dy, ct, stb, TN * TH, TL, THD);
    rec(r, "rope forward", y, TNLD); rec(r, "rope backward", dx, TNLD);
    QueryKeyNorm qk = qk_norm_make(THD, EPS, qg, kg);
    qk_norm_forward(&qk, y, ko, qr, kr, in.x, k, TN, TH, TL);
    memset(dx, 0, TNLD * sizeof(float));
    qk_norm_backward(&qk, dx, dk, dqg, dkg, in.dy, in.dy, in.x, k, qr, kr, TN, TH, TL);
    rec(r, "qk_norm forward q", y, TNLD); rec(r, "qk_norm forward k", ko, TNLD);
    rec(r, "qk_norm dq", dx, TNLD); rec(r, "qk_norm dk", dk, TNLD);
    rec(r, "qk_norm dq_gain", dqg, THD); rec(r, "qk_norm dk_gain", dkg, THD);

    float *qkv = alloc_floats(NQKV), *dqkv = alloc_floats(NQKV);
    float *mem = alloc_floats(attention_cache_floats(TN, TL, TD, TH, 1));
    float *scratch = alloc_floats(attention_backward_scratch_floats(TN, TL, TD, TH));
    AttentionCache cache;
    fill_normal(qkv, NQKV, 1.0f, 213);
    static const char *const names[4][5] = {
        { "attention forward", "attention dqkv", "attention dq_gain", "attention dk_gain", "attention max_logit" },
        { "attention+qk_norm forward", "attention+qk_norm dqkv", "attention+qk_norm dq_gain",
          "attention+qk_norm dk_gain", "attention+qk_norm max_logit" },
        { "attention+rope forward", "attention+rope dqkv", "attention+rope dq_gain", "attention+rope dk_gain",
          "attention+rope max_logit" },
        { "attention+both forward", "attention+both dqkv", "attention+both dq_gain", "attention+both dk_gain",
          "attention+both max_logit" } };
    for (int v = 0; v < 4; v++) {
        int with_qk = v & 1, with_rope = v & 2;
        crash_context("attention_forward then attention_backward (N = %d, L = %d, D = %d, H = %d%s%s), on %d threads:"
                      " softmax_forward, softmax_backward, qk_norm and rope inside", TN, TL, TD, TH,
                      with_qk ? ", QK-norm" : "", with_rope ? ", RoPE" : "", omp_get_max_threads());
        attention_cache_init(&cache, mem, TN, TL, TD, TH, 1);
        memset(dqkv, 0, NQKV * sizeof(float));
        memset(dqg, 0, THD * sizeof(float)); memset(dkg, 0, THD * sizeof(float));
        const float *q_gain = with_qk ? qg : NULL, *k_gain = with_qk ? kg : NULL;
        const float *cos_t = with_rope ? ct : NULL, *sin_t = with_rope ? stb : NULL;
        attention_forward(y, &cache, qkv, q_gain, k_gain, EPS, cos_t, sin_t, TN, TL, TD, TH);
        attention_backward(dqkv, dqg, dkg, in.dy, &cache, scratch, q_gain, k_gain, cos_t, sin_t, TN, TL, TD, TH,
                           ADD_TO_DINP);
        rec(r, names[v][0], y, TNLD); rec(r, names[v][1], dqkv, NQKV);
        rec(r, names[v][2], dqg, THD); rec(r, names[v][3], dkg, THD);
        rec(r, names[v][4], &cache.max_logit, 1);
    }
    free(y); free(dx); free(ct); free(stb); free(qg); free(kg); free(dqg); free(dkg); free(k); free(ko); free(dk);
    free(qr); free(kr); free(qkv); free(dqkv); free(mem); free(scratch);
    tinputs_free(&in);
}

// patches (8 images of 3x32x32 = 8 x 64 tokens of 48) and the positions
static void part_patches(Record *r) {
    TInputs in = tinputs();
    int C = 3, S = 32, p = 4;
    size_t ni = (size_t)TN * C * S * S;
    float *img = alloc_floats(ni), *tok = alloc_floats(ni), *back = alloc_floats(ni), *y = alloc_floats(TNLD);
    fill_normal(img, ni, 1.0f, 214);
    crash_context("patchify(tokens, img, N = %d, C = %d, S = %d, p = %d), then unpatchify, on %d threads",
                  TN, C, S, p, omp_get_max_threads());
    patchify(tok, img, TN, C, S, p); unpatchify(back, tok, TN, C, S, p);
    rec(r, "patchify", tok, ni); rec(r, "unpatchify", back, ni);
    float *pr = alloc_floats((size_t)TG * TD), *pc = alloc_floats((size_t)TG * TD);
    float *dpr = alloc_floats((size_t)TG * TD), *dpc = alloc_floats((size_t)TG * TD);
    fill_normal(pr, (size_t)TG * TD, 0.02f, 215); fill_normal(pc, (size_t)TG * TD, 0.02f, 216);
    memcpy(y, in.x, TNLD * sizeof(float));
    pos_add_forward(y, pr, pc, TN, TG, TD);
    pos_add_backward(dpr, dpc, in.dy, TN, TG, TD);
    rec(r, "pos_add forward", y, TNLD); rec(r, "pos_add dpos_row", dpr, (size_t)TG * TD);
    rec(r, "pos_add dpos_col", dpc, (size_t)TG * TD);
    free(img); free(tok); free(back); free(y); free(pr); free(pc); free(dpr); free(dpc);
    tinputs_free(&in);
}

// the timestep features of 64 times
static void part_time(Record *r) {
    enum { N = 64, F = 256 };
    float t[N], *e = alloc_floats((size_t)N * F);
    for (int n = 0; n < N; n++) t[n] = (float)(n * 37 % N) / N + 0.003f;
    crash_context("timestep_embedding(e, t, N = %d, F = %d), on %d threads", N, F, omp_get_max_threads());
    timestep_embedding(e, t, N, F);
    rec(r, "timestep_embedding", e, (size_t)N * F);
    free(e);
}

// the loss and its gradient, and an Euler step, over 200,001 values (an
// odd count, not a multiple of any vector width)
static void part_flow(Record *r) {
    size_t n = 200001;
    float *v = alloc_floats(n), *target = alloc_floats(n), *dv = alloc_floats(n), *x = alloc_floats(n);
    fill_normal(v, n, 1.0f, 217); fill_normal(target, n, 1.5f, 218); fill_normal(x, n, 1.0f, 219);
    crash_context("flow_mse(dv, v, target, n = %zu), on %d threads", n, omp_get_max_threads());
    float loss[2];
    double l = flow_mse(dv, v, target, n);
    memcpy(loss, &l, sizeof l);   // the double's bits, as two floats
    rec(r, "flow_mse: the loss", loss, 2); rec(r, "flow_mse dv", dv, n);
    crash_context("flow_euler_step(x, v, h = 0.05, n = %zu), on %d threads", n, omp_get_max_threads());
    flow_euler_step(x, v, 0.05f, n);
    rec(r, "flow_euler_step x", x, n);
    size_t half = n / 2;   // v's two halves as the null label's and the asked-for label's velocities
    crash_context("flow_guided_velocity(dv, v, w = 2.5, n = %zu), on %d threads", half, omp_get_max_threads());
    flow_guided_velocity(dv, v, 2.5f, half);
    rec(r, "flow_guided_velocity v", dv, half);
    crash_context("flow_heun_step(x, v1, v2, h = 0.05, n = %zu), on %d threads", half, omp_get_max_threads());
    flow_heun_step(x, v, v + half, 0.05f, half);
    rec(r, "flow_heun_step x", x, half);
    free(v); free(target); free(dv); free(x);
}

// part on 1, 2 and 3 threads: every output the same bits.
static void check_threads(void (*part)(Record *)) {
    Record r[3];
    memset(r, 0, sizeof r);
    int threads_before = omp_get_max_threads();
    for (int k = 0; k < 3; k++) {
        omp_set_num_threads(k + 1);
        ck_assert_int_eq(omp_get_max_threads(), k + 1);
        part(&r[k]);
    }
    omp_set_num_threads(threads_before);
    crash_context("");
    for (int k = 1; k < 3; k++) {
        ck_assert_int_eq(r[0].n, r[k].n);
        size_t start = 0;
        for (int i = 0; i < r[0].n; i++) {
            size_t ndiff = 0, first = 0;
            for (size_t j = start; j < r[0].ends[i]; j++)
                if (memcmp(&r[0].buf[j], &r[k].buf[j], sizeof(float)) != 0 && ndiff++ == 0) first = j;
            ck_assert_msg(ndiff == 0, "%s: %zu of %zu values differ between 1 and %d threads, the first at [%zu]: "
                          "%.9g on 1 thread, %.9g on %d (a sum split over threads, or a race)", r[0].names[i],
                          ndiff, r[0].ends[i] - start, k + 1, first - start, r[0].buf[first], r[k].buf[first], k + 1);
            start = r[0].ends[i];
        }
    }
    for (int k = 0; k < 3; k++) free(r[k].buf);
}

START_TEST(test_threads_linear) { check_threads(part_linear); }
END_TEST
START_TEST(test_threads_norms) { check_threads(part_norms); }
END_TEST
START_TEST(test_threads_norm_modulate) { check_threads(part_norm_modulate); }
END_TEST
START_TEST(test_threads_activations) { check_threads(part_activations); }
END_TEST
START_TEST(test_threads_attention) { check_threads(part_attention); }
END_TEST
START_TEST(test_threads_patches) { check_threads(part_patches); }
END_TEST
START_TEST(test_threads_time) { check_threads(part_time); }
END_TEST
START_TEST(test_threads_flow) { check_threads(part_flow); }
END_TEST

static void one_thread(void) { omp_set_num_threads(1); }

// One test case per layer and direction, so that `make grade`
// (scripts/grade.sh) runs the checks of one exercise by name (CK_RUN_CASE).
static void layer_case(Suite *s, const char *name, const TTest *const *tests) {
    tcase_add_checked_fixture(add_tests(s, name, 20, tests), one_thread, NULL);
}

int main(void) {
    Suite *s = suite_create("layers");
    layer_case(s, "linear", TESTS(test_linear_grad_bias, test_linear_grad_nobias, test_linear_matches_naive));
    layer_case(s, "norm_forward", TESTS(test_norm_statistics, test_norm_zero_row));
    layer_case(s, "norm_backward", TESTS(test_layernorm_grad, test_rmsnorm_grad, test_rmsnorm_gain_grad));
    layer_case(s, "norm_modulate_grad", TESTS(test_layernorm_modulate_grad, test_rmsnorm_modulate_grad));
    layer_case(s, "modulate", TESTS(test_modulate_grad));
    layer_case(s, "norm_modulate", TESTS(test_norm_modulate_matches_parts));
    layer_case(s, "activation_forward", TESTS(test_activation_values));
    layer_case(s, "activation_backward", TESTS(test_gelu_grad, test_silu_grad, test_swiglu_grad));
    layer_case(s, "rope_forward", TESTS(test_rope_tables));
    layer_case(s, "rope_backward", TESTS(test_rope_grad));
    layer_case(s, "qk_norm", TESTS(test_qk_norm_grad));
    layer_case(s, "attention", TESTS(test_attention_grad_plain, test_attention_grad_qknorm, test_attention_grad_rope,
                                     test_attention_grad_both));
    layer_case(s, "patchify", TESTS(test_patchify_order, test_patchify_roundtrip));
    layer_case(s, "unpatchify", TESTS(test_unpatchify_order, test_patchify_roundtrip));
    layer_case(s, "pos_add", TESTS(test_pos_add_grad));
    layer_case(s, "time_embedding", TESTS(test_timestep_embedding, test_timestep_angle_in_double));
    layer_case(s, "flow_loss", TESTS(test_flow_loss_values));
    layer_case(s, "flow_loss_grad", TESTS(test_flow_loss_grad));
    layer_case(s, "logit_normal", TESTS(test_logit_normal_times));
    layer_case(s, "ema_update", TESTS(test_ema_update));
    layer_case(s, "heun_step", TESTS(test_heun_step));
    layer_case(s, "softmax_forward", TESTS(test_softmax_forward));
    layer_case(s, "softmax_backward", TESTS(test_softmax_backward));
    // every layer on 1, 2 and 3 threads, one case per exercise's part (`make grade`'s threads check);
    // RMSNorm's rows run in the fused norm and in QK-norm too
    add_tests(s, "threads_linear", 20, TESTS(test_threads_linear));
    add_tests(s, "threads_norms", 20, TESTS(test_threads_norms, test_threads_norm_modulate, test_threads_attention));
    add_tests(s, "threads_norm_modulate", 20, TESTS(test_threads_norm_modulate));
    add_tests(s, "threads_activations", 20, TESTS(test_threads_activations));
    add_tests(s, "threads_attention", 20, TESTS(test_threads_attention));
    add_tests(s, "threads_patches", 20, TESTS(test_threads_patches));
    add_tests(s, "threads_time", 20, TESTS(test_threads_time));
    add_tests(s, "threads_flow", 20, TESTS(test_threads_flow));
    return run_suite(s);
}
