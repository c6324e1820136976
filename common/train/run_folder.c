// run_folder.c: a run's folder (see run.h): its files, its lock, loss.tsv
// and val.tsv, the checkpoint with the trainer's state, and the two ways a
// run begins: fresh from its seed, or resumed exactly where it stopped.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "io/args.h"
#include "io/checkpoint.h"
#include "io/fileio.h"
#include "nn/errors.h"
#include "run.h"

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

static int rng_from_text(const char *s, Rng *r) {
    unsigned long long st; int has; unsigned int bits;
    if (!s || sscanf(s, "%llx %d %x", &st, &has, &bits) != 3) return -1;
    r->state = st; r->has_spare = has; memcpy(&r->spare, &bits, sizeof bits);
    return 0;
}

void run_paths(RunPaths *p, const char *dir) {
    snprintf(p->dir, sizeof p->dir, "%s", dir);
    snprintf(p->ckpt, sizeof p->ckpt, "%s/ckpt.safetensors", p->dir);
    snprintf(p->loss, sizeof p->loss, "%s/loss.tsv", p->dir);
    snprintf(p->val, sizeof p->val, "%s/val.tsv", p->dir);
    snprintf(p->metrics, sizeof p->metrics, "%s/metrics.json", p->dir);
    snprintf(p->samples, sizeof p->samples, "%s/samples.png", p->dir);
    snprintf(p->samples_ema, sizeof p->samples_ema, "%s/samples_ema.png", p->dir);
    snprintf(p->diverged, sizeof p->diverged, "%s/diverged.json", p->dir);
}

// The rows of a step-indexed TSV file (loss.tsv, val.tsv): a step in
// 1..upto, then ncols numbers, each into cols[c][step - 1]. The header and
// rows of other steps are skipped. Returns the number of rows read (and the
// largest step among them in *last), -1 on a read error.
static int read_step_rows(const char *path, int upto, int ncols, float *const *cols, int *last,
                          char *err, size_t errlen) {
    size_t len;
    char *text = read_file_all(path, &len, err, errlen);
    if (!text) return -1;
    int rows = 0;
    *last = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *end;
        long step = strtol(line, &end, 10);
        if (end == line || step < 1 || step > upto) continue;   // the header, later steps
        float v[3];   // ncols <= 3
        int c = 0;
        for (const char *p = end; c < ncols; c++, p = end) {
            v[c] = strtof(p, &end);
            if (end == p) break;   // not a number
        }
        if (c < ncols) continue;
        for (c = 0; c < ncols; c++) cols[c][step - 1] = v[c];
        rows++;
        if (step > *last) *last = (int)step;
    }
    free(text);
    return rows;
}

int read_loss_tsv(const char *path, int upto, float *loss, float *gnorm, float *logit,
                  char *err, size_t errlen) {
    float *const cols[3] = { loss, gnorm, logit };
    int last;
    return read_step_rows(path, upto, 3, cols, &last, err, errlen) < 0 ? -1 : last;
}

// Closes a memory stream and writes what it holds to path (temp file, then
// rename). Frees the stream's buffer either way.
static int write_memstream(FILE *f, char **buf, size_t *len, const char *path,
                           char *err, size_t errlen) {
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        free(*buf);
        return errorf(err, errlen, "%s: out of memory while formatting it", path);
    }
    int rc = write_file_atomic(path, *buf, *len, err, errlen);
    free(*buf);
    return rc;
}

// Rewrites loss.tsv with rows 1..n (used when a resumed run drops the steps
// after its checkpoint).
static int write_loss_tsv(const char *path, int n, const float *loss, const float *gnorm,
                          const float *logit, char *err, size_t errlen) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);   // grows as needed: a value may print wide
    if (!f) return errorf(err, errlen, "%s: out of memory", path);
    fprintf(f, "step\tloss\tgrad_norm\tmax_logit\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%d\t%.6f\t%.6f\t%.4f\n", i + 1, loss[i], gnorm[i], logit[i]);
    return write_memstream(f, &buf, &len, path, err, errlen);
}

// A missing val.tsv is an empty curve (runs made before the curve existed).
int read_val_tsv(const char *path, int upto, float *val, char *err, size_t errlen) {
    for (int i = 0; i < upto; i++) val[i] = NAN;
    if (!file_exists(path)) return 0;
    float *const cols[1] = { val };
    int last;
    return read_step_rows(path, upto, 1, cols, &last, err, errlen);
}

int write_val_tsv(const char *path, int n, const float *val, char *err, size_t errlen) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return errorf(err, errlen, "%s: out of memory", path);
    fprintf(f, "step\tval_mse\n");
    for (int i = 0; i < n; i++)
        if (!isnan(val[i])) fprintf(f, "%d\t%.6f\n", i + 1, val[i]);
    return write_memstream(f, &buf, &len, path, err, errlen);
}

// ---------------------------------------------------------------------------
// The checkpoint: weights, AdamW moments, the model's config and the run's, and everything the loop
// needs to continue exactly where it left off.
int save_checkpoint(const RunPaths *rp, const Model *m, const RunConfig *run, const TrainState *ts,
                    const Rng *noise, const DataLoader *dl, double train_seconds, const float *max_logit_layers,
                    Preset preset, char *err, size_t errlen) {
    char step[32], rng_text[96], data_text[DATALOADER_STATE_TEXT_LEN], secs[64];
    char logits[TINYDIT_MAX_DEPTH * 16] = "";   // "%.6g," per block
    snprintf(step, sizeof step, "%d", ts->step);
    rng_to_text(noise, rng_text, sizeof rng_text);
    DataLoaderState ds = dataloader_get_state(dl);
    dataloader_state_format(&ds, data_text, sizeof data_text);
    snprintf(secs, sizeof secs, "%.6f", train_seconds);
    for (int b = 0; b < m->cfg.depth; b++) {
        size_t l = strlen(logits);
        snprintf(logits + l, sizeof logits - l, "%s%.6g", b ? "," : "", max_logit_layers[b]);
    }
    CheckpointArray extra[3] = { { CHECKPOINT_ADAMW_M, ts->adam_m }, { CHECKPOINT_ADAMW_V, ts->adam_v },
                                 { CHECKPOINT_EMA, ts->ema } };
    CheckpointMeta meta[6] = { { "train.step", step }, { "train.noise_rng", rng_text },
                               { "train.data", data_text }, { "train.seconds", secs },
                               { "train.max_logit", logits }, { "train.preset", preset_name(preset) } };
    return checkpoint_save(rp->ckpt, m, run, extra, ts->ema ? 3 : 2, meta, 6, err, errlen);
}

void read_progress(const SafeTensors *st, int depth, SavedProgress *p) {
    const char *v;
    memset(p, 0, sizeof *p);
    p->step = parse_step(st_meta(st, "train.step"));
    p->train_seconds = (v = st_meta(st, "train.seconds")) ? atof(v) : 0.0;
    if ((v = st_meta(st, "train.max_logit"))) {
        const char *q = v;
        for (int b = 0; b < depth && b < TINYDIT_MAX_DEPTH && *q; b++) {
            p->max_logit_layers[b] = strtof(q, (char **)&q);
            if (*q == ',') q++;
        }
    }
}

// A run killed while it saved leaves its temporary file (name.tmp.<pid>)
// behind; the file it was replacing is intact. Clear them when a run starts.
void remove_stale_temp_files(const char *dir) {
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
// scorecard) writes the folder, the holder's PID inside for the message a
// second one prints. The kernel drops it when its process ends, however it
// ends; the file stays (deleting it would let two processes lock two files).
// The descriptor to close when done, or -1 after a message.
int lock_run_dir(const char *dir) {
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

int load_data(CifarSet *train, CifarSet *test) {
    char err[CIFAR_ERRLEN];
    if (cifar_load_train(NULL, train, err, sizeof err) != 0 || cifar_load_test(NULL, test, err, sizeof err) != 0) {
        cifar_free(train);   // loaded before the test set failed (a failed load leaves it empty)
        return run_error(err, -1);
    }
    return 0;
}

// A run folder that already holds a checkpoint: without --resume that is a
// mistake; with --resume and metrics.json there, the run may be finished
// already (the ablation relies on this). TRAIN_USAGE or TRAIN_OK to stop
// here, -1 to go on.
int check_existing_run(const TrainOptions *o, const RunPaths *rp, int have_ckpt, int steps) {
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

void training_free(Training *t) {
    dataloader_free(&t->dl);
    if (t->have_ts) train_state_free(&t->ts);
    if (t->have_model) model_free(&t->m);
}

void run_free(Run *r) {
    training_free(&r->tr);
    if (r->have_exam) val_exam_free(&r->exam);
    free(r->loss_hist); free(r->gn_hist); free(r->ml_hist); free(r->val_hist);
}

int run_train_state_init(TrainState *s, Model *m, int batch, const RunConfig *r) {
    AdamWConfig opt = adamw_default(r->lr);
    opt.weight_decay = r->weight_decay;
    StepRecipe recipe = { r->label_drop, r->t_dist, r->t_mean, r->t_std, r->ema };
    return train_state_init(s, m, batch, &opt, &recipe);
}

// The AdamW state of t->run for the model t->m, on the run's threads (the
// process's count, set once: the model's loops and matmuls follow OpenMP's,
// io/run_config.h): what a fresh run and a resumed one both make.
static int init_train_state(Training *t) {
    if (t->run.threads > 0) omp_set_num_threads(t->run.threads);
    if (run_train_state_init(&t->ts, &t->m, t->run.batch, &t->run) != 0) {
        // what train_state_init asked for up to the allocation that failed
        // (the activations and the backward's scratch are counted before
        // they are allocated)
        size_t per = t->run.batch * cfg_image_floats(&t->m.cfg);
        size_t bytes = sizeof(float) * (t->ts.act.floats + t->ts.bw.floats + 4 * per + (size_t)t->run.batch +
                                        (t->run.ema > 0 ? 3 : 2) * t->m.n_params);
        fprintf(stderr, "error: out of memory: the training state of batch=%d asks for %zu bytes (%.2f GB) "
                        "besides the %zu bytes of weights and gradients; lower --set batch or dim\n",
                t->run.batch, bytes, bytes / 1e9, 2 * sizeof(float) * t->m.n_params);
        train_state_free(&t->ts);
        return -1;
    }
    t->have_ts = true;
    return 0;
}

// The seed of each step's noise and times: the run's seed, moved so that
// the stream differs from the weights'.
static uint64_t noise_seed(uint64_t seed) { return seed + 0x5EEDF10ULL; }

int training_start(Training *t, const Config *cfg, const CifarSet *train) {
    char err[ERRLEN];
    memset(t, 0, sizeof *t);
    t->run = cfg->run;
    if (cifar_check_config(&cfg->model, "--set", err, sizeof err) != 0 ||
        model_build(&t->m, &cfg->model, err, sizeof err) != 0) return run_error(err, -1);
    t->have_model = true;
    model_init_weights(&t->m, t->run.seed);
    if (init_train_state(t) != 0) return -1;
    rng_seed(&t->noise, noise_seed(t->run.seed));
    if (dataloader_init(&t->dl, train, run_data_seed(&t->run), t->run.flip, t->m.cfg.classes, err, sizeof err) != 0)
        return run_error(err, -1);
    return 0;
}

// A fresh run: training_start, an empty loss.tsv and val.tsv.
int start_run(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train) {
    char err[ERRLEN];
    // a class-conditional model sits the val exam with each test image's
    // label (the training set's are checked by the data loader)
    if (cifar_check_labels(r->test, o->cfg.model.classes, "the test set", err, sizeof err) != 0)
        return run_error(err, TRAIN_ERROR);
    if (training_start(&r->tr, &o->cfg, train) != 0) return TRAIN_ERROR;
    if (write_loss_tsv(rp->loss, 0, NULL, NULL, NULL, err, sizeof err) != 0 ||
        write_val_tsv(rp->val, 0, NULL, err, sizeof err) != 0) return run_error(err, TRAIN_ERROR);
    char desc[512];
    config_describe(&o->cfg, desc, sizeof desc);
    printf("[%s] %s preset, %zu params, %d threads: %s\n", o->name, preset_name(o->preset), r->tr.m.n_params,
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
        && checkpoint_copy_array(st, ckpt, CHECKPOINT_ADAMW_M, &r->tr.m, r->tr.ts.adam_m, err, errlen) == 0
        && checkpoint_copy_array(st, ckpt, CHECKPOINT_ADAMW_V, &r->tr.m, r->tr.ts.adam_v, err, errlen) == 0
        && (!r->tr.ts.ema || checkpoint_copy_array(st, ckpt, CHECKPOINT_EMA, &r->tr.m, r->tr.ts.ema, err, errlen) == 0)
        && rng_from_text(st_meta(st, "train.noise_rng"), &r->tr.noise) == 0
        && dataloader_init(&r->tr.dl, train, run_data_seed(&r->tr.run), r->tr.run.flip, r->tr.m.cfg.classes, err, errlen) == 0
        && dataloader_state_parse(st_meta(st, "train.data"), &ds, err, errlen) == 0
        && dataloader_set_state(&r->tr.dl, &ds, err, errlen) == 0;
}

// The fields of a config as "key=value" strings, in config_foreach_field's order.
typedef struct { int n; char kv[64][96]; } FieldList;
static void collect_field(const char *key, const char *value, void *ctx) {
    FieldList *l = ctx;
    if (l->n < 64) snprintf(l->kv[l->n++], sizeof l->kv[0], "%s=%s", key, value);
}

// A resume takes the FROM_OPTIONS keys (steps, threads, ...) from the
// options and the rest from the checkpoint: the options that differ from the
// checkpoint are said, those it ignores on one line, those it takes on another.
static void say_resume_differences(const Config *saved, const Config *given) {
    FieldList a = {0}, b = {0};
    config_foreach_field(saved, collect_field, &a);
    config_foreach_field(given, collect_field, &b);
    for (int pass = 0; pass < 2; pass++) {
        char line[2048] = "";
        size_t used = 0;
        for (int i = 0; i < a.n && i < b.n; i++) {
            if (strcmp(a.kv[i], b.kv[i]) == 0) continue;
            size_t klen = strcspn(a.kv[i], "=");
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)klen, a.kv[i]);
            if ((int)(config_find_key(key)->resume == FROM_OPTIONS) != pass) continue;
            used += (size_t)snprintf(line + used, used < sizeof line ? sizeof line - used : 0, "%s%s (checkpoint: %s)",
                                     used ? ", " : "", b.kv[i], a.kv[i] + klen + 1);
        }
        if (!used) continue;
        if (pass == 0) fprintf(stderr, "note: --resume keeps the checkpoint's config and ignores these options: %s\n", line);
        else fprintf(stderr, "note: --resume takes these options, not the checkpoint's: %s\n", line);
    }
}

// Resume: the checkpoint's model, and its run but for the fields the
// options give (config_for_resume); the loop continues with the same
// weights, moments, noise stream and data order, and loss.tsv is cut back
// to the checkpoint's step (the steps logged after it will be redone).
int resume_run(Run *r, const TrainOptions *o, const RunPaths *rp, const CifarSet *train) {
    char err[ERRLEN];
    SafeTensors st;
    if (checkpoint_load(rp->ckpt, &r->tr.m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: cannot resume: %s\n", err);
        return TRAIN_ERROR;
    }
    r->tr.have_model = 1;
    Config saved;
    if (checkpoint_config_from(&st, rp->ckpt, &saved, err, sizeof err) != 0 ||
        cifar_check_config(&r->tr.m.cfg, rp->ckpt, err, sizeof err) != 0 ||
        cifar_check_labels(train, r->tr.m.cfg.classes, "the training set", err, sizeof err) != 0 ||
        cifar_check_labels(r->test, r->tr.m.cfg.classes, "the test set", err, sizeof err) != 0) {
        fprintf(stderr, "error: cannot resume: %s\n", err);
        st_free(&st);
        return TRAIN_ERROR;
    }
    say_resume_differences(&saved, &o->cfg);
    r->tr.run = config_for_resume(&saved, &o->cfg).run;
    if (init_train_state(&r->tr) != 0) { st_free(&st); return TRAIN_ERROR; }
    SavedProgress prog;
    read_progress(&st, r->tr.m.cfg.depth, &prog);
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
    r->tr.ts.step = r->start;
    int rows = read_loss_tsv(rp->loss, r->start, r->loss_hist, r->gn_hist, r->ml_hist, err, sizeof err);
    if (rows < r->start) {
        fprintf(stderr, "error: %s has %d of the %d steps in the checkpoint\n", rp->loss, rows < 0 ? 0 : rows, r->start);
        return TRAIN_ERROR;
    }
    if (read_val_tsv(rp->val, r->start, r->val_hist, err, sizeof err) < 0 ||
        write_loss_tsv(rp->loss, r->start, r->loss_hist, r->gn_hist, r->ml_hist, err, sizeof err) != 0 ||
        write_val_tsv(rp->val, r->start, r->val_hist, err, sizeof err) != 0) return run_error(err, TRAIN_ERROR);
    printf("[%s] resuming at step %d of %d\n", o->name, r->start, r->steps);
    return TRAIN_OK;
}
