// test_adamw.c: AdamW over several steps, against a plain transcription.
//
// On the first step from zero moments AdamW moves every weight by about
// lr·g/(|g|+ε), whatever β1 and β2 are: the bias corrections cancel the
// moments' (1−β) factors exactly. A one-step check therefore cannot see a
// wrong β or a broken recurrence; from step 2 on they matter. These tests run
// STEPS steps with a fresh random gradient each step (so the moments mix
// gradients that disagree) and compare, after every step, the weights and
// both moments with the update written out in double precision, as
// torch.optim.AdamW computes it:
//     p ← p − lr·wd·p
//     m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²
//     p ← p − lr · (m / (1−β1ᵗ)) / (√(v / (1−β2ᵗ)) + ε)
//
// Tolerances. The weights: |p − p_ref| ≤ ADAMW_TOL · lr, ADAMW_TOL = 1e-3,
// with lr = 5e-2 and weights of size 1..4, whose float32 rounding alone is
// 1e-7..5e-7, i.e. up to 1e-5 of lr. What the test must catch is far
// larger: with wd = 0.5 a missing weight decay leaves a weight of size ~1
// off by 0.5·lr per step, and a decay applied after the step instead of
// before it by lr·wd·(the step) ≈ 0.025·lr; a missing bias correction scales
// the first step by 0.1 (β1 side) or 30 (β2 side). The moments: within
// MOMENT_TOL = 1e-5 of their own scale (float32 rounding is 1e-7), so a
// wrong β1 or β2 fails at the first step, in the moment itself.
//
// The bias corrections in double. In float32, 1 − powf(β2, t) is off by up
// to half a float32 unit of 1, 3e-8, against a number of a few 1e-4 in the
// first steps (β2 = 0.9999: 1 − β2² is 2e-4): a relative error up to 1e-4
// (2.5e-5 at step 2 here), half of which reaches the step. In double the
// corrections are right to float32's rounding of the result. From weights
// of 0 (whose rounding is then negligible) and without decay, the steps
// must agree with the reference to BIAS_TOL = 5e-6 of lr: a correct body is
// within 1e-6 of lr, the float32 corrections are off by 2.5e-5 of lr.
#include <omp.h>
#include "testutil.h"
#include "nn/adamw.h"
#include "io/config_parse.h"
#include "nn/model.h"
#include "nn/train_step.h"

#define STEPS 6
#define ADAMW_TOL 1e-3
#define MOMENT_TOL 1e-5
#define BIAS_TOL 5e-6

// The reference: one AdamW step in double, on n values.
static void adamw_reference(double *p, const double *g, double *m, double *v, size_t n, int t,
                            double lr, double b1, double b2, double eps, double wd) {
    double bc1 = 1.0 - pow(b1, t), bc2 = 1.0 - pow(b2, t);
    for (size_t i = 0; i < n; i++) {
        p[i] -= lr * wd * p[i];
        m[i] = b1 * m[i] + (1.0 - b1) * g[i];
        v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
        p[i] -= lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps);
    }
}

// One tensor's state on both sides: ours in float, the reference in double.
typedef struct {
    size_t n;
    float *p, *g, *m, *v;
    double *rp, *rg, *rm, *rv;
} Pair;

static void pair_init(Pair *s, size_t n, const float *p0) {
    s->n = n;
    s->p = alloc_floats(n); s->g = alloc_floats(n); s->m = alloc_floats(n); s->v = alloc_floats(n);
    s->rp = calloc(n, sizeof(double)); s->rg = calloc(n, sizeof(double));
    s->rm = calloc(n, sizeof(double)); s->rv = calloc(n, sizeof(double));
    ck_assert(s->rp && s->rg && s->rm && s->rv);
    for (size_t i = 0; i < n; i++) { s->p[i] = p0[i]; s->rp[i] = p0[i]; }
}

static void pair_free(Pair *s) {
    free(s->p); free(s->g); free(s->m); free(s->v);
    free(s->rp); free(s->rg); free(s->rm); free(s->rv);
}

// Gradients of mixed sizes: most N(0, 1), some 1e-3 times smaller, some
// 1e3 times larger, so that ε, v's slow memory and the sign flips all act.
static void fill_gradient(float *g, double *rg, size_t n, unsigned long long seed) {
    fill_normal(g, n, 1.0f, seed);
    for (size_t i = 0; i < n; i++) {
        if (i % 7 == 3) g[i] *= 1e-3f;
        if (i % 11 == 5) g[i] *= 1e3f;
        rg[i] = g[i];
    }
}

static double max_abs(const double *x, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) if (fabs(x[i]) > s) s = fabs(x[i]);
    return s;
}

// Worst |ours − reference| of the weights, in units of lr, which must be
// at most tol; asserts the moments too. what names the tensor in messages.
static double compare_pair(const Pair *s, const char *what, int step, double lr, double tol) {
    double worst = 0.0, mscale = max_abs(s->rm, s->n), vscale = max_abs(s->rv, s->n);
    size_t at = 0;
    for (size_t i = 0; i < s->n; i++) {
        double e = fabs(s->p[i] - s->rp[i]) / lr;
        if (!(e <= worst)) { worst = e; at = i; }   // NaN sticks
        ck_assert_msg(fabs(s->m[i] - s->rm[i]) <= MOMENT_TOL * mscale,
                      "%s step %d: first moment m[%zu] got %.9g, expected %.9g (off by %.3g)", what, step, i,
                      s->m[i], s->rm[i], s->m[i] - s->rm[i]);
        ck_assert_msg(fabs(s->v[i] - s->rv[i]) <= MOMENT_TOL * vscale,
                      "%s step %d: second moment v[%zu] got %.9g, expected %.9g (off by %.3g)", what, step, i,
                      s->v[i], s->rv[i], s->v[i] - s->rv[i]);
    }
    ck_assert_msg(worst <= tol, "%s step %d: weight p[%zu] got %.9g, expected %.9g (off by %.3g·lr; "
                  "tolerance %.0e·lr)", what, step, at, s->p[at], s->rp[at], worst, tol);
    return worst;
}

// adamw_update on its own: a 2-D-like tensor with weight decay and a 1-D-like
// one without, STEPS steps.
START_TEST(test_adamw_update_matches_reference) {
    AdamWConfig c = { 5e-2f, 0.9f, 0.999f, 1e-8f, 0.5f };
    const size_t n[2] = { 96, 40 };
    const float wd[2] = { c.weight_decay, 0.0f };
    Pair s[2];
    for (int k = 0; k < 2; k++) {
        float *p0 = alloc_floats(n[k]);
        fill_normal(p0, n[k], 1.0f, 100 + k);
        pair_init(&s[k], n[k], p0);
        free(p0);
    }
    double worst[STEPS] = { 0 };
    for (int t = 1; t <= STEPS; t++)
        for (int k = 0; k < 2; k++) {
            fill_gradient(s[k].g, s[k].rg, n[k], 1000 + 10 * t + k);
            crash_context("adamw_update(p, g, m, v, n = %zu, t = %d, {lr %g, beta1 %g, beta2 %g, eps %g}, wd = %g)",
                          n[k], t, c.lr, c.beta1, c.beta2, c.eps, wd[k]);
            adamw_update(s[k].p, s[k].g, s[k].m, s[k].v, n[k], t, &c, wd[k]);
            adamw_reference(s[k].rp, s[k].rg, s[k].rm, s[k].rv, n[k], t, c.lr, c.beta1, c.beta2, c.eps, wd[k]);
            double e = compare_pair(&s[k], k == 0 ? "decayed tensor" : "tensor without decay", t, c.lr, ADAMW_TOL);
            if (e > worst[t - 1]) worst[t - 1] = e;
        }
    printf("adamw_update vs double reference, worst |p - ref| / lr per step:");
    for (int t = 0; t < STEPS; t++) printf(" %.1e", worst[t]);
    printf("\n");
    for (int k = 0; k < 2; k++) pair_free(&s[k]);
}
END_TEST

// The bias corrections in double (see the top of the file): β2 = 0.9999,
// weights from 0, no decay, STEPS steps.
START_TEST(test_adamw_bias_corrections_in_double) {
    AdamWConfig c = { 5e-2f, 0.9f, 0.9999f, 1e-8f, 0.0f };
    const size_t n = 64;
    float *p0 = alloc_floats(n);   // zeros
    Pair s;
    pair_init(&s, n, p0);
    double worst = 0.0;
    for (int t = 1; t <= STEPS; t++) {
        fill_gradient(s.g, s.rg, n, 3000 + t);
        crash_context("adamw_update(p, g, m, v, n = %zu, t = %d, {lr %g, beta1 %g, beta2 %g, eps %g}, wd = 0)",
                      n, t, c.lr, c.beta1, c.beta2, c.eps);
        adamw_update(s.p, s.g, s.m, s.v, n, t, &c, 0.0f);
        adamw_reference(s.rp, s.rg, s.rm, s.rv, n, t, c.lr, c.beta1, c.beta2, c.eps, 0.0);
        double e = compare_pair(&s, "beta2 = 0.9999 (1 - beta2^t is tiny: the bias corrections must be in "
                                "double)", t, c.lr, BIAS_TOL);
        if (e > worst) worst = e;
    }
    printf("adamw_update with beta2 = 0.9999 vs double reference, worst |p - ref| / lr: %.1e\n", worst);
    pair_free(&s);
    free(p0);
}
END_TEST

// The same bits on 1, 2 and 3 threads: a tensor big enough for the update's
// loop to split, three steps.
static float *adamw_on_threads(int threads, size_t n) {
    omp_set_num_threads(threads);
    AdamWConfig c = { 1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f };
    float *p = alloc_floats(n), *g = alloc_floats(n), *m = alloc_floats(n), *v = alloc_floats(n);
    double *rg = calloc(n, sizeof(double));
    ck_assert_ptr_nonnull(rg);
    fill_normal(p, n, 1.0f, 4000);
    for (int t = 1; t <= 3; t++) {
        fill_gradient(g, rg, n, 4000 + t);
        crash_context("adamw_update(p, g, m, v, n = %zu, t = %d, ..., wd = 0.1), on %d threads", n, t, threads);
        adamw_update(p, g, m, v, n, t, &c, 0.1f);
    }
    free(g); free(m); free(v); free(rg);
    return p;
}

START_TEST(test_adamw_threads) {
    const size_t n = 100003;   // > OMP_MIN_FLOATS, not a multiple of any vector width
    int threads_before = omp_get_max_threads();
    float *one = adamw_on_threads(1, n);
    for (int k = 2; k <= 3; k++) {
        float *p = adamw_on_threads(k, n);
        size_t diff = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (memcmp(&one[i], &p[i], sizeof(float)) != 0 && diff++ == 0) first = i;
        ck_assert_msg(diff == 0, "adamw_update: %zu of %zu weights differ between 1 and %d threads after 3 steps, "
                      "the first p[%zu]: %.9g on 1 thread, %.9g on %d", diff, n, k, first, one[first], p[first], k);
        free(p);
    }
    omp_set_num_threads(threads_before);
    free(one);
}
END_TEST

// train_adamw_step on a tiny model: every tensor, with the model's own rule
// for which tensors are decayed (two or more dimensions) checked against the
// reference applying weight decay exactly to the 2-D tensors.
START_TEST(test_train_adamw_step_decays_matrices_only) {
    Config cfg = config_default();
    const char *sets[] = { "img=8", "patch=4", "dim=16", "heads=2", "depth=1", "freq_dim=8", "norm=rmsnorm", NULL };
    char err[512];
    for (int i = 0; sets[i]; i++) ck_assert_msg(config_set(&cfg, sets[i], err, sizeof err) == 0, "%s", err);
    Model m;
    ck_assert_msg(model_build(&m, &cfg.model, err, sizeof err) == 0, "%s", err);
    // weights of size ~1 everywhere (not the initialisation's zero biases),
    // so that a decay applied to the wrong tensors moves them visibly
    fill_normal(m.params, m.n_params, 1.0f, 3);
    AdamWConfig opt = { 1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f };
    TrainState ts;
    ck_assert_int_eq(train_state_init(&ts, &m, 1, &opt, NULL), 0);
    Pair s;
    pair_init(&s, m.n_params, m.params);
    int n1 = 0, n2 = 0;
    for (int i = 0; i < m.n_tensors; i++) {
        if (m.tensors[i].ndim >= 2) n2++;
        else n1++;
    }
    ck_assert_msg(n1 > 0 && n2 > 0, "the tiny model should have 1-D and 2-D tensors (%d, %d)", n1, n2);
    double worst = 0.0;
    for (int t = 1; t <= STEPS; t++) {
        fill_gradient(m.grads, s.rg, m.n_params, 2000 + t);
        train_adamw_step(&ts);
        ck_assert_int_eq(ts.step, t);
        for (int i = 0; i < m.n_tensors; i++) {
            const ParamTensor *T = &m.tensors[i];
            size_t o = T->offset;
            double wd = T->ndim >= 2 ? opt.weight_decay : 0.0;
            adamw_reference(s.rp + o, s.rg + o, s.rm + o, s.rv + o, T->size, t, opt.lr, opt.beta1, opt.beta2,
                            opt.eps, wd);
            Pair view = { T->size, m.params + o, NULL, ts.adam_m + o, ts.adam_v + o,
                          s.rp + o, NULL, s.rm + o, s.rv + o };
            double e = compare_pair(&view, T->name, t, opt.lr, ADAMW_TOL);
            if (e > worst) worst = e;
        }
    }
    printf("train_adamw_step: %d tensors (%d decayed), %d steps, worst |p - ref| / lr %.1e\n",
           m.n_tensors, n2, STEPS, worst);
    pair_free(&s);
    train_state_free(&ts);
    model_free(&m);
}
END_TEST

// The gradient norm a training step reports (loss.tsv's grad_norm, the
// divergence check) is the L2 norm of every gradient: √Σg², recomputed here
// in long double after one step of a small model. Cheap and early, so that a
// norm without its square root (or squared twice) fails in the first second
// of `make check`.
START_TEST(test_step_reports_the_l2_norm) {
    Config c = config_default();
    c.model.dim = 16; c.model.depth = 1; c.model.heads = 2; c.model.freq_dim = 8; c.model.patch = 8;
    Model m;
    char err[256];
    ck_assert_msg(model_build(&m, &c.model, err, sizeof err) == 0, "%s", err);
    model_init_weights(&m, 1);
    fill_normal(m.params, m.n_params, 0.3f, 2);   // no zero-initialised layer: every gradient alive
    AdamWConfig opt = adamw_default(1e-3f);
    TrainState ts;
    ck_assert_int_eq(train_state_init(&ts, &m, 2, &opt, NULL), 0);
    float *x1 = alloc_floats(2 * 3 * 32 * 32);
    fill_normal(x1, 2 * 3 * 32 * 32, 0.5f, 3);
    Rng r;
    rng_seed(&r, 4);
    train_step(&ts, x1, NULL, &r);
    long double ss = 0;
    for (size_t i = 0; i < m.n_params; i++) ss += (long double)m.grads[i] * m.grads[i];
    double want = (double)sqrtl(ss);
    ck_assert_msg(want > 0.01 && want != 1.0, "a gradient norm of %g cannot tell a norm from its square", want);
    ck_assert_msg(fabs(ts.grad_norm - want) <= 1e-9 * want, "grad_norm %.12g, but sqrt(sum g^2) = %.12g",
                  ts.grad_norm, want);
    train_state_free(&ts);
    model_free(&m);
    free(x1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("adamw");
    // on its own for `make grade` (CK_RUN_CASE)
    add_tests(s, "update", 0, TESTS(test_adamw_update_matches_reference, test_adamw_bias_corrections_in_double));
    add_tests(s, "threads", 0, TESTS(test_adamw_threads));
    add_tests(s, "adamw", 0, TESTS(test_train_adamw_step_decays_matrices_only, test_step_reports_the_l2_norm));
    return run_suite(s);
}
