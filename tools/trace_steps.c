// trace_steps.c: the first K steps of a training run, written out so that
// another implementation can replay them (tools/torch_train.py replay).
//
//   CIFAR_DIR=... ./build/tools/trace_steps --preset quick --set pos=rope2d
//                               --steps 100 /tmp/trace.safetensors
//
// It starts and steps the run with the trainer's own training_start and
// training_step (common/train/trainer.h), so its losses are the run's
// loss.tsv, line by line (tests/test_trainer.c checks that). The file has
//   param.NAME    every weight before the first step
//   after.NAME    every weight after step K
//   x1            (K, B, C, S, S) each step's batch, flips applied
//   x0, t         (K, B, C, S, S) and (K, B) each step's noise and times
//   y             (K, B) class-conditional: each step's labels, after the
//                 label dropout (floats holding integers; classes = null)
//   loss          (K) the loss of each step, grad_norm (K) its gradient norm
//   exam.t        (2000) the val-MSE exam's times and exam.x0_head (4, C, S, S)
//                 its first four noise images, so a reimplementation of the
//                 exam can check itself
//   val_mse       (1) the val MSE of the weights after step K (with K the
//                 preset's steps, the run's own val MSE in its metrics.json)
// and in its metadata the config (as `train` would print it) and K.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/scorecard.h"
#include "io/progress.h"
#include "io/safetensors.h"
#include "train/trainer.h"

typedef struct {
    Config cfg;
    int K;                  // steps to trace
    const char *out;        // the .safetensors file
} TraceOptions;

// One parse; then the preset first, wherever it stood, and every --set on
// top of it in order, as `train` does (preset_config). ARGS_OK, ARGS_HELP
// or ARGS_BAD (common/io/args.h).
static int parse_options(int argc, char **argv, TraceOptions *o) {
    Preset preset = PRESET_QUICK;
    ArgList sets = { .n = 0 };
    char **words = NULL;
    int nwords = 0, ckpt_every;
    *o = (TraceOptions){ .K = 100 };
    const ArgOption opts[] = {
        ARG_PRESET(&preset),
        ARG_SETS(&sets),
        ARG_INT("steps", "K", &o->K, 1, 100000, "steps to trace"),
        ARG_END,
    };
    char about[512];
    snprintf(about, sizeof about, "  writes the first K steps of the run `step6_ablation train` would start with the\n"
                                  "  same preset and --set keys; data from $CIFAR_DIR (now %s)", cifar_dir());
    const ArgSpec spec = { .program = "trace_steps", .options = opts, .about = about, .more = preset_describe,
                           .words = "OUT.safetensors", .word_v = &words, .word_n = &nwords };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return rc;
    if ((rc = preset_config(preset, &sets, &o->cfg, &ckpt_every)) != ARGS_OK) return rc;
    if (nwords != 1) return args_error(NULL, "trace_steps wants one OUT.safetensors (trace_steps --help)");
    o->out = words[0];
    return ARGS_OK;
}

typedef struct {
    int K, B;
    size_t per;                     // floats per image
    float *x1, *x0, *t, *loss, *grad_norm;
    float *y;                       // (K, B) the labels trained on, when classes > 0
    int *labels;                    // (B) one batch's labels, from the loader
    float *weights0;                // (n_params) before step 1
} Trace;

static void add_config_meta(const char *key, const char *value, void *ctx) {
    char name[96];
    snprintf(name, sizeof name, "config.%s", key);
    st_writer_meta(ctx, name, value);
}

// Writes params under "prefix.NAME", each a view into weights (n_params).
static void add_params(StWriter *w, const Model *m, const char *prefix, const float *weights) {
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *p = &m->tensors[i];
        long shape[2] = { p->shape[0], p->shape[1] };
        char name[PARAM_NAME_LEN + 16];
        snprintf(name, sizeof name, "%s.%s", prefix, p->name);
        st_writer_add(w, name, p->ndim, shape, weights + p->offset);
    }
}

// K steps of the run, recording every input.
static void take_steps(Trace *tr, Training *run) {
    Progress pr;
    progress_begin(&pr, stderr, "trace", 0, tr->K);
    for (int k = 0; k < tr->K; k++) {
        tr->loss[k] = (float)training_step(run, tr->x1 + (size_t)k * tr->B * tr->per, tr->labels);
        if (tr->y)   // the labels the step trained on, dropped ones as the null label
            for (int b = 0; b < tr->B; b++) tr->y[(size_t)k * tr->B + b] = (float)run->ts.y[b];
        tr->grad_norm[k] = (float)run->ts.grad_norm;
        memcpy(tr->x0 + (size_t)k * tr->B * tr->per, run->ts.x0, sizeof(float) * tr->B * tr->per);
        memcpy(tr->t + (size_t)k * tr->B, run->ts.t, sizeof(float) * tr->B);
        progress_update(&pr, k + 1, NULL);
    }
    progress_end(&pr);
}

static int save_trace(const char *path, const Trace *tr, Model *m, const Config *cfg, float val_mse) {
    float *exam_x0 = malloc(sizeof(float) * tr->per * VAL_IMAGES);
    float *exam_t = malloc(sizeof(float) * VAL_IMAGES);
    if (!exam_x0 || !exam_t) { free(exam_x0); free(exam_t); fprintf(stderr, "error: out of memory\n"); return 1; }
    scorecard_exam(exam_x0, exam_t, tr->per, VAL_IMAGES);
    StWriter w;
    st_writer_init(&w);
    add_params(&w, m, "param", tr->weights0);
    add_params(&w, m, "after", m->params);
    long img[5] = { tr->K, tr->B, cfg->model.channels, cfg->model.img, cfg->model.img };
    st_writer_add(&w, "x1", 5, img, tr->x1);
    st_writer_add(&w, "x0", 5, img, tr->x0);
    st_writer_add(&w, "t", 2, (long[]){ tr->K, tr->B }, tr->t);
    if (tr->y) st_writer_add(&w, "y", 2, (long[]){ tr->K, tr->B }, tr->y);
    st_writer_add(&w, "loss", 1, (long[]){ tr->K }, tr->loss);
    st_writer_add(&w, "grad_norm", 1, (long[]){ tr->K }, tr->grad_norm);
    st_writer_add(&w, "exam.t", 1, (long[]){ VAL_IMAGES }, exam_t);
    st_writer_add(&w, "exam.x0_head", 4, (long[]){ 4, cfg->model.channels, cfg->model.img, cfg->model.img }, exam_x0);
    st_writer_add(&w, "val_mse", 1, (long[]){ 1 }, &val_mse);
    config_foreach_field(cfg, add_config_meta, &w);
    char k_text[32];
    snprintf(k_text, sizeof k_text, "%d", tr->K);
    st_writer_meta(&w, "trace.steps", k_text);
    char err[512];
    int rc = st_writer_save_atomic(&w, path, err, sizeof err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    st_writer_free(&w);
    free(exam_x0); free(exam_t);
    return rc != 0;
}

int main(int argc, char **argv) {
    TraceOptions o;
    int rc = parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    const Config *cfg = &o.cfg;
    int K = o.K;
    char err[4608];
    if (cifar_check_config(&cfg->model, "--set", err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return 2; }
    CifarSet train, test;
    if (load_data(&train, &test) != 0) return 1;
    Training run;
    if (training_start(&run, cfg, &train) != 0) { training_free(&run); cifar_free(&train); cifar_free(&test); return 1; }
    Trace tr = { .K = K, .B = cfg->run.batch, .per = cfg_image_floats(&cfg->model) };
    size_t batch_floats = (size_t)K * tr.B * tr.per;
    tr.x1 = malloc(sizeof(float) * batch_floats);
    tr.x0 = malloc(sizeof(float) * batch_floats);
    tr.t = malloc(sizeof(float) * (size_t)K * tr.B);
    tr.loss = malloc(sizeof(float) * K);
    tr.grad_norm = malloc(sizeof(float) * K);
    tr.weights0 = malloc(sizeof(float) * run.m.n_params);
    tr.labels = malloc(sizeof(int) * tr.B);
    tr.y = cfg->model.classes > 0 ? malloc(sizeof(float) * (size_t)K * tr.B) : NULL;
    if (!tr.x1 || !tr.x0 || !tr.t || !tr.loss || !tr.grad_norm || !tr.weights0 || !tr.labels ||
        (cfg->model.classes > 0 && !tr.y)) {
        fprintf(stderr, "error: out of memory (%d steps of batch %d need %.0f MB; try fewer --steps)\n",
                K, tr.B, 8.0 * batch_floats / 1e6);
        return 1;
    }
    memcpy(tr.weights0, run.m.params, sizeof(float) * run.m.n_params);

    take_steps(&tr, &run);
    float val = (float)scorecard_val_mse(&run.m, &test, VAL_IMAGES);
    rc = save_trace(o.out, &tr, &run.m, cfg, val);
    if (rc == 0)
        printf("%s: %d steps of batch %d, loss %.6f -> %.6f, then val MSE %.6f\n", o.out, K, tr.B, tr.loss[0],
               tr.loss[K - 1], val);
    training_free(&run); cifar_free(&train); cifar_free(&test);
    free(tr.x1); free(tr.x0); free(tr.t); free(tr.loss); free(tr.grad_norm); free(tr.weights0);
    free(tr.labels); free(tr.y);
    return rc;
}
