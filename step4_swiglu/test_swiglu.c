// test_swiglu.c: the claims of step 4, each as a test. The FFN counts at
// D = 128, the equal counts at D = 384 without biases, the rounding rule, the
// six whole-model counts of step 4's section 4, and SwiGLU's gating: its
// values and its gradient. And the figures: valid PNGs with gnuplot, a clear
// notice without.
#include "testutil.h"
#include "io/config_parse.h"
#include "io/figure.h"
#include "io/paths.h"
#include "nn/layers.h"
#include "nn/model.h"
#include "ffn.h"
#include "figures.h"

// cfg = the default with the given "key=value" settings applied.
static Config config_with(const char *const *sets, int n) {
    Config c = config_default();
    char err[512];
    for (int i = 0; i < n; i++)
        ck_assert_msg(config_set(&c, sets[i], err, sizeof err) == 0, "%s: %s", sets[i], err);
    return c;
}

// Parameters of block 0's FFN (tensors blocks.0.mlp.*), from model_build's
// table; only the biases (1-D tensors) if biases_only.
static size_t ffn_params(const Config *c, int biases_only) {
    Model m;
    char err[256];
    ck_assert_msg(model_build(&m, &c->model, err, sizeof err) == 0, "model_build: %s", err);
    size_t n = 0;
    for (int i = 0; i < m.n_tensors; i++)
        if (!strncmp(m.tensors[i].name, "blocks.0.mlp.", 13) && (!biases_only || m.tensors[i].ndim == 1))
            n += m.tensors[i].size;
    model_free(&m);
    return n;
}

START_TEST(test_ffn_counts_at_d128) {
    const char *g[] = { "mlp=gelu" }, *s[] = { "mlp=swiglu" };
    Config cg = config_with(g, 1), cs = config_with(s, 1);
    ck_assert_int_eq(cfg_mlp_hidden(&cg.model), 512);
    ck_assert_int_eq(cfg_mlp_hidden(&cs.model), 341);
    ck_assert_uint_eq(ffn_params(&cg, 0), 131712);   // 2 · 128 · 512 + 512 + 128
    ck_assert_uint_eq(ffn_params(&cs, 0), 131754);   // 3 · 128 · 341 + 2 · 341 + 128
    // the shapes, (out, in): w1 and w2 go up to 341, w3 comes back to 128
    Model m;
    char err[256];
    ck_assert_int_eq(model_build(&m, &cs.model, err, sizeof err), 0);
    const ParamTensor *w1 = model_find(&m, "blocks.0.mlp.w1.weight"), *w2 = model_find(&m, "blocks.0.mlp.w2.weight");
    const ParamTensor *w3 = model_find(&m, "blocks.0.mlp.w3.weight");
    ck_assert_ptr_nonnull(w1); ck_assert_ptr_nonnull(w2); ck_assert_ptr_nonnull(w3);
    ck_assert_int_eq(w1->shape[0], 341); ck_assert_int_eq(w1->shape[1], 128);
    ck_assert_int_eq(w2->shape[0], 341); ck_assert_int_eq(w2->shape[1], 128);
    ck_assert_int_eq(w3->shape[0], 128); ck_assert_int_eq(w3->shape[1], 341);
    ck_assert_ptr_null(model_find(&m, "blocks.0.mlp.fc1.weight"));
    model_free(&m);
}
END_TEST

START_TEST(test_gpt_rule_at_d384) {
    // A GPT-style MLP: D = 384, no biases, SwiGLU rounded to a multiple of 64.
    const char *g[] = { "dim=384", "depth=1", "bias=false", "mlp=gelu" };
    const char *s[] = { "dim=384", "depth=1", "bias=false", "mlp=swiglu", "mlp_multiple_of=64" };
    Config cg = config_with(g, 4), cs = config_with(s, 5);
    ck_assert_int_eq(cfg_mlp_hidden(&cg.model), 1536);
    ck_assert_int_eq(cfg_mlp_hidden(&cs.model), 1024);
    ck_assert_uint_eq(ffn_params(&cg, 0), 1179648);  // 2 · 384 · 1536
    ck_assert_uint_eq(ffn_params(&cs, 0), 1179648);  // 3 · 384 · 1024
    ck_assert_uint_eq(ffn_params(&cg, 1), 0);
    // With biases the counts part: SwiGLU has 512 more (2 · 1024 + 384 vs 1536 + 384).
    const char *gb[] = { "dim=384", "depth=1", "mlp=gelu" };
    const char *sb[] = { "dim=384", "depth=1", "mlp=swiglu", "mlp_multiple_of=64" };
    Config cgb = config_with(gb, 3), csb = config_with(sb, 4);
    ck_assert_uint_eq(ffn_params(&csb, 0) - ffn_params(&cgb, 0), 512);
}
END_TEST

START_TEST(test_rounding_rule) {
    // D = 512 asks for 2/3 · 4 · 512 = 1,365⅓: int() gives 1,365, a multiple of
    // 64 rounds it UP to 1,408 (never down: the layer keeps at least its share).
    const char *a[] = { "dim=512", "mlp=swiglu" };
    Config c = config_with(a, 2);
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1365);
    ck_assert_int_eq(config_set(&c, "mlp_multiple_of=64", NULL, 0), 0);
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1408);
    // 384 gives exactly 1,024, already a multiple: no rounding (and no
    // 1,023.999 from float arithmetic).
    const char *b[] = { "dim=384", "mlp=swiglu", "mlp_multiple_of=64" };
    c = config_with(b, 3);
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 1024);
    // D = 128: 341 by default, 384 when rounded to 64.
    const char *d[] = { "mlp=swiglu", "mlp_multiple_of=64" };
    c = config_with(d, 2);
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 384);
    // The rule is SwiGLU's: GELU stays 4·D whatever the multiple.
    const char *e[] = { "mlp=gelu", "mlp_multiple_of=64", "dim=96", "heads=3" };
    c = config_with(e, 4);
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 384);
}
END_TEST

START_TEST(test_whole_model_counts) {
    // The six counts of step 4's section 4, at the default config.
    const char *rms[] = { "norm=rmsnorm" }, *qk[] = { "qk_norm=true" }, *sw[] = { "mlp=swiglu" };
    const char *rope[] = { "pos=rope2d" };
    const char *all[] = { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d" };
    Config c = config_default();
    ck_assert_uint_eq(model_count_params(&c.model), 1152176);
    c = config_with(rms, 1);  ck_assert_uint_eq(model_count_params(&c.model), 1152176);
    c = config_with(qk, 1);   ck_assert_uint_eq(model_count_params(&c.model), 1152432);
    c = config_with(sw, 1);   ck_assert_uint_eq(model_count_params(&c.model), 1152344);
    c = config_with(rope, 1); ck_assert_uint_eq(model_count_params(&c.model), 1150128);
    c = config_with(all, 4);  ck_assert_uint_eq(model_count_params(&c.model), 1150552);
    // model_count_params (no weights) agrees with a built model's table
    Model m;
    char err[256];
    ck_assert_int_eq(model_build(&m, &c.model, err, sizeof err), 0);
    ck_assert_uint_eq(m.n_params, 1150552);
    model_free(&m);
}
END_TEST

START_TEST(test_swiglu_values) {
    // out = g · σ(g) · v, against the formula in double.
    enum { N = 1000 };
    float g[N], v[N], out[N];
    fill_normal(g, N, 3.0f, 11);
    fill_normal(v, N, 1.0f, 12);
    swiglu_forward(out, g, v, N);
    for (int i = 0; i < N; i++) {
        double want = g[i] / (1.0 + exp(-(double)g[i])) * v[i];
        ck_assert_double_eq_tol(out[i], want, 1e-5 * fmax(1.0, fabs(want)));
    }
    // The gate's two ends: shut at a very negative gate, open (≈ g · v) at a
    // very positive one, and exactly 0 at g = 0.
    float gs[3] = { -30.0f, 0.0f, 30.0f }, vs[3] = { 2.0f, 2.0f, 2.0f }, os[3];
    swiglu_forward(os, gs, vs, 3);
    ck_assert_double_eq_tol(os[0], 0.0, 1e-5);
    ck_assert_float_eq(os[1], 0.0f);
    ck_assert_double_eq_tol(os[2], 60.0, 1e-5 * 60);
}
END_TEST

// The gradient check: f(g, v) = Σ swiglu(g, v) · w, so (df/dg, df/dv) is what
// swiglu_backward returns for dout = w.
enum { NG = 512 };
typedef struct { float *g, *v, *out, *w; } SwigluCtx;

static double swiglu_f(void *p) {
    SwigluCtx *c = p;
    swiglu_forward(c->out, c->g, c->v, NG);
    return dot_fd(c->out, c->w, NG);
}

START_TEST(test_swiglu_gradient) {
    SwigluCtx c = { alloc_floats(NG), alloc_floats(NG), alloc_floats(NG), alloc_floats(NG) };
    fill_normal(c.g, NG, 2.0f, 13);   // gates on both sides of 0, through SiLU's curve
    fill_normal(c.v, NG, 1.0f, 14);
    fill_normal(c.w, NG, 1.0f, 15);
    float *dg = alloc_floats(NG), *dv = alloc_floats(NG);   // zeroed: backward accumulates
    swiglu_backward(dg, dv, c.w, c.g, c.v, NG);
    grad_check("swiglu gate", swiglu_f, &c, c.g, dg, NG, 0);
    grad_check("swiglu value", swiglu_f, &c, c.v, dv, NG, 0);
    // It accumulates: a second call doubles the gradients.
    float dg2[NG];
    memcpy(dg2, dg, sizeof dg2);
    swiglu_backward(dg, dv, c.w, c.g, c.v, NG);
    for (int i = 0; i < NG; i++) ck_assert_double_eq_tol(dg[i], 2.0 * dg2[i], 1e-5 * fmax(1.0, fabs(dg2[i])));
    free(c.g); free(c.v); free(c.out); free(c.w); free(dg); free(dv);
}
END_TEST

// ---------------------------------------------------------------------------
// Step 4's FFN is the model's: run alone on block 0's weights and on the
// input block 0's MLP saw inside model_forward, it gives the same hidden
// values bit for bit, and an output that, added to the residual stream as
// the block adds it, is the block's output exactly.
static void ffn_equals_block0_mlp(const char *mlp) {
    const char *sets[] = { mlp };
    Config c = config_with(sets, 1);
    Model m;
    Activations a;
    char err[256];
    ck_assert_msg(model_build(&m, &c.model, err, sizeof err) == 0, "%s", err);
    model_init_weights(&m, 7);
    int N = 2, L = cfg_tokens(&c.model), D = c.model.dim, H = cfg_mlp_hidden(&c.model), R = N * L;
    ck_assert_int_eq(activations_alloc(&a, &m, N, false), 0);
    float *x = alloc_floats((size_t)N * c.model.channels * c.model.img * c.model.img), t[2] = { 0.25f, 0.75f };
    fill_normal(x, (size_t)N * c.model.channels * c.model.img * c.model.img, 1.0f, 21);
    model_forward(&m, &a, x, t, NULL);
    float *dy = alloc_floats((size_t)R * D);
    Ffn f;
    ffn_alloc(&f, &m, R, a.mod2[0], dy);
    ffn_forward(&f);
    size_t RH = (size_t)R * H, RD = (size_t)R * D;
    ck_assert_int_eq(memcmp(f.h.pre, a.h_pre[0], RH * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(f.h.act, a.h_act[0], RH * sizeof(float)), 0);
    if (c.model.mlp == MLP_SWIGLU) ck_assert_int_eq(memcmp(f.h.val, a.h_val[0], RH * sizeof(float)), 0);
    const float *x_mid = a.resid + RD, *x_out = x_mid + RD;   // block 0: x_out = x_mid + mlp
    for (size_t i = 0; i < RD; i++)
        ck_assert_msg(f.y[i] + x_mid[i] == x_out[i], "%s: element %zu", mlp, i);
    ffn_free(&f);
    free(dy); free(x);
    activations_free(&a);
    model_free(&m);
}

START_TEST(test_ffn_is_block0_mlp) {
    ffn_equals_block0_mlp("mlp=gelu");
    ffn_equals_block0_mlp("mlp=swiglu");
}
END_TEST

// ---------------------------------------------------------------------------
// The figures, in a fresh folder under /tmp each time.
static const char *const FIGURES[2] = { "step4_activations", "step4_params" };

START_TEST(test_figures_are_pngs) {
    if (!gnuplot_or_skip("test_figures_are_pngs")) return;
    char dir[256], err[512];
    tmpdir_make(dir, sizeof dir, "swiglu");
    int drawn = -1;
    ck_assert_msg(step4_figures(dir, &drawn, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(drawn, 2);
    check_figures_drawn(dir, FIGURES, 2);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_figures_notice_without_gnuplot) {
    const char *const want[] = { "4. The whole model", NULL };
    check_figures_not_drawn("step4_swiglu/step4_swiglu", "--rounds 1 --batch 1", NULL, FIGURES, 2, want);
}
END_TEST

static Suite *swiglu_suite(void) {
    Suite *s = suite_create("swiglu");
    add_tests(s, "swiglu", 0, TESTS(test_ffn_counts_at_d128, test_gpt_rule_at_d384, test_rounding_rule,
                                    test_whole_model_counts, test_swiglu_values, test_swiglu_gradient,
                                    test_ffn_is_block0_mlp, test_figures_are_pngs,
                                    test_figures_notice_without_gnuplot));
    return s;
}

int main(void) { return run_suite(swiglu_suite()); }
