// golden.c: the whole model against the PyTorch reference (see golden.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/args.h"
#include "io/checkpoint.h"
#include "nn/flow.h"
#include "golden.h"
#include "nn/model.h"
#include "io/safetensors.h"
#include "nn/train_step.h"

// max |a − b| / max |b|: an error relative to the tensor's own scale, so a
// tensor of small gradients is judged as strictly as one of large ones.
static double scaled_err(const float *a, const float *b, size_t n) {
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d > diff || isnan(d)) diff = isnan(d) ? INFINITY : d;
        if (fabs(b[i]) > scale) scale = fabs(b[i]);
    }
    return scale > 0 ? diff / scale : diff;
}

static double meta_num(const SafeTensors *st, const char *key, double dflt) {
    const char *v = st_meta(st, key);
    return v ? atof(v) : dflt;
}

static const StTensor *need(const SafeTensors *st, const char *name, size_t numel,
                            const char *path, char *err, size_t errlen) {
    const StTensor *t = st_find(st, name);
    if (!t) snprintf(err, errlen, "%s: no tensor '%s'", path, name);
    else if (numel && t->numel != numel) {
        snprintf(err, errlen, "%s: tensor '%s' has %zu values, expected %zu", path, name, t->numel, numel);
        t = NULL;
    }
    return t;
}

// One golden file, read, with the model it describes built from it.
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    SafeTensors st;
    Model m; int have_model;
    TrainState ts; int have_ts;
    AdamWConfig opt;
    int N;                          // images in the file's batch
    size_t per;                     // floats per image
    const StTensor *x1, *x0, *t;    // the batch: data, noise, times
    int *y;                         // (N) its labels (class-conditional), else NULL
    float *start;                   // the file's weights (n_params)
    float *ours;                    // our gradients at those weights (n_params)
} Golden;

// The tensor "<prefix><param name>" for parameter i, with the parameter's size.
static const StTensor *need_param(const Golden *g, const char *prefix, int i) {
    char name[160];
    snprintf(name, sizeof name, "%s%s", prefix, g->m.tensors[i].name);
    return need(&g->st, name, g->m.tensors[i].size, g->path, g->err, g->errlen);
}

// Labels stored as floats holding integers ("input.y", "sample.y"): n of
// them, each a class 0..classes-1 or the null label, classes. A new array,
// or NULL with a message.
static int *labels_from(const Golden *g, const char *name, int n) {
    const StTensor *t = need(&g->st, name, (size_t)n, g->path, g->err, g->errlen);
    int classes = g->m.cfg.classes, *y = t ? malloc(sizeof(int) * n) : NULL;
    if (!t) return NULL;
    if (!y) { snprintf(g->err, g->errlen, "out of memory"); return NULL; }
    for (int i = 0; i < n; i++) {
        float v = t->data[i];
        if (!(v >= 0 && v <= classes) || v != (float)(int)v) {
            snprintf(g->err, g->errlen, "%s: %s[%d] is %g, not a label 0..%d", g->path, name, i, v, classes);
            free(y);
            return NULL;
        }
        y[i] = (int)v;
    }
    return y;
}

// The file's config and weights into a model, its AdamW settings and batch.
static int golden_open(Golden *g, GoldenReport *rep) {
    Config cfg;
    if (checkpoint_config_from(&g->st, g->path, &cfg, g->err, g->errlen) != 0) return -1;
    model_config_describe(&cfg.model, rep->config, sizeof rep->config);
    if (model_build(&g->m, &cfg.model, g->err, g->errlen) != 0) return -1;
    g->have_model = 1;
    if (checkpoint_copy_params(&g->st, g->path, "param.", &g->m, g->err, g->errlen) != 0) return -1;
    g->t = need(&g->st, "input.t", 0, g->path, g->err, g->errlen);
    if (!g->t) return -1;
    g->N = (int)g->t->numel;
    g->per = (size_t)cfg.model.channels * cfg.model.img * cfg.model.img;
    g->x1 = need(&g->st, "input.x1", g->N * g->per, g->path, g->err, g->errlen);
    g->x0 = need(&g->st, "input.x0", g->N * g->per, g->path, g->err, g->errlen);
    if (!g->x1 || !g->x0) return -1;
    if (cfg.model.classes > 0 && !(g->y = labels_from(g, "input.y", g->N))) return -1;
    const SafeTensors *st = &g->st;
    AdamWConfig opt = { (float)meta_num(st, "adamw.lr", 1e-2), (float)meta_num(st, "adamw.beta1", 0.9),
                        (float)meta_num(st, "adamw.beta2", 0.999), (float)meta_num(st, "adamw.eps", 1e-8),
                        (float)meta_num(st, "adamw.weight_decay", 0.0) };
    g->opt = opt;
    g->start = malloc(g->m.n_params * sizeof(float));
    g->ours = malloc(g->m.n_params * sizeof(float));
    if (!g->start || !g->ours || train_state_init(&g->ts, &g->m, g->N, &g->opt) != 0) {
        snprintf(g->err, g->errlen, "out of memory");
        return -1;
    }
    g->have_ts = 1;
    memcpy(g->start, g->m.params, g->m.n_params * sizeof(float));
    return 0;
}

// One forward/backward on the file's batch: loss, output, every gradient.
static int check_forward_backward(Golden *g, GoldenReport *rep) {
    const StTensor *vref = need(&g->st, "output.v", g->N * g->per, g->path, g->err, g->errlen);
    const StTensor *lref = need(&g->st, "output.loss", 1, g->path, g->err, g->errlen);
    if (!vref || !lref) return -1;
    double loss = train_forward_backward(&g->ts, g->x1->data, g->x0->data, g->t->data, g->y);
    rep->loss_rel = fabs(loss - lref->data[0]) / fabs(lref->data[0]);
    rep->out_err = scaled_err(g->ts.act.v, vref->data, g->N * g->per);
    for (int i = 0; i < g->m.n_tensors; i++) {
        const StTensor *gr = need_param(g, "grad.", i);
        if (!gr) return -1;
        double e = scaled_err(g->m.grads + g->m.tensors[i].offset, gr->data, gr->numel);
        if (e > rep->grad_err || isnan(e)) {
            rep->grad_err = e;
            snprintf(rep->grad_worst, sizeof rep->grad_worst, "%s", g->m.tensors[i].name);
        }
        rep->n_grads++;
    }
    memcpy(g->ours, g->m.grads, g->m.n_params * sizeof(float));
    return 0;
}

// The optimizer back at the file's weights, with zero moments, at step 0.
static void restart_optimizer(Golden *g) {
    memcpy(g->m.params, g->start, g->m.n_params * sizeof(float));
    memset(g->ts.adam_m, 0, g->m.n_params * sizeof(float));
    memset(g->ts.adam_v, 0, g->m.n_params * sizeof(float));
    g->ts.step = 0;
}

// Below this, a reference gradient is under float32's resolution of its
// tensor (1e-5 of its largest element), and our step there is decided by
// rounding noise: lr·g/(|g|+ε) is lr·sign(g) for any tiny g, right or wrong.
static double resolution(const StTensor *gref) {
    double gmax = 0;
    for (size_t k = 0; k < gref->numel; k++) if (fabs(gref->data[k]) > gmax) gmax = fabs(gref->data[k]);
    return 1e-5 * gmax;
}

// One AdamW step, judged against the learning rate (a first Adam step moves
// a weight by about lr·sign(g)). It is checked twice:
//  1. the optimizer alone: our AdamW applied to the file's own gradients
//     must land within GOLDEN_TOL_ADAMW_STEPS of lr of the reference's
//     weights (float32 against float64: measured about 1e-5 of lr);
//  2. end to end, with our gradients. Where the true gradient is zero (the
//     key bias cannot move a softmax, so its gradient is exactly 0) or below
//     float32's resolution of its tensor (|g_ref| < 1e-5 · max|g_ref|), the
//     step is decided by rounding noise: those elements are counted, not judged.
static int check_adamw_one_step(Golden *g, GoldenReport *rep) {
    for (int pass = 0; pass < 2; pass++) {
        restart_optimizer(g);
        for (int i = 0; i < g->m.n_tensors; i++) {
            const ParamTensor *T = &g->m.tensors[i];
            const float *src = pass == 0 ? need_param(g, "grad.", i)->data : g->ours + T->offset;
            memcpy(g->m.grads + T->offset, src, T->size * sizeof(float));
        }
        train_adamw_step(&g->ts);
        for (int i = 0; i < g->m.n_tensors; i++) {
            const ParamTensor *T = &g->m.tensors[i];
            const StTensor *a = need_param(g, "adamw.", i), *gref = need_param(g, "grad.", i);
            if (!a) return -1;
            double res = resolution(gref);
            for (size_t j = 0; j < a->numel; j++) {
                double e = fabs((double)g->m.params[T->offset + j] - a->data[j]) / g->opt.lr;
                if (isnan(e)) e = INFINITY;
                if (pass == 0) { if (e > rep->adamw_err) rep->adamw_err = e; continue; }
                if (fabs(gref->data[j]) < res) { rep->adamw_unresolved++; continue; }
                if (e > rep->adamw_e2e_err) rep->adamw_e2e_err = e;
            }
        }
    }
    return 0;
}

// Step k of the file's K: our weights against "adamw<k>.<param>". With
// skip (one flag per weight), the flagged weights are left out and weights
// whose reference gradient at this step is unresolved are flagged first.
static int compare_step(Golden *g, int k, unsigned char *skip, double *worst) {
    char prefix[32];
    *worst = 0.0;
    for (int i = 0; i < g->m.n_tensors; i++) {
        const ParamTensor *T = &g->m.tensors[i];
        snprintf(prefix, sizeof prefix, "adamw%d.", k);
        const StTensor *a = need_param(g, prefix, i);
        snprintf(prefix, sizeof prefix, "adamw%d.grad.", k);
        const StTensor *gref = need_param(g, prefix, i);
        if (!a || !gref) return -1;
        double res = resolution(gref);
        for (size_t j = 0; j < a->numel; j++) {
            if (skip && fabs(gref->data[j]) < res) skip[T->offset + j] = 1;
            if (skip && skip[T->offset + j]) continue;
            double e = fabs((double)g->m.params[T->offset + j] - a->data[j]) / g->opt.lr;
            if (!(e <= *worst)) *worst = isnan(e) ? INFINITY : e;
        }
    }
    return 0;
}

// K optimizer steps on the file's batch ("adamw.steps" = K), both ways:
//  1. our AdamW on the reference's gradients of each step: every weight
//     within GOLDEN_TOL_ADAMW_STEPS of lr after every step;
//  2. end to end, our gradients at our weights each step: within
//     GOLDEN_TOL_ADAMW of lr, leaving out (for good) each weight whose
//     reference gradient was unresolved at some step so far.
static int check_adamw_steps(Golden *g, GoldenReport *rep) {
    const char *v = st_meta(&g->st, "adamw.steps");
    if (!v) return 0;
    int K;
    if (parse_int_in(v, 1, GOLDEN_MAX_STEPS, &K) != 0) {
        snprintf(g->err, g->errlen, "%s: adamw.steps is '%s', not 1..%d", g->path, v, GOLDEN_MAX_STEPS);
        return -1;
    }
    rep->adamw_steps = K;
    unsigned char *skip = calloc(g->m.n_params, 1);
    if (!skip) { snprintf(g->err, g->errlen, "out of memory"); return -1; }
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        restart_optimizer(g);
        for (int k = 1; k <= K && rc == 0; k++) {
            if (pass == 1) train_forward_backward(&g->ts, g->x1->data, g->x0->data, g->t->data, g->y);
            char prefix[32];
            snprintf(prefix, sizeof prefix, "adamw%d.grad.", k);
            for (int i = 0; pass == 0 && i < g->m.n_tensors && rc == 0; i++) {
                const StTensor *gref = need_param(g, prefix, i);
                if (!gref) rc = -1;
                else memcpy(g->m.grads + g->m.tensors[i].offset, gref->data, gref->numel * sizeof(float));
            }
            if (rc) break;
            train_adamw_step(&g->ts);
            double *worst = pass == 0 ? &rep->adamw_step_err[k - 1] : &rep->adamw_step_e2e[k - 1];
            rc = compare_step(g, k, pass == 0 ? NULL : skip, worst);
        }
    }
    for (size_t j = 0; j < g->m.n_params; j++) rep->adamw_step_unresolved += skip[j];
    free(skip);
    return rc;
}

// An Euler sample with the weights after one step (our gradients); a
// class-conditional file's for the labels "sample.y" at its guidance.
static int check_sample(Golden *g, GoldenReport *rep) {
    const StTensor *noise = need(&g->st, "sample.noise", 0, g->path, g->err, g->errlen);
    const StTensor *sref = need(&g->st, "sample.out", noise ? noise->numel : 0, g->path, g->err, g->errlen);
    if (!noise || !sref) return -1;
    int SN = (int)(noise->numel / g->per);
    int steps = (int)meta_num(&g->st, "sample.steps", 4);
    float w = (float)meta_num(&g->st, "sample.guidance", 1.0);
    int *y = g->m.cfg.classes > 0 ? labels_from(g, "sample.y", SN) : NULL;
    if (g->m.cfg.classes > 0 && !y) return -1;
    Activations sa;
    float *x = malloc(noise->numel * sizeof(float));
    if (!x || activations_alloc(&sa, &g->m, y ? flow_guided_rows(SN, w) : SN) != 0) {
        free(x); free(y);
        snprintf(g->err, g->errlen, "out of memory");
        return -1;
    }
    memcpy(x, noise->data, noise->numel * sizeof(float));
    int rc = 0;
    if (y) rc = flow_sample_guided(&g->m, &sa, x, y, SN, w, steps, g->err, g->errlen);
    else flow_sample(&g->m, &sa, x, steps);
    if (rc == 0) rep->sample_err = scaled_err(x, sref->data, noise->numel);
    activations_free(&sa);
    free(x); free(y);
    return rc;
}

static int verdict(const GoldenReport *r) {
    int pass = r->loss_rel <= GOLDEN_TOL_LOSS && r->out_err <= GOLDEN_TOL_OUT && r->grad_err <= GOLDEN_TOL_GRAD &&
               r->adamw_err <= GOLDEN_TOL_ADAMW_STEPS && r->adamw_e2e_err <= GOLDEN_TOL_ADAMW &&
               r->sample_err <= GOLDEN_TOL_SAMPLE;
    for (int k = 0; k < r->adamw_steps; k++)
        pass = pass && r->adamw_step_err[k] <= GOLDEN_TOL_ADAMW_STEPS && r->adamw_step_e2e[k] <= GOLDEN_TOL_ADAMW;
    return pass;
}

int golden_compare(const char *path, GoldenReport *rep, char *err, size_t errlen) {
    memset(rep, 0, sizeof *rep);
    Golden g;
    memset(&g, 0, sizeof g);
    g.path = path; g.err = err; g.errlen = errlen;
    if (st_read(path, &g.st, err, errlen) != 0) return -1;
    // the K-step check runs before the one-step check, which leaves the
    // weights after one step (our gradients) for the sample
    int rc = golden_open(&g, rep) == 0 && check_forward_backward(&g, rep) == 0 &&
             check_adamw_steps(&g, rep) == 0 && check_adamw_one_step(&g, rep) == 0 &&
             check_sample(&g, rep) == 0 ? 0 : -1;
    if (rc == 0) rep->pass = verdict(rep);
    free(g.start);
    free(g.ours);
    free(g.y);
    if (g.have_ts) train_state_free(&g.ts);
    if (g.have_model) model_free(&g.m);
    st_free(&g.st);
    return rc;
}
