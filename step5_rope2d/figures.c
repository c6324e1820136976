// figures.c: step 5's pictures (see figures.h).
#include "figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "nn/errors.h"
#include "io/figure.h"
#include "nn/config.h"
#include "nn/layers.h"
#include "rope_probe.h"
#include "step5.h"

#define PLOTS "step5_rope2d/plots"   // the gnuplot scripts

// The model's sizes and its tables for one base.
typedef struct {
    int grid, L, hd, quarter;
    float base;
    float *cos_t, *sin_t;    // (L, hd) each
} Tables;

static int tables_make(Tables *t, float base, char *err, size_t errlen) {
    ModelConfig c = model_config_default();
    t->grid = cfg_grid(&c); t->L = cfg_tokens(&c); t->hd = cfg_head_dim(&c); t->quarter = t->hd / 4;
    t->base = base;
    t->cos_t = malloc(sizeof(float) * t->L * t->hd);
    t->sin_t = malloc(sizeof(float) * t->L * t->hd);
    if (!t->cos_t || !t->sin_t) { free(t->cos_t); free(t->sin_t); return errorf(err, errlen, "out of memory"); }
    rope2d_tables(t->cos_t, t->sin_t, t->grid, t->hd, base, 0);
    return 0;
}

static void tables_free(Tables *t) { free(t->cos_t); free(t->sin_t); }

// ---------------------------------------------------------------------------
// Scores. Panels 0-2: q at one slot, k at each of the 64 slots, drawn at the
// offset (k's row - q's row, k's column - q's column). Panel 3: all 64 × 64
// pairs of slots, each offset's mean, and the largest spread within an offset.
enum { NPANELS = 3, MAXG = 16 };
static const int query_slot[NPANELS][2] = { {0, 0}, {3, 4}, {6, 5} };   // section 2's three q slots

// Writes the four blocks of data; returns the range of the scores in
// [*smin, *smax] and the largest spread within one offset in *spread.
static int write_scores(const char *dir, const char *name, const Tables *t, const float *q, const float *k,
                        double *smin, double *smax, double *spread, char *err, size_t errlen) {
    const int G = t->grid, W = 2 * G - 1;
    if (G > MAXG) return errorf(err, errlen, "grid %d is larger than %d", G, MAXG);
    FILE *f = figure_data_open(dir, name, err, errlen);
    if (!f) return -1;
    *smin = INFINITY; *smax = -INFINITY; *spread = 0.0;
    for (int p = 0; p < NPANELS; p++) {
        int rq = query_slot[p][0], cq = query_slot[p][1];
        fprintf(f, "%s# q at (%d,%d): row offset\tcolumn offset\tscore q.k\n", p ? "\n\n" : "", rq, cq);
        for (int rk = 0; rk < G; rk++) {
            for (int ck = 0; ck < G; ck++)
                fprintf(f, "%d\t%d\t%.6f\n", rk - rq, ck - cq, rope_score(q, k, t->cos_t, t->sin_t, G, t->hd, rq, cq, rk, ck));
            fprintf(f, "\n");
        }
    }
    // every pair of slots, gathered by offset
    double lo[2 * MAXG - 1][2 * MAXG - 1], hi[2 * MAXG - 1][2 * MAXG - 1], sum[2 * MAXG - 1][2 * MAXG - 1];
    int n[2 * MAXG - 1][2 * MAXG - 1] = {{0}};
    for (int iq = 0; iq < G * G; iq++)
        for (int ik = 0; ik < G * G; ik++) {
            int dr = ik / G - iq / G + G - 1, dc = ik % G - iq % G + G - 1;
            double s = rope_score(q, k, t->cos_t, t->sin_t, G, t->hd, iq / G, iq % G, ik / G, ik % G);
            if (n[dr][dc]++ == 0) { lo[dr][dc] = hi[dr][dc] = sum[dr][dc] = s; continue; }
            lo[dr][dc] = fmin(lo[dr][dc], s); hi[dr][dc] = fmax(hi[dr][dc], s); sum[dr][dc] += s;
        }
    fprintf(f, "\n\n# every q slot: row offset\tcolumn offset\tmean score\tmax - min over the pairs\tpairs\n");
    for (int dr = 0; dr < W; dr++) {
        for (int dc = 0; dc < W; dc++) {
            double mean = sum[dr][dc] / n[dr][dc];
            *smin = fmin(*smin, lo[dr][dc]);
            *smax = fmax(*smax, hi[dr][dc]);
            *spread = fmax(*spread, hi[dr][dc] - lo[dr][dc]);
            fprintf(f, "%d\t%d\t%.6f\t%.3g\t%d\n", dr - (G - 1), dc - (G - 1), mean, hi[dr][dc] - lo[dr][dc], n[dr][dc]);
        }
        fprintf(f, "\n");
    }
    return figure_data_close(f, dir, name, err, errlen);
}

static int scores_figure(const char *dir, const float *q, const float *k, int seed, char *err, size_t errlen) {
    const char *name = "step5_scores";
    Tables t;
    if (tables_make(&t, model_config_default().rope_base, err, errlen) != 0) return -1;
    double smin = 0.0, smax = 0.0, spread = 0.0;
    int rc = write_scores(dir, name, &t, q, k, &smin, &smax, &spread, err, errlen);
    const int G = t.grid;
    tables_free(&t);
    if (rc != 0) return -1;
    char vars[512];
    snprintf(vars, sizeof vars, "G = %d\nhead_dim = %d\nseed = %d\nbase = %g\nsmin = %g\nsmax = %g\nspread = %g\n"
             "array q_row[%d] = [%d, %d, %d]\narray q_col[%d] = [%d, %d, %d]", G, t.hd, seed, t.base, smin, smax, spread,
             NPANELS, query_slot[0][0], query_slot[1][0], query_slot[2][0],
             NPANELS, query_slot[0][1], query_slot[1][1], query_slot[2][1]);
    return figure_plot(dir, PLOTS, name, 800, 760, vars, err, errlen);
}

// ---------------------------------------------------------------------------
// Angles. Row pair i at rows 0..7 (column 0), for base 100 and base 10,000,
// read back from each base's tables. atan2 gives an angle in (-pi, pi], so a
// pair that has turned further is followed row by row: one step turns it by
// base^(-i/quarter) <= 1 radian, less than pi, so the step is the wrapped
// difference of two readings.
static const float angle_base[2] = { 100.0f, 10000.0f };

// 100 as "100", 10000 as "10,000".
static const char *base_text(char *out, size_t outlen, float base) {
    long b = (long)base;
    if ((float)b != base || b < 1000) snprintf(out, outlen, "%g", base);
    else snprintf(out, outlen, "%ld,%03ld", b / 1000, b % 1000);
    return out;
}

static double wrap_pi(double a) { return a - 2.0 * M_PI * floor((a + M_PI) / (2.0 * M_PI)); }

// deg[b][r][i]: base b, row r, pair i, in degrees. slow[b]: the pairs that turn
// less than 10 degrees from row 0 to the last row.
enum { MAXQ = 64 };
static int read_angles(double deg[2][MAXG][MAXQ], int slow[2], int *grid, int *quarter, char *err, size_t errlen) {
    for (int b = 0; b < 2; b++) {
        Tables t;
        if (tables_make(&t, angle_base[b], err, errlen) != 0) return -1;
        if (t.grid > MAXG || t.quarter > MAXQ) { tables_free(&t); return errorf(err, errlen, "grid or head_dim too large"); }
        *grid = t.grid; *quarter = t.quarter;
        slow[b] = 0;
        for (int i = 0; i < t.quarter; i++) {
            double angle = 0.0, last = 0.0;
            for (int r = 0; r < t.grid; r++) {
                double read = table_angle(t.cos_t, t.sin_t, t.hd, r * t.grid, i);   // token (r, 0)
                angle += wrap_pi(read - last);
                last = read;
                deg[b][r][i] = angle * 180.0 / M_PI;
            }
            if (deg[b][t.grid - 1][i] < 10.0) slow[b]++;
        }
        tables_free(&t);
    }
    return 0;
}

static int angles_figure(const char *dir, char *err, size_t errlen) {
    const char *name = "step5_angles";
    static double deg[2][MAXG][MAXQ];
    int slow[2] = {0, 0}, G = 0, Q = 0;
    if (read_angles(deg, slow, &G, &Q, err, errlen) != 0) return -1;
    FILE *f = figure_data_open(dir, name, err, errlen);
    if (!f) return -1;
    for (int b = 0; b < 2; b++) {
        fprintf(f, "%s# base %g: row", b ? "\n\n" : "", angle_base[b]);
        for (int i = 0; i < Q; i++) fprintf(f, "\tpair %d (deg)", i);
        fprintf(f, "\n");
        for (int r = 0; r < G; r++) {
            fprintf(f, "%d", r);
            for (int i = 0; i < Q; i++) fprintf(f, "\t%.6g", deg[b][r][i]);
            fprintf(f, "\n");
        }
    }
    if (figure_data_close(f, dir, name, err, errlen) != 0) return -1;
    char vars[256], base[2][32];
    snprintf(vars, sizeof vars, "G = %d\nQ = %d\narray base_text[2] = ['%s', '%s']\narray slow[2] = [%d, %d]", G, Q,
             base_text(base[0], sizeof base[0], angle_base[0]), base_text(base[1], sizeof base[1], angle_base[1]),
             slow[0], slow[1]);
    return figure_plot(dir, PLOTS, name, 900, 450, vars, err, errlen);
}

int step5_figures(const char *dir, const float *q, const float *k, int seed, int *drawn,
                  char *err, size_t errlen) {
    FigureTally t = { 0 };
    if (figure_tally_add(&t, scores_figure(dir, q, k, seed, err, errlen), NULL, err) < 0) return -1;
    if (figure_tally_add(&t, angles_figure(dir, err, errlen), NULL, err) < 0) return -1;
    *drawn = t.drawn;
    return t.no_gnuplot ? FIGURE_NO_GNUPLOT : 0;
}

int step5_draw_figures(const char *dir, const float *q, const float *k, int seed) {
    char err[512];
    int drawn = 0, rc = step5_figures(dir, q, k, seed, &drawn, err, sizeof err);
    if (rc < 0) { fprintf(stderr, "step5_rope2d: figures: %s\n", err); return 1; }
    figure_report(stdout, dir, drawn, rc == FIGURE_NO_GNUPLOT);
    return 0;
}
