// figures.c: step 2's pictures (see figures.h). The numbers come in from
// main.c; this file only bins them, writes them down and styles the plot.
#include "figures.h"
#include "nn/errors.h"
#include "io/figure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BIN_WIDTH 0.1

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
    char script[4096];
    snprintf(script, sizeof script,
        "set title \"The same shifted tokens through both norms: LayerNorm centres them on 0,\\n"
        "RMSNorm keeps their mean (%.3f), scaled like the rest\"\n"
        "set xlabel 'output value (dimensionless: each token divided by its std or its RMS)'\n"
        "set ylabel 'density (fraction of outputs per unit)'\n"
        "set key top right box opaque\n"
        "set grid ytics lc rgb '#dddddd'\n"
        "set yrange [0:*]\n"
        "set offsets 0, 0, graph 0.08, 0\n"
        "set style fill transparent solid 0.35 noborder\n"
        "set arrow 1 from %.4f, graph 0 to %.4f, graph 0.92 nohead lw 2 dt 2 lc rgb '#1f5fa0' front\n"
        "set arrow 2 from %.4f, graph 0 to %.4f, graph 0.92 nohead lw 2 dt 2 lc rgb '#c05000' front\n"
        "set label 1 sprintf('LayerNorm mean %%.3f', %.6f) at %.4f, graph 0.95 right offset -0.5,0 "
        "tc rgb '#1f5fa0' front\n"
        "set label 2 sprintf('RMSNorm mean %%.3f', %.6f) at %.4f, graph 0.95 left offset 0.5,0 "
        "tc rgb '#c05000' front\n"
        "plot 'step2_norm_outputs.tsv' using 1:2 with boxes lc rgb '#1f5fa0' notitle, \\\n"
        "     '' using 1:2 with histeps lw 2 lc rgb '#1f5fa0' title 'LayerNorm(x)', \\\n"
        "     '' using 1:3 with boxes lc rgb '#c05000' notitle, \\\n"
        "     '' using 1:3 with histeps lw 2 lc rgb '#c05000' title 'RMSNorm(x)'\n",
        m_rms, m_ln, m_ln, m_rms, m_rms, m_ln, m_ln, m_rms, m_rms);
    return figure_draw(dir, "step2_norm_outputs", 800, 450, script, err, errlen);
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

    char script[4096];
    snprintf(script, sizeof script,
        "set title \"Time per call on (%d, %d) tokens, %d thread%s, median of %d turns:\\n"
        "RMSNorm takes %.2fx LayerNorm's time forward and %.2fx backward\"\n"
        "set ylabel 'milliseconds per call'\n"
        "set style data histograms\n"
        "set style histogram clustered gap 1\n"
        "set style fill solid 0.85 border -1\n"
        "set boxwidth 0.9\n"
        "set key top right box opaque width 1\n"
        "set grid ytics lc rgb '#dddddd'\n"
        "set yrange [0:*]\n"
        "set xrange [-0.6:1.6]\n"
        "set offsets 0, 0, graph 0.15, 0\n"
        "set xtics nomirror scale 0\n"
        "plot 'step2_norm_times.tsv' using 2:xtic(1) lc rgb '#1f5fa0' title 'LayerNorm', \\\n"
        "     '' using 3 lc rgb '#c05000' title 'RMSNorm', \\\n"
        "     '' using ($0 - 1.0/6):2:(sprintf('%%.2f ms', $2)) with labels offset 0,0.8 notitle, \\\n"
        "     '' using ($0 + 1.0/6):3:(sprintf('%%.2f ms', $3)) with labels offset 0,0.8 notitle\n",
        t->R, t->D, t->threads, t->threads == 1 ? "" : "s", t->rounds,
        t->ms[1] / t->ms[0], t->ms[3] / t->ms[2]);
    return figure_draw(dir, "step2_norm_times", 800, 450, script, err, errlen);
}
