// backward.c: `step0_tour backward`, the backward pass checked by finite
// differences (docs/backward.md), and the picture of the gradient's size
// through the blocks (--figures).
//
// The check: a tiny TinyDiT (the one tests/test_model.c checks), one
// forward and backward pass of the flow-matching loss on two images, then
// every group of parameters in the order the backward pass reaches it
// (common/nn/gradcheck.h), each probed element moved by ±h and the loss
// computed again: the backward's gradient against the central difference.
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step0.h"
#include "eval/scorecard.h"
#include "io/config_parse.h"
#include "io/figure.h"
#include "nn/gradcheck.h"
#include "nn/train_step.h"

#define CHECK_H 3e-2f       // the step of the finite differences (tests/test_model.c says why)
#define CHECK_PROBES 8      // elements probed in each group
#define CHECK_IMAGES 2

static const char *const TINY[] = { "img=8", "patch=4", "dim=16", "heads=2", "depth=2", "freq_dim=8" };

typedef struct { TrainState ts; const float *x1, *x0, *t; const int *y; } Batch;

static double loss_of(void *p) {
    Batch *b = p;
    return train_loss(&b->ts, b->x1, b->x0, b->t, b->y);
}

int backward_check(const Options *o) {
    omp_set_num_threads(1);   // thousands of tiny passes: threads would cost more than they save
    Config cfg = config_default();
    char err[ERRLEN];
    for (size_t i = 0; i < sizeof TINY / sizeof TINY[0]; i++) config_set(&cfg, TINY[i], err, sizeof err);
    for (int i = 0; i < o->sets.n; i++)
        if (config_set(&cfg, o->sets.v[i], err, sizeof err) != 0) { fprintf(stderr, "step0_tour: %s\n", err); return 2; }
    Model m;
    if (model_build(&m, &cfg.model, err, sizeof err) != 0) { fprintf(stderr, "step0_tour: %s\n", err); return 2; }
    grad_check_weights(&m, 7);
    size_t n = CHECK_IMAGES * cfg_image_floats(&cfg.model);
    float *x1 = malloc(sizeof(float) * n), *x0 = malloc(sizeof(float) * n), t[CHECK_IMAGES] = { 0.3f, 0.8f };
    Rng r;
    rng_seed(&r, 11);
    rng_fill_uniform(&r, x1, (long)n, -1.0f, 1.0f);
    rng_fill_normal(&r, x0, (long)n, 1.0f);
    int y[CHECK_IMAGES] = { 3 % (cfg.model.classes + 1), cfg_null_label(&cfg.model) };   // a class and the null label
    Batch b = { .x1 = x1, .x0 = x0, .t = t, .y = cfg.model.classes > 0 ? y : NULL };
    AdamWConfig opt = adamw_default(1e-3f);
    if (train_state_init(&b.ts, &m, CHECK_IMAGES, &opt, NULL) != 0) { fprintf(stderr, "step0_tour: out of memory\n"); return 1; }
    double loss = train_forward_backward(&b.ts, x1, x0, t, b.y);
    float *grads = malloc(sizeof(float) * m.n_params);
    memcpy(grads, m.grads, sizeof(float) * m.n_params);
    char desc[512];
    model_config_describe(&cfg.model, desc, sizeof desc);
    printf("the backward pass against finite differences: %s\n", desc);
    printf("%d images, loss %.4f; each group in the order the backward pass reaches it, up to %d elements moved "
           "by +-%g\n", CHECK_IMAGES, loss, CHECK_PROBES, CHECK_H);
    printf("%-40s %12s %12s\n", "group", "largest |g|", "error/|g|");
    GradGroup *groups = malloc(sizeof *groups * 6 * m.n_tensors);   // at most six groups a tensor
    if (!groups) { fprintf(stderr, "step0_tour: out of memory\n"); return 1; }
    int ng = grad_groups(&m, groups, 6 * m.n_tensors), bad = 0;
    double worst = 0.0;
    for (int i = 0; i < ng; i++) {
        GradCheck c;
        grad_check_group(&m, &groups[i], grads, loss_of, &b, CHECK_PROBES, CHECK_H, &c);
        printf("%-40s %12.2e %12.1e\n", groups[i].name, c.scale, c.worst);
        if (!(c.worst <= 1e-2)) bad++;
        if (c.worst > worst) worst = c.worst;
    }
    printf("%d groups of %d tensors; the worst error %.1e of its group's largest gradient%s\n", ng, m.n_tensors, worst,
           bad ? "" : ", every one under 1e-2");
    train_state_free(&b.ts);
    model_free(&m);
    free(x1); free(x0); free(grads); free(groups);
    return bad ? 1 : 0;
}

// ---------------------------------------------------------------------------
// The picture: the RMS of the gradient of each part of the model, in the
// order the backward pass reaches it, for the shipped model's configuration
// at its initialisation (step 0 of training) and for the shipped model
// itself, on the same 8 images: its own samples, noised to times spread
// over (0, 1).
#define PARTS_MAX 64

// The parts, in the order the backward pass reaches them: the head, the
// final layer's ada_f, each block from the last (its MLP half, its
// attention half, then its ada Linear, whose gradient gathers both halves'
// shifts, scales and gates), the patch embedding, the time MLP.
static int part_names(const Model *m, char names[][32]) {
    int n = 0;
    snprintf(names[n++], 32, "head");
    snprintf(names[n++], 32, "final adaLN");
    for (int b = m->cfg.depth - 1; b >= 0 && n + 3 < PARTS_MAX - 2; b--) {
        snprintf(names[n++], 32, "block %d MLP", b);
        snprintf(names[n++], 32, "block %d attention", b);
        snprintf(names[n++], 32, "block %d adaLN", b);
    }
    snprintf(names[n++], 32, "patch embedding");
    snprintf(names[n++], 32, "time MLP");
    return n;
}

// The part a tensor belongs to (one of part_names').
static void part_of(const char *name, char *part, size_t n) {
    int b;
    if (sscanf(name, "blocks.%d.", &b) == 1)
        snprintf(part, n, "block %d %s", b, strstr(name, ".mlp.") ? "MLP" : strstr(name, ".attn.") ? "attention" : "adaLN");
    else if (strncmp(name, "t_fc", 4) == 0) snprintf(part, n, "time MLP");
    else if (strncmp(name, "ada_f", 5) == 0) snprintf(part, n, "final adaLN");
    else if (strncmp(name, "head", 4) == 0) snprintf(part, n, "head");
    else snprintf(part, n, "patch embedding");
}

// The RMS of each part's gradient after one forward and backward pass on
// x1 (N images), into rms, in part_names' order; returns how many parts.
static int part_rms(Model *m, const float *x1, int N, double *rms, char names[][32]) {
    size_t per = cfg_image_floats(&m->cfg);
    float *x0 = malloc(sizeof(float) * per * N), *t = malloc(sizeof(float) * N);
    Rng r;
    rng_seed(&r, TOUR_NOISE_SEED);
    rng_fill_normal(&r, x0, (long)(per * N), 1.0f);
    for (int i = 0; i < N; i++) t[i] = (i + 0.5f) / N;
    TrainState ts;
    AdamWConfig opt = adamw_default(1e-3f);
    int np = part_names(m, names);
    double sq[PARTS_MAX] = { 0 };
    size_t cnt[PARTS_MAX] = { 0 };
    if (train_state_init(&ts, m, N, &opt, NULL) == 0) {
        train_forward_backward(&ts, x1, x0, t, NULL);
        for (int i = 0; i < m->n_tensors; i++) {
            const ParamTensor *T = &m->tensors[i];
            char part[32];
            part_of(T->name, part, sizeof part);
            int k = 0;
            while (k < np && strcmp(names[k], part) != 0) k++;
            if (k == np) continue;
            for (size_t j = 0; j < T->size; j++) sq[k] += (double)m->grads[T->offset + j] * m->grads[T->offset + j];
            cnt[k] += T->size;
        }
    }
    for (int k = 0; k < np; k++) rms[k] = cnt[k] ? sqrt(sq[k] / (double)cnt[k]) : 0.0;
    train_state_free(&ts);
    free(x0); free(t);
    return np;
}

int figure_gradient_sizes(Model *m, const char *dir, char *err, size_t errlen) {
    enum { N = 8 };
    size_t per = cfg_image_floats(&m->cfg);
    float *x1 = malloc(sizeof(float) * per * N);
    scorecard_samples(m, x1, N, EULER_STEPS);               // the trained model's own images
    Model fresh;
    double trained[PARTS_MAX], start[PARTS_MAX];
    char names[PARTS_MAX][32], names0[PARTS_MAX][32];
    if (model_build(&fresh, &m->cfg, err, errlen) != 0) { free(x1); return -1; }
    model_init_weights(&fresh, 0);
    int n = part_rms(m, x1, N, trained, names), n0 = part_rms(&fresh, x1, N, start, names0);
    model_free(&fresh);
    free(x1);
    FILE *f = figure_data_open(dir, "tinydit_gradient_sizes", err, errlen);
    if (!f) return -1;
    fprintf(f, "# part\tat step 0 (initialisation)\ttrained (the shipped model): the RMS of the loss's gradient "
               "over each part's weights, in the order the backward pass reaches them; %d images\n", N);
    for (int k = 0; k < n && k < n0; k++) fprintf(f, "%s\t%.6g\t%.6g\n", names[k], start[k], trained[k]);
    if (figure_data_close(f, dir, "tinydit_gradient_sizes", err, errlen) != 0) return -1;
    return figure_plot(dir, "step0_tour/plots", "tinydit_gradient_sizes", 900, 480, NULL, err, errlen);
}
