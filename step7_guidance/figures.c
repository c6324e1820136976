// figures.c: step 7's pictures.
//   step7_grid    a sample of each class (rows) at each w of GRID_W (columns),
//                 a PNG written with stb_image_write, as a run's samples.png
//   step7_curves  `curves`: probe-FD and class accuracy against w, from the
//                 sweeps' .tsv files, each configuration's mean over its
//                 seeds with bars from the lowest seed to the highest
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stb_image_write.h>   // its implementation: common/train/run_metrics.c
#include "step7.h"
#include "eval/probe.h"
#include "eval/scorecard.h"
#include "io/bench.h"
#include "io/cifar.h"
#include "io/figure.h"
#include "io/metrics.h"
#include "io/fileio.h"
#include "nn/errors.h"
#include "nn/flow.h"
#include "nn/rng.h"

#define PLOTS "step7_guidance/plots"

int grid_samples(Model *m, float *grid, char *err, size_t errlen) {
    enum { K = 10 };
    size_t per = cfg_image_floats(&m->cfg);
    float *noise = malloc(sizeof(float) * per * K), *x = malloc(sizeof(float) * per * K);
    int y[K];
    for (int k = 0; k < K; k++) y[k] = k;
    Activations a;
    if (!noise || !x || activations_alloc(&a, m, 2 * K, false) != 0) {
        free(noise); free(x);
        return errorf(err, errlen, "out of memory for the grid's samples");
    }
    Rng r;
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, noise, (long)(per * K), 1.0f);
    int rc = 0;
    for (int j = 0; j < GRID_W_COUNT && rc == 0; j++) {
        memcpy(x, noise, sizeof(float) * per * K);   // every column from the same noise
        rc = flow_sample_with(m, &a, x, y, K, GRID_W[j], SAMPLER_EULER, GRID_STEPS, err, errlen);
        for (int k = 0; k < K; k++) memcpy(grid + per * ((size_t)k * GRID_W_COUNT + j), x + per * k, sizeof(float) * per);
    }
    activations_free(&a);
    free(noise); free(x);
    return rc;
}

int grid_probe_classes(const float *grid, uint8_t *seen, char *err, size_t errlen) {
    Probe *probe = probe_for_scoring(0, err, errlen);
    if (!probe) return -1;
    probe_predict(probe, grid, 10 * GRID_W_COUNT, seen);
    probe_free(probe);
    return 0;
}

void grid_table_print(const uint8_t *seen) {
    Table tab;
    table_init(&tab, 1 + GRID_W_COUNT, "asked for", "w = 0", "w = 1", "w = 2", "w = 4", "w = 6");
    int right[GRID_W_COUNT] = {0};
    for (int y = 0; y < 10; y++) {
        table_cell(&tab, "%s", CIFAR_CLASS[y]);
        for (int k = 0; k < GRID_W_COUNT; k++) {
            int c = seen[y * GRID_W_COUNT + k];
            right[k] += c == y;
            table_cell(&tab, "%s%s", CIFAR_CLASS[c], c == y ? " *" : "");
        }
    }
    table_cell(&tab, "right (*)");
    for (int k = 0; k < GRID_W_COUNT; k++) table_cell(&tab, "%d of %d", right[k], 10);
    table_print(&tab);
}

// The PNG's bytes, as stb_image_write hands them over.
typedef struct { unsigned char *data; size_t len, cap; int failed; } Bytes;
static void bytes_append(void *ctx, void *data, int size) {
    Bytes *b = ctx;
    if (b->failed) return;
    if (b->len + size > b->cap) {
        size_t cap = 2 * (b->len + size);
        unsigned char *grown = realloc(b->data, cap);
        if (!grown) { b->failed = 1; return; }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, (size_t)size);
    b->len += (size_t)size;
}

int grid_write_png(const char *dir, const float *grid, int C, int S, char *err, size_t errlen) {
    enum { ROWS = 10, ZOOM = 2, GAP = 4 };
    const int cols = GRID_W_COUNT, P = S * ZOOM;
    int W = cols * P + (cols + 1) * GAP, H = ROWS * P + (ROWS + 1) * GAP;
    unsigned char *img = malloc((size_t)W * H * 3);
    if (!img) return errorf(err, errlen, "out of memory for the grid's picture");
    memset(img, 255, (size_t)W * H * 3);   // white gaps
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < cols; c++) {
            const float *x = grid + (size_t)(r * cols + c) * C * S * S;
            for (int yy = 0; yy < P; yy++)
                for (int xx = 0; xx < P; xx++)
                    for (int ch = 0; ch < 3; ch++) {
                        size_t at = ((size_t)(GAP + r * (P + GAP) + yy) * W + GAP + c * (P + GAP) + xx) * 3 + ch;
                        img[at] = cifar_pixel_byte(x[((size_t)(C == 3 ? ch : 0) * S + yy / ZOOM) * S + xx / ZOOM]);
                    }
        }
    Bytes png = { NULL, 0, 0, 0 };
    int ok = stbi_write_png_to_func(bytes_append, &png, W, H, 3, img, W * 3);
    free(img);
    char path[4096];
    snprintf(path, sizeof path, "%s/step7_grid.png", dir);
    if (!ok || png.failed || !png.data) { free(png.data); return errorf(err, errlen, "cannot encode %s", path); }
    int rc = make_dirs(dir, err, errlen) == 0 ? write_file_atomic(path, png.data, png.len, err, errlen) : -1;
    free(png.data);
    if (rc == 0) printf("figure: %s (rows: the classes in label order; columns: w = 0, 1, 2, 4, 6)\n\n", path);
    return rc;
}

// ---------------------------------------------------------------------------
// curves

enum { MAX_CONFIGS = 8, MAX_SEEDS = 16 };

typedef struct {
    char name[128];                          // the run's folder less its _sN
    int n_seeds, n_w;
    float w[SWEEP_MAX_W];
    double fd[MAX_SEEDS][SWEEP_MAX_W], acc[MAX_SEEDS][SWEEP_MAX_W];
    double val[MAX_SEEDS];                   // val MSE of the seeds whose folder has a metrics.json
    int n_val;
} Curve;

// The configuration a sweep belongs to: its folder's name (RUN/guidance.tsv),
// or the file's own (NAME.tsv), less a final _sN.
static void config_name(const char *path, char *out, size_t n) {
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = strlen(base);
    if (!strcmp(base, "guidance.tsv") && base > path) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/') start--;
        len = (size_t)(end - start);
        base = start;
    } else if (len > 4 && !strcmp(base + len - 4, ".tsv")) {
        len -= 4;
    }
    snprintf(out, n, "%.*s", (int)len, base);
    char *s = strrchr(out, '_');
    if (s && s[1] == 's' && s[2] && strspn(s + 2, "0123456789") == strlen(s + 2)) *s = '\0';
}

// One sweep's lines into the next seed of its curve. 0, or -1 with err.
static int read_sweep(const char *path, Curve *c, char *err, size_t errlen) {
    if (c->n_seeds == MAX_SEEDS) return errorf(err, errlen, "%s: more than %d seeds of %s", path, MAX_SEEDS, c->name);
    FILE *f = fopen_regular(path, err, errlen);
    if (!f) return -1;
    char line[1024];
    int n = 0, s = c->n_seeds;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        float w;
        double fd, acc;
        if (sscanf(line, "%f\t%lf\t%lf", &w, &fd, &acc) != 3 || n == SWEEP_MAX_W) {
            fclose(f);
            return errorf(err, errlen, "%s: line %d is not `w probe_fd class_acc ...` (a step7_guidance sweep)", path,
                          n + 1);
        }
        if (s > 0 && (n >= c->n_w || c->w[n] != w)) {
            fclose(f);
            return errorf(err, errlen, "%s: its w differ from the other seeds' of %s", path, c->name);
        }
        c->w[n] = w;
        c->fd[s][n] = fd;
        c->acc[s][n] = acc;
        n++;
    }
    fclose(f);
    if (n == 0 || (s > 0 && n != c->n_w)) return errorf(err, errlen, "%s: %s", path, n ? "fewer w than the other seeds'" : "no lines");
    c->n_w = n;
    c->n_seeds++;
    // the run's own scorecard beside its sweep (RUN/metrics.json): its val MSE
    size_t len = strlen(path);
    if (len >= 12 && !strcmp(path + len - 12, "guidance.tsv")) {
        char metrics[1024];
        snprintf(metrics, sizeof metrics, "%.*smetrics.json", (int)(len - 12), path);
        RunMetrics m;
        char why[METRICS_ERRLEN];
        if (access(metrics, F_OK) == 0 && metrics_read(metrics, &m, why, sizeof why) == 0 && isfinite(m.val_mse))
            c->val[c->n_val++] = m.val_mse;
    }
    return 0;
}

static void mean_min_max(const double v[][SWEEP_MAX_W], int seeds, int i, double *mean, double *lo, double *hi) {
    *mean = 0; *lo = v[0][i]; *hi = v[0][i];
    for (int s = 0; s < seeds; s++) {
        *mean += v[s][i] / seeds;
        *lo = v[s][i] < *lo ? v[s][i] : *lo;
        *hi = v[s][i] > *hi ? v[s][i] : *hi;
    }
}

// One measure of a configuration at sweep column i, over its seeds.
static SeedSpread spread_at(const double v[][SWEEP_MAX_W], int seeds, int i) {
    double x[MAX_SEEDS];
    for (int s = 0; s < seeds; s++) x[s] = v[s][i];
    return seed_spread(x, seeds);
}

static int column_of(const Curve *c, float w) {
    for (int i = 0; i < c->n_w; i++)
        if (c->w[i] == w) return i;
    return -1;
}

// The verdict of one configuration against the baseline at column i (the
// same w in both): probe-FD lower is a gain; class accuracy higher is, so
// its means go in the other way round.
static void verdict_cells(Table *t, const Curve *c, const Curve *base, int i) {
    int j = column_of(base, c->w[i]);
    if (c == base || j < 0) { table_cell(t, "-"); table_cell(t, "-"); return; }
    Comparison fd, acc;
    compare_means(spread_at(c->fd, c->n_seeds, i), spread_at(base->fd, base->n_seeds, j), &fd);
    compare_means(spread_at(base->acc, base->n_seeds, j), spread_at(c->acc, c->n_seeds, i), &acc);
    table_cell(t, "%+.2f %s", fd.diff, fd.verdict);
    table_cell(t, "%+.3f %s", -acc.diff, acc.verdict);
}

// The val MSE (it does not depend on w: on a configuration's first row
// only), or its verdict against the baseline's.
static void val_cell(Table *t, const Curve *c, const Curve *base, bool first_row, bool verdict) {
    if (!first_row || c->n_val == 0) { table_cell(t, first_row ? "-" : ""); return; }
    SeedSpread v = seed_spread(c->val, c->n_val);
    if (!verdict) { table_cell(t, "%.4f +- %.4f", v.mean, v.sd); return; }
    if (c == base || base->n_val == 0) { table_cell(t, "-"); return; }
    Comparison cmp;
    compare_means(v, seed_spread(base->val, base->n_val), &cmp);
    table_cell(t, "%+.4f %s", cmp.diff, cmp.verdict);
}

// Each configuration at w = 1, at the w of its lowest probe-FD and at the w
// of its highest class accuracy, with step 6's verdict against the baseline
// (the configuration named *_base, else the first) at the same w.
static void print_sweep_table(const Curve *curves, int n) {
    const Curve *base = &curves[0];
    for (int c = 0; c < n; c++) {
        size_t len = strlen(curves[c].name);
        if (len >= 5 && !strcmp(curves[c].name + len - 5, "_base")) base = &curves[c];
    }
    Table t;
    table_init(&t, 10, "configuration", "seeds", "w", "why this w", "val MSE", "probe-FD", "class accuracy",
               "val MSE vs base", "probe-FD vs base", "class accuracy vs base");
    for (int c = 0; c < n; c++) {
        const Curve *k = &curves[c];
        int one = column_of(k, 1.0f), low_fd = 0, high_acc = 0;
        SeedSpread fd[SWEEP_MAX_W], acc[SWEEP_MAX_W];
        for (int i = 0; i < k->n_w; i++) {
            fd[i] = spread_at(k->fd, k->n_seeds, i);
            acc[i] = spread_at(k->acc, k->n_seeds, i);
            if (fd[i].mean < fd[low_fd].mean) low_fd = i;
            if (acc[i].mean > acc[high_acc].mean) high_acc = i;
        }
        int cols[3] = { one, low_fd, high_acc };
        const char *why[3] = { "the run's", "lowest probe-FD", "highest accuracy" };
        for (int r = 0; r < 3; r++) {
            int i = cols[r];
            if (i < 0 || (r > 0 && i == cols[0]) || (r == 2 && i == cols[1])) continue;
            table_cell(&t, "%s", r == 0 || (r == 1 && one < 0) ? k->name : "");
            table_cell(&t, "%d", k->n_seeds);
            table_cell(&t, "%g", k->w[i]);
            table_cell(&t, "%s%s%s", why[r], r == 1 && i == high_acc ? ", highest accuracy" : "",
                       r == 0 && i == low_fd ? ", lowest probe-FD" : "");
            val_cell(&t, k, base, r == 0 || (r == 1 && one < 0), false);
            table_cell(&t, "%.2f +- %.2f", fd[i].mean, fd[i].sd);
            table_cell(&t, "%.3f +- %.3f", acc[i].mean, acc[i].sd);
            val_cell(&t, k, base, r == 0 || (r == 1 && one < 0), true);
            verdict_cells(&t, k, base, i);
        }
    }
    printf("guidance sweeps: each configuration's mean over its seeds +- their spread; its verdict against\n"
           "%s at the same w (step 6's rule: a gain or a loss beyond %.0f standard errors)\n\n", base->name,
           COMPARE_SE);
    table_print(&t);
    printf("\n");
}

int cmd_curves(const Options *o) {
    char err[ERRLEN];
    Curve *curves = calloc(MAX_CONFIGS, sizeof *curves);
    int n = 0, rc = curves ? 0 : -1;
    for (int i = 1; i < o->nwords && rc == 0; i++) {
        char name[128];
        config_name(o->words[i], name, sizeof name);
        int c = 0;
        while (c < n && strcmp(curves[c].name, name)) c++;
        if (c == n && n == MAX_CONFIGS) { rc = errorf(err, sizeof err, "more than %d configurations", MAX_CONFIGS); break; }
        if (c == n) snprintf(curves[n++].name, sizeof curves->name, "%s", name);
        rc = read_sweep(o->words[i], &curves[c], err, sizeof err);
    }
    if (rc == 0) print_sweep_table(curves, n);
    FILE *f = rc == 0 ? figure_data_open(o->figures, "step7_curves", err, sizeof err) : NULL;
    if (f) {
        fprintf(f, "# each configuration a block: w, then probe-FD and class accuracy, each as the mean over the\n"
                   "# seeds, the lowest seed's and the highest seed's\n");
        for (int c = 0; c < n; c++) {
            fprintf(f, "%s# %s (%d seed%s)\n# w\tprobe_fd\tlowest\thighest\tclass_acc\tlowest\thighest\n", c ? "\n\n" : "",
                    curves[c].name, curves[c].n_seeds, curves[c].n_seeds == 1 ? "" : "s");
            for (int i = 0; i < curves[c].n_w; i++) {
                double m1, l1, h1, m2, l2, h2;
                mean_min_max(curves[c].fd, curves[c].n_seeds, i, &m1, &l1, &h1);
                mean_min_max(curves[c].acc, curves[c].n_seeds, i, &m2, &l2, &h2);
                fprintf(f, "%g\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n", curves[c].w[i], m1, l1, h1, m2, l2, h2);
            }
        }
        rc = figure_data_close(f, o->figures, "step7_curves", err, sizeof err);
    } else if (rc == 0) {
        rc = -1;
    }
    if (rc == 0) {
        char vars[4096], seeds[256] = "";
        int len = snprintf(vars, sizeof vars, "n_configs = %d\nnames = \"", n);
        for (int c = 0; c < n; c++) {
            len += snprintf(vars + len, sizeof vars - len, "%s%s", c ? " " : "", curves[c].name);
            snprintf(seeds + strlen(seeds), sizeof seeds - strlen(seeds), "%s%d", c ? " " : "", curves[c].n_seeds);
        }
        snprintf(vars + len, sizeof vars - len, "\"\nseeds = \"%s\"", seeds);
        int drawn = figure_plot(o->figures, PLOTS, "step7_curves", 1100, 450, vars, err, sizeof err);
        if (drawn < 0) rc = -1;
        else figure_report(stdout, o->figures, drawn == 0, drawn == FIGURE_NO_GNUPLOT);
    }
    if (rc != 0) fprintf(stderr, "error: %s\n", curves ? err : "out of memory");
    free(curves);
    return rc == 0 ? 0 : 1;
}
