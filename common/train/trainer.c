// trainer.c: a whole training run (see trainer.h).
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
#include "io/args.h"
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

uint64_t trainer_noise_seed(uint64_t seed) { return seed + 0x5EEDF10ULL; }

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
        cfg->val_every = 250;   // four points of the val curve, about 5% of the run's time
        break;
    case PRESET_TUTORIAL:   // the tutorial's runs: dim 128, depth 4, heads 4, batch 128, 4,000 steps
        cfg->batch = 128; cfg->steps = 4000; *ckpt_every = 250;
        cfg->val_every = 500;
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
    int step;
    return s && parse_int_in(s, 0, 100000000, &step) == 0 ? step : -1;
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
    char dir[2048], ckpt[2100], loss[2100], val[2100], metrics[2100], samples[2100], diverged[2100];
} RunPaths;

// The files of the run in folder dir.
static void run_paths(RunPaths *p, const char *dir) {
    snprintf(p->dir, sizeof p->dir, "%s", dir);
    snprintf(p->ckpt, sizeof p->ckpt, "%s/ckpt.safetensors", p->dir);
    snprintf(p->loss, sizeof p->loss, "%s/loss.tsv", p->dir);
    snprintf(p->val, sizeof p->val, "%s/val.tsv", p->dir);
    snprintf(p->metrics, sizeof p->metrics, "%s/metrics.json", p->dir);
    snprintf(p->samples, sizeof p->samples, "%s/samples.png", p->dir);
    snprintf(p->diverged, sizeof p->diverged, "%s/diverged.json", p->dir);
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

// val.tsv rows: step, val MSE, one every cfg.val_every steps. Reads the rows
// with step <= upto into val (indexed step-1, NaN where there is none).
// A missing file is an empty curve (runs made before the curve existed).
// Returns the number of rows read, -1 on a read error.
static int read_val_tsv(const char *path, int upto, float *val, char *err, size_t errlen) {
    for (int i = 0; i < upto; i++) val[i] = NAN;
    if (!file_exists(path)) return 0;
    size_t len;
    char *text = read_file_all(path, &len, err, errlen);
    if (!text) return -1;
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int step; float v;
        if (sscanf(line, "%d %f", &step, &v) != 2 || step < 1 || step > upto) continue;   // header, later rows
        val[step - 1] = v;
        rows++;
    }
    free(text);
    return rows;
}

// Rewrites val.tsv with the points among steps 1..n.
static int write_val_tsv(const char *path, int n, const float *val, char *err, size_t errlen) {
    size_t cap = 64 + (size_t)n * 32, len = 0;
    char *buf = malloc(cap);
    len += snprintf(buf + len, cap - len, "step\tval_mse\n");
    for (int i = 0; i < n; i++)
        if (!isnan(val[i])) len += snprintf(buf + len, cap - len, "%d\t%.6f\n", i + 1, val[i]);
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
// The trainer's state in a checkpoint's metadata that both a resume and the
// scorecard read: the step, the training time so far, and the largest
// attention logit of each block.
typedef struct {
    int step;                       // -1 when missing or not a whole number
    double train_seconds;
    float max_logit_layers[64];
} SavedProgress;

static void read_progress(const SafeTensors *st, int depth, SavedProgress *p) {
    const char *v;
    memset(p, 0, sizeof *p);
    p->step = parse_step(st_meta(st, "train.step"));
    p->train_seconds = (v = st_meta(st, "train.seconds")) ? atof(v) : 0.0;
    if ((v = st_meta(st, "train.max_logit"))) {
        const char *q = v;
        for (int b = 0; b < depth && b < 64 && *q; b++) {
            p->max_logit_layers[b] = strtof(q, (char **)&q);
            if (*q == ',') q++;
        }
    }
}

// ---------------------------------------------------------------------------
// The scorecard and metrics.json of a finished run.
typedef struct {
    double val_mse, fd, probe_acc;     // fd and probe_acc NaN without a probe
    double val_s, sample_s, fd_s;      // seconds each part took
    char probe_key[17];
} Scorecard;

// The probe-FD of the samples (32x32 RGB configs only: the probe's input).
static void score_probe_fd(const Config *c, Preset preset, const CifarSet *train, const CifarSet *test,
                           const float *samples, Scorecard *sc) {
    char err[ERRLEN];
    if (c->channels != 3 || c->img != 32) return;
    ProbeRecipe recipe;
    preset_probe_recipe(preset, &recipe);
    Probe *probe = probe_get_or_train(NULL, train, test, &recipe, 1, err, sizeof err);
    if (!probe) {
        fprintf(stderr, "error: probe: %s\n", err);
        return;
    }
    double t0 = wall_seconds();
    FeatureStats real;
    if (scorecard_real_stats(probe, test, &real) == 0) {
        sc->fd = scorecard_probe_fd(probe, &real, samples, FD_SAMPLES);
        feature_stats_free(&real);
    }
    sc->fd_s = wall_seconds() - t0;
    sc->probe_acc = probe->test_acc;
    memcpy(sc->probe_key, probe->key, sizeof sc->probe_key);
    probe_free(probe);
}

// val MSE, then FD_SAMPLES samples: their probe-FD, the first 64 into samples_png.
static void run_scorecard(Model *m, const char *name, Preset preset, const CifarSet *train,
                          const CifarSet *test, const char *samples_png, Scorecard *sc) {
    char err[ERRLEN];
    const Config *c = &m->cfg;
    sc->fd = NAN; sc->probe_acc = NAN; sc->fd_s = 0; sc->probe_key[0] = '\0';
    fprintf(stderr, "[%s] scorecard: val MSE on %d test images...\n", name, VAL_IMAGES);
    double t0 = wall_seconds();
    sc->val_mse = scorecard_val_mse(m, test, VAL_IMAGES);
    sc->val_s = wall_seconds() - t0;

    fprintf(stderr, "[%s] scorecard: %d samples x %d Euler steps for probe-FD...\n", name, FD_SAMPLES, FD_EULER_STEPS);
    t0 = wall_seconds();
    size_t per = (size_t)c->channels * c->img * c->img;
    float *samples = malloc(sizeof(float) * per * FD_SAMPLES);
    scorecard_samples(m, samples, FD_SAMPLES, FD_EULER_STEPS);
    sc->sample_s = wall_seconds() - t0;
    score_probe_fd(c, preset, train, test, samples, sc);
    if (write_sample_grid(samples_png, samples, 64 < FD_SAMPLES ? 64 : FD_SAMPLES, c->channels, c->img,
                          err, sizeof err) != 0)
        fprintf(stderr, "warning: %s\n", err);
    free(samples);
}

static void add_config_field(const char *key, const char *value, void *obj) {
    cJSON_AddStringToObject((cJSON *)obj, key, value);
}

// curve: the mean training loss of each 250-step window (shorter runs: a
// quarter of the run, so there are always four points)
static void add_loss_curve(cJSON *root, const float *loss, int steps) {
    int window = steps >= 1000 ? 250 : (steps >= 4 ? steps / 4 : 1);
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
}

// val_curve: [step, val MSE] every cfg.val_every steps (the same exam as
// the final val MSE, so the point at the last step equals it)
static void add_val_curve(cJSON *root, const float *val, int steps) {
    cJSON *curve = cJSON_AddArrayToObject(root, "val_curve");
    for (int i = 0; i < steps; i++) {
        if (isnan(val[i])) continue;
        cJSON *pt = cJSON_CreateArray();
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(i + 1));
        cJSON_AddItemToArray(pt, cJSON_CreateNumber(val[i]));
        cJSON_AddItemToArray(curve, pt);
    }
}

// metrics.json's content: the scorecard in the tutorial's schema, then the
// run's config, timings, loss and val curves, and probe.
static cJSON *metrics_json(const Model *m, const char *name, Preset preset, const SavedProgress *p,
                           const float *loss, const float *val, const Scorecard *sc, double total_wall) {
    const Config *c = &m->cfg;
    int steps = p->step;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", name);
    cJSON_AddNumberToObject(root, "params", (double)m->n_params);
    double it_per_s = p->train_seconds > 0 ? steps / p->train_seconds : 0;
    cJSON_AddNumberToObject(root, "it_per_s", it_per_s);
    cJSON_AddNumberToObject(root, "ms_per_step", it_per_s > 0 ? 1000.0 / it_per_s : 0);
    cJSON_AddNumberToObject(root, "loss_spikes", count_loss_spikes(loss, steps));
    cJSON *raw = cJSON_AddObjectToObject(root, "raw");
    cJSON_AddNumberToObject(raw, "val_mse", sc->val_mse);
    cJSON *uncond = cJSON_AddObjectToObject(raw, "uncond");
    if (isfinite(sc->fd)) cJSON_AddNumberToObject(uncond, "probe_fd", sc->fd);
    else cJSON_AddNullToObject(uncond, "probe_fd");
    add_loss_curve(root, loss, steps);
    add_val_curve(root, val, steps);
    cJSON *cfgj = cJSON_AddObjectToObject(root, "config");
    // every config field, as the strings a checkpoint stores
    config_foreach_field(c, add_config_field, cfgj);
    cJSON_AddStringToObject(root, "preset", preset_name(preset));
    cJSON_AddNumberToObject(root, "seed", (double)c->seed);
    cJSON_AddNumberToObject(root, "steps", steps);
    cJSON_AddNumberToObject(root, "batch", c->batch);
    cJSON_AddNumberToObject(root, "threads", omp_get_max_threads());
    cJSON_AddNumberToObject(root, "train_seconds", p->train_seconds);
    cJSON_AddNumberToObject(root, "final_loss", steps > 0 ? loss[steps - 1] : 0);
    cJSON *mla = cJSON_AddArrayToObject(root, "max_attn_logit");
    for (int b = 0; b < c->depth; b++) cJSON_AddItemToArray(mla, cJSON_CreateNumber(p->max_logit_layers[b]));
    cJSON *probe = cJSON_AddObjectToObject(root, "probe");
    cJSON_AddStringToObject(probe, "key", sc->probe_key);
    if (isfinite(sc->probe_acc)) cJSON_AddNumberToObject(probe, "test_acc", sc->probe_acc);
    cJSON *timing = cJSON_AddObjectToObject(root, "scorecard_seconds");
    cJSON_AddNumberToObject(timing, "val_mse", sc->val_s);
    cJSON_AddNumberToObject(timing, "sampling", sc->sample_s);
    cJSON_AddNumberToObject(timing, "probe_fd", sc->fd_s);
    // the clock time of the session that finished the run, steps and scorecard;
    // a resumed run's earlier sessions are in train_seconds, not here
    cJSON_AddNumberToObject(root, "wall_seconds", total_wall);
    return root;
}

// Writes root (pretty-printed, with a final newline) and frees it.
static int write_json(const char *path, cJSON *root, char *err, size_t errlen) {
    char *json = cJSON_Print(root);
    cJSON_Delete(root);
    size_t jl = strlen(json);
    json = realloc(json, jl + 2);
    json[jl] = '\n'; json[jl + 1] = 0;
    int rc = write_file_atomic(path, json, jl + 1, err, errlen);
    free(json);
    return rc;
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
    SavedProgress prog;
    read_progress(&st, m.cfg.depth, &prog);
    st_free(&st);
    int steps = prog.step;
    if (steps < 0) {
        fprintf(stderr, "error: %s: train.step is missing or not a whole number\n", rp->ckpt);
        model_free(&m);
        return TRAIN_ERROR;
    }
    float *loss = calloc(steps + 1, sizeof(float)), *gn = calloc(steps + 1, sizeof(float));
    float *ml = calloc(steps + 1, sizeof(float)), *val = calloc(steps + 1, sizeof(float));
    int rc = read_loss_tsv(rp->loss, steps, loss, gn, ml, err, sizeof err) < 0 ||
             read_val_tsv(rp->val, steps, val, err, sizeof err) < 0 ? -1 : 0;
    if (rc == 0) {
        Scorecard sc;
        run_scorecard(&m, name, preset, train, test, rp->samples, &sc);
        double total_wall = wall_before + (wall_seconds() - t_start);
        rc = write_json(rp->metrics, metrics_json(&m, name, preset, &prog, loss, val, &sc, total_wall), err,
                        sizeof err);
        double it_per_s = prog.train_seconds > 0 ? steps / prog.train_seconds : 0;
        if (rc == 0)
            printf("[%s] val MSE %.4f | probe-FD %.1f | %.1f ms/step | %d loss spikes | %s\n", name, sc.val_mse,
                   sc.fd, it_per_s > 0 ? 1000.0 / it_per_s : 0, count_loss_spikes(loss, steps), rp->metrics);
    }
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    free(loss); free(gn); free(ml); free(val);
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
// The run folder's lock: <run>/.lock, held with flock(2) while a train (or a
// scorecard) writes the folder, with the holder's PID inside for the message
// a second one prints. The kernel drops the lock when its process ends,
// however it ends, so a killed run never blocks the next --resume; the file
// stays (deleting it would let two processes lock two different files).
// Returns the descriptor to close when done, or -1 after a message.
static int lock_run_dir(const char *dir) {
    char path[2100];
    snprintf(path, sizeof path, "%s/.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "error: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32];
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        if (e == EWOULDBLOCK)
            fprintf(stderr, "error: %s is in use by another train, PID %s (it holds %s); wait for it to end, "
                            "or stop it and continue with --resume\n", dir, pid[0] ? pid : "unknown", path);
        else
            fprintf(stderr, "error: cannot lock %s: %s\n", path, strerror(e));
        close(fd);
        return -1;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        fprintf(stderr, "warning: cannot write the PID into %s: %s\n", path, strerror(errno));
    return fd;
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

// A run folder that already holds a checkpoint: without --resume that is a
// mistake; with --resume and metrics.json there, the run may be finished
// already (the ablation relies on this). TRAIN_USAGE or TRAIN_OK to stop
// here, -1 to go on.
static int check_existing_run(const TrainOptions *o, const RunPaths *rp, int have_ckpt, int steps) {
    if (have_ckpt && !o->resume) {
        fprintf(stderr, "error: %s already holds a run; add --resume to continue it, or choose another --name\n", rp->dir);
        return TRAIN_USAGE;
    }
    if (!(file_exists(rp->metrics) && have_ckpt && o->resume)) return -1;
    char err[ERRLEN];
    Config old;
    SafeTensors st;
    if (checkpoint_read_config(rp->ckpt, &old, err, sizeof err) != 0 || st_read(rp->ckpt, &st, err, sizeof err) != 0)
        return -1;
    int done = parse_step(st_meta(&st, "train.step"));
    st_free(&st);
    if (done < steps) return -1;
    printf("[%s] finished already (%d steps): %s\n", o->name, done, rp->metrics);
    return TRAIN_OK;
}

// Everything a run holds while it trains; the flags say what to free.
typedef struct {
    Config cfg;
    Model m; int have_model;
    TrainState ts; int have_ts;
    DataLoader dl;                 // zeroed: freed whether or not it was set up
    Rng noise;
    double train_seconds;
    int start, steps;              // the loop runs steps start+1 .. steps
    float max_logit_layers[64];
    float *loss_hist, *gn_hist, *ml_hist;   // (steps + 1) each
    float *val_hist;                        // (steps + 1), NaN between val checks
    float last_val;                         // the latest val check, for the progress bar (NaN: none yet)
    const CifarSet *test;                   // the val exam's images
    ValExam exam; int have_exam;            // its buffers, made at the first check and kept
} Run;

static void run_free(Run *r) {
    dataloader_free(&r->dl);
    if (r->have_ts) train_state_free(&r->ts);
    if (r->have_model) model_free(&r->m);
    if (r->have_exam) val_exam_free(&r->exam);
    free(r->loss_hist); free(r->gn_hist); free(r->ml_hist); free(r->val_hist);
}

static int init_train_state(Run *r) {
    AdamWConfig opt = adamw_default(r->cfg.lr);
    opt.weight_decay = r->cfg.weight_decay;
    if (train_state_init(&r->ts, &r->m, r->cfg.batch, &opt) != 0) {
        fprintf(stderr, "error: out of memory\n");
        return -1;
    }
    r->have_ts = 1;
    return 0;
}

// A fresh run: weights from the seed, an empty loss.tsv.
static int start_run(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train) {
    char err[ERRLEN];
    if (model_build(&r->m, &r->cfg, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return TRAIN_ERROR;
    }
    r->have_model = 1;
    model_init_weights(&r->m, r->cfg.seed);
    if (init_train_state(r) != 0) return TRAIN_ERROR;
    rng_seed(&r->noise, trainer_noise_seed(r->cfg.seed));
    if (dataloader_init(&r->dl, train, r->cfg.seed, r->cfg.flip, err, sizeof err) != 0 ||
        write_loss_tsv(rp->loss, 0, NULL, NULL, NULL, err, sizeof err) != 0 ||
        write_val_tsv(rp->val, 0, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return TRAIN_ERROR;
    }
    char desc[512];
    config_describe(&r->cfg, desc, sizeof desc);
    printf("[%s] %s preset, %zu params, %d threads: %s\n", o->name, preset_name(o->preset), r->m.n_params,
           omp_get_max_threads(), desc);
    return TRAIN_OK;
}

// The AdamW moments, noise stream and data order of a checkpoint into r.
// 1 when all of it was there and valid.
static int restore_trainer_state(Run *r, const SafeTensors *st, const char *ckpt, const CifarSet *train,
                                 char *err, size_t errlen) {
    DataLoaderState ds;
    err[0] = '\0';   // the checks below that fail without a message leave it empty
    return r->start >= 0
        && checkpoint_copy_array(st, ckpt, CHECKPOINT_ADAMW_M, &r->m, r->ts.adam_m, err, errlen) == 0
        && checkpoint_copy_array(st, ckpt, CHECKPOINT_ADAMW_V, &r->m, r->ts.adam_v, err, errlen) == 0
        && rng_from_text(st_meta(st, "train.noise_rng"), &r->noise) == 0
        && dataloader_init(&r->dl, train, r->cfg.seed, r->cfg.flip, err, errlen) == 0
        && dataloader_state_parse(st_meta(st, "train.data"), &ds, err, errlen) == 0
        && dataloader_set_state(&r->dl, &ds, err, errlen) == 0;
}

// Resume: the checkpoint's config wins; the loop continues with the same
// weights, moments, noise stream and data order, and loss.tsv is cut back
// to the checkpoint's step (the steps logged after it will be redone).
static int resume_run(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train) {
    char err[ERRLEN];
    SafeTensors st;
    if (checkpoint_load(rp->ckpt, &r->m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: cannot resume: %s\n", err);
        return TRAIN_ERROR;
    }
    r->have_model = 1;
    Config saved = r->m.cfg;
    saved.threads = r->cfg.threads; saved.steps = r->cfg.steps; saved.val_every = r->cfg.val_every;
    char a[512], b[512];
    config_describe(&saved, a, sizeof a);
    config_describe(&r->cfg, b, sizeof b);
    if (strcmp(a, b) != 0)
        fprintf(stderr, "note: resuming with the checkpoint's config (%s); --set values that differ are ignored\n", a);
    r->m.cfg.steps = r->cfg.steps; r->m.cfg.threads = r->cfg.threads; r->m.cfg.val_every = r->cfg.val_every;
    r->cfg = r->m.cfg;
    if (init_train_state(r) != 0) { st_free(&st); return TRAIN_ERROR; }
    SavedProgress prog;
    read_progress(&st, r->cfg.depth, &prog);
    r->start = prog.step;
    r->train_seconds = prog.train_seconds;
    memcpy(r->max_logit_layers, prog.max_logit_layers, sizeof r->max_logit_layers);
    int ok = restore_trainer_state(r, &st, rp->ckpt, train, err, sizeof err);
    st_free(&st);
    if (!ok) {
        fprintf(stderr, "error: %s has no usable trainer state%s%s\n", rp->ckpt, err[0] ? ": " : "", err);
        return TRAIN_ERROR;
    }
    if (r->start > r->steps) {
        // the history arrays hold `steps` rows: a checkpoint further on
        // (--set steps lowered, or a corrupt train.step) cannot continue
        fprintf(stderr, "error: %s is at step %d, past the run's steps=%d; resume with "
                        "--set steps=%d or more\n", rp->ckpt, r->start, r->steps, r->start);
        return TRAIN_ERROR;
    }
    r->ts.step = r->start;
    int rows = read_loss_tsv(rp->loss, r->start, r->loss_hist, r->gn_hist, r->ml_hist, err, sizeof err);
    if (rows < r->start) {
        fprintf(stderr, "error: %s has %d of the %d steps in the checkpoint\n", rp->loss, rows < 0 ? 0 : rows, r->start);
        return TRAIN_ERROR;
    }
    if (read_val_tsv(rp->val, r->start, r->val_hist, err, sizeof err) < 0 ||
        write_loss_tsv(rp->loss, r->start, r->loss_hist, r->gn_hist, r->ml_hist, err, sizeof err) != 0 ||
        write_val_tsv(rp->val, r->start, r->val_hist, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return TRAIN_ERROR;
    }
    printf("[%s] resuming at step %d of %d\n", o->name, r->start, r->steps);
    return TRAIN_OK;
}

// One step's numbers into the history, the per-block logit maxima, loss.tsv
// and the progress bar.
static void record_step(Run *r, int step, double loss, FILE *lf, Progress *pr) {
    r->loss_hist[step - 1] = (float)loss;
    r->gn_hist[step - 1] = (float)r->ts.grad_norm;
    r->ml_hist[step - 1] = r->ts.max_logit;
    for (int b = 0; b < r->cfg.depth && b < 64; b++)
        if (r->ts.act.max_logit[b] > r->max_logit_layers[b]) r->max_logit_layers[b] = r->ts.act.max_logit[b];
    fprintf(lf, "%d\t%.6f\t%.6f\t%.4f\n", step, loss, r->ts.grad_norm, r->ts.max_logit);
    char extra[64];
    if (isnan(r->last_val)) snprintf(extra, sizeof extra, "loss %.4f", loss);
    else snprintf(extra, sizeof extra, "loss %.4f, val %.4f", loss, r->last_val);
    progress_update(pr, step, extra);
}

// Every cfg.val_every steps: the val exam on the weights of this step (not
// counted in train_seconds), into val_hist and val.tsv, rewritten whole (a
// few rows). The exam has its own fixed noise, so the training streams and
// the run's bits are the same with or without it.
static int check_val(Run *r, int step, const RunPaths *rp) {
    if (r->cfg.val_every <= 0 || step % r->cfg.val_every != 0) return 0;
    char err[ERRLEN];
    if (!r->have_exam) {
        if (val_exam_init(&r->exam, &r->m, r->test, VAL_IMAGES) != 0) {
            fprintf(stderr, "error: out of memory for the val exam (val_every=0 turns the checks off)\n");
            return -1;
        }
        r->have_exam = 1;
    }
    r->val_hist[step - 1] = r->last_val = (float)val_exam_run(&r->exam, &r->m, r->test);
    if (write_val_tsv(rp->val, step, r->val_hist, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return -1;
    }
    return 0;
}

// A diverged run is a result too (an lr sweep looks for where runs break):
// diverged.json records the step whose loss or gradient was not finite, and
// the run's config. A resume trains from the last checkpoint again and, the
// run being deterministic, diverges at the same step.
static void record_divergence(const Run *r, const RunPaths *rp, int step, double loss) {
    char err[ERRLEN];
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "diverged_at_step", step);
    cJSON_AddStringToObject(root, "loss", isnan(loss) ? "nan" : isinf(loss) ? "inf" : "finite");
    cJSON_AddStringToObject(root, "grad_norm", isnan(r->ts.grad_norm) ? "nan" : isinf(r->ts.grad_norm) ? "inf" : "finite");
    cJSON_AddNumberToObject(root, "steps", r->steps);
    config_foreach_field(&r->cfg, add_config_field, cJSON_AddObjectToObject(root, "config"));
    if (write_json(rp->diverged, root, err, sizeof err) != 0) fprintf(stderr, "warning: %s\n", err);
}

// loss.tsv onto the disk, then the checkpoint. TRAIN_OK, or TRAIN_ERROR
// with a message that says which checkpoint is kept.
static int save_point(Run *r, const TrainOptions *o, const RunPaths *rp, FILE *lf, Progress *pr, int last_saved) {
    char err[ERRLEN], kept[2300];
    if (fflush(lf) != 0 || ferror(lf) || fsync(fileno(lf)) != 0) {
        int e = errno;
        progress_end(pr);
        last_checkpoint_text(kept, sizeof kept, last_saved, rp->ckpt);
        fprintf(stderr, "error: cannot write %s: %s; %s\n", rp->loss, strerror(e), kept);
        return TRAIN_ERROR;
    }
    if (save_checkpoint(rp, &r->m, &r->ts, &r->noise, &r->dl, r->train_seconds, r->max_logit_layers, o->preset,
                        err, sizeof err) != 0) {
        progress_end(pr);
        last_checkpoint_text(kept, sizeof kept, last_saved, rp->ckpt);
        fprintf(stderr, "error: %s\n(%s)\n", err, kept);
        return TRAIN_ERROR;
    }
    return TRAIN_OK;
}

// Steps start+1 .. steps, with a checkpoint every ckpt_every steps, at the
// end, and when stopped. TRAIN_OK when every step ran; else TRAIN_DIVERGED,
// TRAIN_ERROR, TRAIN_STOPPED (stop_after) or 128 + the signal.
static int train_steps(Run *r, const TrainOptions *o, const RunPaths *rp, FILE *lf) {
    size_t per = (size_t)r->cfg.channels * r->cfg.img * r->cfg.img;
    float *x1 = malloc(sizeof(float) * per * r->cfg.batch);
    Progress pr;
    progress_begin(&pr, stderr, o->name, r->start, r->steps);
    int last_saved = r->start, rc = TRAIN_OK;
    for (int step = r->start + 1; step <= r->steps; step++) {
        double t0 = wall_seconds();
        dataloader_next(&r->dl, r->cfg.batch, x1, NULL, NULL);
        double loss = train_step(&r->ts, x1, &r->noise);
        r->train_seconds += wall_seconds() - t0;
        if (!isfinite(loss) || !isfinite(r->ts.grad_norm)) {
            progress_end(&pr);
            char kept[2300];
            last_checkpoint_text(kept, sizeof kept, last_saved, rp->ckpt);
            fprintf(stderr, "error: step %d: the loss is %s (gradient norm %g): training diverged; "
                            "%s. Try a lower lr.\n",
                    step, isfinite(loss) ? "finite but the gradient is not" : "not a number",
                    r->ts.grad_norm, kept);
            record_divergence(r, rp, step, loss);
            rc = TRAIN_DIVERGED;
            break;
        }
        record_step(r, step, loss, lf, &pr);
        if (check_val(r, step, rp) != 0) {
            progress_end(&pr);
            rc = TRAIN_ERROR;
            break;
        }
        int stop_now = g_stop_signal || (o->stop_after && step == o->stop_after);
        if (step % o->ckpt_every == 0 || step == r->steps || stop_now) {
            if ((rc = save_point(r, o, rp, lf, &pr, last_saved)) != TRAIN_OK) break;
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
    free(x1);
    return rc;
}

// The steps, with Ctrl-C caught, then (if they all ran) the scorecard.
static int train_and_score(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train,
                           const CifarSet *test) {
    FILE *lf = fopen(rp->loss, "a");
    if (!lf) {
        fprintf(stderr, "error: cannot append to %s: %s\n", rp->loss, strerror(errno));
        return TRAIN_ERROR;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    double session_start = wall_seconds();
    int rc = train_steps(r, o, rp, lf);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    fclose(lf);
    double session = wall_seconds() - session_start;
    if (rc == TRAIN_OK) {
        printf("[%s] trained %d steps: %.1f ms/step (%.1f s this session)\n", o->name, r->steps,
               1000.0 * r->train_seconds / r->steps, session);
        if (o->scorecard) rc = finish_run(rp, o->name, o->preset, train, test, session);
    }
    return rc;
}

// Everything of trainer_run that happens while the folder is locked.
static int train_locked(const TrainOptions *o, const RunPaths *rp) {
    Run r;
    memset(&r, 0, sizeof r);
    r.cfg = o->cfg;
    r.steps = r.cfg.steps;
    int have_ckpt = file_exists(rp->ckpt);
    int rc = check_existing_run(o, rp, have_ckpt, r.steps);
    if (rc >= 0) return rc;
    remove_stale_temp_files(rp->dir);
    CifarSet train, test;
    if (load_data(&train, &test) != 0) return TRAIN_ERROR;
    r.loss_hist = calloc(r.steps + 1, sizeof(float));
    r.gn_hist = calloc(r.steps + 1, sizeof(float));
    r.ml_hist = calloc(r.steps + 1, sizeof(float));
    r.val_hist = calloc(r.steps + 1, sizeof(float));
    for (int i = 0; i <= r.steps; i++) r.val_hist[i] = NAN;
    r.test = &test;
    r.last_val = NAN;
    rc = have_ckpt ? resume_run(&r, o, rp, &train) : start_run(&r, o, rp, &train);
    if (rc == TRAIN_OK) rc = train_and_score(&r, o, rp, &train, &test);
    run_free(&r);
    cifar_free(&train);
    cifar_free(&test);
    return rc;
}

int trainer_run(const TrainOptions *o) {
    char err[ERRLEN];
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->name);
    RunPaths rp;
    run_paths(&rp, dir);
    if (o->cfg.threads > 0) omp_set_num_threads(o->cfg.threads);
    // the folder and its lock first: nothing below may touch a folder that
    // another train is writing
    if (make_dirs(rp.dir, err, sizeof err) != 0) { fprintf(stderr, "error: %s\n", err); return TRAIN_ERROR; }
    int lock = lock_run_dir(rp.dir);
    if (lock < 0) return TRAIN_ERROR;
    int rc = train_locked(o, &rp);
    close(lock);
    return rc;
}

int trainer_finish(const char *run_dir, const char *name, Preset preset) {
    RunPaths rp;
    run_paths(&rp, run_dir);
    int lock = lock_run_dir(run_dir);
    if (lock < 0) return TRAIN_ERROR;
    CifarSet train, test;
    int rc = TRAIN_ERROR;
    if (load_data(&train, &test) == 0) {
        rc = finish_run(&rp, name, preset, &train, &test, 0.0);
        cifar_free(&train); cifar_free(&test);
    }
    close(lock);
    return rc;
}
