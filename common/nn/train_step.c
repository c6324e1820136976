// train_step.c: one step of flow-matching training (see train_step.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ema.h"
#include "flow.h"
#include "train_step.h"

int train_state_init(TrainState *s, Model *m, int batch, const AdamWConfig *opt, const StepRecipe *recipe) {
    memset(s, 0, sizeof *s);
    s->model = m;
    s->batch = batch;
    s->opt = *opt;
    if (recipe) s->recipe = *recipe;
    if (s->recipe.ema > 0) {
        s->ema_gamma = ema_gamma(s->recipe.ema);
        if (!(s->ema = zeroed_floats(m->n_params))) return -1;
        memcpy(s->ema, m->params, sizeof(float) * m->n_params);
    }
    size_t per = (size_t)batch * cfg_image_floats(&m->cfg);   // N·C·S·S
    if (activations_alloc(&s->act, m, batch, false) != 0) return -1;
    if (backward_scratch_alloc(&s->bw, m, batch) != 0) return -1;
    s->x0 = zeroed_floats(per);
    s->xt = zeroed_floats(per);
    s->target = zeroed_floats(per);
    s->dv = zeroed_floats(per);
    s->t = calloc(batch, sizeof(float));                 // (N)
    if (m->cfg.classes > 0 && !(s->y = calloc(batch, sizeof(int)))) return -1;   // (N)
    s->adam_m = zeroed_floats(m->n_params);
    s->adam_v = zeroed_floats(m->n_params);
    if (!s->x0 || !s->xt || !s->target || !s->dv || !s->t || !s->adam_m || !s->adam_v) return -1;
    return 0;
}

void train_state_free(TrainState *s) {
    activations_free(&s->act);
    backward_scratch_free(&s->bw);
    free(s->x0); free(s->xt); free(s->target); free(s->dv); free(s->t); free(s->y);
    free(s->adam_m); free(s->adam_v); free(s->ema);
    memset(s, 0, sizeof *s);
}

// The sum of squares in fixed chunks, each summed on one thread, the chunks'
// sums then added in order: the same number on any thread count, and not a
// serial pass over every gradient while the other threads wait.
#define NORM_CHUNK 16384      // floats per chunk, at least
#define NORM_MAX_CHUNKS 1024  // bigger models get bigger chunks
double grad_l2_norm(const Model *m) {
    size_t n = m->n_params;
    size_t chunk = (n + NORM_MAX_CHUNKS - 1) / NORM_MAX_CHUNKS;
    if (chunk < NORM_CHUNK) chunk = NORM_CHUNK;
    long chunks = (long)((n + chunk - 1) / chunk);
    double part[NORM_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) if (chunks > 1)
    for (long c = 0; c < chunks; c++) {
        const float *g = m->grads + (size_t)c * chunk;
        size_t len = n - (size_t)c * chunk < chunk ? n - (size_t)c * chunk : chunk;
        double ss = 0.0;
        #pragma omp simd reduction(+:ss)   // lanes summed in a fixed order too
        for (size_t i = 0; i < len; i++) ss += (double)g[i] * g[i];
        part[c] = ss;
    }
    double ss = 0.0;
    for (long c = 0; c < chunks; c++) ss += part[c];
    return sqrt(ss);
}

double train_forward_backward(TrainState *s, const float *x1, const float *x0, const float *t,
                              const int *y) {
    Model *m = s->model;
    int N = s->batch;
    size_t per_image = cfg_image_floats(&m->cfg);
    flow_interpolate(s->xt, s->target, x1, x0, t, N, per_image);   // xt, target (N, C, S, S)
    model_forward(m, &s->act, s->xt, t, y);                        // act.v (N, C, S, S)
    s->loss = flow_mse(s->dv, s->act.v, s->target, (size_t)N * per_image);   // dv (N, C, S, S)
    model_zero_grad(m);
    model_backward(m, &s->act, &s->bw, s->dv);
    s->max_logit = 0.0f;
    for (int b = 0; b < m->cfg.depth; b++)
        if (s->act.max_logit[b] > s->max_logit) s->max_logit = s->act.max_logit[b];
    return s->loss;
}

double train_loss(TrainState *s, const float *x1, const float *x0, const float *t, const int *y) {
    Model *m = s->model;
    size_t per_image = cfg_image_floats(&m->cfg);
    flow_interpolate(s->xt, s->target, x1, x0, t, s->batch, per_image);
    model_forward(m, &s->act, s->xt, t, y);
    return flow_mse(NULL, s->act.v, s->target, (size_t)s->batch * per_image);
}

// The update is elementwise, so a tensor can be updated piece by piece and
// come out the same bits. All the tensors' pieces are handed out in one
// parallel region: most tensors (biases, gains, the smaller weights) are
// too small for a region of their own, and one region per tensor, each
// waking the threads and waiting for them, cost more than the update itself.
// A piece is at most OMP_MIN_FLOATS, so adamw_update runs it on its thread.
#define ADAMW_PIECE 16384   // floats per task
_Static_assert(ADAMW_PIECE <= OMP_MIN_FLOATS, "a piece must not start a region of its own");
void train_adamw_step(TrainState *s) {
    Model *m = s->model;
    s->step++;
    #pragma omp parallel
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        // decay pulls weight matrices toward zero; biases and gains are left alone
        float wd = t->ndim >= 2 ? s->opt.weight_decay : 0.0f;
        long pieces = (long)((t->size + ADAMW_PIECE - 1) / ADAMW_PIECE);
        #pragma omp for schedule(dynamic) nowait   // no wait: the next tensor's pieces are independent
        for (long k = 0; k < pieces; k++) {
            size_t off = t->offset + (size_t)k * ADAMW_PIECE;
            size_t n = t->size - (size_t)k * ADAMW_PIECE < ADAMW_PIECE ? t->size - (size_t)k * ADAMW_PIECE
                                                                        : ADAMW_PIECE;
            adamw_update(m->params + off, m->grads + off, s->adam_m + off, s->adam_v + off, n,
                         s->step, &s->opt, wd);
            if (s->ema) ema_update(s->ema + off, m->params + off, n, s->step, s->ema_gamma);   // while in cache
        }
    }
}

// Label dropout: each label becomes the null label (classes) with
// probability p, one draw per image, so that one network learns both the
// conditional velocity and the unconditional one.
static void drop_labels(int *out, const int *y, int N, int null_label, float p, Rng *rng) {
    for (int n = 0; n < N; n++) out[n] = rng_uniform(rng) < p ? null_label : y[n];
}

double train_step(TrainState *s, const float *x1, const int *y, Rng *rng) {
    Model *m = s->model;
    size_t per = (size_t)s->batch * cfg_image_floats(&m->cfg);
    rng_fill_normal(rng, s->x0, (long)per, 1.0f);         // x0 (N, C, S, S) noise
    const StepRecipe *r = &s->recipe;
    if (r->t_dist == T_LOGIT_NORMAL) {                    // t (N): u ~ N(0, 1), then σ(mean + std·u)
        rng_fill_normal(rng, s->t, s->batch, 1.0f);
        flow_logit_normal_times(s->t, s->t, s->batch, r->t_mean, r->t_std);
    } else {
        rng_fill_uniform(rng, s->t, s->batch, 0.0f, 1.0f);
    }
    const int *labels = NULL;                             // unconditional: none
    if (m->cfg.classes > 0) {
        if (y) drop_labels(s->y, y, s->batch, cfg_null_label(&m->cfg), r->label_drop, rng);   // (N)
        else for (int n = 0; n < s->batch; n++) s->y[n] = cfg_null_label(&m->cfg);
        labels = s->y;
    }
    double loss = train_forward_backward(s, x1, s->x0, s->t, labels);
    s->grad_norm = grad_l2_norm(m);
    train_adamw_step(s);
    return loss;
}
