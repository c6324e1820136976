// test_qknorm.c: QK-norm. The QueryKeyNorm interface (qk_norm_make,
// qk_norm_forward, qk_norm_backward), the logit table, the x10
// weights check, the bound √d, and gradients through attention with QK-norm;
// and the step's figures (figures.c), with gnuplot and without.
#include "testutil.h"
#include "figures.h"
#include "io/figure.h"
#include "io/paths.h"
#include "nn/layers.h"

#define EPS 1e-6f

// Largest |q·k|/√hd of one head and the mean over queries of the largest
// softmax weight, in double. q, k (L, hd).
static void score_stats(const float *q, const float *k, int L, int hd, double *max_abs,
                        double *mean_top) {
    double mx_abs = 0.0, top = 0.0;
    double *row = malloc(sizeof(double) * L);
    for (int i = 0; i < L; i++) {
        double mx = -INFINITY, sum = 0.0;
        for (int j = 0; j < L; j++) {
            row[j] = dot_fd(q + i * hd, k + j * hd, hd) / sqrt((double)hd);
            if (row[j] > mx) mx = row[j];
            if (fabs(row[j]) > mx_abs) mx_abs = fabs(row[j]);
        }
        for (int j = 0; j < L; j++) sum += exp(row[j] - mx);
        top += 1.0 / sum;
    }
    free(row);
    *max_abs = mx_abs;
    *mean_top = top / L;
}

static float *ones(int n) {
    float *g = alloc_floats(n);
    for (int i = 0; i < n; i++) g[i] = 1.0f;
    return g;
}

// score_stats of one head's q, k (L, hd) multiplied by scale: without
// QK-norm into raw / raw_top, and with it (gains at 1) into normed /
// normed_top.
static void stats_at_scale(const float *q, const float *k, int L, int hd, double scale, double *raw,
                           double *raw_top, double *normed, double *normed_top) {
    int n = L * hd;
    float *qs = alloc_floats(n), *ks = alloc_floats(n), *qn = alloc_floats(n), *kn = alloc_floats(n);
    float *r1 = alloc_floats(L), *r2 = alloc_floats(L), *g1 = ones(hd), *g2 = ones(hd);
    QueryKeyNorm m = qk_norm_make(hd, EPS, g1, g2);
    for (int i = 0; i < n; i++) { qs[i] = scale * q[i]; ks[i] = scale * k[i]; }
    qk_norm_forward(&m, qn, kn, r1, r2, qs, ks, 1, 1, L);
    score_stats(qs, ks, L, hd, raw, raw_top);
    score_stats(qn, kn, L, hd, normed, normed_top);
    free(qs); free(ks); free(qn); free(kn); free(r1); free(r2); free(g1); free(g2);
}

// ---------------------------------------------------------------------------
START_TEST(test_interface) {
    // Built from head_dim and epsilon (plus the two gains it normalises with).
    int N = 2, H = 3, L = 5, hd = 8, n = N * H * L * hd;
    float *qg = alloc_floats(hd), *kg = alloc_floats(hd);
    fill_normal(qg, hd, 1.0f, 1);
    fill_normal(kg, hd, 1.0f, 2);
    QueryKeyNorm m = qk_norm_make(hd, EPS, qg, kg);
    ck_assert_int_eq(m.head_dim, hd);
    ck_assert(m.eps == EPS);
    ck_assert_ptr_eq(m.q_gain, qg);
    ck_assert_ptr_eq(m.k_gain, kg);

    // Takes q and k of shape (N, heads, L, head_dim), each vector at its own
    // scale, and returns both normalised, same shape.
    float *q = alloc_floats(n), *k = alloc_floats(n), *qo = alloc_floats(n), *ko = alloc_floats(n);
    float *qr = alloc_floats(N * H * L), *kr = alloc_floats(N * H * L);
    fill_normal(q, n, 1.0f, 3);
    fill_normal(k, n, 1.0f, 4);
    for (int v = 0; v < N * H * L; v++)
        for (int c = 0; c < hd; c++) { q[v * hd + c] *= powf(10.0f, v % 7 - 3); k[v * hd + c] *= 1.0f + v; }
    qk_norm_forward(&m, qo, ko, qr, kr, q, k, N, H, L);
    for (int v = 0; v < N * H * L; v++) {
        const float *src[2] = { q + v * hd, k + v * hd }, *out[2] = { qo + v * hd, ko + v * hd };
        const float *gain[2] = { qg, kg }, *rstd[2] = { qr, kr };
        for (int s = 0; s < 2; s++) {
            double ms = dot_fd(src[s], src[s], hd) / hd, r = 1.0 / sqrt(ms + EPS);
            ck_assert_msg(fabs(rstd[s][v] - r) <= 1e-6 * r, "rstd of vector %d", v);
            for (int c = 0; c < hd; c++) {
                // the gain is indexed by channel only: the same for every head
                double want = src[s][c] * r * gain[s][c];
                ck_assert_msg(fabs(out[s][c] - want) <= 1e-5 * fmax(1.0, fabs(want)),
                              "%s vector %d channel %d: %g vs %g", s ? "k" : "q", v, c, out[s][c], want);
            }
        }
    }
    // Gains shared by heads: put head 0's q vectors into head 2 -> same output.
    memcpy(q + 2 * L * hd, q, sizeof(float) * L * hd);
    qk_norm_forward(&m, qo, ko, qr, kr, q, k, N, H, L);
    ck_assert(memcmp(qo + 2 * L * hd, qo, sizeof(float) * L * hd) == 0);
    free(qg); free(kg); free(q); free(k); free(qo); free(ko); free(qr); free(kr);
}
END_TEST

START_TEST(test_logit_table) {
    // Scores grow with the square of the scale and softmax turns one-hot;
    // with QK-norm they stay put.
    int L = 64, hd = 32, n = L * hd;
    float *q = alloc_floats(n), *k = alloc_floats(n);
    fill_normal(q, n, 1.0f, 5);
    fill_normal(k, n, 1.0f, 6);
    double raw[3], raw_top[3], nrm[3], nrm_top[3];
    int growth[3] = { 1, 4, 16 };
    for (int gi = 0; gi < 3; gi++)
        stats_at_scale(q, k, L, hd, growth[gi], &raw[gi], &raw_top[gi], &nrm[gi], &nrm_top[gi]);
    for (int gi = 1; gi < 3; gi++) {
        double sq = (double)growth[gi] * growth[gi];
        ck_assert_msg(fabs(raw[gi] / raw[0] - sq) <= 1e-4 * sq, "raw logits grew x%g, not x%g",
                      raw[gi] / raw[0], sq);
        ck_assert_msg(fabs(nrm[gi] - nrm[0]) <= 1e-4 * nrm[0], "QK-norm logits moved: %g vs %g",
                      nrm[gi], nrm[0]);
        ck_assert(fabs(nrm_top[gi] - nrm_top[0]) <= 1e-4);
    }
    ck_assert_msg(raw_top[0] < 0.2, "x1 attention should be spread out (%g)", raw_top[0]);
    ck_assert_msg(raw_top[2] > 0.99, "x16 attention should be one-hot (%g)", raw_top[2]);
    ck_assert_msg(nrm_top[2] < 0.2, "QK-norm attention should stay spread out (%g)", nrm_top[2]);
    free(q); free(k);
}
END_TEST

// ---------------------------------------------------------------------------
// The x10 weights check: proj(attention(qkv(x))) without biases; multiply
// the query and key projection weights (the first two D-row slices of the
// qkv weight) by 10.
static void attention_layer(float *out, const float *x, const float *w_qkv, const float *w_proj,
                            const float *qg, const float *kg, int N, int L, int D, int H) {
    float *qkv = alloc_floats((size_t)N * L * 3 * D), *a = alloc_floats((size_t)N * L * D);
    float *mem = alloc_floats(attention_cache_floats(N, L, D, H, qg != NULL));
    AttentionCache c;
    attention_cache_init(&c, mem, N, L, D, H, qg != NULL);
    linear_forward(qkv, x, w_qkv, NULL, N * L, D, 3 * D);
    attention_forward(a, &c, qkv, qg, kg, EPS, NULL, NULL, N, L, D, H);
    linear_forward(out, a, w_proj, NULL, N * L, D, D);
    free(qkv); free(a); free(mem);
}

static double x10_change(int qk_norm, int random_gains) {
    int N = 2, L = 10, D = 64, H = 2, hd = D / H;   // two sequences of ten tokens
    size_t nx = (size_t)N * L * D;
    float *x = alloc_floats(nx), *w = alloc_floats(3 * D * D), *w10 = alloc_floats(3 * D * D);
    float *wp = alloc_floats(D * D), *before = alloc_floats(nx), *after = alloc_floats(nx);
    float *qg = ones(hd), *kg = ones(hd);
    if (random_gains) { fill_normal(qg, hd, 1.0f, 7); fill_normal(kg, hd, 1.0f, 8); }
    fill_normal(x, nx, 1.0f, 9);
    fill_normal(w, 3 * D * D, 1.0f / sqrtf(D), 10);
    fill_normal(wp, D * D, 1.0f / sqrtf(D), 11);
    memcpy(w10, w, sizeof(float) * 3 * D * D);
    for (int i = 0; i < 2 * D * D; i++) w10[i] *= 10.0f;
    attention_layer(before, x, w, wp, qk_norm ? qg : NULL, qk_norm ? kg : NULL, N, L, D, H);
    attention_layer(after, x, w10, wp, qk_norm ? qg : NULL, qk_norm ? kg : NULL, N, L, D, H);
    double worst = 0.0;
    for (size_t i = 0; i < nx; i++) worst = fmax(worst, fabs((double)after[i] - before[i]));
    free(x); free(w); free(w10); free(wp); free(before); free(after); free(qg); free(kg);
    return worst;
}

START_TEST(test_x10_weights) {
    double without = x10_change(0, 0), with = x10_change(1, 0), with_g = x10_change(1, 1);
    ck_assert_msg(with < 1e-4, "with QK-norm the output moved by %g", with);
    ck_assert_msg(with_g < 1e-4, "with QK-norm and learned gains the output moved by %g", with_g);
    ck_assert_msg(without > 1e-2, "without QK-norm the output should change (moved %g)", without);
}
END_TEST

// ---------------------------------------------------------------------------
START_TEST(test_bound) {
    // Gains at 1: |q̂·k̂|/√d <= √d at any input scale, reached when k = q.
    int L = 64, hd = 32, n = L * hd;
    float *q = alloc_floats(n), *k = alloc_floats(n), *qn = alloc_floats(n), *kn = alloc_floats(n);
    float *r1 = alloc_floats(L), *r2 = alloc_floats(L), *g1 = ones(hd), *g2 = ones(hd);
    QueryKeyNorm m = qk_norm_make(hd, EPS, g1, g2);
    double bound = sqrt((double)hd), mx, top;
    Rng rng; rng_seed(&rng, 12);
    float scales[5] = { 1e-6f, 1e-3f, 1.0f, 1e3f, 1e6f };
    for (int s = 0; s < 6; s++) {
        for (int i = 0; i < n; i++) {
            float a = rng_normal(&rng), b = rng_normal(&rng);
            if (s < 5) { q[i] = a * scales[s]; k[i] = b * scales[s]; }
            else {   // every value its own scale
                q[i] = a * powf(10.0f, rng_uniform_range(&rng, -6, 6));
                k[i] = b * powf(10.0f, rng_uniform_range(&rng, -6, 6));
            }
        }
        qk_norm_forward(&m, qn, kn, r1, r2, q, k, 1, 1, L);
        score_stats(qn, kn, L, hd, &mx, &top);
        ck_assert_msg(mx <= bound * (1 + 1e-5), "case %d: logit %g above the bound %g", s, mx, bound);
    }
    // the worst case: every key is its query
    for (int i = 0; i < n; i++) k[i] = q[i] = 1e3f * rng_normal(&rng);
    qk_norm_forward(&m, qn, kn, r1, r2, q, k, 1, 1, L);
    score_stats(qn, kn, L, hd, &mx, &top);
    ck_assert_msg(mx <= bound * (1 + 1e-5), "k = q: logit %g above the bound %g", mx, bound);
    ck_assert_msg(mx >= bound * (1 - 1e-4), "k = q should reach the bound: %g vs %g", mx, bound);

    // attention_forward reports the same bound through its max_logit
    int D = hd, H = 1;
    float *qkv = alloc_floats(3 * n), *out = alloc_floats(n);
    float *mem = alloc_floats(attention_cache_floats(1, L, D, H, 1));
    AttentionCache c;
    attention_cache_init(&c, mem, 1, L, D, H, 1);
    for (int l = 0; l < L; l++)
        for (int j = 0; j < 3 * D; j++) qkv[l * 3 * D + j] = 1e6f * rng_normal(&rng);
    attention_forward(out, &c, qkv, g1, g2, EPS, NULL, NULL, 1, L, D, H);
    ck_assert_msg(c.max_logit <= bound * (1 + 1e-5), "attention max_logit %g above %g", c.max_logit, bound);
    attention_forward(out, &c, qkv, NULL, NULL, EPS, NULL, NULL, 1, L, D, H);
    ck_assert_msg(c.max_logit > 1e6, "without QK-norm the logits are huge (%g)", c.max_logit);
    free(q); free(k); free(qn); free(kn); free(r1); free(r2); free(g1); free(g2);
    free(qkv); free(out); free(mem);
}
END_TEST

// ---------------------------------------------------------------------------
// Gradients of qk_norm_backward: f = Σ q̂·wq + Σ k̂·wk.
typedef struct {
    QueryKeyNorm m;
    int N, H, L, n;
    float *q, *k, *qo, *ko, *qr, *kr, *wq, *wk;
} QkCtx;

static double f_qk(void *p) {
    QkCtx *c = p;
    qk_norm_forward(&c->m, c->qo, c->ko, c->qr, c->kr, c->q, c->k, c->N, c->H, c->L);
    return dot_fd(c->qo, c->wq, c->n) + dot_fd(c->ko, c->wk, c->n);
}

START_TEST(test_grad_qk_norm) {
    int hd = 8;
    QkCtx c = { .N = 2, .H = 2, .L = 3 };
    c.n = c.N * c.H * c.L * hd;
    float *qg = alloc_floats(hd), *kg = alloc_floats(hd);
    fill_normal(qg, hd, 1.0f, 13);
    fill_normal(kg, hd, 1.0f, 14);
    c.m = qk_norm_make(hd, EPS, qg, kg);
    c.q = alloc_floats(c.n); c.k = alloc_floats(c.n); c.qo = alloc_floats(c.n); c.ko = alloc_floats(c.n);
    c.qr = alloc_floats(c.n / hd); c.kr = alloc_floats(c.n / hd);
    c.wq = alloc_floats(c.n); c.wk = alloc_floats(c.n);
    fill_normal(c.q, c.n, 1.0f, 15);
    fill_normal(c.k, c.n, 2.0f, 16);
    fill_normal(c.wq, c.n, 1.0f, 17);
    fill_normal(c.wk, c.n, 1.0f, 18);
    float *dq = alloc_floats(c.n), *dk = alloc_floats(c.n), *dqg = alloc_floats(hd), *dkg = alloc_floats(hd);
    f_qk(&c);
    qk_norm_backward(&c.m, dq, dk, dqg, dkg, c.wq, c.wk, c.q, c.k, c.qr, c.kr, c.N, c.H, c.L);
    grad_check("qk_norm dq", f_qk, &c, c.q, dq, c.n, 0);
    grad_check("qk_norm dk", f_qk, &c, c.k, dk, c.n, 0);
    grad_check("qk_norm dq_gain", f_qk, &c, qg, dqg, hd, 0);
    grad_check("qk_norm dk_gain", f_qk, &c, kg, dkg, hd, 0);
    free(qg); free(kg); free(c.q); free(c.k); free(c.qo); free(c.ko); free(c.qr); free(c.kr);
    free(c.wq); free(c.wk); free(dq); free(dk); free(dqg); free(dkg);
}
END_TEST

// Gradients through the whole attention core with QK-norm on:
// f = Σ attention(qkv; gains) · w, checked in qkv and in both gains.
typedef struct {
    int N, L, D, H;
    float *qkv, *qg, *kg, *out, *w, *mem;
    AttentionCache c;
} AttCtx;

static double f_att(void *p) {
    AttCtx *a = p;
    attention_forward(a->out, &a->c, a->qkv, a->qg, a->kg, EPS, NULL, NULL, a->N, a->L, a->D, a->H);
    return dot_fd(a->out, a->w, (size_t)a->N * a->L * a->D);
}

START_TEST(test_grad_attention_qk_norm) {
    AttCtx a = { .N = 2, .L = 5, .D = 16, .H = 2 };
    int hd = a.D / a.H, nqkv = a.N * a.L * 3 * a.D, nout = a.N * a.L * a.D;
    a.qkv = alloc_floats(nqkv); a.out = alloc_floats(nout); a.w = alloc_floats(nout);
    a.qg = alloc_floats(hd); a.kg = alloc_floats(hd);
    a.mem = alloc_floats(attention_cache_floats(a.N, a.L, a.D, a.H, 1));
    attention_cache_init(&a.c, a.mem, a.N, a.L, a.D, a.H, 1);
    fill_normal(a.qkv, nqkv, 1.0f, 19);
    fill_normal(a.w, nout, 1.0f, 20);
    fill_normal(a.qg, hd, 0.5f, 21);
    fill_normal(a.kg, hd, 0.5f, 22);
    for (int i = 0; i < hd; i++) { a.qg[i] += 1.0f; a.kg[i] += 1.0f; }
    float *dqkv = alloc_floats(nqkv), *dqg = alloc_floats(hd), *dkg = alloc_floats(hd);
    float *scratch = alloc_floats(attention_backward_scratch_floats(a.N, a.L, a.D, a.H));
    f_att(&a);
    attention_backward(dqkv, dqg, dkg, a.w, &a.c, scratch, a.qg, a.kg, NULL, NULL, a.N, a.L, a.D, a.H, ADD_TO_DINP);
    grad_check("attention dqkv (qk_norm)", f_att, &a, a.qkv, dqkv, nqkv, 0);
    grad_check("attention dq_gain", f_att, &a, a.qg, dqg, hd, 0);
    grad_check("attention dk_gain", f_att, &a, a.kg, dkg, hd, 0);
    free(a.qkv); free(a.out); free(a.w); free(a.qg); free(a.kg); free(a.mem);
    free(dqkv); free(dqg); free(dkg); free(scratch);
}
END_TEST

// ---------------------------------------------------------------------------
// The figures. Each test works in its own folder under /tmp.
static const char *const FIGURES[2] = { "step3_logit_growth", "step3_attention_maps" };
#define PROGRAM "step3_qknorm/step3_qknorm"

START_TEST(test_figures_drawn) {
    if (!gnuplot_or_skip("test_figures_drawn")) return;
    char dir[256], err[512];
    tmpdir_make(dir, sizeof dir, "qknorm");
    // the largest logit of q, k (L, hd) at a few scales, without and with QK-norm
    int L = 8, hd = 4, n = L * hd;
    float *q = alloc_floats(n), *k = alloc_floats(n);
    fill_normal(q, n, 1.0f, 23);
    fill_normal(k, n, 1.0f, 24);
    LogitGrowth growth = { .n = 5, .head_dim = hd, .marks = { 1, 4, 16 } };
    double top;
    for (int i = 0; i < growth.n; i++) {
        growth.scale[i] = pow(10.0, i - 2);
        stats_at_scale(q, k, L, hd, growth.scale[i], &growth.raw[i], &top, &growth.normed[i], &top);
    }
    int rc = figure_logit_growth(dir, &growth, err, sizeof err);
    ck_assert_msg(rc == 0, "logit growth figure: %s", err);
    // six small attention maps: uniform rows, and one-hot ones
    float *weights = alloc_floats(6 * L * L);
    AttentionMaps maps = { .L = L, .growth = { 1, 4, 16 } };
    for (int b = 0; b < 6; b++) {
        float *a = weights + b * L * L;
        int one_hot = b == 1 || b == 2;   // without QK-norm at x4 and x16
        for (int i = 0; i < L; i++)
            for (int j = 0; j < L; j++) a[i * L + j] = one_hot ? (j == (i * 3) % L) : 1.0f / L;
        maps.weights[b / 3][b % 3] = a;
        maps.top[b / 3][b % 3] = one_hot ? 1.0 : 1.0 / L;
    }
    rc = figure_attention_maps(dir, &maps, err, sizeof err);
    ck_assert_msg(rc == 0, "attention maps figure: %s", err);
    check_figures_drawn(dir, FIGURES, 2);
    free(q); free(k); free(weights);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_figures_not_drawn) {
    const char *const want[] = { "1. Attention logits", "3. The bound", "try it:", NULL };
    check_figures_not_drawn(PROGRAM, "", "step3_qknorm", FIGURES, 2, want);
}
END_TEST

int main(void) {
    Suite *s = suite_create("qknorm");
    add_tests(s, "core", 0, TESTS(test_interface, test_logit_table, test_x10_weights, test_bound, test_grad_qk_norm,
                                  test_grad_attention_qk_norm));
    add_tests(s, "figures", 60, TESTS(test_figures_drawn, test_figures_not_drawn));
    return run_suite(s);
}
