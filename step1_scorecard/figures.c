// figures.c: what noise looks like. The runs' own numbers, drawn by gnuplot
// (common/io/figure.h): the loss curves of the baseline's seeds on one plot,
// and their val MSEs with the seed-gap band and the band of one spread.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step1.h"
#include "io/figure.h"

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
    // two panels: the whole run, and the second half up
    // close, where the seeds' difference is of the size of the changes the
    // later steps measure
    // the whole run: every step thin, the trailing mean thick; up close,
    // where single steps would swamp the differences, the trailing mean only
    char plot[6000], close_up[3000];
    size_t len = 0, len2 = 0;
    for (int b = 0; b < blocks; b++) {
        const char *c = COLOURS[drawn[b] % N_COLOURS];
        unsigned long long seed = runs[drawn[b]].cfg.run.seed;
        len += (size_t)snprintf(plot + len, sizeof plot - len,
            "%s'step1_loss_curves.tsv' index %d using 1:2 with lines lc rgb '%s' lw 0.6 notitle, "
            "'' index %d using 1:3 with lines lc rgb '%s' lw 2.2 title 'seed %llu'",
            b ? ", " : "", b, c, b, c, seed);
        len2 += (size_t)snprintf(close_up + len2, sizeof close_up - len2,
            "%s'step1_loss_curves.tsv' index %d using 1:3 with lines lc rgb '%s' lw 2.2 title 'seed %llu'",
            b ? ", " : "", b, c, seed);
    }
    char script[16384];
    snprintf(script, sizeof script,
        "set multiplot layout 1,2 title \"The baseline trained %d times, changing only the seed: training loss\\n"
        "{/*0.85 thin: every step; thick: mean of the last %d steps}\"\n"
        "set xlabel 'training step'\nset ylabel 'flow-matching loss (MSE)'\nset grid\nset key top right\n"
        "set title 'the whole run'\nset format y '%%.2f'\n"
        "plot %s\n"
        "set title 'the second half, up close: the trailing means'\nset xrange [%d:*]\nset format y '%%.3f'\n"
        "stats 'step1_loss_curves.tsv' using (($1 >= %d) ? $3 : NaN) nooutput\n"
        "set yrange [STATS_min - 0.15*(STATS_max - STATS_min) : STATS_max + 0.15*(STATS_max - STATS_min)]\n"
        "plot %s\n"
        "unset multiplot\n",
        blocks, window, plot, steps / 2, steps / 2, close_up);
    return figure_tally_add(t, figure_draw(dir, "step1_loss_curves", 1100, 520, script, err, errlen), NULL, err);
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
    char script[4096];
    snprintf(script, sizeof script,
        "set title \"What noise looks like: the baseline's val MSE at %d seeds\\n"
        "{/*0.85 the same recipe, only the seed changes; a change to the model must move val MSE by more than this}\"\n"
        "set xlabel 'seed'\nset ylabel 'val MSE (lower is better)'\n"
        "set xrange [-0.7:%d.7]\nset yrange [%.6f:%.6f]\nset xtics 1\nset grid ytics\n"
        "set format y '%%.4f'\nset encoding utf8\nset key below\n"
        "plot %.6f + 0*x with filledcurves y1=%.6f fc rgb '#bcd7ee' fs solid 0.6 "
        "title 'mean ± 1 spread over the %d seeds: %.4f ± %.4f', "
        "%.6f + 0*x with filledcurves y1=%.6f fc rgb '#d9822b' fs transparent pattern 4 border lc rgb '#d9822b' "
        "title \"the tutorial's yardstick: mean of seeds 0, 1 ± their seed gap (%.4f)\", "
        "%.6f with lines lc rgb '#1f4e79' lw 2 title 'mean of all seeds', "
        "'step1_val_mse.tsv' using 1:2 with points pt 7 ps 1.6 lc rgb '#000000' title 'one run', "
        "'' using 1:2:(sprintf('%%.4f', $2)) with labels offset 0,1.1 notitle\n",
        n, n - 1, lo - pad, hi + pad,
        s.mean + s.sd, s.mean - s.sd, n, s.mean, s.sd,
        pair_mean + gap, pair_mean - gap, gap, s.mean);
    return figure_tally_add(t, figure_draw(dir, "step1_val_mse", 900, 580, script, err, errlen), NULL, err);
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
