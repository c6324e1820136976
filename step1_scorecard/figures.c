// figures.c: what noise looks like. The runs' own numbers, drawn by gnuplot
// (common/io/figure.h): the loss curves of the baseline's seeds on one plot,
// and their val MSEs with the seed-gap band and the band of one spread.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step1.h"
#include "io/figure.h"

#define PLOTS "step1_scorecard/plots"   // the gnuplot scripts

// The seeds' colours, the same in both figures.
static const char *COLOURS[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
                                 "#e377c2" };
#define N_COLOURS (int)(sizeof COLOURS / sizeof COLOURS[0])

// Copies run's loss.tsv (step, loss, ...) into f as one gnuplot data block:
// step, loss, and the mean of the last `window` losses. Returns the number of
// steps, 0 if the run has no loss.tsv.
static int write_loss_block(FILE *f, const RunMetrics *run, int window) {
    char path[2100];
    snprintf(path, sizeof path, "%s", run->path);
    char *slash = strrchr(path, '/');
    if (slash) snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "loss.tsv");
    else snprintf(path, sizeof path, "loss.tsv");
    FILE *in = fopen(path, "r");
    if (!in) return 0;
    double *ring = calloc((size_t)window, sizeof *ring), sum = 0;
    char line[512];
    int n = 0;
    fprintf(f, "# %s (seed %llu): step, loss, mean loss of the last %d steps\n", run->name, run->cfg.run.seed, window);
    while (ring && fgets(line, sizeof line, in)) {
        int step;
        double loss;
        if (sscanf(line, "%d %lf", &step, &loss) != 2) continue;     // the header
        sum += loss - ring[n % window];
        ring[n % window] = loss;
        n++;
        fprintf(f, "%d\t%.6f\t%.6f\n", step, loss, sum / (n < window ? n : window));
    }
    fprintf(f, "\n\n");                       // the next seed is the next data block
    fclose(in);
    free(ring);
    return n;
}

// Each figure adds what figure_draw answered to t; -1 with a message in err
// on an error.
static int draw_loss_curves(const RunMetrics *runs, int n, const char *dir, FigureTally *t, char *err,
                            size_t errlen) {
    FILE *f = figure_data_open(dir, "step1_loss_curves", err, errlen);
    if (!f) return -1;
    int steps = runs[0].has_config ? runs[0].cfg.run.steps : 1000;
    int window = steps / 40 > 5 ? steps / 40 : 5;
    int drawn[STEP1_MAX_SEEDS], blocks = 0;
    for (int i = 0; i < n; i++)
        if (write_loss_block(f, &runs[i], window) > 0) drawn[blocks++] = i;
    if (figure_data_close(f, dir, "step1_loss_curves", err, errlen) != 0) return -1;
    if (!blocks) return 0;                   // no run has its losses: nothing to draw
    // the blocks' seeds and colours, as gnuplot arrays
    char vars[2048], seeds[512] = "", colours[512] = "";
    for (int b = 0, ls = 0, lc = 0; b < blocks; b++) {
        ls += snprintf(seeds + ls, sizeof seeds - ls, "%s%llu", b ? ", " : "", runs[drawn[b]].cfg.run.seed);
        lc += snprintf(colours + lc, sizeof colours - lc, "%s'%s'", b ? ", " : "", COLOURS[drawn[b] % N_COLOURS]);
    }
    snprintf(vars, sizeof vars, "n = %d\nwindow = %d\nhalf = %d\narray seed[%d] = [%s]\narray colour[%d] = [%s]",
             blocks, window, steps / 2, blocks, seeds, blocks, colours);
    return figure_tally_add(t, figure_plot(dir, PLOTS, "step1_loss_curves", 1100, 520, vars, err, errlen), NULL, err);
}

static int draw_val_mse(const RunMetrics *runs, int n, const char *dir, FigureTally *t, char *err,
                        size_t errlen) {
    double vals[STEP1_MAX_SEEDS] = {0};
    for (int i = 0; i < n; i++) vals[i] = runs[i].val_mse;
    SeedSpread s = seed_spread(vals, n);
    double gap = metrics_val_mse_gap(&runs[0], &runs[1]), pair_mean = 0.5 * (vals[0] + vals[1]);
    FILE *f = figure_data_open(dir, "step1_val_mse", err, errlen);
    if (!f) return -1;
    fprintf(f, "# seed\tval_mse\trun    (mean %.6f, spread %.6f over %d seeds; seed gap of the first pair %.6f)\n",
            s.mean, s.sd, n, gap);
    for (int i = 0; i < n; i++) fprintf(f, "%llu\t%.6f\t%s\n", runs[i].cfg.run.seed, vals[i], runs[i].name);
    if (figure_data_close(f, dir, "step1_val_mse", err, errlen) != 0) return -1;
    double lo = fmin(pair_mean - gap, s.mean - s.sd), hi = fmax(pair_mean + gap, s.mean + s.sd);
    for (int i = 0; i < n; i++) { lo = fmin(lo, vals[i]); hi = fmax(hi, vals[i]); }
    double pad = 0.35 * (hi - lo > 0 ? hi - lo : 1e-3);
    char vars[512];
    snprintf(vars, sizeof vars, "n = %d\nmean = %.6f\nsd = %.6f\npair_mean = %.6f\ngap = %.6f\ny_lo = %.6f\ny_hi = %.6f",
             n, s.mean, s.sd, pair_mean, gap, lo - pad, hi + pad);
    return figure_tally_add(t, figure_plot(dir, PLOTS, "step1_val_mse", 900, 580, vars, err, errlen), NULL, err);
}

int step1_figures(const RunMetrics *runs, int n, const char *dir) {
    char err[1024];
    FigureTally t = { 0 };
    if (draw_loss_curves(runs, n, dir, &t, err, sizeof err) < 0 ||
        draw_val_mse(runs, n, dir, &t, err, sizeof err) < 0) {
        fprintf(stderr, "error: figures: %s\n", err);
        return -1;
    }
    printf("\n");
    figure_tally_report(stdout, &t, dir);
    return t.drawn;
}
