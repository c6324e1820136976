// figures.c: step 3's pictures (see figures.h). The numbers come in from
// main.c; this file only writes them down and styles the plots.
#include "figures.h"
#include "step3.h"
#include "io/figure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PLOTS "step3_qknorm/plots"   // the gnuplot scripts

int figure_logit_growth(const char *dir, const LogitGrowth *g, char *err, size_t errlen) {
    FILE *f = figure_data_open(dir, "step3_logit_growth", err, errlen);
    if (!f) return -1;
    fprintf(f, "# one head, q and k (64 tokens, head_dim %d) ~ N(0,1) times the scale\n"
               "# scale\tmax_abs_logit\tmax_abs_logit_qk_norm\n", g->head_dim);
    for (int i = 0; i < g->n; i++) fprintf(f, "%.6g\t%.6g\t%.6g\n", g->scale[i], g->raw[i], g->normed[i]);
    if (figure_data_close(f, dir, "step3_logit_growth", err, errlen) != 0) return -1;

    char vars[256];
    snprintf(vars, sizeof vars, "head_dim = %d\narray marks[3] = [%d, %d, %d]", g->head_dim, g->marks[0], g->marks[1],
             g->marks[2]);
    return figure_plot(dir, PLOTS, "step3_logit_growth", 800, 450, vars, err, errlen);
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

    char vars[512];
    snprintf(vars, sizeof vars, "L = %d\ntop_all = %.6f\narray growth[3] = [%d, %d, %d]\n"
             "array top[6] = [%.6f, %.6f, %.6f, %.6f, %.6f, %.6f]", m->L, top, m->growth[0], m->growth[1], m->growth[2],
             m->top[0][0], m->top[0][1], m->top[0][2], m->top[1][0], m->top[1][1], m->top[1][2]);
    return figure_plot(dir, PLOTS, "step3_attention_maps", 900, 620, vars, err, errlen);
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
