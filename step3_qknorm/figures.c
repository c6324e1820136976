// figures.c: step 3's pictures (see figures.h). The numbers come in from
// main.c; this file only writes them down and styles the plots.
#include "figures.h"
#include "step3.h"
#include "io/figure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int figure_logit_growth(const char *dir, const LogitGrowth *g, char *err, size_t errlen) {
    FILE *f = figure_data_open(dir, "step3_logit_growth", err, errlen);
    if (!f) return -1;
    fprintf(f, "# one head, q and k (64 tokens, head_dim %d) ~ N(0,1) times the scale\n"
               "# scale\tmax_abs_logit\tmax_abs_logit_qk_norm\n", g->head_dim);
    for (int i = 0; i < g->n; i++) fprintf(f, "%.6g\t%.6g\t%.6g\n", g->scale[i], g->raw[i], g->normed[i]);
    if (figure_data_close(f, dir, "step3_logit_growth", err, errlen) != 0) return -1;

    double bound = sqrt((double)g->head_dim);
    char script[4096];
    int len = 0;
    for (int i = 0; i < 3; i++)
        len += snprintf(script + len, sizeof script - len,
                        "set arrow from %d, graph 0 to %d, graph 1 nohead lc rgb '#aaaaaa' dt 3 back\n"
                        "set label 'x%d' at %d, graph 0.04 offset 0.4,0 tc rgb '#666666'\n",
                        g->marks[i], g->marks[i], g->marks[i], g->marks[i]);
    snprintf(script + len, sizeof script - len,
        "set title \"Without QK-norm the largest logit grows with the square of the q, k scale;\\n"
        "with QK-norm it stays put, below the bound √d = %.2f (d = %d)\"\n"
        "set logscale xy\n"
        "set format x '10^{%%L}'\n"
        "set format y '10^{%%L}'\n"
        "set xlabel 'scale of q and k (both multiplied by it; dimensionless)'\n"
        "set ylabel 'largest |q·k| / √d over the head (dimensionless)'\n"
        "set key top left box opaque\n"
        "set grid xtics ytics lc rgb '#dddddd'\n"
        "set mxtics 10\n"
        "plot 'step3_logit_growth.tsv' using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '#c03030' "
        "title 'without QK-norm', \\\n"
        "     '' using 1:3 with linespoints pt 5 ps 0.6 lw 2 lc rgb '#2060b0' title 'with QK-norm (gains at 1)', \\\n"
        "     %.6f with lines dt 2 lw 2 lc rgb '#333333' title 'bound √d'\n",
        bound, g->head_dim, bound);
    return figure_draw(dir, "step3_logit_growth", 800, 450, script, err, errlen);
}

// dir/step3_attention_maps.tsv: six blocks (gnuplot's `index` 0..5, without
// QK-norm at each growth, then with), each L rows of L weights.
static int write_maps(const char *dir, const AttentionMaps *m, char *err, size_t errlen) {
    FILE *f = figure_data_open(dir, "step3_attention_maps", err, errlen);
    if (!f) return -1;
    fprintf(f, "# one head's softmax attention, %d queries (rows) by %d keys (columns)\n", m->L, m->L);
    for (int w = 0; w < 2; w++)
        for (int g = 0; g < 3; g++) {
            fprintf(f, "# block %d: q, k scaled x%d, %s QK-norm, mean top weight %.3f\n",
                    3 * w + g, m->growth[g], w ? "with" : "without", m->top[w][g]);
            const float *a = m->weights[w][g];
            for (int i = 0; i < m->L; i++) {
                for (int j = 0; j < m->L; j++) fprintf(f, j ? "\t%.5g" : "%.5g", a[(size_t)i * m->L + j]);
                fputc('\n', f);
            }
            fputs("\n\n", f);
        }
    if (figure_data_close(f, dir, "step3_attention_maps", err, errlen) != 0) return -1;
    return 0;
}

int figure_attention_maps(const char *dir, const AttentionMaps *m, char *err, size_t errlen) {
    if (write_maps(dir, m, err, errlen) != 0) return -1;
    double top = 0.0;   // the shared colour range is [0, the largest weight anywhere]
    for (int w = 0; w < 2; w++)
        for (int g = 0; g < 3; g++)
            for (size_t i = 0; i < (size_t)m->L * m->L; i++) top = fmax(top, m->weights[w][g][i]);

    char script[8192];
    int len = snprintf(script, sizeof script,
        "set multiplot layout 2,3 title \"One head's attention, %d queries by %d keys: as q and k grow, it turns one-hot\\n"
        "without QK-norm (top row) and does not change with it (bottom row)\" "
        "margins 0.07, 0.86, 0.09, 0.85 spacing 0.02, 0.1\n"
        "set size ratio -1\n"
        "set xrange [-0.5:%d.5]\n"
        "set yrange [%d.5:-0.5]\n"
        "set tics out scale 0.5 nomirror\n"
        "set xtics 0, 16\n"
        "set ytics 0, 16\n"
        "set cbrange [0:%.6f]\n"
        "set palette defined (0 '#ffffff', 0.04 '#deebf7', 0.12 '#9ecae1', 0.3 '#4292c6', 0.6 '#08519c', 1 '#08306b')\n"
        "set colorbox user origin screen 0.89, screen 0.12 size screen 0.02, screen 0.68\n"
        "set cblabel 'softmax weight of key j for query i'\n",
        m->L, m->L, m->L - 1, m->L - 1, top);
    for (int w = 0; w < 2; w++)
        for (int g = 0; g < 3; g++) {
            int b = 3 * w + g;
            len += snprintf(script + len, sizeof script - len,
                "set title \"x%d %s QK-norm\\nmean top weight %.2f\"\n"
                "%s\n%s\n%s\n"
                "plot 'step3_attention_maps.tsv' index %d matrix with image notitle\n",
                m->growth[g], w ? "with" : "without", m->top[w][g],
                b == 5 ? "set colorbox" : "unset colorbox",
                w == 1 ? "set xlabel 'key j'; set format x '%g'" : "unset xlabel; set format x ''",
                g == 0 ? "set ylabel 'query i'; set format y '%g'" : "unset ylabel; set format y ''",
                b);
        }
    snprintf(script + len, sizeof script - len, "unset multiplot\n");
    return figure_draw(dir, "step3_attention_maps", 900, 620, script, err, errlen);
}

// ---------------------------------------------------------------------------
// The same head at many scales, for the figure (nothing printed, no random
// numbers drawn): 10^-3 to 10^3 in quarter decades, marking the growth
// factors of the attention maps.
static void logit_growth_sweep(OneHead *h, const AttentionMaps *maps, LogitGrowth *g) {
    g->n = 25;
    g->head_dim = h->hd;
    for (int i = 0; i < 3; i++) g->marks[i] = maps->growth[i];
    for (int i = 0; i < g->n; i++) {
        double top;
        g->scale[i] = pow(10.0, -3.0 + 0.25 * i);
        one_head_scale(h, (float)g->scale[i]);
        one_head_scores(h, 0, &g->raw[i], &top, NULL);
        one_head_scores(h, 1, &g->normed[i], &top, NULL);
    }
}

int step3_draw_figures(const char *dir, OneHead *h, const AttentionMaps *maps) {
    LogitGrowth growth;
    logit_growth_sweep(h, maps, &growth);
    char err[512];
    FigureTally t = { 0 };
    if (figure_tally_add(&t, figure_logit_growth(dir, &growth, err, sizeof err), "step3_qknorm", err) < 0 ||
        figure_tally_add(&t, figure_attention_maps(dir, maps, err, sizeof err), "step3_qknorm", err) < 0)
        return 1;
    figure_tally_report(stdout, &t, dir);
    return 0;
}
