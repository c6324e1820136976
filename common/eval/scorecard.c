// scorecard.c: val MSE and probe-FD (see scorecard.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/errors.h"
#include "nn/flow.h"
#include "nn/rng.h"
#include "scorecard.h"

// Noise for every image, then a time for every image, from VAL_SEED in this
// order: the exam depends neither on the run nor on the batch size.
void scorecard_exam(float *x0, float *t, size_t per_image, int n_images) {
    Rng r;
    rng_seed(&r, VAL_SEED);
    rng_fill_normal(&r, x0, (long)(per_image * n_images), 1.0f);
    rng_fill_uniform(&r, t, n_images, 0.0f, 1.0f);
}

int val_exam_init(ValExam *e, const Model *m, const CifarSet *test, int n_images) {
    const ModelConfig *c = &m->cfg;
    memset(e, 0, sizeof *e);
    // the images come as CIFAR-10's 3,072 floats: a model of another shape
    // would read past its buffers (programs say so first: cifar_check_config)
    if (cifar_check_config(c, "val exam", NULL, 0) != 0) return -1;
    // a class-conditional model sits it with each image's label: there must be one, a class it knows
    if (c->classes > 0 && cifar_check_labels(test, c->classes, "the val exam's set", NULL, 0) != 0) return -1;
    if (n_images > test->n) n_images = test->n;   // the exam is drawn for this count
    e->n_images = n_images;
    e->per = cfg_image_floats(c);
    e->x0 = malloc(sizeof(float) * e->per * n_images);
    e->t = malloc(sizeof(float) * n_images);
    e->x1 = malloc(sizeof(float) * e->per * SCORECARD_BATCH);
    e->xt = malloc(sizeof(float) * e->per * SCORECARD_BATCH);
    e->target = malloc(sizeof(float) * e->per * SCORECARD_BATCH);
    if (c->classes > 0) e->y = malloc(sizeof(int) * SCORECARD_BATCH);
    if (!e->x0 || !e->t || !e->x1 || !e->xt || !e->target || (c->classes > 0 && !e->y) ||
        activations_alloc(&e->a, m, SCORECARD_BATCH, false) != 0) {
        val_exam_free(e);
        return -1;
    }
    scorecard_exam(e->x0, e->t, e->per, n_images);
    return 0;
}

double val_exam_run(ValExam *e, Model *m, const CifarSet *test) {
    int n_images = e->n_images;
    if (test->n < n_images) return NAN;   // not the set the exam was drawn for
    double total = 0.0;
    for (int i = 0; i < n_images; i += SCORECARD_BATCH) {
        int n = n_images - i < SCORECARD_BATCH ? n_images - i : SCORECARD_BATCH;
        cifar_range_to_float(test, i, n, e->x1);
        flow_interpolate(e->xt, e->target, e->x1, e->x0 + e->per * i, e->t + i, n, e->per);
        e->a.N = n;   // a smaller last batch fits in the same buffers
        if (e->y) for (int k = 0; k < n; k++) e->y[k] = test->labels[i + k];   // the true labels
        model_forward(m, &e->a, e->xt, e->t + i, e->y);
        total += flow_mse(NULL, e->a.v, e->target, e->per * n) * n;
    }
    e->a.N = SCORECARD_BATCH;
    return total / n_images;
}

void val_exam_free(ValExam *e) {
    activations_free(&e->a);   // safe on a zeroed or half-made one
    free(e->x0); free(e->t); free(e->x1); free(e->xt); free(e->target); free(e->y);
    memset(e, 0, sizeof *e);
}

double scorecard_val_mse(Model *m, const CifarSet *test, int n_images) {
    ValExam e;
    if (val_exam_init(&e, m, test, n_images) != 0) return NAN;
    double mse = val_exam_run(&e, m, test);
    val_exam_free(&e);
    return mse;
}

void scorecard_samples(Model *m, float *out, int n, int steps) {
    scorecard_samples_shown(m, out, n, SAMPLER_EULER, steps, NULL, 0);
}

// The samples' starting noise, drawn from FD_SEED: every model, every w, the same.
static size_t fd_noise(const Model *m, float *out, int n) {
    const ModelConfig *c = &m->cfg;
    size_t per = cfg_image_floats(c);
    Rng r;
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, out, (long)(per * n), 1.0f);
    return per;
}

// Unguided: no labels (y NULL) at w = 1.
void scorecard_samples_shown(Model *m, float *out, int n, SamplerKind sampler, int steps, Progress *pr,
                             long done_before) {
    char err[256];
    scorecard_guided_samples(m, out, NULL, n, 1.0f, sampler, steps, pr, done_before, err, sizeof err);
}

void scorecard_labels(int *y, int n) {
    for (int i = 0; i < n; i++) y[i] = i % PROBE_CLASSES;
}

int scorecard_guided_samples(Model *m, float *out, const int *y, int n, float w, SamplerKind sampler, int steps,
                             Progress *pr, long done_before, char *err, size_t errlen) {
    size_t per = fd_noise(m, out, n);
    Activations a;   // two rows an image at w != 1: the null label's and the asked-for one's
    if (activations_alloc(&a, m, flow_guided_rows(SCORECARD_BATCH, w), false) != 0)
        return errorf(err, errlen, "out of memory for the guided samples' activations");
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i += SCORECARD_BATCH) {
        int nb = n - i < SCORECARD_BATCH ? n - i : SCORECARD_BATCH;
        rc = flow_sample_with(m, &a, out + per * i, y ? y + i : NULL, nb, w, sampler, steps, err, errlen);
        if (pr) progress_update(pr, done_before + (long)flow_guided_rows(i + nb, w) * flow_evaluations(sampler, steps),
                                y ? "guided sampling" : "sampling");
    }
    activations_free(&a);
    return rc;
}

double scorecard_class_accuracy(const Probe *p, const float *samples, const int *y, int n,
                                double *per_class, int *asked) {
    uint8_t *seen = malloc((size_t)n);
    if (!seen) return NAN;
    probe_predict(p, samples, n, seen);
    int right = 0, right_of[PROBE_CLASSES] = {0}, asked_of[PROBE_CLASSES] = {0};
    for (int i = 0; i < n; i++) {
        right += seen[i] == y[i];
        if (y[i] < 0 || y[i] >= PROBE_CLASSES) continue;   // the null label, or beyond CIFAR-10's
        asked_of[y[i]]++;
        right_of[y[i]] += seen[i] == y[i];
    }
    for (int k = 0; k < PROBE_CLASSES; k++) {
        if (per_class) per_class[k] = asked_of[k] ? (double)right_of[k] / asked_of[k] : NAN;
        if (asked) asked[k] = asked_of[k];
    }
    free(seen);
    return n > 0 ? (double)right / n : NAN;
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
