// test_trainer.c: the scorecard's exam and the trainer's promises.
//
//   - val MSE is a fixed exam: the same model scores the same on every call,
//     whatever the run's seed (synthetic images, no data needed);
//   - resume is exact: N steps straight, or k steps, a stop, and a resume to
//     N, give bit-identical weights, AdamW moments and loss.tsv;
//   - a finished run is not trained again, and an existing run is not
//     overwritten without --resume;
//   - a smoke run on real CIFAR-10 learns (its loss falls).
// Resume and the finished run test the machinery, not the data: they train on
// a small synthetic set in CIFAR-10's layout (tests/synth_cifar.h). Only the
// last one needs the real images; without them it is skipped (test_skip).
// Training runs use one thread: on a busy machine that is the fastest, and it
// keeps the runs comparable bit for bit.
#include <math.h>
#include <unistd.h>
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "io/fileio.h"
#include "io/safetensors.h"
#include "eval/scorecard.h"
#include "synth_cifar.h"
#include "testutil.h"
#include "train/trainer.h"

// ---------------------------------------------------------------------------
// (a) val MSE: the same exam for every model.

// A small set of random images, enough to span two evaluation batches.
static CifarSet synthetic_set(int n, unsigned long long seed) {
    CifarSet s = { n, malloc((size_t)n * CIFAR_PIXELS), malloc((size_t)n) };
    Rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < (size_t)n * CIFAR_PIXELS; i++) s.pixels[i] = (uint8_t)rng_below(&r, 256);
    for (int i = 0; i < n; i++) s.labels[i] = (uint8_t)rng_below(&r, 10);
    return s;
}

static Config tiny_config(void) {
    Config c = config_default();
    c.model.dim = 32; c.model.depth = 2; c.model.heads = 2; c.model.freq_dim = 32;
    return c;
}

static void build_tiny(Model *m, unsigned long long run_seed, unsigned long long weight_seed) {
    Config c = tiny_config();
    c.run.seed = run_seed;
    char err[256];
    ck_assert_msg(model_build(m, &c.model, err, sizeof err) == 0, "%s", err);
    model_init_weights(m, weight_seed);
}

START_TEST(test_val_mse_is_a_fixed_exam) {
    const int n = 260;   // more than the evaluation batch of 250: two batches
    CifarSet test = synthetic_set(n, 7);
    Model a, b, c;
    build_tiny(&a, 0, 0);
    double first = scorecard_val_mse(&a, &test, n);
    double again = scorecard_val_mse(&a, &test, n);
    ck_assert_msg(isfinite(first) && first > 0, "val MSE %g", first);
    ck_assert_msg(first == again, "two calls differ: %.17g vs %.17g", first, again);

    // the run's seed is used for the weights, the data order and the training
    // noise, never for the exam: the same weights in a run with another seed
    // get the same score, to the last bit
    build_tiny(&b, 99, 0);
    ck_assert_msg(scorecard_val_mse(&b, &test, n) == first, "the exam depends on cfg.seed");

    // and it is a real measurement: other weights, another score
    build_tiny(&c, 0, 1);
    double other_model = scorecard_val_mse(&c, &test, n);
    ck_assert_msg(other_model != first, "two different models scored %.17g", first);

    // the exam a run keeps for its checks every val_every steps (its buffers
    // made once): the same numbers, call after call, whichever model it is given
    ValExam e;
    ck_assert_int_eq(val_exam_init(&e, &a, &test, n), 0);
    ck_assert_msg(val_exam_run(&e, &a, &test) == first, "the kept exam scores the model differently");
    ck_assert_msg(val_exam_run(&e, &c, &test) == other_model, "the kept exam scores another model differently");
    ck_assert_msg(val_exam_run(&e, &a, &test) == first, "the kept exam remembers the previous model");
    val_exam_free(&e);
    model_free(&a); model_free(&b); model_free(&c);
    cifar_free(&test);
}
END_TEST

// The exam's number, pinned: recomputed here from its definition
// (scorecard.h), by another route than scorecard.c's: the noise of every
// image then a time for each, drawn from VAL_SEED in that order; each image
// alone through the model (batch 1) at its own time; the squared error
// against x1 - x0 summed in double. 263 images: a full evaluation batch of
// 250 and a partial one of 13, so a last batch weighted as a full one shows.
// Every weight random, so that the output depends on t through every path.
START_TEST(test_val_mse_is_the_formula) {
    const int n = 263;
    CifarSet test = synthetic_set(n, 11);
    Model m;
    build_tiny(&m, 0, 3);
    fill_normal(m.params, m.n_params, 0.2f, 5);
    size_t per = CIFAR_PIXELS;
    float *x0 = alloc_floats(per * n), *t = alloc_floats(n), *xt = alloc_floats(per);
    Rng r;
    rng_seed(&r, VAL_SEED);
    rng_fill_normal(&r, x0, (long)(per * n), 1.0f);
    rng_fill_uniform(&r, t, n, 0.0f, 1.0f);
    Activations a;
    ck_assert_int_eq(activations_alloc(&a, &m, 1, false), 0);
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        const uint8_t *px = test.pixels + (size_t)i * per;
        const float *z = x0 + (size_t)i * per;
        for (size_t k = 0; k < per; k++) xt[k] = (1.0f - t[i]) * z[k] + t[i] * ((float)px[k] / 127.5f - 1.0f);
        model_forward(&m, &a, xt, &t[i], NULL);
        double sq = 0.0;
        for (size_t k = 0; k < per; k++) {
            double d = (double)a.v[k] - ((px[k] / 127.5 - 1.0) - (double)z[k]);
            sq += d * d;
        }
        total += sq / (double)per;
    }
    double want = total / n, got = scorecard_val_mse(&m, &test, n);
    // float32 forward passes in batches of SCORECARD_BATCH and of 1 round differently,
    // by about 1e-7 of the value; a wrong time or weight moves it by 1e-3 or more
    ck_assert_msg(fabs(got - want) <= 1e-5 * want, "val MSE %.9f, recomputed %.9f (relative %.1e)", got, want,
                  fabs(got - want) / want);
    printf("val MSE of 263 images (batches of %d): %.9f, recomputed image by image %.9f\n", SCORECARD_BATCH, got, want);
    activations_free(&a);
    free(x0); free(t); free(xt);
    model_free(&m);
    cifar_free(&test);
}
END_TEST

// ---------------------------------------------------------------------------
// Real data, and trainer runs in a temporary folder.

static bool have_data(const char *test_name) {
    char p1[1200], p2[1200];
    snprintf(p1, sizeof p1, "%s/data_batch_1.bin", cifar_dir());
    snprintf(p2, sizeof p2, "%s/test_batch.bin", cifar_dir());
    if (file_exists(p1) && file_exists(p2)) return true;
    test_skip("cifar", 1, test_name, "no CIFAR-10 at %s (make data, or set CIFAR_DIR)", cifar_dir());
    return false;
}

static char g_tmp[256];

static const char *make_tmp(void) { return tmpdir_make(g_tmp, sizeof g_tmp, "trainer"); }
static void remove_tmp(void) { tmpdir_remove(g_tmp); }

// The smoke preset, one thread, no scorecard (the scorecard needs the probe).
static TrainOptions smoke_options(const char *out_dir, const char *name) {
    TrainOptions o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.out_dir = out_dir;
    o.preset = PRESET_SMOKE;
    preset_apply(PRESET_SMOKE, &o.cfg, &o.ckpt_every);
    o.cfg.run.threads = 1;
    o.scorecard = false;
    return o;
}

static char *read_text(const char *dir, const char *name, const char *file, size_t *len) {
    char path[600], err[600];
    snprintf(path, sizeof path, "%s/%s/%s", dir, name, file);
    char *t = read_file_all(path, len, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    return t;
}

// Weights, both AdamW moments and the EMA (all zero without one) of a run's
// checkpoint, and its step.
typedef struct { Model m; float *adam_m, *adam_v, *ema; int step; } Saved;

static Saved load_saved(const char *dir, const char *name) {
    Saved s;
    char path[600], err[1024];
    snprintf(path, sizeof path, "%s/%s/ckpt.safetensors", dir, name);
    SafeTensors st;
    ck_assert_msg(checkpoint_load(path, &s.m, &st, err, sizeof err) == 0, "%s", err);
    s.adam_m = alloc_floats(s.m.n_params);
    s.adam_v = alloc_floats(s.m.n_params);
    ck_assert_int_eq(checkpoint_copy_array(&st, path, CHECKPOINT_ADAMW_M, &s.m, s.adam_m, err, sizeof err), 0);
    ck_assert_int_eq(checkpoint_copy_array(&st, path, CHECKPOINT_ADAMW_V, &s.m, s.adam_v, err, sizeof err), 0);
    s.ema = calloc(s.m.n_params, sizeof(float));
    ck_assert_int_ge(checkpoint_copy_array(&st, path, CHECKPOINT_EMA, &s.m, s.ema, err, sizeof err), 0);
    const char *v = st_meta(&st, "train.step");
    s.step = v ? atoi(v) : -1;
    st_free(&st);
    return s;
}

static void free_saved(Saved *s) { model_free(&s->m); free(s->adam_m); free(s->adam_v); free(s->ema); }

static int count_rows(const char *text) {
    int rows = 0;
    for (const char *p = text; *p; p++) rows += *p == '\n';
    return rows - 1;   // minus the header
}

// ---------------------------------------------------------------------------
// (b) resume is exact: for the unconditional model, for a class-conditional
// one, whose label dropout draws from the run's noise stream (classes = 0:
// the smoke preset as it is), and with the 2026 recipe (recipe: logit-normal
// times from the same stream, and the EMA, which the checkpoint carries).
static void set_recipe(TrainOptions *o) {
    o->cfg.run.t_dist = T_LOGIT_NORMAL;
    o->cfg.run.t_mean = -0.3f;
    o->cfg.run.ema = 0.1f;
}

static void check_resume(const char *test, int classes, bool recipe) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, test), 0);
    const int k = 30;   // between two checkpoints (every 20): the stop saves its own

    TrainOptions straight = smoke_options(dir, "straight");
    straight.cfg.model.classes = classes;
    if (recipe) set_recipe(&straight);
    int N = straight.cfg.run.steps;
    ck_assert_int_eq(trainer_run(&straight), TRAIN_OK);

    TrainOptions part = smoke_options(dir, "resumed");
    part.cfg.model.classes = classes;
    if (recipe) set_recipe(&part);
    part.stop_after = k;
    ck_assert_int_eq(trainer_run(&part), TRAIN_STOPPED);
    Saved at_k = load_saved(dir, "resumed");
    ck_assert_int_eq(at_k.step, k);
    free_saved(&at_k);

    // as if the process had been killed after logging three more steps that
    // no checkpoint holds: the resume must drop them and redo them
    char tsv[600];
    snprintf(tsv, sizeof tsv, "%s/resumed/loss.tsv", dir);
    FILE *f = fopen(tsv, "a");
    ck_assert_ptr_nonnull(f);
    for (int s = k + 1; s <= k + 3; s++) fprintf(f, "%d\t9.999999\t9.999999\t9.9999\n", s);
    fclose(f);

    TrainOptions rest = smoke_options(dir, "resumed");
    rest.resume = true;
    ck_assert_int_eq(trainer_run(&rest), TRAIN_OK);

    Saved a = load_saved(dir, "straight"), b = load_saved(dir, "resumed");
    ck_assert_int_eq(a.step, N);
    ck_assert_int_eq(b.step, N);
    ck_assert_int_eq(a.m.cfg.classes, classes);
    ck_assert_int_eq(b.m.cfg.classes, classes);
    ck_assert_int_eq(a.m.n_params, b.m.n_params);
    ck_assert_msg(memcmp(a.m.params, b.m.params, sizeof(float) * a.m.n_params) == 0,
                  "weights after a resume differ from a straight run");
    ck_assert_msg(memcmp(a.adam_m, b.adam_m, sizeof(float) * a.m.n_params) == 0, "AdamW m differs");
    ck_assert_msg(memcmp(a.adam_v, b.adam_v, sizeof(float) * a.m.n_params) == 0, "AdamW v differs");
    ck_assert_msg(memcmp(a.ema, b.ema, sizeof(float) * a.m.n_params) == 0, "the EMA differs after a resume");
    if (recipe) {   // an EMA that is there, and not the weights themselves
        double gap = 0, size = 0;
        for (size_t i = 0; i < a.m.n_params; i++) { gap += fabs(a.ema[i] - a.m.params[i]); size += fabs(a.ema[i]); }
        ck_assert_msg(size > 0 && gap > 0, "the checkpoint's EMA is %s", size > 0 ? "the weights themselves" : "empty");
    }
    free_saved(&a); free_saved(&b);

    size_t la, lb;
    char *ta = read_text(dir, "straight", "loss.tsv", &la), *tb = read_text(dir, "resumed", "loss.tsv", &lb);
    ck_assert_int_eq(count_rows(ta), N);
    ck_assert_msg(la == lb && memcmp(ta, tb, la) == 0, "loss.tsv rows differ after a resume");
    free(ta); free(tb);
    remove_tmp();
}

START_TEST(test_resume_is_bit_identical) { check_resume("test_resume_is_bit_identical", 0, false); }
END_TEST
START_TEST(test_resume_class_conditional) { check_resume("test_resume_class_conditional", 10, false); }
END_TEST
START_TEST(test_resume_with_the_recipe) { check_resume("test_resume_with_the_recipe", 10, true); }
END_TEST

// The EMA watches the run and never steers it: with and without one, the
// same weights and the same loss.tsv. Logit-normal times are another run.
START_TEST(test_ema_never_changes_training) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, "test_ema_never_changes_training"), 0);
    TrainOptions plain = smoke_options(dir, "plain"), ema = smoke_options(dir, "ema"), ln = smoke_options(dir, "ln");
    ema.cfg.run.ema = 0.2f;
    ln.cfg.run.t_dist = T_LOGIT_NORMAL;
    ck_assert_int_eq(trainer_run(&plain), TRAIN_OK);
    ck_assert_int_eq(trainer_run(&ema), TRAIN_OK);
    ck_assert_int_eq(trainer_run(&ln), TRAIN_OK);
    Saved a = load_saved(dir, "plain"), b = load_saved(dir, "ema"), c = load_saved(dir, "ln");
    ck_assert_msg(memcmp(a.m.params, b.m.params, sizeof(float) * a.m.n_params) == 0, "an EMA changed the weights");
    ck_assert_msg(memcmp(a.m.params, c.m.params, sizeof(float) * a.m.n_params) != 0,
                  "logit-normal times trained the same weights as uniform ones");
    free_saved(&a); free_saved(&b); free_saved(&c);
    size_t la, lb;
    char *ta = read_text(dir, "plain", "loss.tsv", &la), *tb = read_text(dir, "ema", "loss.tsv", &lb);
    ck_assert_msg(la == lb && memcmp(ta, tb, la) == 0, "an EMA changed loss.tsv");
    free(ta); free(tb);
    remove_tmp();
}
END_TEST

// A class-conditional run needs labels its model knows: classes=5 on data
// labelled 0..9 is refused before anything is written (the message, naming
// an image and its label: tests/test_faults.c).
START_TEST(test_labels_that_do_not_fit) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, "test_labels_that_do_not_fit"), 0);
    TrainOptions o = smoke_options(dir, "five");
    o.cfg.model.classes = 5;
    ck_assert_int_eq(trainer_run(&o), TRAIN_ERROR);
    char path[600];
    snprintf(path, sizeof path, "%s/five", dir);
    ck_assert_msg(!file_exists(path), "a refused run left %s behind", path);
    remove_tmp();
}
END_TEST

// ---------------------------------------------------------------------------
// (b2) val MSE along the run: with val_every = 20 a smoke run (60 steps)
// writes the exam's score at steps 20, 40 and 60 into val.tsv; checking it
// changes nothing of the training (loss.tsv and weights are the run without
// checks, bit for bit); a stop and resume writes the same curve; and the
// point at step 60 is the exam of the final weights.
static int read_val_rows(const char *dir, const char *name, int *steps, double *vals, int max) {
    size_t len;
    char *t = read_text(dir, name, "val.tsv", &len), *save = NULL;
    int n = 0;
    for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (n < max && sscanf(line, "%d %lf", &steps[n], &vals[n]) == 2) n++;
    free(t);
    return n;
}

START_TEST(test_val_curve_along_the_run) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, "test_val_curve_along_the_run"), 0);
    TrainOptions plain = smoke_options(dir, "plain");
    ck_assert_int_eq(plain.cfg.run.val_every, 0);   // the smoke preset checks only at the end
    ck_assert_int_eq(trainer_run(&plain), TRAIN_OK);

    TrainOptions checked = smoke_options(dir, "checked");
    checked.cfg.run.val_every = 20;
    ck_assert_int_eq(trainer_run(&checked), TRAIN_OK);

    TrainOptions part = smoke_options(dir, "resumed");
    part.cfg.run.val_every = 20;
    part.stop_after = 30;
    ck_assert_int_eq(trainer_run(&part), TRAIN_STOPPED);
    part.stop_after = 0;
    part.resume = true;
    ck_assert_int_eq(trainer_run(&part), TRAIN_OK);

    size_t la, lb;
    char *ta = read_text(dir, "plain", "loss.tsv", &la), *tb = read_text(dir, "checked", "loss.tsv", &lb);
    ck_assert_msg(la == lb && memcmp(ta, tb, la) == 0, "the val checks changed the training losses");
    free(ta); free(tb);
    Saved a = load_saved(dir, "plain"), b = load_saved(dir, "checked");
    ck_assert_msg(memcmp(a.m.params, b.m.params, sizeof(float) * a.m.n_params) == 0,
                  "the val checks changed the weights");

    int steps[8], steps_r[8];
    double vals[8], vals_r[8];
    int n = read_val_rows(dir, "checked", steps, vals, 8);
    ck_assert_int_eq(n, 3);
    for (int i = 0; i < n; i++) ck_assert_int_eq(steps[i], 20 * (i + 1));
    ck_assert_int_eq(read_val_rows(dir, "resumed", steps_r, vals_r, 8), 3);
    for (int i = 0; i < n; i++)
        ck_assert_msg(steps_r[i] == steps[i] && vals_r[i] == vals[i], "resumed curve row %d: %d %.6f, straight %d %.6f",
                      i, steps_r[i], vals_r[i], steps[i], vals[i]);
    ck_assert_msg(vals[2] < vals[0], "val MSE did not fall along the run: %.6f then %.6f", vals[0], vals[2]);

    CifarSet test;
    char err[CIFAR_ERRLEN];
    ck_assert_msg(cifar_load_test(NULL, &test, err, sizeof err) == 0, "%s", err);
    double final = scorecard_val_mse(&b.m, &test, VAL_IMAGES);
    ck_assert_msg(fabs(final - vals[2]) <= 5e-7, "val.tsv at step 60: %.6f, the exam of the final weights %.7f",
                  vals[2], final);
    cifar_free(&test);
    free_saved(&a); free_saved(&b);
    remove_tmp();
}
END_TEST

// A finished run (metrics.json present) comes back at once untouched; an
// existing run is never overwritten without resume.
START_TEST(test_finished_run_is_not_retrained) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, "test_finished_run_is_not_retrained"), 0);
    TrainOptions o = smoke_options(dir, "done");
    ck_assert_int_eq(trainer_run(&o), TRAIN_OK);
    char metrics[600], err[600];
    snprintf(metrics, sizeof metrics, "%s/done/metrics.json", dir);
    const char *fake = "{\"params\": 1}\n";   // only its presence matters here
    ck_assert_int_eq(write_file_atomic(metrics, fake, strlen(fake), err, sizeof err), 0);
    size_t l1, l2;
    char *before = read_text(dir, "done", "ckpt.safetensors", &l1);

    fprintf(stderr, "test_finished_run_is_not_retrained: an \"already holds a run\" error is expected next\n");
    ck_assert_int_eq(trainer_run(&o), TRAIN_USAGE);   // no resume: refuses
    o.resume = true;
    ck_assert_int_eq(trainer_run(&o), TRAIN_OK);      // finished: returns at once

    char *after = read_text(dir, "done", "ckpt.safetensors", &l2);
    ck_assert(l1 == l2 && memcmp(before, after, l1) == 0);
    free(before); free(after);
    remove_tmp();
}
END_TEST

// ---------------------------------------------------------------------------
// (b4) data_seed moves the data order alone. -1 (the default) is the run's
// seed, so seed=0 and seed=0 data_seed=0 are one run, bit for bit; seed=0
// data_seed=1 draws its batches as seed=1 does (the data loader's state in
// the two checkpoints is the same string) but starts from seed 0's weights
// and noise (its weights end elsewhere).
static char *data_state(const char *dir, const char *name) {
    char path[600], err[1024];
    snprintf(path, sizeof path, "%s/%s/ckpt.safetensors", dir, name);
    Model m;
    SafeTensors st;
    ck_assert_msg(checkpoint_load(path, &m, &st, err, sizeof err) == 0, "%s", err);
    const char *v = st_meta(&st, "train.data");
    ck_assert_ptr_nonnull(v);
    char *copy = strdup(v);
    st_free(&st);
    model_free(&m);
    return copy;
}

static void train_seeds(const char *dir, const char *name, unsigned long long seed, int data_seed) {
    TrainOptions o = smoke_options(dir, name);
    o.cfg.run.steps = 12;
    o.cfg.run.seed = seed;
    o.cfg.run.data_seed = data_seed;
    ck_assert_int_eq(trainer_run(&o), TRAIN_OK);
}

START_TEST(test_data_seed_moves_the_order_alone) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, "test_data_seed_moves_the_order_alone"), 0);
    train_seeds(dir, "seed0", 0, -1);
    train_seeds(dir, "seed0_data0", 0, 0);
    train_seeds(dir, "seed0_data1", 0, 1);
    train_seeds(dir, "seed1", 1, -1);

    size_t la, lb, lc;
    char *a = read_text(dir, "seed0", "loss.tsv", &la), *b = read_text(dir, "seed0_data0", "loss.tsv", &lb);
    char *c = read_text(dir, "seed0_data1", "loss.tsv", &lc);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "data_seed=0 is not the default run of seed 0");
    ck_assert_msg(la != lc || memcmp(a, c, la) != 0, "data_seed=1 trained the same batches as seed 0");
    free(a); free(b); free(c);

    char *d1 = data_state(dir, "seed0_data1"), *s1 = data_state(dir, "seed1"), *s0 = data_state(dir, "seed0");
    ck_assert_msg(strncmp(d1, "seed=1 ", 7) == 0, "data loader of data_seed=1: %s", d1);
    ck_assert_msg(strcmp(d1, s1) == 0, "data_seed=1 (%s) and seed=1 (%s) drew different batches", d1, s1);
    ck_assert_msg(strcmp(d1, s0) != 0, "data_seed=1 drew seed 0's batches (%s)", s0);
    free(d1); free(s1); free(s0);

    Saved x = load_saved(dir, "seed0_data1"), y = load_saved(dir, "seed1");
    ck_assert_msg(memcmp(x.m.params, y.m.params, sizeof(float) * x.m.n_params) != 0,
                  "data_seed=1 and seed=1 ended with the same weights: the seed set only the data");
    free_saved(&x); free_saved(&y);
    remove_tmp();
}
END_TEST

// ---------------------------------------------------------------------------
// (c) a smoke run on real data learns: the mean loss of the last 10 steps is
// below that of the first 10.
START_TEST(test_smoke_run_loss_falls) {
    if (!have_data("test_smoke_run_loss_falls")) return;
    const char *dir = make_tmp();
    TrainOptions o = smoke_options(dir, "learns");
    o.cfg.run.seed = 1;
    ck_assert_int_eq(trainer_run(&o), TRAIN_OK);
    int N = o.cfg.run.steps;
    float *loss = alloc_floats((size_t)N);
    size_t len;
    char *text = read_text(dir, "learns", "loss.tsv", &len);
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int step; float l, g, m;
        if (sscanf(line, "%d %f %f %f", &step, &l, &g, &m) != 4) continue;   // the header
        ck_assert_int_eq(step, rows + 1);
        ck_assert_msg(isfinite(l), "step %d: loss %g", step, l);
        loss[rows++] = l;
    }
    ck_assert_int_eq(rows, N);
    double first = 0, last = 0;
    for (int i = 0; i < 10; i++) { first += loss[i] / 10; last += loss[N - 10 + i] / 10; }
    fprintf(stderr, "test_smoke_run_loss_falls: mean loss %.4f (steps 1-10) -> %.4f (steps %d-%d)\n",
            first, last, N - 9, N);
    ck_assert_msg(last < first, "loss did not fall: %.4f -> %.4f", first, last);
    free(text); free(loss);
    remove_tmp();
}
END_TEST

// tools/trace_steps writes a run's first steps for the PyTorch replay
// (tools/torch_train.py). It must start and step exactly as `train` does, or
// the replay would compare PyTorch with something that is not our run: its
// losses are the run's loss.tsv, step by step, and its config the run's,
// with a key of every part away from its default (the data order's seed
// among them). With python3-torch present, the replay itself runs too and
// must agree over the first ten steps.
START_TEST(test_trace_is_the_run) {
    const char *dir = make_tmp();
    ck_assert_int_ge(synth_cifar_use(dir, "test_trace_is_the_run"), 0);
    // a key of each part: the model's, the run's, its samples'
    const char *const sets[] = { "ada=zero", "data_seed=1", "guidance=2" }, *const keys[] = { "ada", "data_seed", "guidance" };
    const KeyPart parts[] = { PART_MODEL, PART_RUN, PART_SAMPLING };
    for (int i = 0; i < 3; i++) ck_assert(config_find_key(keys[i])->part == parts[i]);
    TrainOptions o = smoke_options(dir, "traced");
    char err[600];
    ck_assert_msg(config_apply(&o.cfg, sets, 3, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(trainer_run(&o), TRAIN_OK);
    const int K = 20;
    char opts[1200], trace[700];
    snprintf(trace, sizeof trace, "%s/trace.safetensors", dir);
    snprintf(opts, sizeof opts, "--preset smoke --set threads=1 --set %s --set %s --set %s --steps %d '%s'",
             sets[0], sets[1], sets[2], K, trace);
    ck_assert_int_eq(run_program("", "build/tools/trace_steps", opts, dir), 0);

    SafeTensors st;
    ck_assert_msg(st_read(trace, &st, err, sizeof err) == 0, "%s", err);
    const StTensor *loss = st_find(&st, "loss");
    ck_assert_ptr_nonnull(loss);
    ck_assert_int_eq((int)loss->numel, K);
    ck_assert_ptr_nonnull(st_find(&st, "param.blocks.0.attn.qkv.weight"));
    size_t len;
    char *tsv = read_text(dir, "traced", "loss.tsv", &len);
    const char *line = strchr(tsv, '\n') + 1;   // after the header
    for (int k = 0; k < K; k++) {
        int step; double logged;
        ck_assert_int_eq(sscanf(line, "%d\t%lf", &step, &logged), 2);
        ck_assert_int_eq(step, k + 1);
        ck_assert_msg(fabs(logged - loss->data[k]) <= 1e-6,
                      "step %d: trace loss %.7f, the run logged %.6f", k + 1, loss->data[k], logged);
        line = strchr(line, '\n') + 1;
    }
    free(tsv);
    // and its config is the run's, key by key
    Config traced = config_default(), ran;
    for (int i = 0; i < st.n_meta; i++) {
        if (strncmp(st.meta_keys[i], "config.", 7) != 0) continue;
        char kv[256];
        snprintf(kv, sizeof kv, "%s=%s", st.meta_keys[i] + 7, st.meta_values[i]);
        ck_assert_msg(config_set(&traced, kv, err, sizeof err) == 0, "%s", err);
    }
    st_free(&st);
    char ckpt[700], dt[1024], dr[1024];
    snprintf(ckpt, sizeof ckpt, "%s/traced/ckpt.safetensors", dir);
    ck_assert_msg(checkpoint_read_config(ckpt, &ran, err, sizeof err) == 0, "%s", err);
    config_describe(&traced, dt, sizeof dt);
    config_describe(&ran, dr, sizeof dr);
    ck_assert_str_eq(dt, dr);

    if (system("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0) {
        printf("test_trace_is_the_run: %d steps agree with loss.tsv\n", K);
        test_skip("torch", 0, "test_trace_is_the_run", "the PyTorch replay: no python3-torch "
                  "(apt-get install python3-torch)");
    } else {
        char cmd[2400];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tools/torch_train.py' replay '%s' >'%s/out.txt' 2>&1",
                 project_root(), trace, dir);
        int st = system(cmd), rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        char *out = read_text(dir, ".", "out.txt", &len);
        printf("test_trace_is_the_run: %d steps agree with loss.tsv; PyTorch replay (exit %d):\n%s", K, rc, out);
        ck_assert_msg(rc == 0, "the PyTorch replay disagrees with the C steps (exit %d)", rc);
        free(out);
    }
    remove_tmp();
}
END_TEST

int main(void) {
    Suite *s = suite_create("trainer");
    add_tests(s, "val_mse", 30, TESTS(test_val_mse_is_a_fixed_exam, test_val_mse_is_the_formula));
    // each run reads 180 MB of CIFAR-10
    add_tests(s, "runs", 240, TESTS(test_resume_is_bit_identical, test_resume_class_conditional, test_resume_with_the_recipe, test_ema_never_changes_training,
                                    test_labels_that_do_not_fit, test_val_curve_along_the_run,
                                    test_finished_run_is_not_retrained, test_data_seed_moves_the_order_alone,
                                    test_smoke_run_loss_falls,
                                    test_trace_is_the_run));
    return run_suite(s);
}
