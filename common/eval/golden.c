// golden.c: the whole model against the PyTorch reference (see golden.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int golden_compare(const char *path, GoldenReport *rep, char *err, size_t errlen) {
    memset(rep, 0, sizeof *rep);
    SafeTensors st;
    if (st_read(path, &st, err, errlen) != 0) return -1;
    int rc = -1;
    Model m; int have_model = 0;
    TrainState ts; int have_ts = 0;
    Activations sa; int have_sa = 0;
    float *x = NULL;

    // the config is the file's metadata, the weights its param.* tensors
    Config cfg;
    if (checkpoint_config_from(&st, path, &cfg, err, errlen) != 0) goto done;
    config_describe(&cfg, rep->config, sizeof rep->config);
    if (model_build(&m, &cfg, err, errlen) != 0) goto done;
    have_model = 1;
    if (checkpoint_copy_params(&st, path, "param.", &m, err, errlen) != 0) goto done;

    // one forward/backward on the file's batch
    const StTensor *tt = need(&st, "input.t", 0, path, err, errlen);
    if (!tt) goto done;
    int N = (int)tt->numel;
    size_t per = (size_t)cfg.channels * cfg.img * cfg.img;
    const StTensor *x1 = need(&st, "input.x1", N * per, path, err, errlen);
    const StTensor *x0 = need(&st, "input.x0", N * per, path, err, errlen);
    const StTensor *vref = need(&st, "output.v", N * per, path, err, errlen);
    const StTensor *lref = need(&st, "output.loss", 1, path, err, errlen);
    if (!x1 || !x0 || !vref || !lref) goto done;
    AdamWConfig opt = { (float)meta_num(&st, "adamw.lr", 1e-2), (float)meta_num(&st, "adamw.beta1", 0.9),
                        (float)meta_num(&st, "adamw.beta2", 0.999), (float)meta_num(&st, "adamw.eps", 1e-8),
                        (float)meta_num(&st, "adamw.weight_decay", 0.0) };
    if (train_state_init(&ts, &m, N, &opt) != 0) { snprintf(err, errlen, "out of memory"); goto done; }
    have_ts = 1;
    double loss = train_forward_backward(&ts, x1->data, x0->data, tt->data);
    rep->loss_rel = fabs(loss - lref->data[0]) / fabs(lref->data[0]);
    rep->out_err = scaled_err(ts.act.v, vref->data, N * per);
    for (int i = 0; i < m.n_tensors; i++) {
        char name[96];
        snprintf(name, sizeof name, "grad.%s", m.tensors[i].name);
        const StTensor *g = need(&st, name, m.tensors[i].size, path, err, errlen);
        if (!g) goto done;
        double e = scaled_err(m.grads + m.tensors[i].offset, g->data, g->numel);
        if (e > rep->grad_err || isnan(e)) {
            rep->grad_err = e;
            snprintf(rep->grad_worst, sizeof rep->grad_worst, "%s", m.tensors[i].name);
        }
        rep->n_grads++;
    }
    // One AdamW step, judged against the learning rate (a first Adam step
    // moves a weight by about lr·sign(g), so 5% of lr is a tight bound).
    // It is checked twice:
    //  1. the optimizer alone: our AdamW applied to the file's own gradients
    //     must land within 5% of lr of the reference's stepped weights;
    //  2. end to end, with our gradients. A first Adam step is lr·g/(|g|+ε):
    //     where the true gradient is zero (the key bias cannot move a softmax,
    //     so its gradient is exactly 0) or below float32's resolution of that
    //     tensor, the step is decided by rounding noise. Those elements
    //     (|g_ref| < 1e-5 · max|g_ref| of the tensor) are counted, not judged.
    float *saved = malloc(m.n_params * sizeof(float));
    float *ours = malloc(m.n_params * sizeof(float));
    memcpy(saved, m.params, m.n_params * sizeof(float));
    memcpy(ours, m.grads, m.n_params * sizeof(float));
    for (int pass = 0; pass < 2; pass++) {
        memcpy(m.params, saved, m.n_params * sizeof(float));
        memset(ts.adam_m, 0, m.n_params * sizeof(float));
        memset(ts.adam_v, 0, m.n_params * sizeof(float));
        ts.step = 0;
        for (int i = 0; i < m.n_tensors; i++) {
            char name[96];
            snprintf(name, sizeof name, "grad.%s", m.tensors[i].name);
            const float *src = pass == 0 ? st_find(&st, name)->data : ours + m.tensors[i].offset;
            memcpy(m.grads + m.tensors[i].offset, src, m.tensors[i].size * sizeof(float));
        }
        train_adamw_step(&ts);
        for (int i = 0; i < m.n_tensors; i++) {
            char name[96];
            snprintf(name, sizeof name, "adamw.%s", m.tensors[i].name);
            const StTensor *a = need(&st, name, m.tensors[i].size, path, err, errlen);
            snprintf(name, sizeof name, "grad.%s", m.tensors[i].name);
            const StTensor *g = st_find(&st, name);
            if (!a) { free(saved); free(ours); goto done; }
            double gmax = 0;
            for (size_t j = 0; j < g->numel; j++) if (fabs(g->data[j]) > gmax) gmax = fabs(g->data[j]);
            for (size_t j = 0; j < a->numel; j++) {
                double e = fabs((double)m.params[m.tensors[i].offset + j] - a->data[j]) / opt.lr;
                if (isnan(e)) e = INFINITY;
                if (pass == 0) { if (e > rep->adamw_err) rep->adamw_err = e; continue; }
                if (fabs(g->data[j]) < 1e-5 * gmax) { rep->adamw_unresolved++; continue; }
                if (e > rep->adamw_e2e_err) rep->adamw_e2e_err = e;
            }
        }
    }
    free(saved); free(ours);
    // an Euler sample with the stepped weights
    const StTensor *noise = need(&st, "sample.noise", 0, path, err, errlen);
    const StTensor *sref = need(&st, "sample.out", noise ? noise->numel : 0, path, err, errlen);
    if (!noise || !sref) goto done;
    int SN = (int)(noise->numel / per);
    int steps = (int)meta_num(&st, "sample.steps", 4);
    if (activations_alloc(&sa, &m, SN) != 0) { snprintf(err, errlen, "out of memory"); goto done; }
    have_sa = 1;
    x = malloc(noise->numel * sizeof(float));
    memcpy(x, noise->data, noise->numel * sizeof(float));
    flow_sample(&m, &sa, x, steps);
    rep->sample_err = scaled_err(x, sref->data, noise->numel);

    rep->pass = rep->loss_rel <= GOLDEN_TOL_LOSS && rep->out_err <= GOLDEN_TOL_OUT &&
                rep->grad_err <= GOLDEN_TOL_GRAD && rep->adamw_err <= GOLDEN_TOL_ADAMW && rep->adamw_e2e_err <= GOLDEN_TOL_ADAMW &&
                rep->sample_err <= GOLDEN_TOL_SAMPLE;
    rc = 0;
done:
    free(x);
    if (have_sa) activations_free(&sa);
    if (have_ts) train_state_free(&ts);
    if (have_model) model_free(&m);
    st_free(&st);
    return rc;
}
