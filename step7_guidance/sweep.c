// sweep.c: `step7_guidance sweep`, one checkpoint's guided scorecard at
// every w of a list. Guidance is a choice made when sampling, not when
// training: the scorecard's class-conditional samples (common/eval/scorecard.h)
// are drawn again at each w from the same noise and the same labels, so two
// lines of the table differ by w alone. Each line: probe-FD against the
// CIFAR-10 test set, class accuracy, and each class's accuracy.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "step7.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/cifar.h"
#include "io/config_parse.h"
#include "io/fileio.h"
#include "nn/errors.h"
#include "nn/flow.h"
#include "nn/rng.h"

// The .tsv: a header naming what made it, then one line per w.
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if (n < 0) return -1;
        if (*len + n < *cap) { *len += n; return 0; }
        char *grown = realloc(*buf, *cap * 2 + n);
        if (!grown) return -1;
        *buf = grown;
        *cap = *cap * 2 + n;
    }
}

// What a sweep holds while it runs.
typedef struct {
    Model m;
    CifarSet test;
    Probe *probe;
    FeatureStats real;
    float *samples;
    int *y;
} Sweep;

static void sweep_free(Sweep *s) {
    model_free(&s->m);
    cifar_free(&s->test);
    probe_free(s->probe);
    feature_stats_free(&s->real);
    free(s->samples);
    free(s->y);
}

void small_model(Model *m) {
    Config c = config_default();
    const char *sets[] = { "classes=10", "dim=32", "depth=1", "heads=2" };
    char err[ERRLEN];
    if (config_apply(&c, sets, 4, err, sizeof err) != 0 || model_build(m, &c.model, err, sizeof err) != 0)
        fprintf(stderr, "error: %s\n", err), exit(1);
    model_init_weights(m, 0);
}

void one_x_forward(Model *m, Activations *a, int N, const int *y) {
    size_t per = cfg_image_floats(&m->cfg);
    float *x = malloc(sizeof(float) * per * N), *t = malloc(sizeof(float) * N);
    if (!x || !t || activations_alloc(a, m, N, false) != 0) fprintf(stderr, "error: out of memory\n"), exit(1);
    Rng r;
    rng_seed(&r, 7);
    rng_fill_normal(&r, x, (long)per, 1.0f);
    for (int n = 0; n < N; n++) {
        if (n > 0) memcpy(x + per * n, x, sizeof(float) * per);
        t[n] = 0.5f;
    }
    model_forward(m, a, x, t, y);
    free(x); free(t);
}

int load_guided(const char *path, const char *name, Model *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (checkpoint_load(path, m, NULL, err, errlen) != 0) return -1;
    if (m->cfg.classes != PROBE_CLASSES)
        return errorf(err, errlen, "%s: classes=%d, not a CIFAR-10 class-conditional model (classes=%d)", name,
                      m->cfg.classes, PROBE_CLASSES);
    return cifar_check_config(&m->cfg, path, err, errlen);
}

// The checkpoint, the test set, the probe and the real images' statistics.
static int sweep_load(Sweep *s, const Options *o, char *err, size_t errlen) {
    if (load_guided(o->model, o->model_name, &s->m, err, errlen) != 0) return -1;
    if (o->ema && checkpoint_use_ema(o->model, &s->m, err, errlen) != 0) return -1;
    if (cifar_load_test(NULL, &s->test, err, errlen) != 0) return -1;
    if (!(s->probe = probe_for_scoring(1, err, errlen))) return -1;
    size_t per = cfg_image_floats(&s->m.cfg);
    s->samples = malloc(sizeof(float) * per * o->samples);
    s->y = malloc(sizeof(int) * o->samples);
    if (!s->samples || !s->y || scorecard_real_stats(s->probe, &s->test, &s->real) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    scorecard_labels(s->y, o->samples);
    return 0;
}

int cmd_sweep(const Options *o) {
    char err[ERRLEN];
    float w[SWEEP_MAX_W];
    int nw = parse_w_list(o->w_list, w, SWEEP_MAX_W, err, sizeof err);
    if (nw < 0) return fprintf(stderr, "error: %s\n", err), 2;
    // the .tsv is written at the end: its folder must be there before minutes of sampling
    char folder[4096];
    snprintf(folder, sizeof folder, "%s", o->out);
    char *slash = strrchr(folder, '/');
    if (slash) *slash = '\0';
    if (access(slash ? (folder[0] ? folder : "/") : ".", W_OK) != 0)
        return fprintf(stderr, "error: --out %s: its folder is not there or not writable\n", o->out), 1;
    Sweep s;
    memset(&s, 0, sizeof s);
    if (sweep_load(&s, o, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        sweep_free(&s);
        return 1;
    }
    size_t len = 0, cap = 4096;
    char *tsv = malloc(cap);
    int rc = tsv ? 0 : -1;
    if (rc == 0)
        rc = append(&tsv, &len, &cap, "# step7_guidance sweep of %s%s: %d samples (%d a class) of %d %s steps from "
                    "the scorecard's noise at each w; probe weights %s\n# w\tprobe_fd\tclass_acc",
                    o->model_name, o->ema ? " (EMA)" : "", o->samples, o->samples / PROBE_CLASSES, o->steps,
                    SAMPLER_NAMES[o->sampler], s.probe->weights);
    for (int k = 0; k < PROBE_CLASSES && rc == 0; k++) rc = append(&tsv, &len, &cap, "\t%s", CIFAR_CLASS[k]);
    if (rc == 0) rc = append(&tsv, &len, &cap, "\n");
    printf("sweep of %s%s: %d samples a w, %d a class, %d %s steps\n", o->model_name, o->ema ? " (EMA)" : "",
           o->samples, o->samples / PROBE_CLASSES, o->steps, SAMPLER_NAMES[o->sampler]);
    Table tab;
    table_init(&tab, 5, "w", "forward passes a step", "probe-FD", "class accuracy", "seconds");
    for (int i = 0; i < nw && rc == 0; i++) {
        double t0 = wall_seconds();
        if (scorecard_guided_samples(&s.m, s.samples, s.y, o->samples, w[i], o->sampler, o->steps, NULL, 0, err,
                                     sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            rc = -1;
            break;
        }
        double fd = scorecard_probe_fd(s.probe, &s.real, s.samples, o->samples), per_class[PROBE_CLASSES];
        double acc = scorecard_class_accuracy(s.probe, s.samples, s.y, o->samples, per_class, NULL);
        rc = append(&tsv, &len, &cap, "%g\t%.4f\t%.4f", w[i], fd, acc);
        for (int k = 0; k < PROBE_CLASSES && rc == 0; k++) rc = append(&tsv, &len, &cap, "\t%.4f", per_class[k]);
        if (rc == 0) rc = append(&tsv, &len, &cap, "\n");
        printf("  w = %g: probe-FD %.2f, class accuracy %.3f (%.0f s)\n", w[i], fd, acc, wall_seconds() - t0);
        fflush(stdout);
        table_cell(&tab, "%g", w[i]);
        table_cell(&tab, "%d", flow_guided_rows(1, w[i]));
        table_cell(&tab, "%.2f", fd);
        table_cell(&tab, "%.3f", acc);
        table_cell(&tab, "%.0f", wall_seconds() - t0);
    }
    if (rc == 0 && write_file_atomic(o->out, tsv, len, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        rc = -1;
    }
    if (rc == 0) {
        printf("\n");
        table_print(&tab);
        printf("\nwritten: %s\n", o->out);
    } else if (!tsv) {
        fprintf(stderr, "error: out of memory\n");
    }
    free(tsv);
    sweep_free(&s);
    return rc == 0 ? 0 : 1;
}
