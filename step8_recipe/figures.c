// figures.c: the pictures of main.c's sections, each drawn by gnuplot from
// its committed script (plots/NAME.gp) and the numbers written beside it.
//   step8_times   section 1: the density of uniform and logit-normal times
//   step8_orders  section 3: each sampler's error against its evaluations
#include <stdio.h>
#include "step8.h"
#include "io/figure.h"

int times_figure(const char *figures, const float *flat, const float *t, int n, FigureTally *tally) {
    char err[ERRLEN];
    FILE *f = figure_data_open(figures, "step8_times", err, sizeof err);
    if (f) {
        fprintf(f, "# t\tuniform density\tlogit-normal density (draws)\texact\n");
        for (int b = 0; b < 50; b++) {   // densities in 50 bins
            double lo = b / 50.0, hi = (b + 1) / 50.0;
            int a = 0, c = 0;
            for (int i = 0; i < n; i++) { a += flat[i] >= lo && flat[i] < hi; c += t[i] >= lo && t[i] < hi; }
            fprintf(f, "%.3f\t%.4f\t%.4f\t%.4f\n", (lo + hi) / 2, a * 50.0 / n, c * 50.0 / n,
                    (logit_normal_cdf(hi, 0, 1) - logit_normal_cdf(lo, 0, 1)) * 50.0);
        }
    }
    int rc = !f ? -1 : figure_data_close(f, figures, "step8_times", err, sizeof err);
    if (rc == 0) rc = figure_plot(figures, "step8_recipe/plots", "step8_times", 800, 450, NULL, err, sizeof err);
    return figure_tally_add(tally, rc, "step8_recipe", err);
}

int orders_figure(const char *figures, const double *err_e, const double *err_h, FigureTally *tally) {
    char err[ERRLEN];
    FILE *f = figure_data_open(figures, "step8_orders", err, sizeof err);
    if (f) {
        fprintf(f, "# NFE\tEuler error\tHeun error\n");
        for (int i = 0; i < NFE_COUNT; i++) fprintf(f, "%d\t%.6e\t%.6e\n", NFE_LIST[i], err_e[i], err_h[i]);
    }
    int rc = !f ? -1 : figure_data_close(f, figures, "step8_orders", err, sizeof err);
    if (rc == 0) rc = figure_plot(figures, "step8_recipe/plots", "step8_orders", 700, 480, NULL, err, sizeof err);
    return figure_tally_add(tally, rc, "step8_recipe", err);
}
