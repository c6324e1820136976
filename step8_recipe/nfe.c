// nfe.c: step8_recipe's measurements of trained models.
//   main.c's section 4: the samplers' RMS distance on a few samples
//   nfe      a checkpoint's samples at 2 to 64 model evaluations (NFE),
//            Euler's and Heun's, from the scorecard's noise: their probe-FD,
//            and their RMS distance from the same samples drawn with many
//            small steps (Heun at REF_STEPS), the error of the sampler itself
//   curves   those .tsv files over seeds: step8_nfe.png
//   table    runs' val MSE and probe-FD, raw and EMA, each configuration
//            over its seeds against the first configuration's raw weights
//   cost     a training step with the EMA against one without, in turns
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step8.h"
#include "eval/probe.h"
#include "eval/rms.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/figure.h"
#include "io/fileio.h"
#include "io/metrics.h"
#include "nn/errors.h"
#include "nn/rng.h"
#include "nn/train_step.h"
#include "train/trainer.h"   // run_train_state_init
#include <omp.h>

#define COST_BATCH 64
#define REF_STEPS 64   // Heun's steps of the reference samples: 128 evaluations

int cmd_nfe(const Options *o) {
    char err[ERRLEN];
    Model m;
    CifarSet test = {0};
    if (checkpoint_load(o->model, &m, NULL, err, sizeof err) != 0) return fprintf(stderr, "error: %s\n", err), 1;
    Probe *probe = NULL;
    FeatureStats real;
    size_t per = cfg_image_floats(&m.cfg);
    float *samples = malloc(sizeof(float) * per * o->samples), *ref = malloc(sizeof(float) * per * o->samples);
    int rc = (o->ema && checkpoint_use_ema(o->model, &m, err, sizeof err) != 0) ||
             cifar_check_config(&m.cfg, o->model, err, sizeof err) != 0 ||
             cifar_load_test(NULL, &test, err, sizeof err) != 0 ||
             !(probe = probe_for_scoring(1, err, sizeof err)) || !samples || !ref ||
             scorecard_real_stats(probe, &test, &real) != 0 ? -1 : 0;
    if (rc != 0) {
        fprintf(stderr, "error: %s\n", samples && ref ? err : "out of memory");
        if (probe) probe_free(probe);
        free(samples); free(ref); cifar_free(&test); model_free(&m);
        return 1;
    }
    printf("nfe of %s%s: %d samples a point, probe-FD by %s\n", o->model_name, o->ema ? " (EMA)" : "", o->samples,
           probe->weights);
    FILE *out = NULL;
    char *text = NULL;
    size_t len = 0;
    out = open_memstream(&text, &len);
    fprintf(out, "# step8_recipe nfe of %s%s: %d samples from the scorecard's noise; probe weights %s; distance: "
                 "RMS from Heun's at %d evaluations\n# NFE\tEuler probe_fd\tHeun probe_fd\tEuler distance\tHeun "
                 "distance\n", o->model_name, o->ema ? " (EMA)" : "", o->samples, probe->weights, 2 * REF_STEPS);
    scorecard_samples_shown(&m, ref, o->samples, SAMPLER_HEUN, REF_STEPS, NULL, 0);
    size_t n = per * o->samples;
    Table tab;
    table_init(&tab, 5, "NFE", "Euler probe-FD", "Heun probe-FD", "Euler distance", "Heun distance");
    for (int i = 0; i < NFE_COUNT; i++) {
        double fd[2], dist[2];
        for (SamplerKind s = SAMPLER_EULER; s <= SAMPLER_HEUN; s++) {
            int steps = s == SAMPLER_HEUN ? NFE_LIST[i] / 2 : NFE_LIST[i];
            scorecard_samples_shown(&m, samples, o->samples, s, steps, NULL, 0);
            fd[s] = scorecard_probe_fd(probe, &real, samples, o->samples);
            dist[s] = rms_distance(samples, ref, n);
        }
        fprintf(out, "%d\t%.4f\t%.4f\t%.5f\t%.5f\n", NFE_LIST[i], fd[0], fd[1], dist[0], dist[1]);
        table_cell(&tab, "%d", NFE_LIST[i]);
        table_cell(&tab, "%.2f", fd[0]);
        table_cell(&tab, "%.2f", fd[1]);
        table_cell(&tab, "%.4f", dist[0]);
        table_cell(&tab, "%.4f", dist[1]);
    }
    table_print(&tab);
    fclose(out);
    rc = write_file_atomic(o->out, text, len, err, sizeof err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    else printf("wrote %s\n", o->out);
    free(text);
    feature_stats_free(&real);
    probe_free(probe);
    free(samples); free(ref); cifar_free(&test); model_free(&m);
    return rc != 0;
}

// One nfe .tsv: probe-FD (fd[0..1]) and distance (fd[2..3]) of each
// sampler at each NFE_LIST entry.
static int read_nfe(const char *path, double fd[4][NFE_COUNT], char *err, size_t errlen) {
    size_t len;
    char *text = read_file_all(path, &len, err, errlen);
    if (!text) return -1;
    int got = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        int nfe;
        double v[4];
        if (line[0] == '#' || sscanf(line, "%d %lf %lf %lf %lf", &nfe, &v[0], &v[1], &v[2], &v[3]) != 5) continue;
        for (int i = 0; i < NFE_COUNT; i++)
            if (NFE_LIST[i] == nfe) { for (int c = 0; c < 4; c++) fd[c][i] = v[c]; got |= 1 << i; }
    }
    free(text);
    return got == (1 << NFE_COUNT) - 1 ? 0 : errorf(err, errlen, "%s: not a step8_recipe nfe table", path);
}

int cmd_curves(const Options *o) {
    char err[ERRLEN];
    int n = o->nwords - 1;
    double (*fd)[4][NFE_COUNT] = calloc((size_t)n, sizeof *fd);
    if (!fd) return fprintf(stderr, "error: out of memory\n"), 1;
    for (int k = 0; k < n; k++)
        if (read_nfe(o->words[k + 1], fd[k], err, sizeof err) != 0) return fprintf(stderr, "error: %s\n", err), free(fd), 1;
    FILE *f = figure_data_open(o->figures, "step8_nfe", err, sizeof err);
    if (!f) return fprintf(stderr, "error: %s\n", err), free(fd), 1;
    fprintf(f, "# NFE, then probe-FD of Euler and of Heun, then the distance from many steps of Euler and of Heun:"
               " each its mean, lowest and highest over %d checkpoints\n", n);
    printf("probe-FD and RMS distance from the many-step samples against model evaluations, over %d checkpoints "
           "(mean, lowest-highest)\n", n);
    Table tab;
    table_init(&tab, 5, "NFE", "Euler probe-FD", "Heun probe-FD", "Euler distance", "Heun distance");
    for (int i = 0; i < NFE_COUNT; i++) {
        fprintf(f, "%d", NFE_LIST[i]);
        table_cell(&tab, "%d", NFE_LIST[i]);
        for (int s = 0; s < 4; s++) {
            double sum = 0, lo = INFINITY, hi = -INFINITY;
            for (int k = 0; k < n; k++) { sum += fd[k][s][i]; lo = fmin(lo, fd[k][s][i]); hi = fmax(hi, fd[k][s][i]); }
            fprintf(f, "\t%.5f\t%.5f\t%.5f", sum / n, lo, hi);
            if (s < 2) table_cell(&tab, "%.1f (%.1f-%.1f)", sum / n, lo, hi);
            else table_cell(&tab, "%.4f (%.4f-%.4f)", sum / n, lo, hi);
        }
        fprintf(f, "\n");
    }
    table_print(&tab);
    free(fd);
    int rc = figure_data_close(f, o->figures, "step8_nfe", err, sizeof err);
    if (rc == 0) rc = figure_plot(o->figures, "step8_recipe/plots", "step8_nfe", 1100, 450, NULL, err, sizeof err);
    if (rc < 0) return fprintf(stderr, "error: %s\n", err), 1;
    figure_report(stdout, o->figures, rc == 0, rc == FIGURE_NO_GNUPLOT);
    return 0;
}

// ----------------------------------------------------------------------
// table: a configuration is the runs whose folder names agree but for _sN.
#define TABLE_MAX_CONFIGS 16
typedef struct {
    char name[128];
    double raw_val[32], ema_val[32], raw_fd[32], ema_fd[32];
    int n;
} Group;

static void config_name(const char *folder, char *out, size_t n) {
    const char *base = strrchr(folder, '/');
    snprintf(out, n, "%s", base && base[1] ? base + 1 : folder);
    size_t len = strlen(out);
    while (len && out[len - 1] == '/') out[--len] = '\0';
    char *s = strrchr(out, '_');
    if (s && s[1] == 's' && s[2] >= '0' && s[2] <= '9') *s = '\0';
}

// "0.2809 +- 0.0043" and, against the baseline, "-0.0123 gain (4.1 se)".
static void mean_cell(Table *t, const double *v, int n, const char *fmt_sd) {
    SeedSpread s = seed_spread(v, n);
    table_cell(t, fmt_sd, s.mean, s.sd);
}
static void verdict_cell(Table *t, const double *v, int n, const double *base, int nb, const char *fmt) {
    Comparison c;
    compare_means(seed_spread(v, n), seed_spread(base, nb), &c);
    table_cell(t, fmt, c.diff, c.verdict);
}

int cmd_table(const Options *o) {
    static Group g[TABLE_MAX_CONFIGS];
    int ng = 0;
    RunMetrics first = {0};
    bool have_first = false;
    for (int k = 1; k < o->nwords; k++) {
        char err[METRICS_ERRLEN], name[128];
        RunMetrics r;
        if (metrics_read(o->words[k], &r, err, sizeof err) != 0) return fprintf(stderr, "error: %s\n", err), 1;
        if (!r.has_ema) return fprintf(stderr, "error: %s: no EMA scores (a run with ema > 0)\n", r.path), 1;
        if (have_first && !metrics_same_probe(&first, &r))
            return fprintf(stderr, "error: %s was scored by another probe than %s: their probe-FDs do not compare\n",
                           r.path, first.path), 1;
        if (!have_first) first = r, have_first = true;
        config_name(o->words[k], name, sizeof name);
        int i = 0;
        while (i < ng && strcmp(g[i].name, name) != 0) i++;
        if (i == ng && ng == TABLE_MAX_CONFIGS) return fprintf(stderr, "error: more than %d configurations\n", ng), 1;
        if (i == ng) snprintf(g[ng++].name, sizeof g[0].name, "%s", name);
        if (g[i].n == 32) return fprintf(stderr, "error: %s: more than 32 seeds\n", name), 1;
        Group *c = &g[i];
        c->raw_val[c->n] = r.val_mse; c->ema_val[c->n] = r.ema_val_mse;
        c->raw_fd[c->n] = r.probe_fd; c->ema_fd[c->n] = r.ema_probe_fd;
        c->n++;
    }
    char probe[256];
    metrics_probe_label(&first, probe, sizeof probe);
    printf("val MSE and probe-FD over seeds (mean +- sd), each against %s's raw weights; probe-FD by %s\n\n",
           g[0].name, probe);
    Table tab;
    table_init(&tab, 7, "runs", "weights", "seeds", "val MSE", "vs baseline", "probe-FD", "vs baseline");
    for (int i = 0; i < ng; i++)
        for (int e = 0; e < 2; e++) {
            const double *val = e ? g[i].ema_val : g[i].raw_val, *fd = e ? g[i].ema_fd : g[i].raw_fd;
            table_cell(&tab, "%s", g[i].name);
            table_cell(&tab, "%s", e ? "EMA" : "raw");
            table_cell(&tab, "%d", g[i].n);
            mean_cell(&tab, val, g[i].n, "%.4f +- %.4f");
            if (i == 0 && e == 0) table_cell(&tab, "%s", "(baseline)");
            else verdict_cell(&tab, val, g[i].n, g[0].raw_val, g[0].n, "%+.4f %s");
            mean_cell(&tab, fd, g[i].n, "%.2f +- %.2f");
            if (i == 0 && e == 0) table_cell(&tab, "%s", "(baseline)");
            else verdict_cell(&tab, fd, g[i].n, g[0].raw_fd, g[0].n, "%+.2f %s");
        }
    table_print(&tab);
    printf("\n(a difference is resolved beyond %.0f standard errors of the difference of the means; lower is "
           "better for both)\n", COMPARE_SE);
    return 0;
}

// ----------------------------------------------------------------------
// Section 4 of main.c, the same on a trained model: how far each sampler
// lands from the answer of many small steps, at the same number of evaluations
#define MODEL_IMAGES 4
int on_the_model(const Options *o) {
    char err[ERRLEN];
    Model model, *m = &model;
    if (checkpoint_load(o->model, m, NULL, err, sizeof err) != 0) return fprintf(stderr, "error: %s\n", err), 1;
    size_t n = MODEL_IMAGES * cfg_image_floats(&m->cfg);
    float *noise = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n), *x = malloc(sizeof(float) * n);
    Activations a;
    if (!noise || !ref || !x || activations_alloc(&a, m, MODEL_IMAGES, false) != 0) {
        free(noise); free(ref); free(x); model_free(m);
        return fprintf(stderr, "error: out of memory\n"), 1;
    }
    scorecard_samples(m, noise, MODEL_IMAGES, 0);   // the scorecard's noise, no step taken
    memcpy(ref, noise, sizeof(float) * n);
    flow_sample_with(m, &a, ref, NULL, MODEL_IMAGES, 1, SAMPLER_HEUN, 32, err, sizeof err);
    printf("4. On %s: %d samples, each sampler's RMS distance from Heun's at 64 evaluations\n\n", o->model_name,
           MODEL_IMAGES);
    Table tab;
    table_init(&tab, 3, "NFE", "Euler", "Heun");
    for (int i = 1; i < NFE_COUNT - 2; i++) {
        table_cell(&tab, "%d", NFE_LIST[i]);
        for (SamplerKind s = SAMPLER_EULER; s <= SAMPLER_HEUN; s++) {
            memcpy(x, noise, sizeof(float) * n);
            int steps = s == SAMPLER_HEUN ? NFE_LIST[i] / 2 : NFE_LIST[i];
            flow_sample_with(m, &a, x, NULL, MODEL_IMAGES, 1, s, steps, err, sizeof err);
            table_cell(&tab, "%.4f", rms_distance(x, ref, n));
        }
    }
    table_print(&tab);
    printf("\n   (pixels span [-1, 1]; `step8_recipe nfe` scores 1,000 samples a point by probe-FD)\n\n");
    activations_free(&a);
    free(noise); free(ref); free(x);
    model_free(m);
    return 0;
}

// ----------------------------------------------------------------------
// cost: a training step with the EMA against one without, the tutorial's
// model at the quick preset's batch, in turns in one process (io/bench.h).
typedef struct { Model m; TrainState ts; float *x1; Rng rng; } Racer;

static int cost_racer_init(Racer *r, float ema, const float *x1) {
    Config c = config_default();
    char err[ERRLEN];
    memset(r, 0, sizeof *r);
    if (model_build(&r->m, &c.model, err, sizeof err) != 0) return fprintf(stderr, "error: %s\n", err), -1;
    model_init_weights(&r->m, 0);
    c.run.ema = ema;
    if (run_train_state_init(&r->ts, &r->m, COST_BATCH, &c.run) != 0) return fprintf(stderr, "error: out of memory\n"), -1;
    r->x1 = (float *)x1;
    rng_seed(&r->rng, 1);
    return 0;
}

static void one_step(void *ctx) {
    Racer *r = ctx;
    train_step(&r->ts, r->x1, NULL, &r->rng);
}

int cmd_cost(const Options *o) {
    Racer plain, with_ema;
    size_t per = (size_t)3 * 32 * 32;
    float *x1 = malloc(sizeof(float) * per * COST_BATCH);
    if (!x1) return fprintf(stderr, "error: out of memory\n"), 1;
    Rng data;
    rng_seed(&data, 0);
    rng_fill_uniform(&data, x1, (long)(per * COST_BATCH), -1.0f, 1.0f);
    if (cost_racer_init(&plain, 0, x1) != 0 || cost_racer_init(&with_ema, 0.1f, x1) != 0) return free(x1), 1;
    printf("cost of the EMA: training steps of the tutorial's model, batch %d, %d threads, without and with "
           "ema=0.1, in turns (%d rounds, medians)\n", COST_BATCH, omp_get_max_threads(), o->rounds);
    BenchFn fns[2] = { { "without", one_step, &plain }, { "with", one_step, &with_ema } };
    double ms[2];
    bench_interleaved(fns, 2, 2, o->rounds, 1, ms);
    printf("  without the EMA %.1f ms a step, with it %.1f ms: %+.1f%% (it reads and writes %.1f MB a step)\n", ms[0],
           ms[1], 100.0 * (ms[1] / ms[0] - 1), 3.0 * sizeof(float) * plain.m.n_params / 1e6);
    train_state_free(&plain.ts); train_state_free(&with_ema.ts);
    model_free(&plain.m); model_free(&with_ema.m);
    free(x1);
    return 0;
}
