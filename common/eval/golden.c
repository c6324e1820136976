// golden.c: the whole model against the PyTorch reference (see golden.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/errors.h"
#include "io/args.h"
#include "io/checkpoint.h"
#include "nn/ema.h"
#include "nn/flow.h"
#include "golden.h"
#include "parity.h"   // parity_rel_err
#include "nn/model.h"
#include "io/safetensors.h"
#include "nn/train_step.h"

static double meta_num(const SafeTensors *st, const char *key, double dflt) {
    const char *v = st_meta(st, key);
    return v ? atof(v) : dflt;
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
    Config cfg;                     // the file's model and run (t_dist, ema, ...)
    const StTensor *x1, *x0, *t;    // the batch: data, noise, times
    float *times;                   // the times the steps use: ours from input.u (logit-normal), else input.t's
    int *y;                         // (N) its labels (class-conditional), else NULL
    int K;                          // AdamW steps in the file
    float *chain;                   // our weights after AdamW on the reference's gradients
    float *keep_m, *keep_v;         // that chain's moments, kept across a step of ours
} Golden;

// The tensor "<prefix><param name>" for parameter i, with the parameter's size.
static const StTensor *need_param(const Golden *g, const char *prefix, int i) {
    char name[160];
    snprintf(name, sizeof name, "%s%s", prefix, g->m.tensors[i].name);
    return st_need(&g->st, g->path, name, g->m.tensors[i].size, g->err, g->errlen);
}

// Labels stored as floats holding integers ("input.y", "sample.y"): n of
// them, each a class 0..classes-1 or the null label. A new array, or NULL
// with a message.
static int *labels_from(const Golden *g, const char *name, int n) {
    const StTensor *t = st_need(&g->st, g->path, name, (size_t)n, g->err, g->errlen);
    int last = cfg_null_label(&g->m.cfg), *y = t ? malloc(sizeof(int) * n) : NULL;
    if (!t) return NULL;
    if (!y) { snprintf(g->err, g->errlen, "out of memory"); return NULL; }
    for (int i = 0; i < n; i++) {
        float v = t->data[i];
        if (!(v >= 0 && v <= last) || v != (float)(int)v) {
            snprintf(g->err, g->errlen, "%s: %s[%d] is %g, not a label 0..%d", g->path, name, i, v, last);
            free(y);
            return NULL;
        }
        y[i] = (int)v;
    }
    return y;
}

// The file's config and weights into a model, its AdamW settings and batch.
static int golden_open(Golden *g, GoldenReport *rep) {
    const Config *cfg = &g->cfg;
    if (checkpoint_config_from(&g->st, g->path, &g->cfg, g->err, g->errlen) != 0) return -1;
    model_config_describe(&cfg->model, rep->config, sizeof rep->config);
    if (model_build(&g->m, &cfg->model, g->err, g->errlen) != 0) return -1;
    g->have_model = 1;
    if (checkpoint_copy_params(&g->st, g->path, "param.", &g->m, g->err, g->errlen) != 0) return -1;
    g->t = st_need(&g->st, g->path, "input.t", 0, g->err, g->errlen);
    if (!g->t) return -1;
    g->N = (int)g->t->numel;
    g->per = cfg_image_floats(&cfg->model);
    g->x1 = st_need(&g->st, g->path, "input.x1", g->N * g->per, g->err, g->errlen);
    g->x0 = st_need(&g->st, g->path, "input.x0", g->N * g->per, g->err, g->errlen);
    if (!g->x1 || !g->x0) return -1;
    if (cfg->model.classes > 0 && !(g->y = labels_from(g, "input.y", g->N))) return -1;
    if (!(g->times = malloc(sizeof(float) * g->N))) return errorf(g->err, g->errlen, "out of memory");
    memcpy(g->times, g->t->data, sizeof(float) * g->N);
    const SafeTensors *st = &g->st;
    g->opt = (AdamWConfig){ (float)meta_num(st, "adamw.lr", 1e-2), (float)meta_num(st, "adamw.beta1", 0.9),
                            (float)meta_num(st, "adamw.beta2", 0.999), (float)meta_num(st, "adamw.eps", 1e-8),
                            (float)meta_num(st, "adamw.weight_decay", 0.0) };
    g->K = 1;
    const char *steps = st_meta(st, "adamw.steps");
    if (steps && parse_int_in(steps, 1, GOLDEN_MAX_STEPS, &g->K) != 0)
        return errorf(g->err, g->errlen, "%s: adamw.steps is '%s', not 1..%d", g->path, steps, GOLDEN_MAX_STEPS);
    rep->steps = g->K;
    size_t bytes = g->m.n_params * sizeof(float);
    g->chain = malloc(bytes);
    g->keep_m = malloc(bytes);
    g->keep_v = malloc(bytes);
    if (!g->chain || !g->keep_m || !g->keep_v || train_state_init(&g->ts, &g->m, g->N, &g->opt, NULL) != 0)
        return errorf(g->err, g->errlen, "out of memory");
    g->have_ts = 1;
    memcpy(g->chain, g->m.params, bytes);
    return 0;
}

// Step k's tensors in the file: the weights before it, the reference's
// gradient at it and its weights after it. A one-step file names them
// "param.", "grad." and "adamw."; step k of K, "adamw<k-1>." (or "param."),
// "adamw<k>.grad." and "adamw<k>.".
typedef struct { char before[32], grad[32], after[32]; } StepNames;

static StepNames step_names(const Golden *g, int k) {
    StepNames s;
    if (k == 1) snprintf(s.before, sizeof s.before, "param.");
    else snprintf(s.before, sizeof s.before, "adamw%d.", k - 1);
    if (st_meta(&g->st, "adamw.steps")) {
        snprintf(s.grad, sizeof s.grad, "adamw%d.grad.", k);
        snprintf(s.after, sizeof s.after, "adamw%d.", k);
    } else {
        snprintf(s.grad, sizeof s.grad, "grad.");
        snprintf(s.after, sizeof s.after, "adamw.");
    }
    return s;
}

// Every parameter's "<prefix><name>" tensor into dst (the model's layout).
static int copy_tensors(Golden *g, const char *prefix, float *dst) {
    for (int i = 0; i < g->m.n_tensors; i++) {
        const StTensor *t = need_param(g, prefix, i);
        if (!t) return -1;
        memcpy(dst + g->m.tensors[i].offset, t->data, t->numel * sizeof(float));
    }
    return 0;
}

static GoldenCheck *add_check(GoldenReport *rep, const char *quantity, int step, double tol) {
    GoldenCheck *c = &rep->check[rep->n_checks++];
    memset(c, 0, sizeof *c);
    c->quantity = quantity; c->step = step; c->tol = tol;
    return c;
}

// A check over its tolerance (a NaN error is); golden_failures names each.
static int over(const GoldenCheck *c) { return !(c->err <= c->tol); }

// A worse error (or a NaN, which sticks) for check c, found in `where`.
static void worse(GoldenCheck *c, double e, const char *where) {
    if (e <= c->err) return;
    c->err = isnan(e) ? INFINITY : e;
    snprintf(c->where, sizeof c->where, "%s", where);
}

// Our gradients (in the model) against the reference's of step k, tensor
// by tensor; fills bound[i] with tensor i's worst |ours − ref|.
static int check_grads(Golden *g, GoldenReport *rep, const StepNames *s, int k, double *bound) {
    GoldenCheck *c = add_check(rep, "grads", k, GOLDEN_TOL_GRAD);
    for (int i = 0; i < g->m.n_tensors; i++) {
        const ParamTensor *T = &g->m.tensors[i];
        const StTensor *ref = need_param(g, s->grad, i);
        if (!ref) return -1;
        const float *ours = g->m.grads + T->offset;
        worse(c, parity_rel_err(ours, ref, NULL), T->name);
        bound[i] = 0;
        for (size_t j = 0; j < ref->numel; j++) bound[i] = fmax(bound[i], fabs((double)ours[j] - ref->data[j]));
    }
    return 0;
}

// The model's weights against the reference's after step k, in units of
// lr; with bound (end to end), only the weights whose reference gradient
// is GOLDEN_RESOLVED times its tensor's error bound[i] or more.
static int check_weights(Golden *g, GoldenReport *rep, const StepNames *s, int k, const double *bound) {
    GoldenCheck *c = add_check(rep, bound ? "e2e/lr" : "adamw/lr", k,
                               bound ? GOLDEN_TOL_ADAMW : GOLDEN_TOL_ADAMW_STEPS);
    for (int i = 0; i < g->m.n_tensors; i++) {
        const ParamTensor *T = &g->m.tensors[i];
        const StTensor *after = need_param(g, s->after, i), *gref = need_param(g, s->grad, i);
        if (!after || !gref) return -1;
        for (size_t j = 0; j < after->numel; j++) {
            if (bound && !(fabs(gref->data[j]) >= GOLDEN_RESOLVED * bound[i])) { rep->not_judged++; continue; }
            if (bound) rep->judged++;
            worse(c, fabs((double)g->m.params[T->offset + j] - after->data[j]) / g->opt.lr, T->name);
        }
    }
    return 0;
}

// Step k, two ways, each from the reference's own numbers:
//  1. end to end: our gradient at the reference's weights before step k,
//     then our AdamW step with it (from the moments of 2), judged where the
//     gradient is resolved;
//  2. the optimizer alone: our AdamW on the reference's gradient, continuing
//     our own chain of such steps, every weight judged.
// Step 1 also judges the loss and the output of the forward pass.
static int check_step(Golden *g, GoldenReport *rep, int k, double *bound) {
    StepNames s = step_names(g, k);
    size_t bytes = g->m.n_params * sizeof(float);
    memcpy(g->keep_m, g->ts.adam_m, bytes);
    memcpy(g->keep_v, g->ts.adam_v, bytes);
    if (copy_tensors(g, s.before, g->m.params) != 0) return -1;
    double loss = train_forward_backward(&g->ts, g->x1->data, g->x0->data, g->times, g->y);
    if (k == 1) {
        const StTensor *vref = st_need(&g->st, g->path, "output.v", g->N * g->per, g->err, g->errlen);
        const StTensor *lref = st_need(&g->st, g->path, "output.loss", 1, g->err, g->errlen);
        if (!vref || !lref) return -1;
        worse(add_check(rep, "loss", 0, GOLDEN_TOL_LOSS), fabs(loss - lref->data[0]) / fabs(lref->data[0]), "");
        worse(add_check(rep, "output", 0, GOLDEN_TOL_OUT), parity_rel_err(g->ts.act.v, vref, NULL), "");
    }
    if (check_grads(g, rep, &s, k, bound) != 0) return -1;
    train_adamw_step(&g->ts);
    if (check_weights(g, rep, &s, k, bound) != 0) return -1;

    memcpy(g->ts.adam_m, g->keep_m, bytes);   // back to the chain of (2)
    memcpy(g->ts.adam_v, g->keep_v, bytes);
    g->ts.step = k - 1;
    memcpy(g->m.params, g->chain, bytes);
    if (copy_tensors(g, s.grad, g->m.grads) != 0) return -1;
    train_adamw_step(&g->ts);
    memcpy(g->chain, g->m.params, bytes);
    return check_weights(g, rep, &s, k, NULL);
}

// Logit-normal times (t_dist in the metadata): ours from the reference's
// normal draws "input.u" against its "input.t", and the steps then use ours.
static int check_times(Golden *g, GoldenReport *rep) {
    if (g->cfg.run.t_dist != T_LOGIT_NORMAL) return 0;
    const StTensor *u = st_need(&g->st, g->path, "input.u", (size_t)g->N, g->err, g->errlen);
    if (!u) return -1;
    flow_logit_normal_times(g->times, u->data, g->N, g->cfg.run.t_mean, g->cfg.run.t_std);
    worse(add_check(rep, "times", 0, GOLDEN_TOL_TIMES), parity_rel_err(g->times, g->t, NULL), "");
    return 0;
}

// The EMA (ema > 0 in the metadata) after the K steps: our γ against the
// reference's "ema.gamma", then our update after each step k on the
// reference's weights after it ("adamw<k>."), against "ema.", in units of lr.
static int check_ema(Golden *g, GoldenReport *rep) {
    double sigma_rel = g->cfg.run.ema;
    if (!(sigma_rel > 0)) return 0;
    const char *ref_gamma = st_meta(&g->st, "ema.gamma");
    if (!ref_gamma) return errorf(g->err, g->errlen, "%s: ema=%g but no ema.gamma in the metadata", g->path, sigma_rel);
    double gamma = ema_gamma(sigma_rel);
    worse(add_check(rep, "ema.gamma", 0, GOLDEN_TOL_TIMES), fabs(gamma - atof(ref_gamma)) / fabs(atof(ref_gamma)), "");
    float *ema = malloc(g->m.n_params * sizeof(float)), *after = malloc(g->m.n_params * sizeof(float));
    int rc = ema && after ? 0 : errorf(g->err, g->errlen, "out of memory");
    if (rc == 0) rc = copy_tensors(g, "param.", ema);
    for (int k = 1; rc == 0 && k <= g->K; k++) {
        StepNames s = step_names(g, k);
        if ((rc = copy_tensors(g, s.after, after)) == 0) ema_update(ema, after, g->m.n_params, k, gamma);
    }
    GoldenCheck *c = rc == 0 ? add_check(rep, "ema/lr", 0, GOLDEN_TOL_ADAMW) : NULL;
    for (int i = 0; rc == 0 && i < g->m.n_tensors; i++) {
        const ParamTensor *T = &g->m.tensors[i];
        const StTensor *ref = need_param(g, "ema.", i);
        if (!ref) { rc = -1; break; }
        for (size_t j = 0; j < ref->numel; j++)
            worse(c, fabs((double)ema[T->offset + j] - ref->data[j]) / g->opt.lr, T->name);
    }
    free(ema); free(after);
    return rc;
}

// A sample with the weights the reference sampled with, "adamw." (after
// the first step), by the file's sampler ("sample.sampler": euler, or heun);
// a class-conditional file's for the labels "sample.y" at its guidance.
static int check_sample(Golden *g, GoldenReport *rep) {
    const StTensor *noise = st_need(&g->st, g->path, "sample.noise", 0, g->err, g->errlen);
    const StTensor *sref = st_need(&g->st, g->path, "sample.out", noise ? noise->numel : 0, g->err, g->errlen);
    if (!noise || !sref || copy_tensors(g, "adamw.", g->m.params) != 0) return -1;
    int SN = (int)(noise->numel / g->per);
    int steps = (int)meta_num(&g->st, "sample.steps", 4);
    float w = (float)meta_num(&g->st, "sample.guidance", 1.0);
    SamplerKind sampler = SAMPLER_EULER;
    const char *name = st_meta(&g->st, "sample.sampler");
    for (int k = 0; name && SAMPLER_NAMES[k]; k++)
        if (!strcmp(name, SAMPLER_NAMES[k])) sampler = (SamplerKind)k;
    if (name && strcmp(name, SAMPLER_NAMES[sampler]) != 0)
        return errorf(g->err, g->errlen, "%s: sample.sampler is '%s', not euler or heun", g->path, name);
    int *y = g->m.cfg.classes > 0 ? labels_from(g, "sample.y", SN) : NULL;
    if (g->m.cfg.classes > 0 && !y) return -1;
    Activations sa;
    float *x = malloc(noise->numel * sizeof(float));
    if (!x || activations_alloc(&sa, &g->m, y ? flow_guided_rows(SN, w) : SN, false) != 0) {
        free(x); free(y);
        return errorf(g->err, g->errlen, "out of memory");
    }
    memcpy(x, noise->data, noise->numel * sizeof(float));
    int rc = flow_sample_with(&g->m, &sa, x, y, SN, w, sampler, steps, g->err, g->errlen);
    if (rc == 0) worse(add_check(rep, "sample", 0, GOLDEN_TOL_SAMPLE), parity_rel_err(x, sref, NULL), "");
    activations_free(&sa);
    free(x); free(y);
    return rc;
}

int golden_compare(const char *path, GoldenReport *rep, char *err, size_t errlen) {
    memset(rep, 0, sizeof *rep);
    Golden g;
    memset(&g, 0, sizeof g);
    g.path = path; g.err = err; g.errlen = errlen;
    if (st_read(path, &g.st, err, errlen) != 0) return -1;
    int rc = golden_open(&g, rep);
    double *bound = rc == 0 ? calloc(g.m.n_tensors, sizeof(double)) : NULL;
    if (rc == 0 && !bound) { snprintf(err, errlen, "out of memory"); rc = -1; }
    if (rc == 0) rc = check_times(&g, rep);
    for (int k = 1; rc == 0 && k <= g.K; k++) rc = check_step(&g, rep, k, bound);
    if (rc == 0) rc = check_ema(&g, rep);
    if (rc == 0) rc = check_sample(&g, rep);
    if (rc == 0) {
        rep->pass = 1;
        for (int i = 0; i < rep->n_checks; i++) rep->pass &= !over(&rep->check[i]);
    }
    free(bound);
    free(g.chain); free(g.keep_m); free(g.keep_v); free(g.y); free(g.times);
    if (g.have_ts) train_state_free(&g.ts);
    if (g.have_model) model_free(&g.m);
    st_free(&g.st);
    return rc;
}

// ---------------------------------------------------------------------------
// Reporting
// The smallest tolerance / error over the checks (how far from failing the
// file is; below 1 it fails) and, in *which, the check that has it.
static double golden_margin(const GoldenReport *rep, int *which) {
    double margin = INFINITY;
    if (which) *which = 0;
    for (int i = 0; i < rep->n_checks; i++) {
        const GoldenCheck *c = &rep->check[i];
        double m = c->err > 0 ? c->tol / c->err : INFINITY;
        if (isnan(c->err)) m = 0;
        if (m < margin) { margin = m; if (which) *which = i; }
    }
    return margin;
}

// "grads at step 2" or "loss".
static void check_name(const GoldenCheck *c, char *out, size_t cap) {
    if (c->step) snprintf(out, cap, "%s at step %d", c->quantity, c->step);
    else snprintf(out, cap, "%s", c->quantity);
}

void golden_failures(const GoldenReport *rep, char *out, size_t cap) {
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < rep->n_checks && len < cap; i++) {
        const GoldenCheck *c = &rep->check[i];
        if (!over(c)) continue;
        char name[64];
        check_name(c, name, sizeof name);
        len += snprintf(out + len, cap - len, "%s%s %.2e > %.0e%s%s%s", len ? "; " : "", name, c->err, c->tol,
                        c->where[0] ? " (" : "", c->where, c->where[0] ? ")" : "");
    }
}

static const char *const COLUMNS[] = { "loss", "output", "grads", "adamw/lr", "e2e/lr", "sample", "times", "ema/lr" };
#define N_COLUMNS (int)(sizeof COLUMNS / sizeof *COLUMNS)

void golden_print_header(FILE *f) {
    fprintf(f, "tolerances: loss %.0e relative; output, grads, sample %.0e of max |ref|; adamw (our AdamW on the "
               "reference's gradients) %.0e of lr;\n  e2e (on our gradients, where the reference's is %.0f times "
               "our error in its tensor) %.0e of lr; step k from the reference's weights after step k-1;\n"
               "  times (logit-normal) and the EMA's gamma %.0e; ema (after the K steps) %.0e of lr; - : not in the file\n",
            GOLDEN_TOL_LOSS, GOLDEN_TOL_OUT, GOLDEN_TOL_ADAMW_STEPS, GOLDEN_RESOLVED, GOLDEN_TOL_ADAMW,
            GOLDEN_TOL_TIMES, GOLDEN_TOL_ADAMW);
    fprintf(f, "%-24s", "file (worst over steps)");
    for (int c = 0; c < N_COLUMNS; c++) fprintf(f, " %9s", COLUMNS[c]);
    fprintf(f, "  margin: smallest tolerance/error  verdict\n");
}

void golden_print(FILE *f, const char *name, const GoldenReport *rep) {
    fprintf(f, "%-24s", name);
    for (int col = 0; col < N_COLUMNS; col++) {
        double worst = 0;
        int found = 0;
        for (int i = 0; i < rep->n_checks; i++)
            if (!strcmp(rep->check[i].quantity, COLUMNS[col])) {
                found = 1;
                if (!(rep->check[i].err <= worst)) worst = rep->check[i].err;
            }
        if (found) fprintf(f, " %9.2e", worst);
        else fprintf(f, " %9s", "-");
    }
    int which;
    char what[64];
    double margin = golden_margin(rep, &which);
    check_name(&rep->check[which], what, sizeof what);
    fprintf(f, "  %6.1f %-25s  %s\n", margin, what, rep->pass ? "ok" : "MISS");
    if (rep->steps > 1) {
        fprintf(f, "  %d AdamW steps,", rep->steps);
        for (int col = 2; col <= 4; col++) {
            fprintf(f, " %s:", COLUMNS[col]);
            for (int i = 0; i < rep->n_checks; i++)
                if (!strcmp(rep->check[i].quantity, COLUMNS[col])) fprintf(f, " %.2e", rep->check[i].err);
        }
        fprintf(f, "  (e2e judged %ld weights, left %ld to the gradient check)\n", rep->judged, rep->not_judged);
    }
    if (!rep->pass) {
        char failures[1024];
        golden_failures(rep, failures, sizeof failures);
        fprintf(f, "  over the tolerance: %s\n", failures);
    }
}
