// trainer.c: a whole training run (see trainer.h).
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "dataloader.h"
#include "io/fileio.h"
#include "io/progress.h"
#include "eval/scorecard.h"
#include "eval/spikes.h"
#include "nn/train_step.h"
#include "trainer.h"

#define ERRLEN 4608
// The noise and times of training come from the run's seed plus this offset,
// so they are a different stream from the weights' initialisation.
#define NOISE_SEED_OFFSET 0x5EEDF10ULL

// ---------------------------------------------------------------------------
// Presets
const char *preset_name(Preset p) {
    return p == PRESET_SMOKE ? "smoke" : p == PRESET_QUICK ? "quick" : "tutorial";
}

int preset_parse(const char *s, Preset *out) {
    if (strcmp(s, "smoke") == 0) *out = PRESET_SMOKE;
    else if (strcmp(s, "quick") == 0) *out = PRESET_QUICK;
    else if (strcmp(s, "tutorial") == 0) *out = PRESET_TUTORIAL;
    else return -1;
    return 0;
}

void preset_apply(Preset p, Config *cfg, int *ckpt_every) {
    *cfg = config_default();
    switch (p) {
    case PRESET_SMOKE:      // seconds: a small model, for tests
        cfg->dim = 32; cfg->depth = 2; cfg->heads = 2; cfg->freq_dim = 32;
        cfg->batch = 16; cfg->steps = 60; *ckpt_every = 20;
        break;
    case PRESET_QUICK:      // minutes: the tutorial's model, a quarter of the batch and steps
        cfg->batch = 64; cfg->steps = 1000; *ckpt_every = 250;
        break;
    case PRESET_TUTORIAL:   // the tutorial's runs: dim 128, depth 4, heads 4, batch 128, 4,000 steps
        cfg->batch = 128; cfg->steps = 4000; *ckpt_every = 250;
        break;
    }
}

void preset_probe_recipe(Preset p, ProbeRecipe *out) {
    *out = probe_default_recipe();
    if (p == PRESET_SMOKE) out->epochs = 1;
}

void preset_describe(void *file) {
    FILE *f = file;
    fprintf(f, "presets:\n"
               "  smoke     dim 32, depth 2, heads 2, batch 16, 60 steps (seconds; for tests)\n"
               "  quick     dim 128, depth 4, heads 4, batch 64, 1,000 steps (minutes)\n"
               "  tutorial  dim 128, depth 4, heads 4, batch 128, 4,000 steps, lr 3e-4 (about an hour)\n");
}

// ---------------------------------------------------------------------------
// Ctrl-C or a polite kill: finish the step, save a checkpoint, exit.
static volatile sig_atomic_t g_stop_signal = 0;
static void on_signal(int sig) { g_stop_signal = sig; }

static void rng_to_text(const Rng *r, char *out, size_t n) {
    unsigned int bits;
    memcpy(&bits, &r->spare, sizeof bits);
    snprintf(out, n, "0x%016llx %d 0x%08x", (unsigned long long)r->state, r->has_spare, bits);
}

// train.step of a checkpoint: a whole number >= 0, else -1 (atoi would read
// "abc" as 0 and quietly restart a trained model's history).
static int parse_step(const char *s) {
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return (errno || *end || v > 100000000) ? -1 : (int)v;
}

// Where the last good checkpoint is, for the messages of a run that stops on
// an error: a fresh run has none until its first save.
static void last_checkpoint_text(char *out, size_t n, int last_saved, const char *path) {
    if (last_saved > 0) snprintf(out, n, "the last good checkpoint (step %d) is kept in %s", last_saved, path);
    else snprintf(out, n, "no checkpoint was written yet");
}

static int rng_from_text(const char *s, Rng *r) {
    unsigned long long st; int has; unsigned int bits;
    if (!s || sscanf(s, "%llx %d %x", &st, &has, &bits) != 3) return -1;
    r->state = st; r->has_spare = has; memcpy(&r->spare, &bits, sizeof bits);
    return 0;
}

typedef struct {
    char dir[2048], ckpt[2100], loss[2100], metrics[2100], samples[2100];
} RunPaths;

static void run_paths(RunPaths *p, const char *out_dir, const char *name) {
    snprintf(p->dir, sizeof p->dir, "%s/%s", out_dir, name);
    snprintf(p->ckpt, sizeof p->ckpt, "%s/ckpt.safetensors", p->dir);
    snprintf(p->loss, sizeof p->loss, "%s/loss.tsv", p->dir);
    snprintf(p->metrics, sizeof p->metrics, "%s/metrics.json", p->dir);
    snprintf(p->samples, sizeof p->samples, "%s/samples.png", p->dir);
}

// loss.tsv rows: step, loss, grad_norm, max_logit. Reads the rows with
// step <= upto into the arrays (indexed step-1). Returns rows read, -1 on error.
static int read_loss_tsv(const char *path, int upto, float *loss, float *gnorm, float *logit,
                         char *err, size_t errlen) {
    size_t len;
    char *text = read_file_all(path, &len, err, errlen);
    if (!text) return -1;
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || line[0] == 's') continue;   // header
        int step; float l, g, m;
        if (sscanf(line, "%d %f %f %f", &step, &l, &g, &m) != 4) continue;
        if (step < 1 || step > upto) continue;
        loss[step - 1] = l; gnorm[step - 1] = g; logit[step - 1] = m;
        if (step > rows) rows = step;
    }
    free(text);
    return rows;
}

// Rewrites loss.tsv with rows 1..n (used when a resumed run drops the steps
// after its checkpoint).
static int write_loss_tsv(const char *path, int n, const float *loss, const float *gnorm,
                          const float *logit, char *err, size_t errlen) {
    size_t cap = 64 + (size_t)n * 64, len = 0;
    char *buf = malloc(cap);
    len += snprintf(buf + len, cap - len, "step\tloss\tgrad_norm\tmax_logit\n");
    for (int i = 0; i < n; i++)
        len += snprintf(buf + len, cap - len, "%d\t%.6f\t%.6f\t%.4f\n", i + 1, loss[i], gnorm[i], logit[i]);
    int rc = write_file_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

// ---------------------------------------------------------------------------
// The checkpoint: weights, AdamW moments, config, and everything the loop
// needs to continue exactly where it stopped.
static int save_checkpoint(const RunPaths *rp, const Model *m, const TrainState *ts, const Rng *noise,
                           const DataLoader *dl, double train_seconds, const float *max_logit_layers,
                           Preset preset, char *err, size_t errlen) {
    char step[32], rng_text[96], data_text[DATALOADER_STATE_TEXT_LEN], secs[64], logits[512] = "";
    snprintf(step, sizeof step, "%d", ts->step);
    rng_to_text(noise, rng_text, sizeof rng_text);
    DataLoaderState ds = dataloader_get_state(dl);
    dataloader_state_format(&ds, data_text, sizeof data_text);
    snprintf(secs, sizeof secs, "%.6f", train_seconds);
    for (int b = 0; b < m->cfg.depth; b++) {
        size_t l = strlen(logits);
        snprintf(logits + l, sizeof logits - l, "%s%.6g", b ? "," : "", max_logit_layers[b]);
    }
    CheckpointArray extra[2] = { { CHECKPOINT_ADAMW_M, ts->adam_m }, { CHECKPOINT_ADAMW_V, ts->adam_v } };
    CheckpointMeta meta[6] = { { "train.step", step }, { "train.noise_rng", rng_text },
                               { "train.data", data_text }, { "train.seconds", secs },
                               { "train.max_logit", logits }, { "train.preset", preset_name(preset) } };
    return checkpoint_save(rp->ckpt, m, extra, 2, meta, 6, err, errlen);
}

// ---------------------------------------------------------------------------
// samples.png: an 8x8 grid of 32x32 samples with a 2-pixel gap.
static int write_sample_grid(const char *path, const float *x, int n, int C, int S, char *err, size_t errlen) {
    int cols = 8, rows = (n + cols - 1) / cols, gap = 2;
    int W = cols * S + (cols + 1) * gap, H = rows * S + (rows + 1) * gap;
    unsigned char *img = calloc((size_t)W * H * 3, 1);
    for (int i = 0; i < n; i++) {
        int oy = gap + (i / cols) * (S + gap), ox = gap + (i % cols) * (S + gap);
        for (int y = 0; y < S; y++)
            for (int xx = 0; xx < S; xx++)
                for (int c = 0; c < 3; c++) {
                    float v = x[(((size_t)i * C + (C == 3 ? c : 0)) * S + y) * S + xx];
                    float p = (v + 1.0f) * 127.5f;
                    p = p < 0 ? 0 : p > 255 ? 255 : p;
                    img[((size_t)(oy + y) * W + ox + xx) * 3 + c] = (unsigned char)(p + 0.5f);
                }
    }
    int len = 0;
    unsigned char *png = stbi_write_png_to_mem(img, W * 3, W, H, 3, &len);
    free(img);
    if (!png) { snprintf(err, errlen, "cannot encode %s", path); return -1; }
    int rc = write_file_atomic(path, png, (size_t)len, err, errlen);
    STBIW_FREE(png);
    return rc;
}

// ---------------------------------------------------------------------------
// The scorecard and metrics.json of a finished run.
static void add_config_field(const char *key, const char *value, void *obj) {
    cJSON_AddStringToObject((cJSON *)obj, key, value);
}

static int finish_run(const RunPaths *rp, const char *name, Preset preset, const CifarSet *train,
                      const CifarSet *test, double wall_before) {
    char err[ERRLEN];
    double t_start = wall_seconds();
    Model m;
    SafeTensors st;
    if (checkpoint_load(rp->ckpt, &m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return TRAIN_ERROR;
    }
    const Config *c = &m.cfg;
    const char *v;
    int steps = (v = st_meta(&st, "train.step")) ? atoi(v) : 0;
    double train_seconds = (v = st_meta(&st, "train.seconds")) ? atof(v) : 0.0;
    float max_logit_layers[64] = { 0 };
    if ((v = st_meta(&st, "train.max_logit"))) {
        const char *q = v;
        for (int b = 0; b < c->depth && b < 64 && *q; b++) {
            max_logit_layers[b] = strtof(q, (char **)&q);
            if (*q == ',') q++;
        }
    }
    st_free(&st);
    float *loss = calloc(steps + 1, sizeof(float)), *gn = calloc(steps + 1, sizeof(float));
    float *ml = calloc(steps + 1, sizeof(float));
    if (read_loss_tsv(rp->loss, steps, loss, gn, ml, err, sizeof err) < 0) {
        fprintf(stderr, "error: %s\n", err);
        free(loss); free(gn); free(ml); model_free(&m);
        return TRAIN_ERROR;
    }

    fprintf(stderr, "[%s] scorecard: val MSE on %d test images...\n", name, VAL_IMAGES);
    double t0 = wall_seconds();
    double val_mse = scorecard_val_mse(&m, test, VAL_IMAGES);
    double val_s = wall_seconds() - t0;

    fprintf(stderr, "[%s] scorecard: %d samples x %d Euler steps for probe-FD...\n", name, FD_SAMPLES, FD_EULER_STEPS);
    t0 = wall_seconds();
    size_t per = (size_t)c->channels * c->img * c->img;
    float *samples = malloc(sizeof(float) * per * FD_SAMPLES);
    scorecard_samples(&m, samples, FD_SAMPLES, FD_EULER_STEPS);
    double sample_s = wall_seconds() - t0;
    double fd = NAN, probe_acc = NAN;
    char probe_key[17] = "";
    double fd_s = 0;
    if (c->channels == 3 && c->img == 32) {
        ProbeRecipe recipe;
        preset_probe_recipe(preset, &recipe);
        Probe *probe = probe_get_or_train(NULL, train, test, &recipe, 1, err, sizeof err);
        if (!probe) {
            fprintf(stderr, "error: probe: %s\n", err);
        } else {
            t0 = wall_seconds();
            FeatureStats real;
            if (scorecard_real_stats(probe, test, &real) == 0) {
                fd = scorecard_probe_fd(probe, &real, samples, FD_SAMPLES);
                feature_stats_free(&real);
            }
            fd_s = wall_seconds() - t0;
            probe_acc = probe->test_acc;
            memcpy(probe_key, probe->key, sizeof probe_key);
            probe_free(probe);
        }
    }
    if (write_sample_grid(rp->samples, samples, 64 < FD_SAMPLES ? 64 : FD_SAMPLES, c->channels, c->img,
                          err, sizeof err) != 0)
        fprintf(stderr, "warning: %s\n", err);
    free(samples);

    // curve: the mean training loss of each 250-step window (shorter runs:
    // a quarter of the run, so there are always four points)
    int window = steps >= 1000 ? 250 : (steps >= 4 ? steps / 4 : 1);
    int spikes = count_loss_spikes(loss, steps);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", name);
    cJSON_AddNumberToObject(root, "params", (double)m.n_params);
    double it_per_s = train_seconds > 0 ? steps / train_seconds : 0;
    cJSON_AddNumberToObject(root, "it_per_s", it_per_s);
    cJSON_AddNumberToObject(root, "ms_per_step", it_per_s > 0 ? 1000.0 / it_per_s : 0);
    cJSON_AddNumberToObject(root, "loss_spikes", spikes);
    cJSON *raw = cJSON_AddObjectToObject(root, "raw");
    cJSON_AddNumberToObject(raw, "val_mse", val_mse);
    cJSON *uncond = cJSON_AddObjectToObject(raw, "uncond");
    if (isfinite(fd)) cJSON_AddNumberToObject(uncond, "probe_fd", fd);
    else cJSON_AddNullToObject(uncond, "probe_fd");
    cJSON *curve = cJSON_AddArrayToObject(root, "curve");
    for (int s0 = 0; s0 + window <= steps; s0 += window) {
        double sum = 0;
        for (int i = s0; i < s0 + window; i++) sum += loss[i];
        cJSON *pt = cJSON_CreateArray();
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(s0 + window));
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(round(sum / window * 1e5) / 1e5));
        cJSON_AddItemToArray(curve, pt);
    }
    cJSON_AddNumberToObject(root, "curve_window", window);
    cJSON *cfgj = cJSON_AddObjectToObject(root, "config");
    // every config field, as the strings a checkpoint stores
    config_foreach_field(c, add_config_field, cfgj);
    cJSON_AddStringToObject(root, "preset", preset_name(preset));
    cJSON_AddNumberToObject(root, "seed", (double)c->seed);
    cJSON_AddNumberToObject(root, "steps", steps);
    cJSON_AddNumberToObject(root, "batch", c->batch);
    cJSON_AddNumberToObject(root, "threads", omp_get_max_threads());
    cJSON_AddNumberToObject(root, "train_seconds", train_seconds);
    cJSON_AddNumberToObject(root, "final_loss", steps > 0 ? loss[steps - 1] : 0);
    cJSON *mla = cJSON_AddArrayToObject(root, "max_attn_logit");
    for (int b = 0; b < c->depth; b++) cJSON_AddItemToArray(mla, cJSON_CreateNumber(max_logit_layers[b]));
    cJSON *probe = cJSON_AddObjectToObject(root, "probe");
    cJSON_AddStringToObject(probe, "key", probe_key);
    if (isfinite(probe_acc)) cJSON_AddNumberToObject(probe, "test_acc", probe_acc);
    cJSON *timing = cJSON_AddObjectToObject(root, "scorecard_seconds");
    cJSON_AddNumberToObject(timing, "val_mse", val_s);
    cJSON_AddNumberToObject(timing, "sampling", sample_s);
    cJSON_AddNumberToObject(timing, "probe_fd", fd_s);
    double total_wall = wall_before + (wall_seconds() - t_start);
    cJSON_AddNumberToObject(root, "wall_seconds", total_wall);
    char *json = cJSON_Print(root);
    cJSON_Delete(root);
    size_t jl = strlen(json);
    json = realloc(json, jl + 2);
    json[jl] = '\n'; json[jl + 1] = 0;
    int rc = write_file_atomic(rp->metrics, json, jl + 1, err, sizeof err);
    free(json);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    else
        printf("[%s] val MSE %.4f | probe-FD %.1f | %.1f ms/step | %d loss spikes | %s\n", name, val_mse,
               fd, it_per_s > 0 ? 1000.0 / it_per_s : 0, spikes, rp->metrics);
    free(loss); free(gn); free(ml);
    model_free(&m);
    return rc == 0 ? TRAIN_OK : TRAIN_ERROR;
}


// A run killed while it saved leaves its temporary file (name.tmp.<pid>)
// behind; the file it was replacing is intact. Clear them when a run starts.
static void remove_stale_temp_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strstr(e->d_name, ".tmp.")) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

// ---------------------------------------------------------------------------
static int load_data(CifarSet *train, CifarSet *test) {
    char err[CIFAR_ERRLEN];
    if (cifar_load_train(NULL, train, err, sizeof err) != 0 || cifar_load_test(NULL, test, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        cifar_free(train);   // loaded before the test set failed (a failed load leaves it empty)
        return -1;
    }
    return 0;
}

int trainer_run(const TrainOptions *o) {
    char err[ERRLEN];
    RunPaths rp;
    run_paths(&rp, o->out_dir, o->name);
    Config cfg = o->cfg;
    if (cfg.threads > 0) omp_set_num_threads(cfg.threads);
    int have_ckpt = file_exists(rp.ckpt);
    if (have_ckpt && !o->resume) {
        fprintf(stderr, "error: %s already holds a run; add --resume to continue it, or choose another --name\n", rp.dir);
        return TRAIN_USAGE;
    }
    if (file_exists(rp.metrics) && have_ckpt && o->resume) {
        // finished already: nothing to do (the ablation relies on this)
        Config old;
        if (checkpoint_read_config(rp.ckpt, &old, err, sizeof err) == 0) {
            SafeTensors st;
            if (st_read(rp.ckpt, &st, err, sizeof err) == 0) {
                const char *v = st_meta(&st, "train.step");
                int done = v ? atoi(v) : 0;
                st_free(&st);
                if (done >= cfg.steps) {
                    printf("[%s] finished already (%d steps): %s\n", o->name, done, rp.metrics);
                    return TRAIN_OK;
                }
            }
        }
    }
    if (make_dirs(rp.dir, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return TRAIN_ERROR; }
    remove_stale_temp_files(rp.dir);

    CifarSet train, test;
    if (load_data(&train, &test) != 0) return TRAIN_ERROR;

    Model m;
    TrainState ts;
    DataLoader dl = { 0 };   // zeroed: the error paths free it whether or not it was set up
    Rng noise;
    double train_seconds = 0.0;
    int start = 0;
    float max_logit_layers[64] = { 0 };
    int steps = cfg.steps;
    float *loss_hist = calloc(steps + 1, sizeof(float)), *gn_hist = calloc(steps + 1, sizeof(float));
    float *ml_hist = calloc(steps + 1, sizeof(float));
    int rc = TRAIN_ERROR;

    if (have_ckpt) {
        // resume: the checkpoint's config wins; the loop continues with the
        // same weights, moments, noise stream and data order
        SafeTensors st;
        if (checkpoint_load(rp.ckpt, &m, &st, err, sizeof err) != 0) {
            fprintf(stderr, "error: cannot resume: %s\n", err);
            goto out_nomodel;
        }
        Config saved = m.cfg;
        saved.threads = cfg.threads; saved.steps = cfg.steps;
        char a[512], b[512];
        config_describe(&saved, a, sizeof a);
        config_describe(&cfg, b, sizeof b);
        if (strcmp(a, b) != 0)
            fprintf(stderr, "note: resuming with the checkpoint's config (%s); --set values that differ are ignored\n", a);
        m.cfg.steps = cfg.steps; m.cfg.threads = cfg.threads;
        cfg = m.cfg;
        if (train_state_init(&ts, &m, cfg.batch, &(AdamWConfig){ cfg.lr, 0.9f, 0.999f, 1e-8f, cfg.weight_decay }) != 0) {
            fprintf(stderr, "error: out of memory\n"); st_free(&st); goto out_model;
        }
        const char *v;
        start = parse_step(st_meta(&st, "train.step"));
        DataLoaderState ds;
        err[0] = '\0';   // the checks below that fail without a message leave it empty
        int ok = start >= 0
              && checkpoint_copy_array(&st, rp.ckpt, CHECKPOINT_ADAMW_M, &m, ts.adam_m, err, sizeof err) == 0
              && checkpoint_copy_array(&st, rp.ckpt, CHECKPOINT_ADAMW_V, &m, ts.adam_v, err, sizeof err) == 0
              && rng_from_text(st_meta(&st, "train.noise_rng"), &noise) == 0
              && dataloader_init(&dl, &train, cfg.seed, cfg.flip, err, sizeof err) == 0
              && dataloader_state_parse(st_meta(&st, "train.data"), &ds, err, sizeof err) == 0
              && dataloader_set_state(&dl, &ds, err, sizeof err) == 0;
        train_seconds = (v = st_meta(&st, "train.seconds")) ? atof(v) : 0.0;
        if ((v = st_meta(&st, "train.max_logit"))) {
            const char *q = v;
            for (int b2 = 0; b2 < cfg.depth && b2 < 64 && *q; b2++) {
                max_logit_layers[b2] = strtof(q, (char **)&q);
                if (*q == ',') q++;
            }
        }
        st_free(&st);
        if (!ok) {
            fprintf(stderr, "error: %s has no usable trainer state%s%s\n", rp.ckpt, err[0] ? ": " : "", err);
            goto out_state;
        }
        if (start > steps) {
            // the history arrays hold `steps` rows: a checkpoint further on
            // (--set steps lowered, or a corrupt train.step) cannot continue
            fprintf(stderr, "error: %s is at step %d, past the run's steps=%d; resume with "
                            "--set steps=%d or more\n", rp.ckpt, start, steps, start);
            goto out_state;
        }
        ts.step = start;
        int rows = read_loss_tsv(rp.loss, start, loss_hist, gn_hist, ml_hist, err, sizeof err);
        if (rows < start) {
            fprintf(stderr, "error: %s has %d of the %d steps in the checkpoint\n", rp.loss, rows < 0 ? 0 : rows, start);
            goto out_state;
        }
        // forget any steps logged after the checkpoint: they will be redone
        if (write_loss_tsv(rp.loss, start, loss_hist, gn_hist, ml_hist, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            goto out_state;
        }
        printf("[%s] resuming at step %d of %d\n", o->name, start, steps);
    } else {
        if (model_build(&m, &cfg, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            goto out_nomodel;
        }
        model_init_weights(&m, cfg.seed);
        if (train_state_init(&ts, &m, cfg.batch, &(AdamWConfig){ cfg.lr, 0.9f, 0.999f, 1e-8f, cfg.weight_decay }) != 0) {
            fprintf(stderr, "error: out of memory\n"); goto out_model;
        }
        rng_seed(&noise, cfg.seed + NOISE_SEED_OFFSET);
        if (dataloader_init(&dl, &train, cfg.seed, cfg.flip, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err); goto out_state;
        }
        if (write_loss_tsv(rp.loss, 0, NULL, NULL, NULL, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err); goto out_loader;
        }
        char desc[512];
        config_describe(&cfg, desc, sizeof desc);
        printf("[%s] %s preset, %zu params, %d threads: %s\n", o->name, preset_name(o->preset), m.n_params,
               omp_get_max_threads(), desc);
    }

    {
        FILE *lf = fopen(rp.loss, "a");
        if (!lf) { fprintf(stderr, "error: cannot append to %s: %s\n", rp.loss, strerror(errno)); goto out_loader; }
        size_t per = (size_t)cfg.channels * cfg.img * cfg.img;
        float *x1 = malloc(sizeof(float) * per * cfg.batch);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        Progress pr;
        progress_begin(&pr, stderr, o->name, start, steps);
        double session_start = wall_seconds();
        int last_saved = start;
        rc = TRAIN_OK;
        for (int step = start + 1; step <= steps; step++) {
            double t0 = wall_seconds();
            dataloader_next(&dl, cfg.batch, x1, NULL, NULL);
            double loss = train_step(&ts, x1, &noise);
            train_seconds += wall_seconds() - t0;
            if (!isfinite(loss) || !isfinite(ts.grad_norm)) {
                progress_end(&pr);
                char kept[2300];
                last_checkpoint_text(kept, sizeof kept, last_saved, rp.ckpt);
                fprintf(stderr, "error: step %d: the loss is %s (gradient norm %g): training diverged; "
                                "%s. Try a lower lr.\n",
                        step, isfinite(loss) ? "finite but the gradient is not" : "not a number",
                        ts.grad_norm, kept);
                rc = TRAIN_DIVERGED;
                break;
            }
            loss_hist[step - 1] = (float)loss;
            gn_hist[step - 1] = (float)ts.grad_norm;
            ml_hist[step - 1] = ts.max_logit;
            for (int b = 0; b < cfg.depth && b < 64; b++)
                if (ts.act.max_logit[b] > max_logit_layers[b]) max_logit_layers[b] = ts.act.max_logit[b];
            fprintf(lf, "%d\t%.6f\t%.6f\t%.4f\n", step, loss, ts.grad_norm, ts.max_logit);
            char extra[64];
            snprintf(extra, sizeof extra, "loss %.4f", loss);
            progress_update(&pr, step, extra);
            int stop_now = g_stop_signal || (o->stop_after && step == o->stop_after);
            if (step % o->ckpt_every == 0 || step == steps || stop_now) {
                if (fflush(lf) != 0 || ferror(lf) || fsync(fileno(lf)) != 0) {
                    int e = errno;
                    progress_end(&pr);
                    char kept[2300];
                    last_checkpoint_text(kept, sizeof kept, last_saved, rp.ckpt);
                    fprintf(stderr, "error: cannot write %s: %s; %s\n", rp.loss, strerror(e), kept);
                    rc = TRAIN_ERROR;
                    break;
                }
                if (save_checkpoint(&rp, &m, &ts, &noise, &dl, train_seconds, max_logit_layers, o->preset,
                                    err, sizeof err) != 0) {
                    progress_end(&pr);
                    char kept[2300];
                    last_checkpoint_text(kept, sizeof kept, last_saved, rp.ckpt);
                    fprintf(stderr, "error: %s\n(%s)\n", err, kept);
                    rc = TRAIN_ERROR;
                    break;
                }
                last_saved = step;
            }
            if (stop_now) {
                progress_end(&pr);
                if (g_stop_signal)
                    fprintf(stderr, "[%s] stopped by signal %d at step %d; checkpoint saved. Continue with --resume.\n",
                            o->name, (int)g_stop_signal, step);
                rc = g_stop_signal ? 128 + (int)g_stop_signal : TRAIN_STOPPED;
                break;
            }
        }
        if (rc == TRAIN_OK) progress_end(&pr);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        fclose(lf);
        free(x1);
        double session = wall_seconds() - session_start;
        if (rc == TRAIN_OK) {
            printf("[%s] trained %d steps: %.1f ms/step (%.1f s this session)\n", o->name, steps,
                   1000.0 * train_seconds / steps, session);
            if (o->scorecard) rc = finish_run(&rp, o->name, o->preset, &train, &test, session);
        }
    }

out_loader:
out_state:
    dataloader_free(&dl);
    train_state_free(&ts);
out_model:
    model_free(&m);
out_nomodel:
    free(loss_hist); free(gn_hist); free(ml_hist);
    cifar_free(&train);
    cifar_free(&test);
    return rc;
}

int trainer_finish(const char *run_dir, const char *name, Preset preset) {
    RunPaths rp;
    snprintf(rp.dir, sizeof rp.dir, "%s", run_dir);
    snprintf(rp.ckpt, sizeof rp.ckpt, "%s/ckpt.safetensors", run_dir);
    snprintf(rp.loss, sizeof rp.loss, "%s/loss.tsv", run_dir);
    snprintf(rp.metrics, sizeof rp.metrics, "%s/metrics.json", run_dir);
    snprintf(rp.samples, sizeof rp.samples, "%s/samples.png", run_dir);
    CifarSet train, test;
    if (load_data(&train, &test) != 0) return TRAIN_ERROR;
    int rc = finish_run(&rp, name, preset, &train, &test, 0.0);
    cifar_free(&train); cifar_free(&test);
    return rc;
}
