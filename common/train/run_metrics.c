// run_metrics.c: what a run writes when it ends (see run.h): the scorecard
// (val MSE, samples, probe-FD), metrics.json in the tutorial's schema and
// samples.png; or, when it diverged, diverged.json.
#include <cJSON.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
#include "nn/errors.h"
#include "eval/probe.h"
#include "nn/flow.h"
#include "eval/spikes.h"
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "io/fileio.h"
#include "io/progress.h"
#include "run.h"

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
                    img[((size_t)(oy + y) * W + ox + xx) * 3 + c] = cifar_pixel_byte(v);
                }
    }
    int len = 0;
    unsigned char *png = stbi_write_png_to_mem(img, W * 3, W, H, 3, &len);
    free(img);
    if (!png) return errorf(err, errlen, "cannot encode %s", path);
    int rc = write_file_atomic(path, png, (size_t)len, err, errlen);
    STBIW_FREE(png);
    return rc;
}

// ---------------------------------------------------------------------------
// The scorecard and metrics.json of a finished run: of its weights, and with
// an EMA of the EMA's weights too (metrics.json "raw" and "ema").
typedef struct {
    double val_mse, fd, probe_acc;     // fd and probe_acc NaN without a probe
    double val_s, sample_s, fd_s;      // seconds each part took
    // a class-conditional model's samples at the run's guidance (classes > 0)
    float guidance;
    double cond_fd, class_acc, class_acc_of[PROBE_CLASSES], guided_s;
    char probe_key[17], probe_weights[17];
    const char *probe_source;          // Probe.source: "shipped"
} Scorecard;

// The probe-FD of the samples (32x32 RGB configs only: the probe's input),
// by the shipped probe (eval/probe.h).
static void score_probe_fd(const ModelConfig *c, const CifarSet *test, const float *samples, const float *guided,
                           const int *y, Scorecard *sc) {
    char err[ERRLEN];
    if (c->channels != 3 || c->img != 32) return;
    Probe *probe = probe_for_scoring(1, err, sizeof err);
    if (!probe) {
        fprintf(stderr, "error: probe: %s\n", err);
        return;
    }
    double t0 = wall_seconds();
    FeatureStats real;
    if (scorecard_real_stats(probe, test, &real) == 0) {
        sc->fd = scorecard_probe_fd(probe, &real, samples, FD_SAMPLES);
        if (guided) {
            sc->cond_fd = scorecard_probe_fd(probe, &real, guided, FD_SAMPLES);
            sc->class_acc = scorecard_class_accuracy(probe, guided, y, FD_SAMPLES, sc->class_acc_of, NULL);
        }
        feature_stats_free(&real);
    }
    sc->fd_s = wall_seconds() - t0;
    sc->probe_acc = probe->test_acc;
    memcpy(sc->probe_key, probe->key, sizeof sc->probe_key);
    memcpy(sc->probe_weights, probe->weights, sizeof sc->probe_weights);
    sc->probe_source = probe->source;
    probe_free(probe);
}

// val MSE, then FD_SAMPLES samples: their probe-FD, the first 64 into
// samples_png; a class-conditional model's (classes > 0) as many again, 100
// a class at guidance w, scored too, and they are the first 64. The samples
// are drawn as the run's sampling keys say (sampler, sample_steps, guidance).
static void run_scorecard(Model *m, const char *name, const CifarSet *test, const RunConfig *how,
                          const char *samples_png, Scorecard *sc) {
    char err[ERRLEN];
    const ModelConfig *c = &m->cfg;
    float w = how->guidance;
    int nfe = flow_evaluations(how->sampler, how->sample_steps);
    *sc = (Scorecard){ .fd = NAN, .probe_acc = NAN, .guidance = w, .cond_fd = NAN, .class_acc = NAN };
    for (int k = 0; k < PROBE_CLASSES; k++) sc->class_acc_of[k] = NAN;
    long guided_passes = c->classes > 0 ? (long)flow_guided_rows(FD_SAMPLES, w) * nfe : 0;
    fprintf(stderr, "[%s] scorecard: val MSE on %d test images, then %d samples x %d %s steps for probe-FD\n",
            name, VAL_IMAGES, FD_SAMPLES, how->sample_steps, how->sampler == SAMPLER_HEUN ? "Heun" : "Euler");
    if (guided_passes)
        fprintf(stderr, "[%s] and %d samples, %d a class, at guidance %g (%d forward pass%s a step)\n", name,
                FD_SAMPLES, FD_SAMPLES / PROBE_CLASSES, w, flow_guided_rows(1, w), flow_guided_rows(1, w) > 1 ? "es" : "");
    // one progress line over the model's forward passes (an image each): the
    // val exam's first, whose time gives the ETA of the sampling, ten times more
    Progress pr;
    char label[48];
    snprintf(label, sizeof label, "[%.20s] scorecard", name);
    long unguided_passes = VAL_IMAGES + (long)FD_SAMPLES * nfe;
    progress_begin(&pr, stderr, label, 0, unguided_passes + guided_passes);
    pr.unit = "images";
    double t0 = wall_seconds();
    sc->val_mse = scorecard_val_mse(m, test, VAL_IMAGES);
    sc->val_s = wall_seconds() - t0;
    progress_update(&pr, VAL_IMAGES, "val MSE done");

    t0 = wall_seconds();
    size_t per = cfg_image_floats(c);
    float *samples = malloc(sizeof(float) * per * FD_SAMPLES);
    scorecard_samples_shown(m, samples, FD_SAMPLES, how->sampler, how->sample_steps, &pr, VAL_IMAGES);
    sc->sample_s = wall_seconds() - t0;
    float *guided = NULL;
    int *y = NULL;
    if (guided_passes) {
        t0 = wall_seconds();
        guided = malloc(sizeof(float) * per * FD_SAMPLES);
        y = malloc(sizeof(int) * FD_SAMPLES);
        if (guided && y) scorecard_labels(y, FD_SAMPLES);
        if (!guided || !y || scorecard_guided_samples(m, guided, y, FD_SAMPLES, w, how->sampler, how->sample_steps, &pr,
                                                      unguided_passes, err, sizeof err) != 0) {
            fprintf(stderr, "error: guided samples: %s\n", guided && y ? err : "out of memory");
            free(guided); guided = NULL;
        }
        sc->guided_s = wall_seconds() - t0;
    }
    progress_end(&pr);
    score_probe_fd(c, test, samples, guided, y, sc);
    if (write_sample_grid(samples_png, guided ? guided : samples, 64 < FD_SAMPLES ? 64 : FD_SAMPLES, c->channels,
                          c->img, err, sizeof err) != 0)
        fprintf(stderr, "warning: %s\n", err);
    free(samples); free(guided); free(y);
}

// A score, or null where there is none (NaN: no probe, no samples).
static cJSON *score(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

// [a, b], a point of a curve.
static cJSON *point(double a, double b) {
    cJSON *pt = cJSON_CreateArray();
    cJSON_AddItemToArray(pt, cJSON_CreateNumber(a));
    cJSON_AddItemToArray(pt, cJSON_CreateNumber(b));
    return pt;
}

// raw.cond of a class-conditional model: its guided samples' scores.
static void add_cond_scores(cJSON *raw, const Scorecard *sc) {
    cJSON *cond = cJSON_AddObjectToObject(raw, "cond");
    cJSON_AddNumberToObject(cond, "guidance", sc->guidance);
    cJSON_AddItemToObject(cond, "probe_fd", score(sc->cond_fd));
    cJSON_AddItemToObject(cond, "class_acc", score(sc->class_acc));
    cJSON *of = cJSON_AddArrayToObject(cond, "class_acc_per_class");
    for (int k = 0; k < PROBE_CLASSES; k++) cJSON_AddItemToArray(of, score(sc->class_acc_of[k]));
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
        cJSON_AddItemToArray(curve, point(s0 + window, round(sum / window * 1e5) / 1e5));
    }
    cJSON_AddNumberToObject(root, "curve_window", window);
}

// val_curve: [step, val MSE] every cfg.val_every steps (the same exam as
// the final val MSE, so the point at the last step equals it)
static void add_val_curve(cJSON *root, const float *val, int steps) {
    cJSON *curve = cJSON_AddArrayToObject(root, "val_curve");
    for (int i = 0; i < steps; i++)
        if (!isnan(val[i])) cJSON_AddItemToArray(curve, point(i + 1, val[i]));
}

// The run's own record of where, when and how it was made, which the
// results folders' READMEs are written from (scripts/results_readme.sh):
// the CPU and its cores, the date (UTC) and the command line that finished
// the run (a resumed run's earlier starts are not in it).
static void add_run_record(cJSON *root) {
    cJSON *rec = cJSON_AddObjectToObject(root, "record");
    char line[512], cpu[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    snprintf(line, sizeof line, "%s, %ld cores", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddStringToObject(rec, "machine", line);
    time_t now = time(NULL);
    strftime(line, sizeof line, "%Y-%m-%d", gmtime(&now));
    cJSON_AddStringToObject(rec, "date", line);
    char cmd[2048] = "";
    f = fopen("/proc/self/cmdline", "r");                 // NUL-separated words
    size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
    if (f) fclose(f);
    for (size_t i = 0; i + 1 < n; i++) if (cmd[i] == '\0') cmd[i] = ' ';
    cmd[n] = '\0';
    if (n) cJSON_AddStringToObject(rec, "command", cmd);
}

// metrics.json's content: the scorecard in the tutorial's schema, then the
// run's config, timings, loss and val curves, and probe.
// "raw" or "ema": one set of weights' scores.
static void add_scores(cJSON *root, const char *which, const Model *m, const Scorecard *sc) {
    cJSON *obj = cJSON_AddObjectToObject(root, which);
    cJSON_AddNumberToObject(obj, "val_mse", sc->val_mse);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(obj, "uncond"), "probe_fd", score(sc->fd));
    if (m->cfg.classes > 0) add_cond_scores(obj, sc);
}

// ema NULL: a run without an EMA.
static cJSON *metrics_json(const Model *m, const Config *cfg, const char *name, Preset preset,
                           const SavedProgress *p, const float *loss, const float *val, const Scorecard *sc,
                           const Scorecard *ema, double total_wall) {
    int steps = p->step;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", name);
    cJSON_AddNumberToObject(root, "params", (double)m->n_params);
    double it_per_s = p->train_seconds > 0 ? steps / p->train_seconds : 0;
    cJSON_AddNumberToObject(root, "it_per_s", it_per_s);
    cJSON_AddNumberToObject(root, "ms_per_step", it_per_s > 0 ? 1000.0 / it_per_s : 0);
    cJSON_AddNumberToObject(root, "loss_spikes", count_loss_spikes(loss, steps));
    add_scores(root, "raw", m, sc);
    if (ema) add_scores(root, "ema", m, ema);
    add_loss_curve(root, loss, steps);
    add_val_curve(root, val, steps);
    // every config field, as the strings a checkpoint stores
    config_foreach_field(cfg, add_config_field, cJSON_AddObjectToObject(root, "config"));
    cJSON_AddStringToObject(root, "preset", preset_name(preset));
    cJSON_AddNumberToObject(root, "seed", (double)cfg->run.seed);
    cJSON_AddNumberToObject(root, "steps", steps);
    cJSON_AddNumberToObject(root, "batch", cfg->run.batch);
    cJSON_AddNumberToObject(root, "threads", omp_get_max_threads());
    cJSON_AddNumberToObject(root, "train_seconds", p->train_seconds);
    cJSON_AddNumberToObject(root, "final_loss", steps > 0 ? loss[steps - 1] : 0);
    cJSON *mla = cJSON_AddArrayToObject(root, "max_attn_logit");
    for (int b = 0; b < cfg->model.depth; b++) cJSON_AddItemToArray(mla, cJSON_CreateNumber(p->max_logit_layers[b]));
    cJSON *probe = cJSON_AddObjectToObject(root, "probe");
    cJSON_AddStringToObject(probe, "key", sc->probe_key);
    if (isfinite(sc->probe_acc)) cJSON_AddNumberToObject(probe, "test_acc", sc->probe_acc);
    if (sc->probe_weights[0]) cJSON_AddStringToObject(probe, "weights", sc->probe_weights);
    if (sc->probe_source) cJSON_AddStringToObject(probe, "source", sc->probe_source);
    cJSON *timing = cJSON_AddObjectToObject(root, "scorecard_seconds");
    cJSON_AddNumberToObject(timing, "val_mse", sc->val_s);
    cJSON_AddNumberToObject(timing, "sampling", sc->sample_s);
    cJSON_AddNumberToObject(timing, "probe_fd", sc->fd_s);
    if (m->cfg.classes > 0) cJSON_AddNumberToObject(timing, "guided_sampling", sc->guided_s);
    if (ema) cJSON_AddNumberToObject(timing, "ema", ema->val_s + ema->sample_s + ema->guided_s + ema->fd_s);
    // the clock time of the start that finished the run, steps and scorecard;
    // a resumed run's earlier starts are in train_seconds, not here
    cJSON_AddNumberToObject(root, "wall_seconds", total_wall);
    add_run_record(root);
    return root;
}

// Writes root (pretty-printed, with a final newline) and frees it.
static int write_json(const char *path, cJSON *root, char *err, size_t errlen) {
    char *json = cJSON_Print(root);
    cJSON_Delete(root);
    if (!json) return errorf(err, errlen, "%s: out of memory", path);
    const FilePart parts[2] = { { json, strlen(json) }, { "\n", 1 } };
    int rc = write_parts_atomic(path, parts, 2, err, errlen);
    free(json);
    return rc;
}

int finish_run(const RunPaths *rp, const char *name, Preset preset, const CifarSet *test, double wall_before) {
    char err[ERRLEN];
    double t_start = wall_seconds();
    Model m;
    SafeTensors st;
    if (checkpoint_load(rp->ckpt, &m, &st, err, sizeof err) != 0) return run_error(err, TRAIN_ERROR);
    Config cfg;   // the model's and the run's, as the run saved them
    if (checkpoint_config_from(&st, rp->ckpt, &cfg, err, sizeof err) != 0 ||
        cifar_check_config(&m.cfg, rp->ckpt, err, sizeof err) != 0) {   // its images are CIFAR-10's
        st_free(&st);
        model_free(&m);
        return run_error(err, TRAIN_ERROR);
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
    Scorecard sc, ema_sc;
    int with_ema = cfg.run.ema > 0;
    if (rc == 0) {
        run_scorecard(&m, name, test, &cfg.run, rp->samples, &sc);
        if (with_ema) {   // the same exam and samples, from the EMA's weights
            char ema_name[128];
            snprintf(ema_name, sizeof ema_name, "%.100s EMA", name);
            if (checkpoint_use_ema(rp->ckpt, &m, err, sizeof err) != 0) rc = -1;
            else run_scorecard(&m, ema_name, test, &cfg.run, rp->samples_ema, &ema_sc);
        }
    }
    if (rc == 0) {
        double total_wall = wall_before + (wall_seconds() - t_start);
        rc = write_json(rp->metrics, metrics_json(&m, &cfg, name, preset, &prog, loss, val, &sc,
                                                  with_ema ? &ema_sc : NULL, total_wall), err, sizeof err);
        double it_per_s = prog.train_seconds > 0 ? steps / prog.train_seconds : 0;
        if (rc == 0)
            printf("[%s] val MSE %.4f | probe-FD %.1f | %.1f ms/step | %d loss spikes | %s\n", name, sc.val_mse,
                   sc.fd, it_per_s > 0 ? 1000.0 / it_per_s : 0, count_loss_spikes(loss, steps), rp->metrics);
        if (rc == 0 && m.cfg.classes > 0)
            printf("[%s] at guidance %g: probe-FD %.1f | class accuracy %.3f\n", name, sc.guidance, sc.cond_fd,
                   sc.class_acc);
        if (rc == 0 && with_ema) {
            printf("[%s] EMA: val MSE %.4f | probe-FD %.1f\n", name, ema_sc.val_mse, ema_sc.fd);
            if (m.cfg.classes > 0)
                printf("[%s] EMA at guidance %g: probe-FD %.1f | class accuracy %.3f\n", name, ema_sc.guidance,
                       ema_sc.cond_fd, ema_sc.class_acc);
        }
    }
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    free(loss); free(gn); free(ml); free(val);
    model_free(&m);
    return rc == 0 ? TRAIN_OK : TRAIN_ERROR;
}

// A diverged run is a result too (an lr sweep looks for where runs break):
// diverged.json records the step whose loss or gradient was not finite, and
// the run's config. A resume trains from the last checkpoint again and, the
// run being deterministic, diverges at the same step.
void record_divergence(const Run *r, const RunPaths *rp, int step, double loss) {
    char err[ERRLEN];
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "diverged_at_step", step);
    cJSON_AddStringToObject(root, "loss", isnan(loss) ? "nan" : isinf(loss) ? "inf" : "finite");
    cJSON_AddStringToObject(root, "grad_norm", isnan(r->tr.ts.grad_norm) ? "nan" : isinf(r->tr.ts.grad_norm) ? "inf" : "finite");
    cJSON_AddNumberToObject(root, "steps", r->steps);
    Config cfg = { r->tr.m.cfg, r->tr.run };
    config_foreach_field(&cfg, add_config_field, cJSON_AddObjectToObject(root, "config"));
    if (write_json(rp->diverged, root, err, sizeof err) != 0) fprintf(stderr, "warning: %s\n", err);
}
