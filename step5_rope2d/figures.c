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
    FigureScript script;                 // the gnuplot script, grown as it is written
    if (figure_script_open(&script, err, errlen) != 0) return -1;
    FILE *gp = script.f;
    fprintf(gp,
        "set datafile separator '\\t'\n"
        "set multiplot layout 2,2 title \"RoPE: q.k depends only on the offset from q to k, so the same cell has the same colour wherever q sits\\n"
        "(one random q and k, head\\\\_dim %d, seed %d, base %g; the box is 1 down, 2 right)\" font ',11'\n"
        "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n"
        "set cbrange [%g:%g]\n"
        "set cblabel 'score q.k'\n"
        "set xrange [%g:%g]\nset yrange [%g:%g]\n"   // rows grow downwards, as on the image
        "set xtics 2\nset ytics 2\nset size ratio -1\n"
        "set xlabel 'column offset (k right of q)'\nset ylabel 'row offset (k below q)'\n"
        "set object 1 rect from 1.5,0.5 to 2.5,1.5 front fillstyle empty border lc rgb 'red' lw 2\n"
        "set label 1 'q' at 0,0 center front font ',10' tc rgb 'white'\n",
        t.hd, seed, t.base, smin, smax, -(G - 0.5), G - 0.5, G - 0.5, -(G - 0.5));
    for (int p = 0; p < NPANELS; p++)
        fprintf(gp, "set title 'q at (%d,%d), k at each of the %d slots'\n"
            "plot '%s.tsv' index %d using 2:1:3 with image notitle\n",
            query_slot[p][0], query_slot[p][1], G * G, name, p);
    fprintf(gp, "set title \"all %d x %d pairs of slots, by offset: the mean\\n(the scores at one offset differ by at most %.1e)\"\n"
        "plot '%s.tsv' index %d using 2:1:3 with image notitle\n"
        "unset multiplot\n",
        G * G, G * G, spread, name, NPANELS);
    return figure_script_draw(&script, dir, name, 800, 760, err, errlen);
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
    FigureScript script;                 // the gnuplot script, grown as it is written
    if (figure_script_open(&script, err, errlen) != 0) return -1;
    FILE *gp = script.f;
    fprintf(gp,
        "set datafile separator '\\t'\n"
        "set multiplot layout 1,2 title 'The angle of each row pair at each row of the grid: a pair that stays under 10° can barely tell rows apart' font ',11'\n"
        "set logscale y\nset yrange [0.01:1000]\nset xrange [0.8:%d.2]\nset xtics 1\n"
        "set format y '%%g'\n"
        "set grid lc rgb '#dddddd'\n"
        "set xlabel 'row of the token (steps from row 0, where every angle is 0)'\n"
        "set ylabel 'angle of the pair (degrees, log scale)'\n"
        "set key bottom right font ',9' maxrows 3 box opaque\n"
        "set palette defined (0 '#440154', 0.5 '#21918c', 1 '#fde725')\nunset colorbox\n",
        G - 1);
    for (int b = 0; b < 2; b++) {
        char base[32];
        fprintf(gp, "set title 'base %s: %d of %d pairs turn less than 10° by row %d'\n"
            "plot 10 lc rgb '#999999' dt 2 lw 2 title '10°'",
            base_text(base, sizeof base, angle_base[b]), slow[b], Q, G - 1);
        for (int i = 0; i < Q; i++) {   // the legend names the pairs once, on the left
            char title[32] = "notitle";
            if (b == 0) snprintf(title, sizeof title, "title 'pair %d'", i);
            fprintf(gp, ", \\\n     '%s.tsv' index %d every ::1 using 1:%d with linespoints pt 7 ps 0.6 lw 2 lc palette frac %g %s",
                name, b, i + 2, Q > 1 ? (double)i / (Q - 1) : 0.0, title);
        }
        fprintf(gp, "\nunset key\n");
    }
    fprintf(gp, "unset multiplot\n");
    return figure_script_draw(&script, dir, name, 900, 450, err, errlen);
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
