// test_model.c: the whole model. Parameter counts against the spec's table,
// a finite-difference check of every parameter's gradient through the
// flow-matching loss, adaLN-Zero's start (identity blocks, which gradients
// flow at steps 0, 1 and 2), the class labels' table, the PyTorch golden
// files, bit-for-bit determinism (run to run, and across OpenMP thread
// counts), the Euler sampler and the guided one on models of known output,
// and the printed summary.
#include <cblas.h>
#include <ctype.h>
#include <dirent.h>
#include <omp.h>
#include <stdint.h>
#include <unistd.h>
#include "testutil.h"
#include "io/checkpoint.h"
#include "io/config_parse.h"
#include "io/safetensors.h"
#include "nn/flow.h"
#include "nn/gradcheck.h"
#include "eval/golden.h"
#include "nn/model.h"
#include "nn/train_step.h"
#include "synth_cifar.h"

static char err[1024];

// Applies "key=value" settings (NULL-terminated) to c; fails the test if one
// is refused.
static void apply(Config *c, const char *const *sets) {
    for (int i = 0; sets && sets[i]; i++) {
        err[0] = '\0';
        ck_assert_msg(config_set(c, sets[i], err, sizeof err) == 0, "config_set(%s): %s", sets[i], err);
    }
}

static void build(Model *m, const Config *c) {
    err[0] = '\0';
    ck_assert_msg(model_build(m, &c->model, err, sizeof err) == 0, "model_build: %s", err);
}

// The spec's nine variants (§3), by the settings that make them.
typedef struct {
    const char *name;
    const char *sets[5];
    size_t params;     // at the default config
} Variant;

static const Variant VARIANTS[] = {
    { "baseline", { NULL }, 1152176 },
    { "rmsnorm", { "norm=rmsnorm", NULL }, 1152176 },
    { "qk_norm", { "qk_norm=true", NULL }, 1152432 },
    { "swiglu", { "mlp=swiglu", NULL }, 1152344 },
    { "rope2d", { "pos=rope2d", NULL }, 1150128 },
    { "all four", { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL }, 1150552 },
    { "ada=zero", { "ada=zero", NULL }, 1284272 },
    { "classes=10", { "classes=10", NULL }, 1153584 },
    { "classes=10, ada=zero", { "classes=10", "ada=zero", NULL }, 1285680 },
};
#define N_VARIANTS (int)(sizeof VARIANTS / sizeof VARIANTS[0])

// ===========================================================================
// (a) parameter counts

START_TEST(test_param_counts) {
    for (int v = 0; v < N_VARIANTS; v++) {
        Config c = config_default();
        apply(&c, VARIANTS[v].sets);
        size_t n = model_count_params(&c.model);
        ck_assert_msg(n == VARIANTS[v].params, "%s: %zu parameters, the spec says %zu",
                      VARIANTS[v].name, n, VARIANTS[v].params);
        // the built model agrees, and its tensors tile the flat array exactly
        Model m;
        build(&m, &c);
        ck_assert_uint_eq(m.n_params, n);
        size_t off = 0;
        for (int i = 0; i < m.n_tensors; i++) {
            const ParamTensor *t = &m.tensors[i];
            ck_assert_msg(t->offset == off, "%s: tensor %s at offset %zu, expected %zu",
                          VARIANTS[v].name, t->name, t->offset, off);
            ck_assert_uint_eq(t->size, (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1));
            off += t->size;
        }
        ck_assert_uint_eq(off, n);
        model_free(&m);
    }
}
END_TEST

// Every buffer starts at a cache line (zeroed_floats, params.c's padding):
// 9 tokens of width 24, 3 images: pieces whose sizes are not whole lines.
#define AT_LINE(p) ck_assert_msg((p) == NULL || (uintptr_t)(p) % 64 == 0, "%s: %s not at a cache line", \
                                 VARIANTS[v].name, #p)
START_TEST(test_buffers_at_cache_lines) {
    for (int v = 0; v < N_VARIANTS; v++) {
        Config c = config_default();
        apply(&c, VARIANTS[v].sets);
        apply(&c, (const char *const[]){ "img=12", "dim=24", "heads=2", NULL });
        Model m;
        build(&m, &c);
        Activations a;
        BackwardScratch s;
        ck_assert_int_eq(activations_alloc(&a, &m, 3, false), 0);
        ck_assert_int_eq(backward_scratch_alloc(&s, &m, 3), 0);
        AT_LINE(m.params); AT_LINE(m.grads); AT_LINE(a.tokens); AT_LINE(a.temb); AT_LINE(a.c);
        for (int b = 0; b < c.model.depth; b++) {
            AT_LINE(a.ada[b]); AT_LINE(a.mod1[b]); AT_LINE(a.qkv[b]); AT_LINE(a.att_out[b]);
            AT_LINE(a.mod2[b]); AT_LINE(a.h_pre[b]); AT_LINE(a.h_act[b]); AT_LINE(a.norm2_rstd[b]);
        }
        AT_LINE(a.v); AT_LINE(s.dresid); AT_LINE(s.dqkv); AT_LINE(s.dh_act); AT_LINE(s.dh_pre);
        backward_scratch_free(&s);
        activations_free(&a);
        model_free(&m);
    }
}
END_TEST

// Shapes of the parameter table (nn/model.c) at the default config, by name, for the all-four variant
// with biases (and the learned-position tensors from the baseline).
START_TEST(test_tensor_shapes) {
    struct { const char *name; int ndim, d0, d1; } want[] = {
        { "patch_embed.weight", 2, 128, 48 }, { "patch_embed.bias", 1, 128, 1 },
        { "t_fc1.weight", 2, 128, 256 }, { "t_fc2.weight", 2, 128, 128 },
        { "blocks.3.ada.weight", 2, 512, 128 }, { "blocks.3.ada.bias", 1, 512, 1 },
        { "blocks.0.attn.qkv.weight", 2, 384, 128 }, { "blocks.0.attn.proj.weight", 2, 128, 128 },
        { "blocks.2.attn.q_norm.weight", 1, 32, 1 }, { "blocks.2.attn.k_norm.weight", 1, 32, 1 },
        { "blocks.1.mlp.w1.weight", 2, 341, 128 }, { "blocks.1.mlp.w2.weight", 2, 341, 128 },
        { "blocks.1.mlp.w3.weight", 2, 128, 341 },
        { "ada_f.weight", 2, 256, 128 }, { "head.weight", 2, 48, 128 }, { "head.bias", 1, 48, 1 },
    };
    Config c = config_default();
    apply(&c, VARIANTS[5].sets);
    Model m;
    build(&m, &c);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ParamTensor *t = model_find(&m, want[i].name);
        ck_assert_msg(t != NULL, "no tensor %s", want[i].name);
        ck_assert_msg(t->ndim == want[i].ndim && t->shape[0] == want[i].d0 && t->shape[1] == want[i].d1,
                      "%s has shape (%d, %d), want (%d, %d)", want[i].name, t->shape[0], t->shape[1],
                      want[i].d0, want[i].d1);
    }
    ck_assert_ptr_null(model_find(&m, "pos_row"));          // rope2d: no position tables
    ck_assert_ptr_null(model_find(&m, "blocks.0.mlp.fc1.weight"));
    // q_norm gains start at 1
    const ParamTensor *qn = model_find(&m, "blocks.0.attn.q_norm.weight");
    for (size_t j = 0; j < qn->size; j++) ck_assert(m.params[qn->offset + j] == 1.0f);
    model_free(&m);
    c = config_default();
    build(&m, &c);
    const ParamTensor *pr = model_find(&m, "pos_row"), *pc = model_find(&m, "pos_col");
    ck_assert(pr && pc && pr->shape[0] == 8 && pr->shape[1] == 128 && pc->shape[0] == 8);
    ck_assert_ptr_null(model_find(&m, "blocks.0.attn.q_norm.weight"));
    model_free(&m);
}
END_TEST

// Parameters of one block's MLP, summed from the built model's tensor table.
static size_t mlp_params(const char *const *sets, int *hidden) {
    Config c = config_default();
    apply(&c, sets);
    Model m;
    build(&m, &c);
    size_t n = 0;
    for (int i = 0; i < m.n_tensors; i++)
        if (strncmp(m.tensors[i].name, "blocks.0.mlp.", 13) == 0) n += m.tensors[i].size;
    *hidden = cfg_mlp_hidden(&m.cfg);
    model_free(&m);
    return n;
}

// The spec's building blocks: at D = 128 a GELU FFN holds 131,712 and a
// SwiGLU (hidden int(2·4·128/3) = 341) 131,754; at D = 384 without biases
// GELU 384->1536->384 and SwiGLU rounded to a multiple of 64 (hidden 1,024)
// both hold 1,179,648 weights: SwiGLU's third matrix is paid for by the
// narrower hidden layer.
START_TEST(test_block_counts) {
    int hid;
    const char *gelu128[] = { NULL };
    ck_assert_uint_eq(mlp_params(gelu128, &hid), 131712);
    ck_assert_int_eq(hid, 512);
    const char *swiglu128[] = { "mlp=swiglu", NULL };
    ck_assert_uint_eq(mlp_params(swiglu128, &hid), 131754);
    ck_assert_int_eq(hid, 341);
    const char *gelu384[] = { "dim=384", "depth=1", "bias=false", NULL };
    ck_assert_uint_eq(mlp_params(gelu384, &hid), 1179648);
    ck_assert_int_eq(hid, 1536);
    const char *swiglu384[] = { "dim=384", "depth=1", "bias=false", "mlp=swiglu", "mlp_multiple_of=64", NULL };
    ck_assert_uint_eq(mlp_params(swiglu384, &hid), 1179648);
    ck_assert_int_eq(hid, 1024);
}
END_TEST

// ===========================================================================
// (b) whole-model gradient check
//
// A tiny model (img 8, patch 4: 2x2 tokens; dim 16, 2 heads, depth 2 so the
// gradient has to cross a block boundary; freq_dim 8; batch 2). The loss is
// the flow-matching MSE of train_forward_backward; its analytic gradients are
// copied out, then the parameters are taken group by group in the order the
// backward pass reaches them (common/nn/gradcheck.h: the head first, each
// block's ada Linear by the rows of each of its chunks, the time MLP last),
// and up to PROBES elements of each group (spread from its first to its
// last) are moved by ±h and the loss recomputed, forward only (in double,
// as flow_mse sums it). The first group that is wrong is named: the one
// nearest the mistake, every gradient the backward reached before it right.
//
// Tolerance: testutil.h's GRAD_TOL (1e-2), relative to each group's own
// gradient scale, the largest |analytic| over the whole group (or |numeric|
// over the probes, if that is larger):
//     |analytic - numeric| <= GRAD_TOL · scale.
// An absolute floor would make the test blind here: the gradients of a mean
// over 384 pixels are 5e-4 .. 3e-1, so an absolute 1e-2 would pass a
// gradient that is wrong by 100%; and a group's own scale, not its
// tensor's, keeps a chunk of small gradients (a shift's) from hiding under
// a neighbour's large ones. The step, MODEL_H = 3e-2: the finite difference
// is off by the loss's float32 rounding over 2h (about 2e-6 / (h / 1e-2)
// absolute, which is 1e-3 of a group of gradients of 6e-4 at this h) plus
// the h² truncation (2e-3 of the patch embedding's bias, the largest):
// measured at most 2e-3 of the scale, a 5x margin below the tolerance,
// while a wrong term, sign or index is off by O(1) of the scale.
#define PROBES 8
#define MODEL_H 3e-2f

typedef struct {
    TrainState ts;
    const float *x1, *x0, *t;
    const int *y;     // class-conditional: the labels, else NULL
} LossCtx;

static double model_loss(void *p) {
    LossCtx *c = p;
    return train_loss(&c->ts, c->x1, c->x0, c->t, c->y);
}

static const char *TINY[] = { "img=8", "patch=4", "dim=16", "heads=2", "depth=2", "freq_dim=8", NULL };

// The TINY model with the given switches, on one thread (the gradient and
// sampler checks are thousands of tiny passes, where OpenMP's fork/join costs
// more than the work; the thread-count question is test_determinism's).
static Config build_tiny(Model *m, const char *const *sets) {
    omp_set_num_threads(1);
    Config cfg = config_default();
    apply(&cfg, TINY);
    apply(&cfg, sets);
    build(m, &cfg);
    return cfg;
}

static void check_model_grads(const char *name, const char *const *sets) {
    Model m;
    Config cfg = build_tiny(&m, sets);
    grad_check_weights(&m, 7);
    int N = 2;
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *x1 = alloc_floats(N * per), *x0 = alloc_floats(N * per), t[2] = { 0.3f, 0.8f };
    Rng r;
    rng_seed(&r, 11);
    rng_fill_uniform(&r, x1, (long)(N * per), -1.0f, 1.0f);   // image-like data in [-1, 1]
    rng_fill_normal(&r, x0, (long)(N * per), 1.0f);
    LossCtx ctx;
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_int_eq(train_state_init(&ctx.ts, &m, N, &opt, NULL), 0);
    // class-conditional: a class's row and the null label's row each get an image
    int y[2] = { 3, cfg.model.classes };
    ctx.x1 = x1; ctx.x0 = x0; ctx.t = t; ctx.y = cfg.model.classes > 0 ? y : NULL;
    crash_context("train_forward_backward of the tiny '%s' model (img=8 patch=4 dim=16 heads=2 depth=2 freq_dim=8, "
                  "2 images): model_forward, flow_mse, model_backward (block_backward for b = 1, then b = 0)", name);
    double loss = train_forward_backward(&ctx.ts, x1, x0, t, ctx.y);
    crash_context("train_loss (the forward pass) of the tiny '%s' model, for finite differences", name);
    ck_assert_msg(isfinite(loss) && loss > 0.0, "%s: loss %g", name, loss);
    float *g = alloc_floats(m.n_params);
    memcpy(g, m.grads, m.n_params * sizeof(float));

    GradGroup *groups = malloc(sizeof *groups * 6 * m.n_tensors);   // at most six groups a tensor
    ck_assert_ptr_nonnull(groups);
    int n = grad_groups(&m, groups, 6 * m.n_tensors);
    double worst = 0.0;
    const char *worst_name = "";
    for (int i = 0; i < n; i++) {
        GradCheck c;
        grad_check_group(&m, &groups[i], g, model_loss, &ctx, PROBES, MODEL_H, &c);
        ck_assert_msg(c.scale > 0.0, "%s: %s has an all-zero gradient", name, groups[i].name);
        // the first group past a block: that block's own gradients were right, what it handed back is not
        char hint[160] = "";
        int b_prev = i > 0 ? groups[i - 1].tensor->block : -1, b_now = groups[i].tensor->block;
        if (b_prev >= 0 && b_now != b_prev)
            snprintf(hint, sizeof hint, "; block %d's own gradients are right, so what its backward handed back is "
                     "wrong: %s", b_prev, strncmp(groups[i].name, "t_fc", 4) == 0
                     ? "the condition's gradient, s->dc_silu (the ada Linear's input)"
                     : "s->dresid, the gradient of the block's input");
        ck_assert_msg(c.worst <= GRAD_TOL, "%s: the first wrong gradient, counting back from the loss, is %s "
                      "(every one before it is right): at [%zu] %.6g, finite differences %.6g (error %.3g of the "
                      "group's scale %.3g > %g)%s", name, groups[i].name, c.worst_at, c.backward, c.numeric, c.worst,
                      c.scale, GRAD_TOL, hint);
        if (c.worst > worst) { worst = c.worst; worst_name = groups[i].name; }
    }
    printf("model grad check %-9s: %d groups of %d tensors, worst error %.2e of scale (%s), tolerance %.0e: margin %.0f\n",
           name, n, m.n_tensors, worst, worst_name, GRAD_TOL, worst > 0 ? GRAD_TOL / worst : INFINITY);
    fflush(stdout);
    train_state_free(&ctx.ts);
    model_free(&m);
    free(x1); free(x0); free(g); free(groups);
}

// A NaN in the backward's gradient at the first probe fails the group's
// check, whatever the later probes find (a later finite error must not
// replace it).
START_TEST(test_grad_check_nan) {
    Model m;
    Config cfg = build_tiny(&m, (const char *const[]){ NULL });
    grad_check_weights(&m, 7);
    int N = 2;
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *x1 = alloc_floats(N * per), *x0 = alloc_floats(N * per), t[2] = { 0.3f, 0.8f };
    Rng r;
    rng_seed(&r, 11);
    rng_fill_uniform(&r, x1, (long)(N * per), -1.0f, 1.0f);
    rng_fill_normal(&r, x0, (long)(N * per), 1.0f);
    LossCtx ctx = { .x1 = x1, .x0 = x0, .t = t };
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_int_eq(train_state_init(&ctx.ts, &m, N, &opt, NULL), 0);
    train_forward_backward(&ctx.ts, x1, x0, t, NULL);
    GradGroup g[1];
    ck_assert_int_eq(grad_groups(&m, g, 1), 1);
    float *grads = alloc_floats(m.n_params);
    memcpy(grads, m.grads, m.n_params * sizeof(float));
    grads[g[0].offset] = NAN;   // the first probe's element
    GradCheck c;
    grad_check_group(&m, &g[0], grads, model_loss, &ctx, PROBES, MODEL_H, &c);
    ck_assert_msg(!(c.worst <= GRAD_TOL) && c.worst_at == 0, "%s with a NaN at [0]: worst error %g at [%zu]",
                  g[0].name, c.worst, c.worst_at);
    train_state_free(&ctx.ts);
    model_free(&m);
    free(x1); free(x0); free(grads);
}
END_TEST

// The variants whose whole-model gradients are checked: together they take
// every switch of the block both ways (norm, QK-norm, MLP, positions,
// biases, adaLN, labels): the baseline, all four upgrades without biases,
// adaLN-Zero alone and with all four, and class labels alone and with
// adaLN-Zero.
static const struct { const char *name, *sets[6]; } GRAD_VARIANTS[] = {
    { "baseline", { NULL } },
    { "all4-bias", { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", "bias=false", NULL } },
    { "ada=zero", { "ada=zero", NULL } },
    { "zero+all4", { "ada=zero", "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL } },
    { "classes", { "classes=10", NULL } },
    { "cls+zero", { "classes=10", "ada=zero", NULL } },
};
#define N_GRAD_VARIANTS (int)(sizeof GRAD_VARIANTS / sizeof GRAD_VARIANTS[0])

START_TEST(test_grads) { check_model_grads(GRAD_VARIANTS[_i].name, GRAD_VARIANTS[_i].sets); }
END_TEST

// The same gradients on 1, 2 and 3 threads, bit for bit: one training pass
// (forward, loss, backward) of a model big enough for every loop to split
// (test_determinism's), with every gradient alive, with all four upgrades
// and with adaLN-Zero (the baseline's norm, MLP and positions, and the
// gates): every path of the block. The first group that differs is named,
// in the order the backward pass reaches them.
static float *grads_on_threads(const char *const *sets, int threads, Model *m) {
    omp_set_num_threads(threads);
    Config cfg = config_default();
    const char *det[] = { "img=16", "patch=2", "dim=64", "heads=2", "depth=2", "freq_dim=64", NULL };
    apply(&cfg, det);
    apply(&cfg, sets);
    build(m, &cfg);
    grad_check_weights(m, 3);
    int N = 4;
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *x1 = alloc_floats(N * per), *x0 = alloc_floats(N * per), t[4] = { 0.1f, 0.4f, 0.6f, 0.9f };
    Rng r;
    rng_seed(&r, 5);
    rng_fill_uniform(&r, x1, (long)(N * per), -1.0f, 1.0f);
    rng_fill_normal(&r, x0, (long)(N * per), 1.0f);
    TrainState ts;
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_int_eq(train_state_init(&ts, m, N, &opt, NULL), 0);
    crash_context("train_forward_backward (model_backward: block_backward for b = 1, then 0) of a model of "
                  "img=16 patch=2 dim=64 depth=2, 4 images, on %d thread%s", threads, threads == 1 ? "" : "s");
    train_forward_backward(&ts, x1, x0, t, NULL);
    float *g = alloc_floats(m->n_params);
    memcpy(g, m->grads, m->n_params * sizeof(float));
    train_state_free(&ts);
    free(x1); free(x0);
    return g;
}

START_TEST(test_grads_on_any_threads) {
    static const char *const sets[2][6] = {
        { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", NULL }, { "ada=zero", NULL } };
    static const char *const names[2] = { "all four", "ada=zero" };
    int threads_before = omp_get_max_threads();
    for (int v = 0; v < 2; v++) {
        Model m;
        float *one = grads_on_threads(sets[v], 1, &m);
        GradGroup *groups = malloc(sizeof *groups * 6 * m.n_tensors);   // at most six groups a tensor
        ck_assert_ptr_nonnull(groups);
        int n = grad_groups(&m, groups, 6 * m.n_tensors);
        model_free(&m);
        for (int k = 2; k <= 3; k++) {
            float *other = grads_on_threads(sets[v], k, &m);
            for (int i = 0; i < n; i++) {
                const float *a = one + groups[i].offset, *b = other + groups[i].offset;
                size_t diff = 0, first = 0;
                for (size_t j = 0; j < groups[i].size; j++)
                    if (memcmp(&a[j], &b[j], sizeof(float)) != 0 && diff++ == 0) first = j;
                ck_assert_msg(diff == 0, "%s: the gradient of %s differs between 1 and %d threads (the first, "
                              "counting back from the loss, that does): %zu of %zu values, the first at [%zu]: "
                              "%.9g on 1 thread, %.9g on %d", names[v], groups[i].name, k, diff, groups[i].size,
                              first, a[first], b[first], k);
            }
            model_free(&m);
            free(other);
        }
        free(one); free(groups);
    }
    omp_set_num_threads(threads_before);
}
END_TEST

// ===========================================================================
// (b2) adaLN-Zero's start. With ada=zero, every block's ada, ada_f and head
// start at 0 (weights and biases), so v = 0 and every block is the identity.
// The gradients then open the model from the top, one step at a time:
//   step 0: only head has a gradient (v = head(...) with head = 0: nothing
//           below the head reaches the loss);
//   step 1: head moved, so the residual stream gets a gradient: ada_f, the
//           patch embedding, the positions and each block's gates have one,
//           but with every gate still 0 no branch does (attn, mlp, shift and
//           scale: exactly 0), nor the time MLP (t_fc1, t_fc2), which reaches
//           the loss only through the ada Linears, whose weights are all 0;
//   step 2: the gates and ada_f moved too: every tensor has a gradient.

// The gate alone (gate_residual_forward / _backward, layers.h): the
// gradients of x, of the branch and of the whole ada row, by finite
// differences. The gate sits at offset 3 of an 11-wide row, so a wrong
// stride or offset shows; the rest of the row must get exactly zero.
typedef struct {
    int N, L, D, stride, gate_off;
    float *x, *branch, *ada, *out, *w;
} GateCtx;

static double gate_f(void *p) {
    GateCtx *c = p;
    gate_residual_forward(c->out, c->x, c->branch, c->ada + c->gate_off, c->N, c->L, c->D, c->stride);
    return dot_fd(c->out, c->w, (size_t)c->N * c->L * c->D);
}

START_TEST(test_gate_grad) {
    GateCtx c = { 2, 3, 4, 11, 3, NULL, NULL, NULL, NULL, NULL };
    size_t nx = (size_t)c.N * c.L * c.D, na = (size_t)c.N * c.stride;
    c.x = alloc_floats(nx); c.branch = alloc_floats(nx); c.ada = alloc_floats(na);
    c.out = alloc_floats(nx); c.w = alloc_floats(nx);
    fill_normal(c.x, nx, 1.0f, 51); fill_normal(c.branch, nx, 1.0f, 52);
    fill_normal(c.ada, na, 0.5f, 53); fill_normal(c.w, nx, 1.0f, 54);
    float *dbranch = alloc_floats(nx), *dada = alloc_floats(na);
    // x's gradient is w itself (dout), carried by the caller's residual stream
    grad_check("gate dx", gate_f, &c, c.x, c.w, nx, 0);
    gate_residual_backward(dbranch, dada + c.gate_off, c.w, c.branch, c.ada + c.gate_off,
                           c.N, c.L, c.D, c.stride);
    grad_check("gate dbranch", gate_f, &c, c.branch, dbranch, nx, 0);
    grad_check("gate dgate (whole ada row)", gate_f, &c, c.ada, dada, na, 0);
    for (int n = 0; n < c.N; n++)
        for (int j = 0; j < c.stride; j++)
            if (j < c.gate_off || j >= c.gate_off + c.D)
                ck_assert_msg(dada[n * c.stride + j] == 0.0f, "the gate wrote outside its slice");
    // a gate of 0: the branch gets exactly nothing, the gate its full share
    memset(c.ada, 0, na * sizeof(float));
    memset(dbranch, 0, nx * sizeof(float));
    gate_residual_backward(dbranch, dada + c.gate_off, c.w, c.branch, c.ada + c.gate_off,
                           c.N, c.L, c.D, c.stride);
    for (size_t i = 0; i < nx; i++) ck_assert(dbranch[i] == 0.0f);
    free(c.x); free(c.branch); free(c.ada); free(c.out); free(c.w); free(dbranch); free(dada);
}
END_TEST

// Label dropout (train_step): the noise and the times are drawn first, as
// for the unconditional model, then one uniform per image, in order: below
// label_drop the label becomes the null label. The labels trained on
// (ts.y) and the stream's state after the step must be exactly those of
// these draws made by hand; label_drop 0 keeps every label and 1 drops
// every one, and both draw as many numbers.
START_TEST(test_label_dropout) {
    Model m;
    const char *sets[] = { "classes=10", NULL };
    Config cfg = build_tiny(&m, sets);
    model_init_weights(&m, 7);
    const int N = 64;
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *x1 = alloc_floats(N * per), *x0 = alloc_floats(N * per), *t = alloc_floats(N);
    int y[64];
    for (int n = 0; n < N; n++) y[n] = (n * 7) % 10;
    fill_normal(x1, N * per, 0.5f, 21);
    TrainState ts;
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_int_eq(train_state_init(&ts, &m, N, &opt, NULL), 0);
    const float drops[3] = { 0.25f, 0.0f, 1.0f };
    for (int k = 0; k < 3; k++) {
        ts.recipe.label_drop = drops[k];
        Rng r, hand;
        rng_seed(&r, 9 + k);
        hand = r;
        train_step(&ts, x1, y, &r);
        rng_fill_normal(&hand, x0, (long)(N * per), 1.0f);
        rng_fill_uniform(&hand, t, N, 0.0f, 1.0f);
        ck_assert(memcmp(x0, ts.x0, N * per * sizeof(float)) == 0 && memcmp(t, ts.t, N * sizeof(float)) == 0);
        int dropped = 0;
        for (int n = 0; n < N; n++) {
            int want = rng_uniform(&hand) < drops[k] ? cfg.model.classes : y[n];
            ck_assert_msg(ts.y[n] == want, "label_drop %g, image %d: trained on label %d, the draw says %d", drops[k], n,
                          ts.y[n], want);
            dropped += ts.y[n] == cfg.model.classes;
        }
        ck_assert_msg(r.state == hand.state, "label_drop %g: the stream went on elsewhere", drops[k]);
        if (drops[k] == 0.0f) ck_assert_int_eq(dropped, 0);
        if (drops[k] == 1.0f) ck_assert_int_eq(dropped, N);
        if (drops[k] == 0.25f) ck_assert_msg(dropped > 4 && dropped < 32, "%d of %d dropped at 0.25", dropped, N);
    }
    train_state_free(&ts);
    model_free(&m);
    free(x1); free(x0); free(t);
}
END_TEST

// ===========================================================================
// (b3) class labels. The label table alone (label_embed_forward /
// _backward, layers.h): c += table[y], and the table's gradient by finite
// differences, with labels that repeat (two images add into one row) and the
// null label; the rows no image used get exactly zero. Then the table in
// the model: a checkpoint or golden file says its classes, and one without
// the key is the unconditional model.
typedef struct {
    int N, D, rows;
    const int *y;
    float *c0, *table, *c, *w;
} LabelCtx;

static double label_f(void *p) {
    LabelCtx *k = p;
    memcpy(k->c, k->c0, sizeof(float) * k->N * k->D);
    label_embed_forward(k->c, k->table, k->y, k->N, k->D);
    return dot_fd(k->c, k->w, (size_t)k->N * k->D);
}

START_TEST(test_label_embed) {
    const int y[5] = { 2, 0, 2, 5, 4 };    // 5 labels and the null label 5: row 2 twice, rows 1 and 3 unused
    LabelCtx k = { 5, 7, 6, y, NULL, NULL, NULL, NULL };
    size_t nc = (size_t)k.N * k.D, nt = (size_t)k.rows * k.D;
    k.c0 = alloc_floats(nc); k.table = alloc_floats(nt); k.c = alloc_floats(nc); k.w = alloc_floats(nc);
    fill_normal(k.c0, nc, 1.0f, 61); fill_normal(k.table, nt, 0.5f, 62); fill_normal(k.w, nc, 1.0f, 63);
    label_f(&k);   // the forward: each image's c plus its label's row
    for (int n = 0; n < k.N; n++)
        for (int i = 0; i < k.D; i++)
            ck_assert_msg(k.c[n * k.D + i] == k.c0[n * k.D + i] + k.table[y[n] * k.D + i],
                          "label rows: c[%d][%d] is not c + table[%d]", n, i, y[n]);
    float *dtable = alloc_floats(nt);
    label_embed_backward(dtable, k.w, k.y, k.N, k.D);
    grad_check("label table dtable", label_f, &k, k.table, dtable, nt, 0);
    for (int i = 0; i < k.D; i++) {
        ck_assert_msg(dtable[1 * k.D + i] == 0.0f && dtable[3 * k.D + i] == 0.0f, "an unused row has a gradient");
        ck_assert_msg(dtable[2 * k.D + i] == k.w[0 * k.D + i] + k.w[2 * k.D + i], "row 2: not the sum of its images'");
    }
    label_embed_backward(dtable, k.w, k.y, k.N, k.D);   // it adds: twice the first
    for (int i = 0; i < k.D; i++)
        ck_assert_msg(dtable[5 * k.D + i] == 2.0f * k.w[3 * k.D + i], "the backward must add into dtable (+=)");
    free(k.c0); free(k.table); free(k.c); free(k.w); free(dtable);
}
END_TEST

// classes.safetensors says classes=10 and holds y_embed.weight (11, D); the
// files saved before labels existed have no `classes` and load without the
// table (the shipped model: tests/test_shipped_model.c).
START_TEST(test_classes_from_metadata) {
    const struct { const char *file; int want; } cases[] = { { "baseline.safetensors", 0 }, { "classes.safetensors", 10 } };
    for (int k = 0; k < 2; k++) {
        char path[4096];
        ck_assert_msg(golden_path(cases[k].file, path, sizeof path), "%s not found", path);
        Model m;
        SafeTensors st;
        Config c;
        ck_assert_msg(st_read(path, &st, err, sizeof err) == 0 && checkpoint_config_from(&st, path, &c, err, sizeof err) == 0 &&
                      model_build(&m, &c.model, err, sizeof err) == 0 &&
                      checkpoint_copy_params(&st, path, "param.", &m, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(st_meta(&st, "classes") != NULL, cases[k].want > 0);
        ck_assert_int_eq(m.cfg.classes, cases[k].want);
        const ParamTensor *t = model_find(&m, "y_embed.weight");
        if (cases[k].want == 0) ck_assert_ptr_null(t);
        else ck_assert(t && t->shape[0] == cases[k].want + 1 && t->shape[1] == m.cfg.dim);
        st_free(&st);
        model_free(&m);
    }
}
END_TEST

// Whether block b's ada rows [from, to) (chunks of D) have any nonzero
// gradient, in the weight or the bias.
static int ada_rows_moved(const Model *m, int b, int from, int to) {
    char name[64];
    int D = m->cfg.dim, moved = 0;
    snprintf(name, sizeof name, "blocks.%d.ada.weight", b);
    const ParamTensor *w = model_find(m, name);
    for (size_t j = (size_t)from * D * D; j < (size_t)to * D * D; j++) moved |= m->grads[w->offset + j] != 0.0f;
    snprintf(name, sizeof name, "blocks.%d.ada.bias", b);
    const ParamTensor *bias = model_find(m, name);
    for (size_t j = (size_t)from * D; j < (size_t)to * D; j++) moved |= m->grads[bias->offset + j] != 0.0f;
    return moved;
}

static int tensor_moved(const Model *m, const ParamTensor *t) {
    for (size_t j = 0; j < t->size; j++)
        if (m->grads[t->offset + j] != 0.0f) return 1;
    return 0;
}

START_TEST(test_adazero_start) {
    Model m;
    const char *sets[] = { "ada=zero", NULL };
    Config cfg = build_tiny(&m, sets);
    model_init_weights(&m, 7);
    const char *zero[] = { "ada.weight", "ada.bias", "ada_f.weight", "ada_f.bias", "head.weight", "head.bias" };
    int n_zero = 0;
    for (int i = 0; i < m.n_tensors; i++) {
        const ParamTensor *T = &m.tensors[i];
        int should = 0;
        for (int k = 0; k < 6; k++) {
            size_t ln = strlen(T->name), lk = strlen(zero[k]);
            should |= ln >= lk && strcmp(T->name + ln - lk, zero[k]) == 0 &&
                      (ln == lk || T->name[ln - lk - 1] == '.');
        }
        ck_assert_msg(should == (T->init == INIT_ZERO), "%s: init %d", T->name, (int)T->init);
        if (should) {
            n_zero++;
            for (size_t j = 0; j < T->size; j++) ck_assert(m.params[T->offset + j] == 0.0f);
        }
    }
    ck_assert_int_eq(n_zero, 2 * cfg.model.depth + 4);
    int N = 2, D = cfg.model.dim;
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *x1 = alloc_floats(N * per), *x0 = alloc_floats(N * per), t[2] = { 0.3f, 0.8f };
    Rng r;
    rng_seed(&r, 11);
    rng_fill_uniform(&r, x1, (long)(N * per), -1.0f, 1.0f);
    rng_fill_normal(&r, x0, (long)(N * per), 1.0f);
    TrainState ts;
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_int_eq(train_state_init(&ts, &m, N, &opt, NULL), 0);
    for (int step = 0; step < 3; step++) {
        train_forward_backward(&ts, x1, x0, t, NULL);
        if (step == 0) {   // the first output is 0 and every block the identity
            for (size_t i = 0; i < N * per; i++) ck_assert(ts.act.v[i] == 0.0f);
            size_t NLD = (size_t)N * cfg_tokens(&cfg.model) * D;
            for (int k = 1; k <= 2 * cfg.model.depth; k++)
                ck_assert(memcmp(ts.act.resid, ts.act.resid + k * NLD, NLD * sizeof(float)) == 0);
        }
        for (int i = 0; i < m.n_tensors; i++) {
            const ParamTensor *T = &m.tensors[i];
            if (strstr(T->name, ".ada.")) continue;   // the block's ada rows: below
            int head = strncmp(T->name, "head.", 5) == 0, time_mlp = strncmp(T->name, "t_fc", 4) == 0;
            int want = step == 0 ? head : step == 1 ? T->block < 0 && !time_mlp : 1;
            ck_assert_msg(tensor_moved(&m, T) == want, "step %d: %s has %s gradient", step, T->name,
                          want ? "no" : "a");
        }
        for (int b = 0; b < cfg.model.depth; b++) {
            // rows: shift_a, scale_a, gate_a, shift_m, scale_m, gate_m
            int gates = ada_rows_moved(&m, b, 2, 3) && ada_rows_moved(&m, b, 5, 6);
            int shifts_scales = ada_rows_moved(&m, b, 0, 2) || ada_rows_moved(&m, b, 3, 5);
            ck_assert_msg(gates == (step >= 1), "step %d: block %d's gates", step, b);
            ck_assert_msg(shifts_scales == (step >= 2), "step %d: block %d's shifts and scales", step, b);
        }
        train_adamw_step(&ts);
    }
    train_state_free(&ts);
    model_free(&m);
    free(x1); free(x0);
}
END_TEST

// A checkpoint or golden file saved before ada existed has no `ada` in its
// metadata: it loads as the plain block; adazero.safetensors says zero.
START_TEST(test_ada_from_metadata) {
    const struct { const char *file; AdaKind want; } cases[] = {
        { "baseline.safetensors", ADA_PLAIN }, { "adazero.safetensors", ADA_ZERO } };
    for (int k = 0; k < 2; k++) {
        char path[4096];
        ck_assert_msg(golden_path(cases[k].file, path, sizeof path), "%s not found", path);
        SafeTensors st;
        ck_assert_msg(st_read(path, &st, err, sizeof err) == 0, "%s", err);
        int has_ada = 0;
        for (int i = 0; i < st.n_meta; i++) has_ada |= strcmp(st.meta_keys[i], "ada") == 0;
        ck_assert_int_eq(has_ada, cases[k].want == ADA_ZERO);
        Config c;
        ck_assert_msg(checkpoint_config_from(&st, path, &c, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(c.model.ada, cases[k].want);
        st_free(&st);
    }
}
END_TEST

// ===========================================================================
// (c) the PyTorch golden files
//
// Where: golden_path in tests/testutil.h.

static int find_golden_dir(char *out, size_t outlen) { return golden_path(NULL, out, outlen); }

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(test_golden) {
    char dir[4096];
    ck_assert_msg(find_golden_dir(dir, sizeof dir), "golden directory %s not found; the golden files are "
                  "part of the repository (tests/golden), and `make golden-files` writes them again", dir);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t len = strlen(e->d_name), sl = strlen(".safetensors");
        if (len > sl && strcmp(e->d_name + len - sl, ".safetensors") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    ck_assert_msg(n > 0, "no *.safetensors in %s", dir);
    int failed = 0;
    char failures[2048] = "";
    golden_print_header(stdout);
    for (int i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        GoldenReport rep;
        err[0] = '\0';
        int rc = golden_compare(path, &rep, err, sizeof err);
        size_t len = strlen(failures);
        if (rc != 0) {
            printf("%-24s ERROR %s\n", names[i], err);
            snprintf(failures + len, sizeof failures - len, "\n  %s: %s", names[i], err);
        } else {
            golden_print(stdout, names[i], &rep);
            if (!rep.pass) {
                char what[1024];
                golden_failures(&rep, what, sizeof what);
                snprintf(failures + len, sizeof failures - len, "\n  %s: %s", names[i], what);
            }
        }
        failed += rc != 0 || !rep.pass;
        free(names[i]);
    }
    fflush(stdout);
    ck_assert_msg(failed == 0, "%d of %d golden files over a tolerance:%s", failed, n, failures);
}
END_TEST

// A miss names each quantity over its tolerance, the step, the error, the
// tolerance and the tensor; a NaN error is a miss too; a pass names none.
START_TEST(test_golden_failures) {
    GoldenReport rep;
    memset(&rep, 0, sizeof rep);
    rep.n_checks = 3;
    rep.check[0] = (GoldenCheck){ "loss", 0, 2e-6, GOLDEN_TOL_LOSS, "" };
    rep.check[1] = (GoldenCheck){ "grads", 2, 3e-3, GOLDEN_TOL_GRAD, "blocks.1.attn.q_norm.weight" };
    rep.check[2] = (GoldenCheck){ "e2e/lr", 3, NAN, GOLDEN_TOL_ADAMW, "final.weight" };
    char what[512];
    golden_failures(&rep, what, sizeof what);
    ck_assert_str_eq(what, "grads at step 2 3.00e-03 > 1e-03 (blocks.1.attn.q_norm.weight); "
                           "e2e/lr at step 3 nan > 5e-02 (final.weight)");
    rep.check[1].err = 1e-4;
    rep.check[2].err = 1e-3;
    golden_failures(&rep, what, sizeof what);
    ck_assert_str_eq(what, "");
}
END_TEST

// ===========================================================================
// (d) determinism
//
// Three AdamW steps (train_state_init, train_step with an Rng) on synthetic
// data from fixed seeds must give bit-identical weights run to run, on one
// thread and on two, AND across the two thread counts, AND whether the
// blocks are handed out statically or dynamically (schedule(runtime)). The last part holds
// because every loop of ours splits its work into blocks of a fixed size and
// sums in a fixed order, and because the Linear (layers.c) calls matmul only
// inside its own OpenMP loops, where the library runs on one thread: a
// library's own threading rounds differently on 1 and on 2 threads
// (OpenBLAS 0.3.21 once a product exceeds 64³ multiply-adds).
//
// The model is small but big enough for every loop to split: 16x16 images in
// 2x2 patches (64 tokens), dim 64, depth 1, batch 4.
static const char *DET[] = { "img=16", "patch=2", "dim=64", "heads=2", "depth=1", "freq_dim=64", NULL };

static float *train_weights(const char *const *sets, int threads, omp_sched_t schedule, size_t *n_params) {
    omp_set_num_threads(threads);
    ck_assert_int_eq(omp_get_max_threads(), threads);
    omp_set_schedule(schedule, schedule == omp_sched_static ? 0 : 1);   // the loops' schedule(runtime)
    Config cfg = config_default();
    apply(&cfg, DET);
    apply(&cfg, sets);
    Model m;
    build(&m, &cfg);
    model_init_weights(&m, 3);
    int N = 4;
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    float *x1 = alloc_floats(N * per);
    Rng data, r;
    rng_seed(&data, 5);
    rng_fill_uniform(&data, x1, (long)(N * per), -1.0f, 1.0f);
    rng_seed(&r, 9);
    TrainState ts;
    AdamWConfig opt = adamw_default(1e-3f);
    ck_assert_int_eq(train_state_init(&ts, &m, N, &opt, NULL), 0);
    ts.recipe.label_drop = 0.5f;                 // class-conditional: half the labels dropped, by the stream
    const int y[4] = { 1, 5, 9, 0 };
    for (int s = 0; s < 3; s++) {
        double loss = train_step(&ts, x1, y, &r);
        ck_assert(isfinite(loss));
    }
    float *w = alloc_floats(m.n_params);
    memcpy(w, m.params, m.n_params * sizeof(float));
    *n_params = m.n_params;
    train_state_free(&ts);
    model_free(&m);
    free(x1);
    return w;
}

static size_t count_diff(const float *a, const float *b, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return k;
}

static void check_determinism(const char *name, const char *const *sets) {
    size_t n, n2;
    float *a = train_weights(sets, 1, omp_sched_dynamic, &n), *b = train_weights(sets, 1, omp_sched_dynamic, &n2);
    ck_assert_msg(memcmp(a, b, n * sizeof(float)) == 0, "%s: two runs on 1 thread differ", name);
    float *c = train_weights(sets, 2, omp_sched_dynamic, &n2), *d = train_weights(sets, 2, omp_sched_dynamic, &n2);
    ck_assert_msg(memcmp(c, d, n * sizeof(float)) == 0, "%s: two runs on 2 threads differ", name);
    size_t diff = count_diff(a, c, n);
    ck_assert_msg(diff == 0, "%s: 1 vs 2 threads: %zu of %zu weights differ after 3 steps", name, diff, n);
    // the blocks handed out statically (thread t gets a fixed share) instead
    // of one at a time to whichever thread is free: the same numbers
    float *e = train_weights(sets, 2, omp_sched_static, &n2);
    diff = count_diff(c, e, n);
    ck_assert_msg(diff == 0, "%s: static vs dynamic schedule: %zu of %zu weights differ", name, diff, n);
    omp_set_schedule(omp_sched_dynamic, 1);
    printf("determinism %-8s: bit-identical run to run, across 1 and 2 threads and across schedules\n", name);
    fflush(stdout);
    free(a); free(b); free(c); free(d); free(e);
}

// The noise: rng_fill_normal spreads the pairs over the threads, computing
// each pair's draws from SplitMix64's counter. It must give what n calls of
// rng_normal give, in order, with a spare pending or not and n odd or even,
// on 1 and 2 threads, and leave the stream where they leave it. The hashes
// (FNV-1a of the floats' bits) are those of the one-thread loop it replaced.
static uint64_t fnv1a(const float *x, long n) {
    uint64_t h = 1469598103934665603ULL;
    for (long i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        h = (h ^ u) * 1099511628211ULL;
    }
    return h;
}

START_TEST(test_noise_is_the_stream_on_any_threads) {
    const long n = 200001;
    const uint64_t loop_hash[2] = { 0xf5bdf2ae052936c9ULL, 0x6cc92ad958e69ddeULL };   // no spare, a spare
    float *fill = malloc(sizeof(float) * n), *calls = malloc(sizeof(float) * n);
    ck_assert(fill && calls);
    int threads_before = omp_get_max_threads();
    for (int spare = 0; spare < 2; spare++)
        for (int threads = 1; threads <= 2; threads++) {
            omp_set_num_threads(threads);
            Rng a, b;
            rng_seed(&a, 42); rng_seed(&b, 42);
            if (spare) { rng_normal(&a); rng_normal(&b); }
            rng_fill_normal(&a, fill, n, 0.5f);
            for (long i = 0; i < n; i++) calls[i] = 0.5f * rng_normal(&b);
            ck_assert_msg(memcmp(fill, calls, sizeof(float) * n) == 0, "spare %d, %d threads: not rng_normal's numbers",
                          spare, threads);
            ck_assert_msg(rng_normal(&a) == rng_normal(&b) && a.state == b.state, "the stream goes on elsewhere");
            ck_assert_msg(fnv1a(fill, n) == loop_hash[spare], "spare %d: hash %016llx, not the loop's", spare,
                          (unsigned long long)fnv1a(fill, n));
        }
    omp_set_num_threads(threads_before);
    free(fill); free(calls);
}
END_TEST

// The gradients' norm, summed in fixed chunks over the threads: the same
// bits on 1 and 2 threads, and the norm a plain sum in long double gives.
START_TEST(test_grad_norm_on_any_threads) {
    Config c = config_default();
    Model m;
    build(&m, &c);
    Rng r;
    rng_seed(&r, 3);
    rng_fill_normal(&r, m.grads, (long)m.n_params, 1e-3f);
    long double ss = 0;
    for (size_t i = 0; i < m.n_params; i++) ss += (long double)m.grads[i] * m.grads[i];
    int threads_before = omp_get_max_threads();
    omp_set_num_threads(1);
    double one = grad_l2_norm(&m);
    omp_set_num_threads(2);
    double two = grad_l2_norm(&m);
    omp_set_num_threads(threads_before);
    ck_assert_msg(memcmp(&one, &two, sizeof one) == 0, "1 thread %.17g, 2 threads %.17g", one, two);
    double plain = (double)sqrtl(ss);
    ck_assert_msg(fabs(one - plain) <= 1e-12 * plain, "%.17g against a plain sum's %.17g", one, plain);
    model_free(&m);
}
END_TEST

START_TEST(test_determinism_baseline) { check_determinism("baseline", VARIANTS[0].sets); }
END_TEST
START_TEST(test_determinism_allfour) { check_determinism("all four", VARIANTS[5].sets); }
END_TEST
START_TEST(test_determinism_adazero) { check_determinism("ada=zero", VARIANTS[6].sets); }
END_TEST
START_TEST(test_determinism_classes) { check_determinism("classes", VARIANTS[7].sets); }
END_TEST

// ===========================================================================
// (e) the Euler sampler on a model of known output
//
// All weights zero except the head's bias = c: every token comes out as c,
// whatever the input and the time (the norms of all-zero rows give zeros,
// the attention of zero queries is a uniform average of zero values). So
// x ← x + c/S, S times: the sample is x0 + c. With S = 4, c = 0.75 and noise
// on a grid of 1/64 in [-4, 4], every step's c/S = 0.1875 and every partial
// sum is exact in float32, so the result must be x0 + c bit for bit. With
// the scorecard's S = 20, 1/20 is not a binary fraction: within 1e-5.

static void check_sampler(const char *const *sets) {
    Model m;
    Config cfg = build_tiny(&m, sets);
    memset(m.params, 0, m.n_params * sizeof(float));
    const float c = 0.75f;
    const ParamTensor *hb = model_find(&m, "head.bias");
    ck_assert_ptr_nonnull(hb);
    for (size_t j = 0; j < hb->size; j++) m.params[hb->offset + j] = c;
    int N = 3;
    size_t n = (size_t)N * cfg.model.channels * cfg.model.img * cfg.model.img;
    Activations a;
    ck_assert_int_eq(activations_alloc(&a, &m, N, false), 0);
    float *x0 = alloc_floats(n), *x = alloc_floats(n);
    Rng r;
    rng_seed(&r, 13);
    for (size_t i = 0; i < n; i++) x0[i] = (float)((int)rng_below(&r, 513) - 256) / 64.0f;
    int steps[2] = { 4, 20 };
    for (int s = 0; s < 2; s++) {
        memcpy(x, x0, n * sizeof(float));
        flow_sample(&m, &a, x, steps[s]);
        for (size_t i = 0; i < n; i++) {
            if (steps[s] == 4)
                ck_assert_msg(x[i] == x0[i] + c, "sampler, 4 Euler steps of a model whose velocity is c: "
                              "sample x[%zu] got %.9g, expected x0 + c = %.9g (off by %.3g)", i, x[i], x0[i] + c,
                              x[i] - (x0[i] + c));
            else
                ck_assert_msg(fabsf(x[i] - (x0[i] + c)) <= 1e-5f, "sampler, 20 Euler steps of a model whose "
                              "velocity is c: sample x[%zu] got %.9g, expected x0 + c = %.9g (off by %.3g; tolerance "
                              "1e-5)", i, x[i], x0[i] + c, x[i] - (x0[i] + c));
        }
    }
    activations_free(&a);
    model_free(&m);
    free(x0); free(x);
}

START_TEST(test_sampler_constant_baseline) { check_sampler(VARIANTS[0].sets); }
END_TEST
START_TEST(test_sampler_constant_allfour) { check_sampler(VARIANTS[5].sets); }
END_TEST

// ===========================================================================
// (e2) classifier-free guidance. flow_guided_velocity against its formula in
// double, v = v(null) + w·(v(y) − v(null)), with the two halves of the
// batch far apart, at w = 0 (the unconditional velocity), 1, 2.5 and 4, and
// written in place over the first half, as the sampler does.
START_TEST(test_guided_velocity) {
    const size_t n = 37;
    float *both = alloc_floats(2 * n), *v = alloc_floats(n), *in_place = alloc_floats(2 * n);
    fill_normal(both, n, 1.0f, 71);                    // v(x, t, null)
    fill_normal(both + n, n, 1.0f, 72);                // v(x, t, y)
    for (size_t j = 0; j < n; j++) both[n + j] += 3.0f;
    const float ws[4] = { 0.0f, 1.0f, 2.5f, 4.0f };
    for (int k = 0; k < 4; k++) {
        flow_guided_velocity(v, both, ws[k], n);
        memcpy(in_place, both, 2 * n * sizeof(float));
        flow_guided_velocity(in_place, in_place, ws[k], n);
        for (size_t j = 0; j < n; j++) {
            double want = (double)both[j] + ws[k] * ((double)both[n + j] - both[j]);
            ck_assert_msg(fabs(v[j] - want) <= 1e-5 * (1 + fabs(want)), "guided velocity v[%zu] at w = %g: got %.7g, "
                          "expected v(null) + w·(v(y) − v(null)) = %.7g (v(null) = %.7g, v(y) = %.7g)", j, ws[k], v[j],
                          want, both[j], both[n + j]);
            ck_assert_msg(in_place[j] == v[j], "guided velocity in place (v = v_both): v[%zu] %.7g, not %.7g", j,
                          in_place[j], v[j]);
        }
    }
    free(both); free(v); free(in_place);
}
END_TEST

// The guided sampler on a model whose velocity is a constant per label: all
// weights 0 but the label table, ada_f's weight and the head's, so the
// residual stream stays 0, its norm gives 0, and v = head(shift_f), shift_f
// from SiLU(y_embed[y]): the same for every pixel position of a patch, every
// image and time with that label. S Euler steps of it land at x0 + v, so a
// guided sample at w must be x0 + v(null) + w·(v(y) − v(null)), v of each
// label measured by one forward pass. At w = 1 it needs room for N images
// only (one forward a step), otherwise for 2N (null and label in one batch).
START_TEST(test_guided_sampler) {
    Model m;
    const char *sets[] = { "classes=10", NULL };
    Config cfg = build_tiny(&m, sets);
    memset(m.params, 0, m.n_params * sizeof(float));
    const char *drawn[] = { "y_embed.weight", "ada_f.weight", "head.weight" };
    for (int k = 0; k < 3; k++) {
        const ParamTensor *pt = model_find(&m, drawn[k]);
        ck_assert_ptr_nonnull(pt);
        fill_normal(m.params + pt->offset, pt->size, 0.7f, 80 + k);
    }
    const int N = 3, classes = cfg.model.classes, labels[3] = { 4, 9, 10 };   // two classes, the null label
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img, n = N * per;
    // each label's velocity, from one forward pass (any x, any t)
    float *v_of = alloc_floats((size_t)(classes + 1) * per), *x0 = alloc_floats(n), *x = alloc_floats(n);
    Activations one, a;
    ck_assert_int_eq(activations_alloc(&one, &m, 1, false), 0);
    for (int y = 0; y <= classes; y++) {
        float t = 0.3f;
        model_forward(&m, &one, x0, &t, &y);
        memcpy(v_of + (size_t)y * per, one.v, per * sizeof(float));
    }
    ck_assert_msg(memcmp(v_of + 4 * per, v_of + 10 * per, per * sizeof(float)) != 0, "the labels' velocities are equal");
    fill_normal(x0, n, 1.0f, 90);
    const float ws[3] = { 1.0f, 0.0f, 3.0f };
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(activations_alloc(&a, &m, flow_guided_rows(N, ws[k]), false), 0);
        memcpy(x, x0, n * sizeof(float));
        ck_assert_msg(flow_sample_with(&m, &a, x, labels, N, ws[k], SAMPLER_EULER, 4, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(a.N, flow_guided_rows(N, ws[k]));   // put back
        for (int i = 0; i < N; i++)
            for (size_t j = 0; j < per; j++) {
                double vn = v_of[(size_t)classes * per + j], vy = v_of[(size_t)labels[i] * per + j];
                double want = x0[i * per + j] + vn + ws[k] * (vy - vn), got = x[i * per + j];
                ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "guided sample of image %d (label %d) at "
                              "w = %g, x[%zu]: got %.7g, expected x0 + v(null) + w·(v(y) − v(null)) = %.7g", i,
                              labels[i], ws[k], j, got, want);
            }
        activations_free(&a);
    }
    // what it refuses: activations too small for the 2N rows, a label past the
    // null label, a negative or infinite w, an unconditional model
    ck_assert_int_eq(activations_alloc(&a, &m, N, false), 0);
    ck_assert_int_eq(flow_sample_with(&m, &a, x, labels, N, 2.0f, SAMPLER_EULER, 4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "need activations for 6"), "%s", err);
    const int bad[3] = { 4, 11, 0 };
    ck_assert_int_eq(flow_sample_with(&m, &a, x, bad, N, 1.0f, SAMPLER_EULER, 4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "label 11 of image 1"), "%s", err);
    ck_assert_int_eq(flow_sample_with(&m, &a, x, labels, N, -0.5f, SAMPLER_EULER, 4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "guidance=-0.5"), "%s", err);
    ck_assert_int_eq(flow_sample_with(&m, &a, x, labels, N, INFINITY, SAMPLER_EULER, 4, err, sizeof err), -1);
    activations_free(&a);
    Model plain;
    build_tiny(&plain, NULL);
    ck_assert_int_eq(activations_alloc(&a, &plain, N, false), 0);
    ck_assert_int_eq(flow_sample_with(&plain, &a, x, labels, N, 1.0f, SAMPLER_EULER, 4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "class-conditional"), "%s", err);
    activations_free(&a);
    model_free(&plain);
    activations_free(&one);
    model_free(&m);
    free(v_of); free(x0); free(x);
}
END_TEST

// ===========================================================================
// (f) training smoke: a small model (32×32 images, patch 4, width 32, depth 2)
// trains SMOKE_STEPS AdamW steps on a batch of the synthetic images of
// tests/synth_cifar.h, and its flow-matching loss on fixed noise and times,
// measured before and after, must fall by a tenth at least. Its gains (the
// QK-norms') start away from 1, so that a norm's backward that leaves the
// gain out, or a gain's gradient that is wrong, changes the run.
//
// `make grade` (scripts/grade.sh) runs it with an exercise's code inside and
// the reference's everywhere else, and compares each step's loss and
// gradient norm with the reference's own run (TINYDIT_SMOKE_REFERENCE names
// the file that TINYDIT_SMOKE_RECORD made). The gradient norm sees what the
// loss cannot: AdamW moves a weight by about lr whatever the gradient's
// scale, so a gradient n times too large trains nearly the same run, while
// its norm is n times the reference's from the first step. A body written
// in another order only rounds differently: each exercise's reference body
// compiled at -O1 (tests/test_exercises.c) stays within 1e-7 over the 30
// steps, an order of magnitude under SMOKE_TOLERANCE; a wrong value or
// gradient, even one term 1% off, crosses it within a few steps (the grade
// prints how close each run came).
#define SMOKE_STEPS 30
#define SMOKE_BATCH 16
#define SMOKE_TOLERANCE 1e-6   // relative, on each step's loss and gradient norm
#define SMOKE_ROWS (SMOKE_STEPS + 2)

// The smoke runs' settings: RMSNorm's smoke model has QK-norm too, so that
// its row functions run with a gain as well as without.
static const char *const SMOKE_SETS[][3] = {
    { NULL }, { "norm=rmsnorm", "qk_norm=true", NULL }, { "qk_norm=true", NULL },
    { "mlp=swiglu", NULL }, { "pos=rope2d", NULL }, { "ada=zero", NULL },
};
static const char *const SMOKE_NAMES[] = { "baseline", "rmsnorm", "qk_norm", "swiglu", "rope2d", "ada=zero" };

// A run's losses and gradient norms, one pair a line; returns how many lines were read.
static int read_run(const char *path, double run[][2], int max) {
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read the reference run %s", path);
    int n = 0;
    while (n < max && fscanf(f, "%lf %lf", &run[n][0], &run[n][1]) == 2) n++;
    fclose(f);
    return n;
}

static void check_smoke(const char *name, const char *const *sets) {
    omp_set_num_threads(1);
    Config cfg = config_default();
    const char *small[] = { "patch=4", "dim=32", "heads=2", "depth=2", "freq_dim=16", NULL };
    apply(&cfg, small);
    apply(&cfg, sets);
    Model m;
    build(&m, &cfg);
    model_init_weights(&m, 5);
    for (int i = 0; i < m.n_tensors; i++) {               // gains from 0.5 to 1.5, not all 1
        const ParamTensor *pt = &m.tensors[i];
        if (pt->kind != PARAM_GAIN) continue;
        for (size_t j = 0; j < pt->size; j++) m.params[pt->offset + j] = 0.5f + (float)((j * 37 + i * 11) % 100) / 100.0f;
    }
    size_t per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    ck_assert_int_eq((int)per, CIFAR_PIXELS);
    float *x1 = alloc_floats(SMOKE_BATCH * per), *x0 = alloc_floats(SMOKE_BATCH * per);
    float t[SMOKE_BATCH];
    uint8_t pixels[CIFAR_PIXELS];
    for (int n = 0; n < SMOKE_BATCH; n++) {              // images to [-1, 1], as the data loader
        synth_cifar_image(n % CIFAR_NUM_CLASSES, (uint32_t)n, pixels);
        for (size_t i = 0; i < per; i++) x1[n * per + i] = pixels[i] / 127.5f - 1.0f;
        t[n] = (n + 0.5f) / SMOKE_BATCH;                  // times spread over (0, 1)
    }
    Rng r;
    rng_seed(&r, 17);
    rng_fill_normal(&r, x0, (long)(SMOKE_BATCH * per), 1.0f);
    TrainState ts;
    AdamWConfig opt = adamw_default(2e-3f);
    ck_assert_int_eq(train_state_init(&ts, &m, SMOKE_BATCH, &opt, NULL), 0);
    crash_context("training smoke '%s' (train_step of a model of dim=32 depth=2, 16 images): forward, loss, "
                  "backward, AdamW", name);
    double run[SMOKE_ROWS][2];   // loss, gradient norm: before training, each step, after
    run[0][0] = train_forward_backward(&ts, x1, x0, t, NULL);
    run[0][1] = grad_l2_norm(&m);
    for (int s = 0; s < SMOKE_STEPS; s++) {
        run[s + 1][0] = train_step(&ts, x1, NULL, &r);
        run[s + 1][1] = ts.grad_norm;
    }
    run[SMOKE_ROWS - 1][0] = train_forward_backward(&ts, x1, x0, t, NULL);
    run[SMOKE_ROWS - 1][1] = grad_l2_norm(&m);
    double before = run[0][0], after = run[SMOKE_ROWS - 1][0];
    const char *record = getenv("TINYDIT_SMOKE_RECORD"), *reference = getenv("TINYDIT_SMOKE_REFERENCE");
    if (record && *record) {
        FILE *f = fopen(record, "w");
        ck_assert_msg(f != NULL, "cannot write %s", record);
        for (int s = 0; s < SMOKE_ROWS; s++) fprintf(f, "%.17g %.17g\n", run[s][0], run[s][1]);
        ck_assert_int_eq(fclose(f), 0);
    }
    double want[SMOKE_ROWS][2], worst = 0.0;
    int compared = reference && *reference;
    if (compared) {   // step by step against the reference's run
        ck_assert_int_eq(read_run(reference, want, SMOKE_ROWS), SMOKE_ROWS);
        for (int s = 0; s < SMOKE_ROWS; s++)
            for (int k = 0; k < 2; k++) {
                double rel = fabs(run[s][k] - want[s][k]) / fabs(want[s][k]);
                if (!(rel <= worst)) worst = rel;   // NaN sticks
            }
    }
    char versus[96] = "";
    if (compared) snprintf(versus, sizeof versus, ", each step within %.1e of the reference's", worst);
    printf("training smoke %-8s: loss %.4f -> %.4f in %d steps%s\n", name, before, after, SMOKE_STEPS, versus);
    fflush(stdout);
    for (int s = 0; compared && s < SMOKE_ROWS; s++)
        for (int k = 0; k < 2; k++) {
            double off = run[s][k] - want[s][k], rel = fabs(off) / fabs(want[s][k]);
            const char *what = s == 0 ? "before training (the first pass)"
                             : s == SMOKE_ROWS - 1 ? "after training, on the fixed noise" : "of training step";
            char at[32] = "";
            if (s > 0 && s < SMOKE_ROWS - 1) snprintf(at, sizeof at, " %d", s);
            ck_assert_msg(isfinite(run[s][k]) && rel <= SMOKE_TOLERANCE,
                          "%s: the %s %s%s is %.6g, the reference's %.6g (off by %+.3g, %.3g%% of it; "
                          "tolerance %.0e of it)%s", name, k ? "gradient norm" : "loss", what, at, run[s][k],
                          want[s][k], off, 100.0 * rel, SMOKE_TOLERANCE,
                          k ? ": a gradient differs from the reference's" : s == 0 ? ""
                            : ": a gradient or the update differs from the reference's");
        }
    ck_assert_msg(isfinite(after) && after < 0.9 * before,
                  "%s: the loss went from %.4f to %.4f in %d steps (%+.1f%%); it must fall by 10%% at least",
                  name, before, after, SMOKE_STEPS, 100.0 * (after - before) / before);
    train_state_free(&ts);
    model_free(&m);
    free(x1); free(x0);
}

// _i: the variant (a loop test, one test case per variant: see main)
START_TEST(test_smoke) { check_smoke(SMOKE_NAMES[_i], SMOKE_SETS[_i]); }
END_TEST

// ===========================================================================
// (g) the summary: its last line is "params: N" with N the parameter count,
// and the top-level modules' counts (lines indented by two spaces) add up to
// N, so the tree accounts for every parameter.

static long long parse_count(const char *line) {
    // the count is the line's last field: digits and commas
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == ' ')) len--;
    size_t start = len;
    while (start && (isdigit((unsigned char)line[start - 1]) || line[start - 1] == ',')) start--;
    if (start == len || (start && line[start - 1] != ' ')) return -1;
    long long v = 0;
    for (size_t i = start; i < len; i++) if (line[i] != ',') v = v * 10 + (line[i] - '0');
    return v;
}

START_TEST(test_summary) {
    for (int v = 0; v <= N_VARIANTS; v++) {
        const char *nobias[] = { "norm=rmsnorm", "qk_norm=true", "mlp=swiglu", "pos=rope2d", "bias=false", NULL };
        const char *const *sets = v < N_VARIANTS ? VARIANTS[v].sets : nobias;
        Config cfg = config_default();
        apply(&cfg, sets);
        Model m;
        build(&m, &cfg);
        FILE *f = tmpfile();
        ck_assert_ptr_nonnull(f);
        model_print_summary(&m, f);
        rewind(f);
        char line[512], last[512] = "";
        long long top = 0;
        int nlines = 0;
        while (fgets(line, sizeof line, f)) {
            nlines++;
            snprintf(last, sizeof last, "%s", line);
            if (strncmp(line, "  (", 3) == 0) {        // a top-level module
                long long k = parse_count(line);
                ck_assert_msg(k >= 0, "top-level line without a count: %s", line);
                top += k;
            }
        }
        fclose(f);
        char want[64];
        snprintf(want, sizeof want, "params: %zu\n", model_count_params(&cfg.model));
        ck_assert_msg(strcmp(last, want) == 0, "summary ends '%s', want '%s'", last, want);
        ck_assert_msg(top == (long long)m.n_params, "top-level counts add to %lld, not %zu", top, m.n_params);
        ck_assert_int_gt(nlines, 10);
        model_free(&m);
    }
}
END_TEST

// A case of its own (60 s) that runs test for _i = from .. to-1.
static void loop_case(Suite *s, const char *name, const TTest *test, int from, int to) {
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test, from, to);
    suite_add_tcase(s, tc);
}

int main(void) {
    printf("%s\n", openblas_get_config());
    Suite *s = suite_create("model");
    add_tests(s, "model", 60, TESTS(test_param_counts, test_buffers_at_cache_lines, test_tensor_shapes, test_block_counts, test_gate_grad,
                                    test_adazero_start, test_ada_from_metadata, test_noise_is_the_stream_on_any_threads,
                                    test_grad_norm_on_any_threads, test_determinism_baseline, test_determinism_allfour,
                                    test_determinism_adazero, test_determinism_classes, test_label_embed,
                                    test_label_dropout,
                                    test_classes_from_metadata, test_summary, test_grad_check_nan));
    // One case per check that `make grade` runs on its own (scripts/grade.sh,
    // by CK_RUN_CASE): grads (every gradient of the whole model, by finite
    // differences: block_backward's check), golden, sampler, guided_velocity,
    // smoke_<variant>.
    loop_case(s, "grads", test_grads, 0, N_GRAD_VARIANTS);
    add_tests(s, "threads", 60, TESTS(test_grads_on_any_threads));
    add_tests(s, "golden", 60, TESTS(test_golden, test_golden_failures));
    add_tests(s, "sampler", 60, TESTS(test_sampler_constant_baseline, test_sampler_constant_allfour));
    add_tests(s, "guided_velocity", 60, TESTS(test_guided_velocity, test_guided_sampler));
    const char *smoke[] = { "smoke_baseline", "smoke_rmsnorm", "smoke_qknorm", "smoke_swiglu", "smoke_rope2d",
                            "smoke_adazero" };
    for (int v = 0; v < 6; v++) loop_case(s, smoke[v], test_smoke, v, v + 1);
    return run_suite(s);
}
