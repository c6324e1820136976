// test_rmsnorm.c: rmsnorm_forward / rmsnorm_backward of common/nn/layers.c.
// The formula, RMS 1 per token, an all-zero token, the gain, the gradients;
// and the step's figures (figures.c), with gnuplot and without.
#include "testutil.h"
#include "figures.h"
#include "io/figure.h"
#include "io/paths.h"
#include "nn/layers.h"

#define EPS 1e-6f

// y (R, D) from the formula in double: x / sqrt(mean(x²) + eps) · gain.
static void reference(double *y, const float *x, const float *gain, int R, int D) {
    for (int r = 0; r < R; r++) {
        double ms = 0.0;
        for (int i = 0; i < D; i++) ms += (double)x[r * D + i] * x[r * D + i];
        double s = 1.0 / sqrt(ms / D + EPS);
        for (int i = 0; i < D; i++) y[r * D + i] = x[r * D + i] * s * (gain ? gain[i] : 1.0);
    }
}

// Tokens with a non-zero mean, 3·N(0,1) + 1, as in main.c.
static void shifted_tokens(float *x, int n, unsigned long long seed) {
    fill_normal(x, n, 3.0f, seed);
    for (int i = 0; i < n; i++) x[i] += 1.0f;
}

START_TEST(test_matches_formula) {
    // (4, 64, 128) like the program, plus an odd width so no loop relies on
    // D being a multiple of a vector length.
    int shapes[2][2] = { { 4 * 64, 128 }, { 7, 33 } };
    for (int s = 0; s < 2; s++) {
        int R = shapes[s][0], D = shapes[s][1];
        float *x = alloc_floats(R * D), *y = alloc_floats(R * D), *rstd = alloc_floats(R);
        double *ref = malloc(sizeof(double) * R * D);
        shifted_tokens(x, R * D, 1 + s);
        rmsnorm_forward(y, rstd, x, NULL, R, D, EPS);
        reference(ref, x, NULL, R, D);
        for (int i = 0; i < R * D; i++)
            ck_assert_msg(fabs(y[i] - ref[i]) <= 1e-6 * fmax(1.0, fabs(ref[i])),
                          "R=%d D=%d element %d: %g vs %g", R, D, i, y[i], ref[i]);
        // the saved statistic is the reciprocal RMS that backward needs
        for (int r = 0; r < R; r++) {
            double ms = 0.0;
            for (int i = 0; i < D; i++) ms += (double)x[r * D + i] * x[r * D + i];
            double want = 1.0 / sqrt(ms / D + EPS);
            ck_assert_msg(fabs(rstd[r] - want) <= 1e-6 * want, "rstd[%d] %g vs %g", r, rstd[r], want);
        }
        free(x); free(y); free(rstd); free(ref);
    }
}
END_TEST

START_TEST(test_rms_one_without_gain) {
    int R = 256, D = 128;
    float *x = alloc_floats(R * D), *y = alloc_floats(R * D), *rstd = alloc_floats(R);
    shifted_tokens(x, R * D, 2);
    rmsnorm_forward(y, rstd, x, NULL, R, D, EPS);
    double all_mean = 0.0;
    for (int r = 0; r < R; r++) {
        double ms = 0.0;
        for (int i = 0; i < D; i++) { ms += (double)y[r * D + i] * y[r * D + i]; all_mean += y[r * D + i]; }
        ck_assert_msg(fabs(sqrt(ms / D) - 1.0) <= 1e-4, "token %d has rms %.6f", r, sqrt(ms / D));
    }
    // and it does NOT centre: the outputs keep the inputs' positive mean
    // (about 1/sqrt(10) here; a centring norm would give 0 ± 0.01)
    all_mean /= (double)R * D;
    ck_assert_msg(all_mean > 0.2, "mean output %.4f: RMSNorm should not centre", all_mean);
    free(x); free(y); free(rstd);
}
END_TEST

START_TEST(test_zero_token_gives_zeros) {
    // Row 1 is all zeros: mean(x²) = 0, and only eps keeps 1/sqrt() finite.
    int R = 3, D = 16;
    float *x = alloc_floats(R * D), *y = alloc_floats(R * D), *rstd = alloc_floats(R);
    float *g = alloc_floats(D), *dy = alloc_floats(R * D), *dx = alloc_floats(R * D), *dg = alloc_floats(D);
    fill_normal(x, R * D, 1.0f, 3);
    memset(x + D, 0, D * sizeof(float));
    fill_normal(g, D, 1.0f, 4);
    fill_normal(dy, R * D, 1.0f, 5);
    rmsnorm_forward(y, rstd, x, g, R, D, EPS);
    ck_assert(isfinite(rstd[1]));
    for (int i = 0; i < D; i++) ck_assert_msg(y[D + i] == 0.0f, "zero token gave %g", y[D + i]);
    for (int i = 0; i < R * D; i++) ck_assert(isfinite(y[i]));
    // the backward pass must stay finite there too
    rmsnorm_backward(dx, dg, dy, x, rstd, g, R, D);
    for (int i = 0; i < R * D; i++) ck_assert(isfinite(dx[i]));
    for (int i = 0; i < D; i++) ck_assert(isfinite(dg[i]));
    free(x); free(y); free(rstd); free(g); free(dy); free(dx); free(dg);
}
END_TEST

START_TEST(test_gain) {
    int R = 10, D = 24;
    float *x = alloc_floats(R * D), *y = alloc_floats(R * D), *y1 = alloc_floats(R * D);
    float *rstd = alloc_floats(R), *g = alloc_floats(D), *ones = alloc_floats(D);
    double *ref = malloc(sizeof(double) * R * D);
    shifted_tokens(x, R * D, 6);
    fill_normal(g, D, 1.0f, 7);
    for (int i = 0; i < D; i++) ones[i] = 1.0f;
    rmsnorm_forward(y, rstd, x, g, R, D, EPS);
    reference(ref, x, g, R, D);
    for (int i = 0; i < R * D; i++)
        ck_assert_msg(fabs(y[i] - ref[i]) <= 1e-6 * fmax(1.0, fabs(ref[i])), "gain: %g vs %g", y[i], ref[i]);
    // a gain of ones is the same as no gain, bit for bit
    rmsnorm_forward(y, rstd, x, ones, R, D, EPS);
    rmsnorm_forward(y1, rstd, x, NULL, R, D, EPS);
    ck_assert(memcmp(y, y1, sizeof(float) * R * D) == 0);
    free(x); free(y); free(y1); free(rstd); free(g); free(ones); free(ref);
}
END_TEST

// ---------------------------------------------------------------------------
// Gradient check: f = Σ rmsnorm(x; gain) · w for fixed random w.
typedef struct {
    int R, D;
    float *x, *gain, *w, *y, *rstd;
} Ctx;

static double f_rms(void *p) {
    Ctx *c = p;
    rmsnorm_forward(c->y, c->rstd, c->x, c->gain, c->R, c->D, EPS);
    return dot_fd(c->y, c->w, (size_t)c->R * c->D);
}

static void check_grads(int with_gain) {
    Ctx c = { .R = 5, .D = 12 };
    int n = c.R * c.D;
    c.x = alloc_floats(n); c.w = alloc_floats(n); c.y = alloc_floats(n); c.rstd = alloc_floats(c.R);
    c.gain = with_gain ? alloc_floats(c.D) : NULL;
    shifted_tokens(c.x, n, 8);
    fill_normal(c.w, n, 1.0f, 9);
    if (with_gain) { fill_normal(c.gain, c.D, 0.5f, 10); for (int i = 0; i < c.D; i++) c.gain[i] += 1.0f; }
    float *dx = alloc_floats(n), *dg = alloc_floats(c.D);
    f_rms(&c);   // fills rstd
    rmsnorm_backward(dx, with_gain ? dg : NULL, c.w, c.x, c.rstd, c.gain, c.R, c.D);
    grad_check(with_gain ? "rmsnorm dx (gain)" : "rmsnorm dx", f_rms, &c, c.x, dx, n, 0);
    if (with_gain) grad_check("rmsnorm dgain", f_rms, &c, c.gain, dg, c.D, 0);
    free(c.x); free(c.w); free(c.y); free(c.rstd); free(c.gain); free(dx); free(dg);
}

START_TEST(test_grad_no_gain) { check_grads(0); }
END_TEST
START_TEST(test_grad_gain) { check_grads(1); }
END_TEST

START_TEST(test_backward_accumulates) {
    // Backward adds (+=) into dinp and dgain: running it twice doubles them.
    int R = 4, D = 8, n = R * D;
    float *x = alloc_floats(n), *y = alloc_floats(n), *rstd = alloc_floats(R), *g = alloc_floats(D);
    float *dy = alloc_floats(n), *dx1 = alloc_floats(n), *dx2 = alloc_floats(n);
    float *dg1 = alloc_floats(D), *dg2 = alloc_floats(D);
    shifted_tokens(x, n, 11);
    fill_normal(g, D, 1.0f, 12);
    fill_normal(dy, n, 1.0f, 13);
    rmsnorm_forward(y, rstd, x, g, R, D, EPS);
    rmsnorm_backward(dx1, dg1, dy, x, rstd, g, R, D);
    rmsnorm_backward(dx2, dg2, dy, x, rstd, g, R, D);
    rmsnorm_backward(dx2, dg2, dy, x, rstd, g, R, D);
    for (int i = 0; i < n; i++) ck_assert(fabsf(dx2[i] - 2 * dx1[i]) <= 1e-5f * fmaxf(1, fabsf(dx1[i])));
    for (int i = 0; i < D; i++) ck_assert(fabsf(dg2[i] - 2 * dg1[i]) <= 1e-5f * fmaxf(1, fabsf(dg1[i])));
    free(x); free(y); free(rstd); free(g); free(dy); free(dx1); free(dx2); free(dg1); free(dg2);
}
END_TEST

// ---------------------------------------------------------------------------
// The figures. Each test works in its own folder under /tmp.
static const char *const FIGURES[2] = { "step2_norm_outputs", "step2_norm_times" };
#define PROGRAM "step2_rmsnorm/step2_rmsnorm"

START_TEST(test_figures_drawn) {
    if (!gnuplot_or_skip("test_figures_drawn")) return;
    char dir[256], err[512];
    tmpdir_make(dir, sizeof dir, "rmsnorm");
    int R = 16, D = 32, n = R * D;
    float *x = alloc_floats(n), *y_ln = alloc_floats(n), *y_rms = alloc_floats(n);
    float *mean = alloc_floats(R), *rstd = alloc_floats(R);
    shifted_tokens(x, n, 14);
    layernorm_forward(y_ln, mean, rstd, x, R, D, EPS);
    rmsnorm_forward(y_rms, rstd, x, NULL, R, D, EPS);
    int rc = figure_norm_outputs(dir, y_ln, y_rms, n, err, sizeof err);
    ck_assert_msg(rc == 0, "norm outputs figure: %s", err);
    NormTimings t = { .R = R, .D = D, .threads = 1, .rounds = 3, .ms = { 2.0, 0.5, 1.5, 1.2 } };
    rc = figure_norm_times(dir, &t, err, sizeof err);
    ck_assert_msg(rc == 0, "norm times figure: %s", err);
    check_figures_drawn(dir, FIGURES, 2);
    free(x); free(y_ln); free(y_rms); free(mean); free(rstd);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_figures_not_drawn) {
    const char *const want[] = { "1. What each norm does", "3. Time per call", "try it:", NULL };
    check_figures_not_drawn(PROGRAM, "--rounds 1", "step2_rmsnorm", FIGURES, 2, want);
}
END_TEST

int main(void) {
    Suite *s = suite_create("rmsnorm");
    add_tests(s, "core", 0, TESTS(test_matches_formula, test_rms_one_without_gain, test_zero_token_gives_zeros,
                                  test_gain, test_grad_no_gain, test_grad_gain, test_backward_accumulates));
    add_tests(s, "figures", 60, TESTS(test_figures_drawn, test_figures_not_drawn));
    return run_suite(s);
}
