// scorecard.c: val MSE and probe-FD (see scorecard.h).
#include <stdlib.h>
#include <string.h>
#include "nn/flow.h"
#include "nn/rng.h"
#include "scorecard.h"

#define EVAL_BATCH 250

// The exam: noise for every image, then a time for every image, drawn once
// from VAL_SEED in this fixed order, so it depends neither on the run nor on
// the evaluation batch size.
void scorecard_exam(float *x0, float *t, size_t per_image, int n_images) {
    Rng r;
    rng_seed(&r, VAL_SEED);
    rng_fill_normal(&r, x0, (long)(per_image * n_images), 1.0f);
    rng_fill_uniform(&r, t, n_images, 0.0f, 1.0f);
}

double scorecard_val_mse(Model *m, const CifarSet *test, int n_images) {
    const Config *c = &m->cfg;
    size_t per = (size_t)c->channels * c->img * c->img;
    if (n_images > test->n) n_images = test->n;
    float *x0 = malloc(sizeof(float) * per * n_images);
    float *t = malloc(sizeof(float) * n_images);
    scorecard_exam(x0, t, per, n_images);
    Activations a;
    activations_alloc(&a, m, EVAL_BATCH);
    float *x1 = malloc(sizeof(float) * per * EVAL_BATCH);
    float *xt = malloc(sizeof(float) * per * EVAL_BATCH);
    float *target = malloc(sizeof(float) * per * EVAL_BATCH);
    double total = 0.0;
    for (int i = 0; i < n_images; i += EVAL_BATCH) {
        int n = n_images - i < EVAL_BATCH ? n_images - i : EVAL_BATCH;
        cifar_range_to_float(test, i, n, x1);
        flow_interpolate(xt, target, x1, x0 + per * i, t + i, n, per);
        a.N = n;   // a smaller last batch fits in the same buffers
        model_forward(m, &a, xt, t + i);
        total += flow_mse(NULL, a.v, target, per * n) * n;
    }
    a.N = EVAL_BATCH;
    activations_free(&a);
    free(x0); free(t); free(x1); free(xt); free(target);
    return total / n_images;
}

void scorecard_samples(Model *m, float *out, int n, int steps) {
    const Config *c = &m->cfg;
    size_t per = (size_t)c->channels * c->img * c->img;
    Rng r;
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, out, (long)(per * n), 1.0f);
    Activations a;
    activations_alloc(&a, m, EVAL_BATCH);
    for (int i = 0; i < n; i += EVAL_BATCH) {
        a.N = n - i < EVAL_BATCH ? n - i : EVAL_BATCH;
        flow_sample(m, &a, out + per * i, steps);
    }
    a.N = EVAL_BATCH;
    activations_free(&a);
}

int scorecard_real_stats(const Probe *p, const CifarSet *test, FeatureStats *out) {
    float *images = malloc(sizeof(float) * CIFAR_PIXELS * (size_t)test->n);
    float *feats = malloc(sizeof(float) * PROBE_FEATURES * (size_t)test->n);
    if (!images || !feats) { free(images); free(feats); return -1; }
    cifar_range_to_float(test, 0, test->n, images);
    probe_features(p, images, test->n, feats);
    int rc = feature_stats_compute(out, feats, test->n, PROBE_FEATURES);
    free(images); free(feats);
    return rc;
}

double scorecard_probe_fd(const Probe *p, const FeatureStats *real, const float *samples, int n) {
    float *feats = malloc(sizeof(float) * PROBE_FEATURES * (size_t)n);
    probe_features(p, samples, n, feats);
    FeatureStats s;
    feature_stats_compute(&s, feats, n, PROBE_FEATURES);
    double fd = frechet_distance(&s, real);
    feature_stats_free(&s);
    free(feats);
    return fd;
}
