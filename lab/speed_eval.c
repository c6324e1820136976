// speed_eval.c: is the scoring threaded as well as the training step?
//
// A run spends most of its time in train_step, but not all of it: the val
// exam every val_every steps, and at the end the scorecard (val MSE on 2,000
// test images, 1,000 samples of 20 Euler steps, the probe's features of
// them, a Frechet distance). If those parts used one core while the step
// used two, a longer run or a finer val curve would pay for it. This times
// each part with 1 and with 2 threads in the same rounds (the thread count
// is set before each turn) and prints the speed-up next to the step's.
//
// The parts run on smaller counts than the real scorecard (the speed-up,
// not the total, is the question) and on made-up data of the right shapes:
// random test images, an untrained probe. Their speed does not depend on
// the values. Like the trainer's val checks they keep their buffers between
// calls (ValExam, common/eval/scorecard.h): on a machine where touching
// fresh memory is slow, a first pass through newly allocated activations
// costs several times the passes themselves, and that is not threading.
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "speed.h"
#include "io/config_parse.h"
#include "nn/flow.h"
#include "eval/frechet.h"
#include "eval/probe.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "nn/rng.h"
#include "nn/train_step.h"

#define EVAL_EXAM_IMAGES 500     // val exam (2,000 in the scorecard)
#define EVAL_SAMPLES 250         // samples (1,000 in the scorecard), one batch of them ...
#define EVAL_EULER_STEPS 4       // ... of 4 Euler steps (20)
#define EVAL_FEATURE_IMAGES 1000 // probe features and the Frechet distance (as the scorecard)

typedef struct {
    Model m;
    TrainState ts;
    Rng rng;
    float *x1;                   // (batch, C, S, S) training images
    CifarSet test;               // EVAL_EXAM_IMAGES random images
    ValExam exam;
    Activations sample_act;      // for EVAL_SAMPLES images
    float *samples;              // (EVAL_SAMPLES, C, S, S)
    float *images, *features;    // (EVAL_FEATURE_IMAGES, 3, 32, 32) and (..., PROBE_FEATURES)
    Probe *probe;
    FeatureStats real;
} EvalParts;

typedef struct {
    EvalParts *e;
    int threads;
    void (*part)(EvalParts *e);
} Turn;

static void part_step(EvalParts *e) { train_step(&e->ts, e->x1, NULL, &e->rng); }
static void part_exam(EvalParts *e) { val_exam_run(&e->exam, &e->m, &e->test); }
static void part_samples(EvalParts *e) {
    Rng r;                      // the samples start from fixed noise, as scorecard_samples' do
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, e->samples, (long)e->sample_act.N * e->m.cfg.channels * e->m.cfg.img * e->m.cfg.img, 1.0f);
    flow_sample(&e->m, &e->sample_act, e->samples, EVAL_EULER_STEPS);
}
static void part_features(EvalParts *e) { probe_features(e->probe, e->images, EVAL_FEATURE_IMAGES, e->features); }
static void part_frechet(EvalParts *e) {
    FeatureStats s;
    feature_stats_compute(&s, e->features, EVAL_FEATURE_IMAGES, PROBE_FEATURES);
    frechet_distance(&s, &e->real);
    feature_stats_free(&s);
}

static void turn_call(void *ctx) {
    Turn *t = ctx;
    omp_set_num_threads(t->threads);
    t->part(t->e);
}

static int eval_parts_init(EvalParts *e, const Config *base, int batch) {
    memset(e, 0, sizeof *e);
    Config c = *base;
    char err[512];
    c.run.batch = batch;
    // the exam's images are CIFAR-10's 3,072 bytes (val_exam_init refuses other shapes)
    if (config_validate(&c, err, sizeof err) != 0 || cifar_check_config(&c.model, "--set", err, sizeof err) != 0 ||
        model_build(&e->m, &c.model, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return 2;
    }
    model_init_weights(&e->m, 0);
    AdamWConfig opt = { 3e-4f, 0.9f, 0.999f, 1e-8f, 0.0f };
    size_t per = (size_t)c.model.channels * c.model.img * c.model.img;
    e->x1 = malloc(sizeof(float) * per * batch);
    e->test.n = EVAL_EXAM_IMAGES;
    e->test.pixels = malloc((size_t)CIFAR_PIXELS * EVAL_EXAM_IMAGES);
    e->test.labels = calloc(EVAL_EXAM_IMAGES, 1);
    e->samples = malloc(sizeof(float) * per * EVAL_SAMPLES);
    e->images = malloc(sizeof(float) * CIFAR_PIXELS * EVAL_FEATURE_IMAGES);
    e->features = malloc(sizeof(float) * PROBE_FEATURES * EVAL_FEATURE_IMAGES);
    e->probe = probe_alloc();
    if (!e->x1 || !e->test.pixels || !e->test.labels || !e->samples || !e->images || !e->features || !e->probe ||
        train_state_init(&e->ts, &e->m, batch, &opt) != 0 || activations_alloc(&e->sample_act, &e->m, EVAL_SAMPLES) != 0) {
        fprintf(stderr, "error: out of memory\n");
        return 1;
    }
    Rng r;
    rng_seed(&r, 3);
    rng_fill_uniform(&r, e->x1, (long)(per * batch), -1.0f, 1.0f);
    for (long i = 0; i < (long)CIFAR_PIXELS * EVAL_EXAM_IMAGES; i++) e->test.pixels[i] = (uint8_t)rng_below(&r, 256);
    rng_fill_uniform(&r, e->images, (long)CIFAR_PIXELS * EVAL_FEATURE_IMAGES, -1.0f, 1.0f);
    rng_seed(&e->rng, 1);
    if (val_exam_init(&e->exam, &e->m, &e->test, EVAL_EXAM_IMAGES) != 0) { fprintf(stderr, "error: out of memory\n"); return 1; }
    probe_init(e->probe, 5);
    probe_features(e->probe, e->images, EVAL_FEATURE_IMAGES, e->features);
    return feature_stats_compute(&e->real, e->features, EVAL_FEATURE_IMAGES, PROBE_FEATURES) == 0 ? 0 : 1;
}

static void eval_parts_free(EvalParts *e) {
    train_state_free(&e->ts);
    val_exam_free(&e->exam);
    activations_free(&e->sample_act);
    model_free(&e->m);
    free(e->x1); free(e->test.pixels); free(e->test.labels); free(e->samples); free(e->images); free(e->features);
    probe_free(e->probe);
    feature_stats_free(&e->real);
}

#define N_PARTS 5
static const struct {
    const char *name, *what;
    void (*fn)(EvalParts *e);
} PARTS[N_PARTS] = {
    { "training step", "train_step, the reference", part_step },
    { "val exam", "val_exam_run, 500 images", part_exam },
    { "sampling", "flow_sample, 250 x 4 Euler steps", part_samples },
    { "probe features", "probe_features, 1,000 images", part_features },
    { "Frechet distance", "stats of 1,000 x 128 + distance", part_frechet },
};

int speed_eval(const Config *base, int batch, int warmup, int rounds) {
    EvalParts e;
    int rc = eval_parts_init(&e, base, batch);
    if (rc) { eval_parts_free(&e); return rc; }
    Turn turns[2 * N_PARTS];
    BenchFn fns[2 * N_PARTS];
    for (int k = 0; k < 2 * N_PARTS; k++) {
        turns[k] = (Turn){ &e, k < N_PARTS ? 1 : 2, PARTS[k % N_PARTS].fn };
        fns[k] = (BenchFn){ PARTS[k % N_PARTS].name, turn_call, &turns[k] };
    }
    printf("the training step and the scoring parts, each on 1 and on 2 threads, taking turns in one process\n"
           "(batch %d, %d rounds of which %d warm-up: the median of %d)\n\n", batch, warmup + rounds, warmup, rounds);
    fflush(stdout);
    double ms[2 * N_PARTS];
    bench_interleaved(fns, 2 * N_PARTS, warmup, rounds, 1, ms);
    Table t;
    table_init(&t, 5, "part", "what is timed", "1 thread ms", "2 threads ms", "speed-up");
    for (int p = 0; p < N_PARTS; p++) {
        table_cell(&t, "%s", PARTS[p].name);
        table_cell(&t, "%s", PARTS[p].what);
        table_cell(&t, "%.1f", ms[p]);
        table_cell(&t, "%.1f", ms[N_PARTS + p]);
        table_cell(&t, "%.2fx", ms[p] / ms[N_PARTS + p]);
    }
    table_print(&t);
    printf("\nspeed-up: 1-thread time / 2-thread time (2.00x would be perfect); a part below the\n"
           "training step's is threaded worse than the step\n");
    omp_set_num_threads(2);
    eval_parts_free(&e);
    return 0;
}
