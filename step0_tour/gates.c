// gates.c: `step0_tour gates`, what adaLN-Zero's zero start does to the
// gradients. A model of the default size with ada=zero (and any --set), one
// batch of random images, three training steps; for each step, the RMS of
// the gradient over each group of tensors before AdamW moves them (0:
// exactly 0). docs/tinydit.md reads it.
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step0.h"
#include "io/config_parse.h"
#include "nn/train_step.h"

#define BATCH 8
#define STEPS 3

// The groups, by tensor name; a block's ada Linear is split by its rows into
// the gates and the shifts and scales.
enum { G_HEAD, G_ADA_F, G_GATES, G_SHIFT_SCALE, G_ATTN, G_MLP, G_EMBED, G_TIME, N_GROUPS };
static const char *const GROUP_NAME[N_GROUPS] = {
    "head", "ada_f (final shift, scale)", "blocks' ada: gate rows", "blocks' ada: shift, scale rows",
    "blocks' attention (qkv, proj)", "blocks' MLP", "patch embedding, positions", "time MLP (t_fc1, t_fc2)" };

static int group_of(const char *name) {
    if (strncmp(name, "head.", 5) == 0) return G_HEAD;
    if (strncmp(name, "ada_f.", 6) == 0) return G_ADA_F;
    if (strstr(name, ".attn.")) return G_ATTN;
    if (strstr(name, ".mlp.")) return G_MLP;
    if (strncmp(name, "t_fc", 4) == 0) return G_TIME;
    return G_EMBED;   // patch_embed, pos_row, pos_col (a block's ada is split by the caller)
}

// Whether output row r of a block's ada Linear belongs to a gate: the
// layout is ada_chunks' (common/nn/model.h), laid over any row of floats.
static bool is_gate_row(const ModelConfig *c, float *row, size_t r) {
    AdaChunks ch = ada_chunks(c, row);
    const float *at = row + r;
    return (ch.gate_a && at >= ch.gate_a && at < ch.gate_a + c->dim) ||
           (ch.gate_m && at >= ch.gate_m && at < ch.gate_m + c->dim);
}

// Sum of squares and count of each group's gradients.
static void group_sums(const Model *m, double sq[N_GROUPS], size_t n[N_GROUPS]) {
    memset(sq, 0, sizeof(double) * N_GROUPS);
    memset(n, 0, sizeof(size_t) * N_GROUPS);
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        const float *g = m->grads + t->offset;
        for (size_t j = 0; j < t->size; j++) {
            int k = group_of(t->name);
            if (t->block >= 0 && strstr(t->name, ".ada.")) {
                // row r of the weight (6D, D) or of the bias (6D)
                size_t row = t->ndim == 2 ? j / (size_t)t->shape[1] : j;
                k = is_gate_row(&m->cfg, m->grads, row) ? G_GATES : G_SHIFT_SCALE;
            }
            sq[k] += (double)g[j] * g[j];
            n[k]++;
        }
    }
}

int gate_grads(const Options *o) {
    // ada=zero, then every --set, then one check (config_apply)
    Config cfg = config_default();
    const char *sets[1 + ARGS_LIST_MAX] = { "ada=zero" };
    for (int i = 0; i < o->sets.n; i++) sets[1 + i] = o->sets.v[i];
    char err[512];
    if (config_apply(&cfg, sets, 1 + o->sets.n, err, sizeof err) != 0) { fprintf(stderr, "step0_tour: %s\n", err); return 2; }
    if (cfg.model.ada != ADA_ZERO) { fprintf(stderr, "step0_tour: gates shows ada=zero only\n"); return 2; }
    omp_set_num_threads(1);   // 8 images: too few to share out
    Model m;
    if (model_build(&m, &cfg.model, err, sizeof err) != 0) { fprintf(stderr, "step0_tour: %s\n", err); return 2; }
    model_init_weights(&m, 0);
    size_t per = cfg_image_floats(&cfg.model);
    float *x1 = malloc(sizeof(float) * BATCH * per), *x0 = malloc(sizeof(float) * BATCH * per), t[BATCH];
    Rng r;
    rng_seed(&r, 1);
    rng_fill_uniform(&r, x1, (long)(BATCH * per), -1.0f, 1.0f);   // random "images" in [-1, 1]
    rng_fill_normal(&r, x0, (long)(BATCH * per), 1.0f);
    for (int n = 0; n < BATCH; n++) t[n] = (n + 0.5f) / BATCH;
    TrainState ts;
    AdamWConfig opt = adamw_default(cfg.run.lr);
    if (!x1 || !x0 || train_state_init(&ts, &m, BATCH, &opt, NULL) != 0) { fprintf(stderr, "step0_tour: out of memory\n"); return 1; }

    double rms[STEPS][N_GROUPS];
    for (int s = 0; s < STEPS; s++) {
        double loss = train_forward_backward(&ts, x1, x0, t, NULL);
        if (s == 0) {
            float vmax = 0.0f;
            for (size_t i = 0; i < BATCH * per; i++) vmax = fmaxf(vmax, fabsf(ts.act.v[i]));
            size_t NLD = (size_t)BATCH * cfg_tokens(&cfg.model) * cfg.model.dim;
            int identity = 1;
            for (int k = 1; k <= 2 * cfg.model.depth; k++)
                identity &= memcmp(ts.act.resid, ts.act.resid + k * NLD, NLD * sizeof(float)) == 0;
            printf("adaLN-Zero, %zu parameters; %d random images, lr %g\n", m.n_params, BATCH, cfg.run.lr);
            printf("step 0: v is 0 everywhere: %s (max |v| = %g); every block's output equals its input: %s\n",
                   vmax == 0.0f ? "yes" : "no", vmax, identity ? "yes" : "no");
            printf("loss at step 0: %.4f (mean of (x1 - x0)^2: the target itself)\n\n", loss);
        }
        double sq[N_GROUPS];
        size_t n[N_GROUPS];
        group_sums(&m, sq, n);
        for (int k = 0; k < N_GROUPS; k++) rms[s][k] = n[k] ? sqrt(sq[k] / n[k]) : 0.0;
        train_adamw_step(&ts);
    }
    printf("RMS of the gradient, before each step's AdamW update\n");
    printf("%-32s %10s %10s %10s\n", "", "step 0", "step 1", "step 2");
    for (int k = 0; k < N_GROUPS; k++) {
        printf("%-32s", GROUP_NAME[k]);
        for (int s = 0; s < STEPS; s++) {
            if (rms[s][k] == 0.0) printf(" %10s", "0");
            else printf(" %10.2e", rms[s][k]);
        }
        printf("\n");
    }
    train_state_free(&ts);
    model_free(&m);
    free(x1); free(x0);
    return 0;
}
