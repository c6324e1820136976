// probe.c: the probe classifier: its parameters, forward and backward passes,
// the training loop, its key and file, and the shipped probe (see probe.h).
#include "probe.h"
#include "io/checksum.h"
#include "io/progress.h"
#include "nn/adamw.h"
#include "nn/rng.h"
#include "io/safetensors.h"
#include "io/clock.h"
#include "io/paths.h"
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The architecture, in one place (probe.h draws it with its shapes).
#define IMG 32
#define C0 3
#define C1 32
#define C2 64
#define C3 128
#define ARCH_STRING "conv3x3(3,32)-relu-maxpool2-conv3x3(32,64)-relu-maxpool2-conv3x3(64,128)-relu-gap-fc(128,10)"

// The parameter tensors, in the order they sit in the flat array and in the
// file. Weights (ndim > 1) get weight decay, biases do not.
typedef struct { const char *name; int ndim; long shape[4]; } ProbeTensor;
static const ProbeTensor TENSORS[] = {
    {"conv1.weight", 4, {C1, C0, 3, 3}}, {"conv1.bias", 1, {C1}},
    {"conv2.weight", 4, {C2, C1, 3, 3}}, {"conv2.bias", 1, {C2}},
    {"conv3.weight", 4, {C3, C2, 3, 3}}, {"conv3.bias", 1, {C3}},
    {"fc.weight", 2, {PROBE_CLASSES, C3}}, {"fc.bias", 1, {PROBE_CLASSES}},
};
#define N_TENSORS ((int)(sizeof(TENSORS) / sizeof(TENSORS[0])))

static size_t tensor_numel(const ProbeTensor *t) {
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
    return n;
}

// Points the 8 named views at consecutive slices of a flat array.
static void set_views(float *base, float **views /* (N_TENSORS) */) {
    size_t off = 0;
    for (int i = 0; i < N_TENSORS; i++) {
        views[i] = base + off;
        off += tensor_numel(&TENSORS[i]);
    }
}

Probe *probe_alloc(void) {
    Probe *p = calloc(1, sizeof(Probe));
    if (!p) return NULL;
    for (int i = 0; i < N_TENSORS; i++) p->n_params += tensor_numel(&TENSORS[i]);
    p->params = calloc(p->n_params, sizeof(float));
    if (!p->params) { free(p); return NULL; }
    float *v[N_TENSORS];
    set_views(p->params, v);
    p->conv1_w = v[0]; p->conv1_b = v[1];
    p->conv2_w = v[2]; p->conv2_b = v[3];
    p->conv3_w = v[4]; p->conv3_b = v[5];
    p->fc_w = v[6];    p->fc_b = v[7];
    p->test_acc = -1.0f;
    return p;
}

void probe_free(Probe *p) {
    if (!p) return;
    free(p->params);
    free(p);
}

void probe_init(Probe *p, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    float *v[N_TENSORS];
    set_views(p->params, v);
    for (int i = 0; i < N_TENSORS; i += 2) {            // (weight, bias) pairs
        const ProbeTensor *t = &TENSORS[i];
        size_t fan_in = tensor_numel(t) / (size_t)t->shape[0];
        // He (Kaiming) uniform, bound √(6/fan_in): keeps the activations' scale
        // from layer to layer through ReLUs, which matters here because
        // there is no normalisation layer to fix it. The classifier head gets
        // PyTorch's smaller default, ±1/√fan_in, for calm first logits.
        int is_head = (i == N_TENSORS - 2);
        float bound = is_head ? 1.0f / sqrtf((float)fan_in) : sqrtf(6.0f / (float)fan_in);
        rng_fill_uniform(&r, v[i], (long)tensor_numel(t), -bound, bound);
        memset(v[i + 1], 0, sizeof(float) * tensor_numel(&TENSORS[i + 1]));  // biases start at 0
    }
}

ProbeRecipe probe_default_recipe(void) {
    return (ProbeRecipe){ .epochs = 4, .batch = 128, .lr = 2e-3f, .weight_decay = 5e-4f, .flip = 1, .seed = 1234 };
}

// ----------------------------------------------------------------------------
// Activations of one batch (and, in training, their gradients: same shapes).

typedef struct {
    float *mem; size_t floats;
    float *c1, *r1, *p1;    // (B, 32, 32, 32), same, (B, 32, 16, 16)
    float *c2, *r2, *p2;    // (B, 64, 16, 16), same, (B, 64, 8, 8)
    float *c3, *r3;         // (B, 128, 8, 8), same
    float *feat;            // (B, 128)
    float *logits, *probs;  // (B, 10)
} Acts;

static int acts_alloc(Acts *a, int B) {
    const size_t S1 = (size_t)B * IMG * IMG, S2 = S1 / 4, S3 = S1 / 16;   // a batch's pixels at each scale
    size_t sz[] = { C1 * S1, C1 * S1, C1 * S2, C2 * S2, C2 * S2, C2 * S3, C3 * S3, C3 * S3,
                    (size_t)B * C3, (size_t)B * PROBE_CLASSES, (size_t)B * PROBE_CLASSES };
    float **ptr[] = {&a->c1, &a->r1, &a->p1, &a->c2, &a->r2, &a->p2, &a->c3, &a->r3,
                     &a->feat, &a->logits, &a->probs};
    int k = (int)(sizeof(sz) / sizeof(sz[0]));
    a->floats = 0;
    for (int i = 0; i < k; i++) a->floats += sz[i];
    a->mem = calloc(a->floats, sizeof(float));
    if (!a->mem) return -1;
    size_t off = 0;
    for (int i = 0; i < k; i++) { *ptr[i] = a->mem + off; off += sz[i]; }
    return 0;
}

static void acts_free(Acts *a) { free(a->mem); a->mem = NULL; }

// x (B, 3, 32, 32) -> a->feat (B, 128), a->logits (B, 10).
static void forward(const Probe *p, Acts *a, const float *x, int B) {
    const int S1 = IMG, S2 = IMG / 2, S3 = IMG / 4;    // 32, 16, 8
    conv3x3_forward(a->c1, x, p->conv1_w, p->conv1_b, B, C0, S1, S1, C1);
    relu_forward(a->r1, a->c1, (size_t)B * C1 * S1 * S1);
    maxpool2x2_forward(a->p1, a->r1, B, C1, S1, S1);
    conv3x3_forward(a->c2, a->p1, p->conv2_w, p->conv2_b, B, C1, S2, S2, C2);
    relu_forward(a->r2, a->c2, (size_t)B * C2 * S2 * S2);
    maxpool2x2_forward(a->p2, a->r2, B, C2, S2, S2);
    conv3x3_forward(a->c3, a->p2, p->conv3_w, p->conv3_b, B, C2, S3, S3, C3);
    relu_forward(a->r3, a->c3, (size_t)B * C3 * S3 * S3);
    global_avgpool_forward(a->feat, a->r3, B, C3, S3 * S3);
    fc_forward(a->logits, a->feat, p->fc_w, p->fc_b, B, C3, PROBE_CLASSES);
}

// From the loss back to every parameter. a holds the forward's activations
// and probs; d is scratch of the same shapes (zeroed here, since every
// backward accumulates); grad (n_params) is zeroed by the caller.
static void backward(const Probe *p, const Acts *a, Acts *d, const Probe *grad,
                     const float *x, const uint8_t *labels, int B) {
    const int S1 = IMG, S2 = IMG / 2, S3 = IMG / 4;
    memset(d->mem, 0, sizeof(float) * d->floats);
    softmax_xent_backward(d->logits, a->probs, labels, B, PROBE_CLASSES);
    fc_backward(d->feat, grad->fc_w, grad->fc_b, d->logits, a->feat, p->fc_w, B, C3, PROBE_CLASSES);
    global_avgpool_backward(d->r3, d->feat, B, C3, S3 * S3);
    relu_backward(d->c3, d->r3, a->c3, (size_t)B * C3 * S3 * S3);
    conv3x3_backward(d->p2, grad->conv3_w, grad->conv3_b, d->c3, a->p2, p->conv3_w, B, C2, S3, S3, C3);
    maxpool2x2_backward(d->r2, d->p2, a->r2, B, C2, S2, S2);
    relu_backward(d->c2, d->r2, a->c2, (size_t)B * C2 * S2 * S2);
    conv3x3_backward(d->p1, grad->conv2_w, grad->conv2_b, d->c2, a->p1, p->conv2_w, B, C1, S2, S2, C2);
    maxpool2x2_backward(d->r1, d->p1, a->r1, B, C1, S1, S1);
    relu_backward(d->c1, d->r1, a->c1, (size_t)B * C1 * S1 * S1);
    // The images are data, not parameters: no gradient into x (dinp NULL).
    conv3x3_backward(NULL, grad->conv1_w, grad->conv1_b, d->c1, x, p->conv1_w, B, C0, S1, S1, C1);
}

void probe_forward(const Probe *p, const float *images, int n, float *features, float *logits) {
    if (n <= 0) return;
    Acts a;
    int B = n < PROBE_BATCH ? n : PROBE_BATCH;
    if (acts_alloc(&a, B) != 0) { fprintf(stderr, "probe_forward: out of memory\n"); abort(); }
    for (int i = 0; i < n; i += B) {
        int b = (n - i) < B ? (n - i) : B;
        forward(p, &a, images + (size_t)i * C0 * IMG * IMG, b);
        if (features) memcpy(features + (size_t)i * C3, a.feat, sizeof(float) * (size_t)b * C3);
        if (logits) memcpy(logits + (size_t)i * PROBE_CLASSES, a.logits,
                           sizeof(float) * (size_t)b * PROBE_CLASSES);
    }
    acts_free(&a);
}

void probe_features(const Probe *p, const float *images, int n, float *features) {
    probe_forward(p, images, n, features, NULL);
}

float probe_loss_and_grad(const Probe *p, const float *images, const uint8_t *labels, int n, Probe *grad) {
    Acts a, d;
    if (acts_alloc(&a, n) != 0) return NAN;
    if (grad && acts_alloc(&d, n) != 0) { acts_free(&a); return NAN; }
    forward(p, &a, images, n);
    float loss = softmax_xent_forward(a.probs, a.logits, labels, n, PROBE_CLASSES);
    if (grad) {
        backward(p, &a, &d, grad, images, labels, n);
        acts_free(&d);
    }
    acts_free(&a);
    return loss;
}

static int argmax(const float *z, int k) {
    int best = 0;
    for (int i = 1; i < k; i++) if (z[i] > z[best]) best = i;
    return best;
}

void probe_predict(const Probe *p, const float *images, int n, uint8_t *classes) {
    if (n <= 0) return;
    float *logits = malloc(sizeof(float) * (size_t)n * PROBE_CLASSES);
    if (!logits) { fprintf(stderr, "probe_predict: out of memory\n"); abort(); }
    probe_forward(p, images, n, NULL, logits);
    for (int i = 0; i < n; i++) classes[i] = (uint8_t)argmax(logits + (size_t)i * PROBE_CLASSES, PROBE_CLASSES);
    free(logits);
}

float probe_accuracy(const Probe *p, const CifarSet *set) {
    if (!set || set->n <= 0) return -1.0f;
    enum { CHUNK = 2000 };   // images converted to floats at a time (25 MB)
    float *x = malloc(sizeof(float) * (size_t)CHUNK * CIFAR_PIXELS);
    uint8_t *classes = malloc(CHUNK);
    if (!x || !classes) { free(x); free(classes); return -1.0f; }
    long correct = 0;
    for (int i = 0; i < set->n; i += CHUNK) {
        int b = (set->n - i) < CHUNK ? (set->n - i) : CHUNK;
        cifar_range_to_float(set, i, b, x);
        probe_predict(p, x, b, classes);
        for (int j = 0; j < b; j++) correct += classes[j] == set->labels[i + j];
    }
    free(x); free(classes);
    return (float)correct / (float)set->n;
}

// ----------------------------------------------------------------------------
// Training

// Learning rate at step t (0-based) of T: a linear warm-up over the first
// ~3% of steps (Adam's first updates are large and noisy while its second
// moment estimate is still young), then a cosine decay to 0. Ending at a low
// lr is worth several accuracy points in a short run like this one.
static float lr_at(const ProbeRecipe *r, long t, long T) {
    long warm = T / 30 > 1 ? T / 30 : 1;
    if (t < warm) return r->lr * (float)(t + 1) / (float)warm;
    double progress = (double)(t - warm) / (double)(T - warm > 1 ? T - warm : 1);
    return (float)(r->lr * 0.5 * (1.0 + cos(M_PI * progress)));
}

Probe *probe_train(const CifarSet *train, const CifarSet *test, const ProbeRecipe *r, int verbose) {
    int B = r->batch;
    if (B > train->n) B = train->n;
    long steps_per_epoch = train->n / B;    // the last partial batch is dropped;
                                            // the shuffle moves it every epoch
    long T = steps_per_epoch * r->epochs;
    Probe *p = probe_alloc();
    // the same layout for the gradient and AdamW's two moments: views into their arrays
    Probe *grad = probe_alloc(), *m = probe_alloc(), *v = probe_alloc();
    float *x = malloc(sizeof(float) * (size_t)B * CIFAR_PIXELS);
    uint8_t *labels = malloc((size_t)B), *flips = malloc((size_t)B);
    int *perm = malloc(sizeof(int) * (size_t)train->n);
    Acts a = {0}, d = {0};
    int ok = p && grad && m && v && x && labels && flips && perm
             && acts_alloc(&a, B) == 0 && acts_alloc(&d, B) == 0;
    if (!ok) {
        probe_free(p); p = NULL;
        goto done;
    }
    probe_init(p, r->seed);

    // One random stream, drawn on one thread in a fixed order (init, then each
    // epoch's shuffle and flips): the run is a function of the seed.
    Rng rng;
    rng_seed(&rng, r->seed ^ 0x5eedf00dULL);
    for (int i = 0; i < train->n; i++) perm[i] = i;
    AdamWConfig opt = adamw_default(r->lr);
    float *pv[N_TENSORS], *gv[N_TENSORS], *mv[N_TENSORS], *vv[N_TENSORS];
    set_views(p->params, pv); set_views(grad->params, gv);
    set_views(m->params, mv); set_views(v->params, vv);
    if (verbose)
        fprintf(stderr, "probe: training %s\n  %d epochs x %ld steps of %d images, lr %g, %d threads\n",
                ARCH_STRING, r->epochs, steps_per_epoch, B, (double)r->lr, omp_get_max_threads());
    double t0 = wall_seconds();
    long t = 0;
    Progress pr;   // a line with its ETA within seconds, the epochs take minutes
    if (verbose) progress_begin(&pr, stderr, "probe", 0, T);
    for (int ep = 0; ep < r->epochs; ep++) {
        // Fisher-Yates shuffle: a fresh order every epoch.
        for (int i = train->n - 1; i > 0; i--) {
            int j = (int)rng_below(&rng, (uint32_t)(i + 1));
            int tmp = perm[i]; perm[i] = perm[j]; perm[j] = tmp;
        }
        double loss_sum = 0.0;
        long correct = 0;
        for (long s = 0; s < steps_per_epoch; s++, t++) {
            const int *idx = perm + s * B;
            for (int i = 0; i < B; i++) {
                flips[i] = r->flip ? (uint8_t)(rng_u64(&rng) >> 63) : 0;
                labels[i] = train->labels[idx[i]];
            }
            cifar_gather(train, idx, flips, B, x);

            forward(p, &a, x, B);
            loss_sum += softmax_xent_forward(a.probs, a.logits, labels, B, PROBE_CLASSES);
            for (int i = 0; i < B; i++)
                correct += argmax(a.logits + (size_t)i * PROBE_CLASSES, PROBE_CLASSES) == labels[i];
            memset(grad->params, 0, sizeof(float) * grad->n_params);
            backward(p, &a, &d, grad, x, labels, B);

            opt.lr = lr_at(r, t, T);
            for (int k = 0; k < N_TENSORS; k++)
                adamw_update(pv[k], gv[k], mv[k], vv[k], tensor_numel(&TENSORS[k]), (int)t + 1,
                             &opt, TENSORS[k].ndim > 1 ? r->weight_decay : 0.0f);
            if (verbose) {
                char extra[32];
                snprintf(extra, sizeof extra, "epoch %d/%d", ep + 1, r->epochs);
                progress_update(&pr, t + 1, extra);
            }
        }
        if (verbose) progress_end(&pr);
        if (verbose)
            fprintf(stderr, "  epoch %d/%d  loss %.4f  train acc %5.1f%%  %6.1f s\n", ep + 1,
                    r->epochs, loss_sum / (double)steps_per_epoch,
                    100.0 * (double)correct / (double)(steps_per_epoch * B), wall_seconds() - t0);
    }
    p->train_seconds = (float)(wall_seconds() - t0);
    p->test_acc = test ? probe_accuracy(p, test) : -1.0f;
    probe_fingerprint(p, p->weights);
    p->source = "trained";
    if (verbose && test)
        fprintf(stderr, "probe: test accuracy %.2f%% (%d images), trained in %.1f s\n",
                100.0 * p->test_acc, test->n, (double)p->train_seconds);
done:
    probe_free(grad); probe_free(m); probe_free(v);
    free(x); free(labels); free(flips); free(perm);
    acts_free(&a); acts_free(&d);
    return p;
}

// ----------------------------------------------------------------------------
// The key, the fingerprint and the file

// FNV-1a, 64-bit (Fowler, Noll, Vo): xor in a byte, multiply by the prime.
// Not cryptographic, but a changed byte anywhere changes the key, which is
// all a key needs.
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const uint8_t *b = data;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= FNV_PRIME; }
    return h;
}

void probe_recipe_string(const ProbeRecipe *r, char *out, size_t len) {
    snprintf(out, len, "%s %s epochs=%d batch=%d lr=%.9g weight_decay=%.9g flip=%d seed=%llu",
             PROBE_RECIPE_VERSION, ARCH_STRING, r->epochs, r->batch, (double)r->lr,
             (double)r->weight_decay, r->flip, (unsigned long long)r->seed);
}

static uint64_t hash_set(uint64_t h, const CifarSet *s) {
    int n = s ? s->n : 0;
    h = fnv1a(h, &n, sizeof(n));    // the count first: "no set" differs from an empty one
    if (n > 0) {
        h = fnv1a(h, s->pixels, (size_t)n * CIFAR_PIXELS);
        h = fnv1a(h, s->labels, (size_t)n);
    }
    return h;
}

void probe_cache_key(const ProbeRecipe *r, const CifarSet *train, const CifarSet *test, char out[17]) {
    char rs[512];
    probe_recipe_string(r, rs, sizeof(rs));
    uint64_t h = fnv1a(FNV_OFFSET, rs, strlen(rs));
    h = hash_set(h, train);
    h = hash_set(h, test);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void probe_fingerprint(const Probe *p, char out[17]) {
    uint64_t h = fnv1a(FNV_OFFSET, p->params, sizeof(float) * p->n_params);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int probe_save(const Probe *p, const ProbeRecipe *r, const char *path, char *err, size_t errlen) {
    StWriter w;
    st_writer_init(&w);
    float *v[N_TENSORS];
    set_views(p->params, v);
    for (int i = 0; i < N_TENSORS; i++)
        st_writer_add(&w, TENSORS[i].name, TENSORS[i].ndim, TENSORS[i].shape, v[i]);
    char buf[512];
    st_writer_meta(&w, "format", "tinydit-probe");
    st_writer_meta(&w, "key", p->key);
    probe_recipe_string(r, buf, sizeof(buf));
    st_writer_meta(&w, "recipe", buf);
    snprintf(buf, sizeof(buf), "%.6f", (double)p->test_acc);
    st_writer_meta(&w, "test_acc", buf);
    snprintf(buf, sizeof(buf), "%.1f", (double)p->train_seconds);
    st_writer_meta(&w, "train_seconds", buf);
    st_writer_add_checksums(&w);   // last: it covers every tensor and metadata entry
    int rc = st_writer_save_atomic(&w, path, err, errlen);
    st_writer_free(&w);
    return rc;
}

Probe *probe_load(const char *path, char *err, size_t errlen) {
    SafeTensors st;
    if (st_read(path, &st, err, errlen) != 0) return NULL;
    if (st_verify_checksums(&st, path, err, errlen) != 0) { st_free(&st); return NULL; }
    Probe *p = probe_alloc();
    if (!p) { snprintf(err, errlen, "%s: out of memory", path); st_free(&st); return NULL; }
    float *v[N_TENSORS];
    set_views(p->params, v);
    for (int i = 0; i < N_TENSORS; i++) {
        const ProbeTensor *t = &TENSORS[i];
        const StTensor *s = st_find(&st, t->name);
        int same = s && s->ndim == t->ndim;
        for (int k = 0; same && k < t->ndim; k++) same = s->shape[k] == t->shape[k];
        if (!same) {
            if (err) snprintf(err, errlen, "%s: tensor %s is %s (not a probe of this architecture)",
                              path, t->name, s ? "of the wrong shape" : "missing");
            probe_free(p); st_free(&st);
            return NULL;
        }
        memcpy(v[i], s->data, sizeof(float) * tensor_numel(t));
    }
    const char *key = st_meta(&st, "key");
    const char *acc = st_meta(&st, "test_acc");
    const char *secs = st_meta(&st, "train_seconds");
    if (key) snprintf(p->key, sizeof(p->key), "%s", key);
    p->test_acc = acc ? strtof(acc, NULL) : -1.0f;
    p->train_seconds = secs ? strtof(secs, NULL) : 0.0f;
    probe_fingerprint(p, p->weights);
    p->source = "file";
    st_free(&st);
    return p;
}

// ----------------------------------------------------------------------------
// The probe every score uses

Probe *probe_for_scoring(int verbose, char *err, size_t errlen) {
    char path[4096];
    if (project_path(path, sizeof path, PROBE_SHIPPED) != 0) {
        snprintf(err, errlen, "cannot find the project's %s (is this program inside the project?)", PROBE_SHIPPED);
        return NULL;
    }
    char lerr[4600];
    Probe *p = probe_load(path, lerr, sizeof lerr);
    if (!p) {
        snprintf(err, errlen, "%s (the shipped probe: git checkout " PROBE_SHIPPED " restores it)", lerr);
        return NULL;
    }
    p->source = "shipped";
    if (verbose)
        fprintf(stderr, "probe: the shipped probe, %s (weights %s, test accuracy %.2f%%)\n", PROBE_SHIPPED,
                p->weights, 100.0 * p->test_acc);
    return p;
}

int probe_shipped_metrics(RunMetrics *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    Probe *p = probe_for_scoring(0, err, errlen);
    if (!p) return -1;
    snprintf(out->probe_key, sizeof out->probe_key, "%s", p->key);
    snprintf(out->probe_weights, sizeof out->probe_weights, "%s", p->weights);
    snprintf(out->probe_source, sizeof out->probe_source, "shipped");
    out->probe_test_acc = p->test_acc;      // a float32, as metrics.json keeps it
    out->probe_fd = NAN;
    probe_free(p);
    return 0;
}
