// figures.c: step 2's pictures (see figures.h). The numbers come in from
// main.c; this file only bins them, writes them down and styles the plot.
#include "figures.h"
#include "nn/errors.h"
#include "io/figure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BIN_WIDTH 0.1
#define PLOTS "step2_rmsnorm/plots"   // the gnuplot scripts

static double mean_of(const float *y, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += y[i];
    return s / (double)n;
}

// Counts y (n) into nbins bins of BIN_WIDTH from lo, as a density: the
// fraction of the values per unit of output, so the area under each
// histogram is 1.
static void histogram(double *density, int nbins, double lo, const float *y, size_t n) {
    for (int b = 0; b < nbins; b++) density[b] = 0.0;
    for (size_t i = 0; i < n; i++) {
        int b = (int)floor((y[i] - lo) / BIN_WIDTH);
        if (b < 0) b = 0;
        if (b >= nbins) b = nbins - 1;
        density[b] += 1.0;
    }
    for (int b = 0; b < nbins; b++) density[b] /= (double)n * BIN_WIDTH;
}

// Writes dir/step2_norm_outputs.tsv: one row per bin, its centre and the two
// densities. The range covers both sets of outputs, in steps of 0.5.
static int write_histograms(const char *dir, const float *y_ln, const float *y_rms, size_t n,
                            char *err, size_t errlen) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, fmin(y_ln[i], y_rms[i]));
        hi = fmax(hi, fmax(y_ln[i], y_rms[i]));
    }
    lo = floor(lo * 2.0) / 2.0;
    hi = ceil(hi * 2.0) / 2.0;
    int nbins = (int)lround((hi - lo) / BIN_WIDTH);
    if (nbins < 1) nbins = 1;
    double *d_ln = malloc(sizeof(double) * nbins), *d_rms = malloc(sizeof(double) * nbins);
    if (!d_ln || !d_rms) {
        free(d_ln); free(d_rms);
        return errorf(err, errlen, "out of memory for %d histogram bins", nbins);
    }
    FILE *f = figure_data_open(dir, "step2_norm_outputs", err, errlen);
    if (!f) { free(d_ln); free(d_rms); return -1; }
    histogram(d_ln, nbins, lo, y_ln, n);
    histogram(d_rms, nbins, lo, y_rms, n);
    fprintf(f, "# %zu outputs of each norm for the same tokens x = 3*N(0,1) + 1, in bins of %.1f\n"
               "# bin_centre\tlayernorm_density\trmsnorm_density\n", n, BIN_WIDTH);
    for (int b = 0; b < nbins; b++)
        fprintf(f, "%.3f\t%.6f\t%.6f\n", lo + (b + 0.5) * BIN_WIDTH, d_ln[b], d_rms[b]);
    free(d_ln); free(d_rms);
    if (figure_data_close(f, dir, "step2_norm_outputs", err, errlen) != 0) return -1;
    return 0;
}

int figure_norm_outputs(const char *dir, const float *y_ln, const float *y_rms, size_t n,
                        char *err, size_t errlen) {
    if (write_histograms(dir, y_ln, y_rms, n, err, errlen) != 0) return -1;
    double m_ln = mean_of(y_ln, n), m_rms = mean_of(y_rms, n);
    if (fabs(m_ln) < 5e-4) m_ln = 0.0;   // so the label reads 0.000, not -0.000
    if (fabs(m_rms) < 5e-4) m_rms = 0.0;
    char vars[256];
    snprintf(vars, sizeof vars, "m_ln = %.6f\nm_rms = %.6f", m_ln, m_rms);
    return figure_plot(dir, PLOTS, "step2_norm_outputs", 800, 450, vars, err, errlen);
}

int figure_norm_times(const char *dir, const NormTimings *t, char *err, size_t errlen) {
    FILE *f = figure_data_open(dir, "step2_norm_times", err, errlen);
    if (!f) return -1;
    fprintf(f, "# milliseconds per call on (%d, %d) tokens, %d thread%s, median of %d turns\n"
               "# pass\tlayernorm_ms\trmsnorm_ms\n"
               "forward\t%.4f\t%.4f\nbackward\t%.4f\t%.4f\n",
            t->R, t->D, t->threads, t->threads == 1 ? "" : "s", t->rounds,
            t->ms[0], t->ms[1], t->ms[2], t->ms[3]);
    if (figure_data_close(f, dir, "step2_norm_times", err, errlen) != 0) return -1;

    char vars[256];
    snprintf(vars, sizeof vars, "R = %d\nD = %d\nthreads = %d\nrounds = %d\nratio_forward = %.6f\nratio_backward = %.6f",
             t->R, t->D, t->threads, t->rounds, t->ms[1] / t->ms[0], t->ms[3] / t->ms[2]);
    return figure_plot(dir, PLOTS, "step2_norm_times", 800, 450, vars, err, errlen);
}

// The pictures, from this run's numbers: the outputs of section 1 and the
// times of section 3. 0, or 1 after a message on stderr.
int step2_draw_figures(const char *dir, const float *y_ln, const float *y_rms, size_t n, const NormTimings *tm) {
    char err[512];
    FigureTally t = { 0 };
    if (figure_tally_add(&t, figure_norm_outputs(dir, y_ln, y_rms, n, err, sizeof err), "step2_rmsnorm", err) < 0 ||
        figure_tally_add(&t, figure_norm_times(dir, tm, err, sizeof err), "step2_rmsnorm", err) < 0)
        return 1;
    figure_tally_report(stdout, &t, dir);
    return 0;
}

