// figures.c: step 4's pictures (see figures.h).
#include "figures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/errors.h"
#include "io/figure.h"
#include "nn/layers.h"
#include "nn/model.h"
#include "ffn.h"
#include "step4.h"

#define PLOTS "step4_swiglu/plots"   // the gnuplot scripts

// ---------------------------------------------------------------------------
// GELU and SiLU on x in [-5, 5], through the model's own functions. SiLU is
// taken as SwiGLU computes it, swiglu_forward with every value 1, and its
// slope as swiglu_backward's gate gradient for dout = 1.
enum { NX = 201 };

static int activations_figure(const char *dir, char *err, size_t errlen) {
    static float x[NX], ones[NX], gelu[NX], silu[NX], dgelu[NX], dsilu[NX], dvalue[NX];
    for (int i = 0; i < NX; i++) { x[i] = -5.0f + 10.0f * i / (NX - 1); ones[i] = 1.0f; }
    gelu_forward(gelu, x, NX);
    swiglu_forward(silu, x, ones, NX);
    memset(dgelu, 0, sizeof dgelu); memset(dsilu, 0, sizeof dsilu); memset(dvalue, 0, sizeof dvalue);
    gelu_backward(dgelu, ones, x, NX, ADD_TO_DINP);      // backward accumulates: zeroed above
    swiglu_backward(dsilu, dvalue, ones, x, ones, NX);
    int gmin = 0, smin = 0;                              // where each curve dips lowest
    for (int i = 1; i < NX; i++) { if (gelu[i] < gelu[gmin]) gmin = i; if (silu[i] < silu[smin]) smin = i; }

    const char *name = "step4_activations";
    FILE *f = figure_data_open(dir, name, err, errlen);
    if (!f) return -1;
    fprintf(f, "# x\tGELU(x)\tSiLU(x)\tGELU'(x)\tSiLU'(x)\n");
    for (int i = 0; i < NX; i++) fprintf(f, "%.4f\t%.6f\t%.6f\t%.6f\t%.6f\n", x[i], gelu[i], silu[i], dgelu[i], dsilu[i]);
    if (figure_data_close(f, dir, name, err, errlen) != 0) return -1;

    char vars[256];
    snprintf(vars, sizeof vars, "gelu_min = %.6f\ngelu_min_x = %.4f\nsilu_min = %.6f\nsilu_min_x = %.4f",
             gelu[gmin], x[gmin], silu[smin], x[smin]);
    return figure_plot(dir, PLOTS, name, 900, 420, vars, err, errlen);
}

// ---------------------------------------------------------------------------
// Parameters of block 0's FFN (weights and biases), from model_build's table.
// One block is enough: every block's FFN is the same.
static int ffn_params(ModelConfig c, size_t *params, char *err, size_t errlen) {
    c.depth = 1;
    Model m;
    if (model_build(&m, &c, err, errlen) != 0) return -1;
    FfnCount n = ffn_count(&m);
    *params = n.weights + n.biases;
    model_free(&m);
    return 0;
}

// The same at hidden width H. cfg_mlp_hidden derives H from mlp_ratio
// (int(ratio·D) for GELU, int(2/3·ratio·D) for SwiGLU), so the ratio is
// chosen to give exactly H, and checked.
static int ffn_params_at(MlpKind mlp, int H, size_t *params, char *err, size_t errlen) {
    ModelConfig c = model_config_default();
    c.mlp = mlp;
    c.mlp_ratio = mlp == MLP_SWIGLU ? 1.5f * H / c.dim : (float)H / c.dim;
    if (cfg_mlp_hidden(&c) != H) return errorf(err, errlen, "no mlp_ratio gives hidden width %d", H);
    return ffn_params(c, params, err, errlen);
}

// The three widths TinyDiT's configs give at D = 128: GELU's 4·D, SwiGLU's
// int(2/3·4·D), and SwiGLU's rounded up to a multiple of 64.
typedef struct { const char *what; int H; size_t params; } Mark;

static int marks_at_d128(Mark mark[3], char *err, size_t errlen) {
    ModelConfig c[3] = { model_config_default(), model_config_default(), model_config_default() };
    c[0].mlp = MLP_GELU;
    c[1].mlp = MLP_SWIGLU;
    c[2].mlp = MLP_SWIGLU; c[2].mlp_multiple_of = 64;
    const char *what[3] = { "GELU, 4·D", "SwiGLU, int(2/3·4·D)", "SwiGLU rounded up to a multiple of 64" };
    for (int i = 0; i < 3; i++) {
        mark[i].what = what[i];
        mark[i].H = cfg_mlp_hidden(&c[i]);
        if (ffn_params(c[i], &mark[i].params, err, errlen) != 0) return -1;
    }
    return 0;
}

// n as 131,712: the way the docs write counts.
static const char *with_commas(char *out, size_t outlen, size_t n) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%zu", n), o = 0;
    for (int i = 0; i < len && o + 2 < (int)outlen; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = 0;
    return out;
}

enum { H_LO = 192, H_HI = 640, H_STEP = 8 };

// The data: block 0 the two lines over H, block 1 the three marks.
static int write_params_data(const char *dir, const char *name, const Mark mark[3], char *err, size_t errlen) {
    FILE *f = figure_data_open(dir, name, err, errlen);
    if (!f) return -1;
    fprintf(f, "# hidden width H\tGELU FFN params\tSwiGLU params  (D = 128, with biases)\n");
    for (int H = H_LO; H <= H_HI; H += H_STEP) {
        size_t g = 0, s = 0;
        if (ffn_params_at(MLP_GELU, H, &g, err, errlen) != 0 || ffn_params_at(MLP_SWIGLU, H, &s, err, errlen) != 0) {
            fclose(f);
            return -1;
        }
        fprintf(f, "%d\t%zu\t%zu\n", H, g, s);
    }
    fprintf(f, "\n\n# hidden width H\tparams\twhat\tcount\n");
    for (int i = 0; i < 3; i++) {
        char count[32], vs_gelu[32] = "";       // the SwiGLU marks against GELU's count
        if (i > 0) snprintf(vs_gelu, sizeof vs_gelu, " (%+.2f%%)", 100.0 * ((double)mark[i].params / mark[0].params - 1.0));
        fprintf(f, "%d\t%zu\t%s\tH = %d: %s%s\n", mark[i].H, mark[i].params, mark[i].what, mark[i].H,
                with_commas(count, sizeof count, mark[i].params), vs_gelu);
    }
    return figure_data_close(f, dir, name, err, errlen);
}

static int params_figure(const char *dir, char *err, size_t errlen) {
    const char *name = "step4_params";
    Mark mark[3];
    if (marks_at_d128(mark, err, errlen) != 0) return -1;
    if (write_params_data(dir, name, mark, err, errlen) != 0) return -1;
    char vars[256];
    snprintf(vars, sizeof vars, "D = %d\nH_lo = %d\nH_hi = %d\ngelu_params = %zu\nswiglu_vs_gelu = %.6f",
             model_config_default().dim, H_LO, H_HI, mark[0].params, 100.0 * ((double)mark[1].params / mark[0].params - 1.0));
    return figure_plot(dir, PLOTS, name, 800, 450, vars, err, errlen);
}

int step4_figures(const char *dir, int *drawn, char *err, size_t errlen) {
    FigureTally t = { 0 };
    if (figure_tally_add(&t, activations_figure(dir, err, errlen), NULL, err) < 0) return -1;
    if (figure_tally_add(&t, params_figure(dir, err, errlen), NULL, err) < 0) return -1;
    *drawn = t.drawn;
    return t.no_gnuplot ? FIGURE_NO_GNUPLOT : 0;
}

int step4_draw_figures(const char *dir) {
    char err[512];
    int drawn = 0, rc = step4_figures(dir, &drawn, err, sizeof err);
    if (rc < 0) { fprintf(stderr, "step4_swiglu: figures: %s\n", err); return 1; }
    figure_report(stdout, dir, drawn, rc == FIGURE_NO_GNUPLOT);
    return 0;
}
