// figures.c: step 0's pictures, drawn from the shipped model (or the one
// given) and the committed tutorial runs, with --figures DIR:
//   tinydit_flow_path   a test image on the straight path from noise, and the
//                       model's guess of the image at each point
//   tinydit_euler_walk  the Euler sampler from noise to samples
//   tinydit_samples     the first samples of three tutorial-preset runs
//   tinydit_gradient_sizes  the gradient's size through the blocks (backward.c)
// The first three are grids of images, drawn by one script, plots/image_grid.gp.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "step0.h"
#include "eval/scorecard.h"
#include "io/figure.h"
#include "io/metrics.h"
#include "io/paths.h"
#include "nn/flow.h"
#include "nn/rng.h"

#define STB_IMAGE_IMPLEMENTATION
#include "stb_image.h"

// ---------------------------------------------------------------------------
// Pictures. An image panel is written as its pixels, one line each
// (x, y, r, g, b), and gnuplot draws the lines `with rgbimage`: the numbers
// stay beside the picture like every figure of the project (io/figure.h).
#define GAP 4                 // pixels between panels

// A grid of S-pixel panels, gaps white. gnuplot's rgbimage wants every
// pixel of a regular grid, scan line by scan line, so the panels are placed
// on a canvas first and the canvas is written out whole.
typedef struct { int W, H, S; unsigned char *rgb; } Canvas;

static Canvas canvas_make(int rows, int cols, int S) {
    Canvas cv = { cols * (S + GAP) - GAP, rows * (S + GAP) - GAP, S, NULL };
    cv.rgb = malloc((size_t)cv.W * cv.H * 3);
    memset(cv.rgb, 255, (size_t)cv.W * cv.H * 3);
    return cv;
}

// Image img (C, S, S) into panel (row, col).
static void canvas_put(Canvas *cv, const float *img, int C, int row, int col) {
    int S = cv->S, ox = col * (S + GAP), oy = row * (S + GAP);
    for (int y = 0; y < S; y++)
        for (int x = 0; x < S; x++)
            for (int c = 0; c < 3; c++)
                cv->rgb[((size_t)(oy + y) * cv->W + ox + x) * 3 + c] =
                    cifar_pixel_byte(img[((size_t)(C == 3 ? c : 0) * S + y) * S + x]);
}

static void canvas_write(const Canvas *cv, FILE *f) {
    for (int y = 0; y < cv->H; y++)
        for (int x = 0; x < cv->W; x++) {
            const unsigned char *p = cv->rgb + ((size_t)y * cv->W + x) * 3;
            fprintf(f, "%d\t%d\t%d\t%d\t%d\n", x, y, p[0], p[1], p[2]);
        }
}

// The labels of a row or column of panels as a gnuplot tic list:
// ("label" centre, ...), each at the centre of its panel.
static void tic_list(char *out, size_t n, const char *const *labels, int count, int S) {
    int len = snprintf(out, n, "(");
    for (int i = 0; i < count && len < (int)n; i++)
        len += snprintf(out + len, n - len, "%s\"%s\" %g", i ? ", " : "", labels[i], i * (S + GAP) + (S - 1) / 2.0);
    if (len < (int)n) snprintf(out + len, n - len, ")");
}

// Draws the grid figure NAME from the panels already written to its .tsv,
// with plots/image_grid.gp: one label per column (xlabels) and per row
// (ylabels, may be NULL).
static int draw_grid(const char *dir, const char *name, const char *title, int rows, int cols, int S,
                     const char *const *xlabels, const char *const *ylabels, int width, int height,
                     char *err, size_t errlen) {
    char xtics[1024], ytics[1024] = "", vars[3072];
    tic_list(xtics, sizeof xtics, xlabels, cols, S);
    if (ylabels) tic_list(ytics, sizeof ytics, ylabels, rows, S);
    snprintf(vars, sizeof vars, "name = '%s'\nheading = \"%s\"\nW = %d\nH = %d\ncolumn_labels = '%s'\nrow_labels = '%s'",
             name, title, cols * (S + GAP) - GAP, rows * (S + GAP) - GAP, xtics, ytics);
    return figure_plot_script(dir, "step0_tour/plots/image_grid.gp", name, width, height, vars, err, errlen);
}

// One test image on the straight path at t = 0, 0.25, ..., 1 (top row), and
// below it what the model makes of each: x_t + (1 - t)·v, one Euler step to t = 1.
static int figure_flow_path(Model *m, const float *x1, const char *dir, char *err, size_t errlen) {
    const ModelConfig *c = &m->cfg;
    size_t per = cfg_image_floats(c);
    const int cols = 5;
    const char *xl[5] = { "t = 0", "t = 0.25", "t = 0.5", "t = 0.75", "t = 1" };
    const char *yl[2] = { "x_t", "x_t + (1-t) v" };
    FILE *f = figure_data_open(dir, "tinydit_flow_path", err, errlen);
    if (!f) return -1;
    fprintf(f, "# x\ty\tred\tgreen\tblue: top row x_t = (1-t)·x0 + t·x1 of one test image at "
               "t = 0, 0.25, 0.5, 0.75, 1; bottom row x_t + (1-t)·v(x_t, t)\n");
    float *x0 = malloc(sizeof(float) * per), *xt = malloc(sizeof(float) * per);
    float *guess = malloc(sizeof(float) * per);
    Rng r;
    rng_seed(&r, TOUR_NOISE_SEED);
    rng_fill_normal(&r, x0, (long)per, 1.0f);
    Canvas cv = canvas_make(2, cols, c->img);
    Activations a;
    activations_alloc(&a, m, 1, false);
    for (int k = 0; k < cols; k++) {
        float t = 0.25f * k;
        noised(xt, x0, x1, t, per);
        model_forward(m, &a, xt, &t, NULL);
        for (size_t i = 0; i < per; i++) guess[i] = xt[i] + (1.0f - t) * a.v[i];
        canvas_put(&cv, xt, c->channels, 0, k);
        canvas_put(&cv, guess, c->channels, 1, k);
    }
    canvas_write(&cv, f);
    free(cv.rgb);
    activations_free(&a);
    free(x0); free(xt); free(guess);
    if (figure_data_close(f, dir, "tinydit_flow_path", err, errlen) != 0) return -1;
    return draw_grid(dir, "tinydit_flow_path",
                     "Top: a test image on the straight path from noise. Bottom: the model's guess of the image",
                     2, cols, c->img, xl, yl, 900, 430, err, errlen);
}

// WALK_IMAGES samples from the scorecard's noise, after 0, 4, 8, ... 20 steps.
static int figure_euler_walk(Model *m, const char *dir, char *err, size_t errlen) {
    const ModelConfig *c = &m->cfg;
    size_t per = cfg_image_floats(c);
    enum { SNAPS = 6 };
    const int at[SNAPS] = { 0, 4, 8, 12, 16, 20 };
    const char *xl[SNAPS] = { "step 0: noise, t = 0", "4 (t = 0.2)", "8 (t = 0.4)", "12 (t = 0.6)",
                              "16 (t = 0.8)", "20: sample, t = 1" };
    float *x = malloc(sizeof(float) * per * WALK_IMAGES);
    float *snaps = malloc(sizeof(float) * per * WALK_IMAGES * SNAPS);
    Rng r;
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, x, (long)(per * WALK_IMAGES), 1.0f);
    euler_walk(m, x, WALK_IMAGES, EULER_STEPS, at, SNAPS, snaps);
    FILE *f = figure_data_open(dir, "tinydit_euler_walk", err, errlen);
    if (!f) { free(x); free(snaps); return -1; }
    fprintf(f, "# x\ty\tred\tgreen\tblue: %d samples (rows) after 0, 4, 8, 12, 16, 20 Euler steps (columns)\n",
            WALK_IMAGES);
    Canvas cv = canvas_make(WALK_IMAGES, SNAPS, c->img);
    for (int s = 0; s < SNAPS; s++)
        for (int i = 0; i < WALK_IMAGES; i++)
            canvas_put(&cv, snaps + ((size_t)s * WALK_IMAGES + i) * per, c->channels, i, s);
    canvas_write(&cv, f);
    free(cv.rgb);
    free(x); free(snaps);
    if (figure_data_close(f, dir, "tinydit_euler_walk", err, errlen) != 0) return -1;
    return draw_grid(dir, "tinydit_euler_walk",
                     "The Euler sampler: x <- x + v(x, i/20)/20, from noise (left) to samples (right)",
                     WALK_IMAGES, SNAPS, c->img, xl, NULL, 780, 780, err, errlen);
}

// The committed tutorial runs' samples side by side: the first 16 (4x4) of
// each run's samples.png (an 8x8 grid of 32-pixel samples with 2-pixel gaps,
// written by the trainer), under each its val MSE from metrics.json. 16, not
// 64: enough to see the difference, and a third of the bytes in the repository.
#define GRID_GAP 2               // samples.png's gap (write_sample_grid, common/train/run_metrics.c)
#define SHOWN 4                  // samples per side of each run's panel

static int figure_samples(int img, const char *dir, char *err, size_t errlen) {
    enum { RUNS = 3 };
    const char *runs[RUNS] = { "p11_base_s0", "p11_rope", "p11_all" };
    const char *what[RUNS] = { "baseline (learned positions)", "2D RoPE", "all four upgrades" };
    char labels[RUNS][256];
    const char *xl[RUNS];
    int S = SHOWN * (img + GRID_GAP) - GRID_GAP;        // one run's panel: 4x4 samples and their gaps
    Canvas cv = canvas_make(1, RUNS, S);
    for (int i = 0; i < RUNS; i++) {
        char rel[256], path[1024];
        snprintf(rel, sizeof rel, "results/tutorial/%s/metrics.json", runs[i]);
        project_path(path, sizeof path, rel);
        RunMetrics rm;
        if (metrics_read(path, &rm, err, errlen) != 0) { free(cv.rgb); return -1; }
        snprintf(labels[i], sizeof labels[i], "%s\\n%s, val MSE %.4f", runs[i], what[i], rm.val_mse);
        xl[i] = labels[i];
        snprintf(rel, sizeof rel, "results/tutorial/%s/samples.png", runs[i]);
        project_path(path, sizeof path, rel);
        int W, H, ch;
        unsigned char *png = stbi_load(path, &W, &H, &ch, 3);
        if (!png || W < GRID_GAP + S || H < GRID_GAP + S) {
            snprintf(err, errlen, "%.900s: %s", path, png ? "smaller than 4x4 samples" : stbi_failure_reason());
            stbi_image_free(png);
            free(cv.rgb);
            return -1;
        }
        int ox = i * (S + GAP);
        for (int y = 0; y < S; y++)
            memcpy(cv.rgb + ((size_t)y * cv.W + ox) * 3, png + ((size_t)(GRID_GAP + y) * W + GRID_GAP) * 3,
                   (size_t)S * 3);
        stbi_image_free(png);
    }
    FILE *f = figure_data_open(dir, "tinydit_samples", err, errlen);
    if (!f) { free(cv.rgb); return -1; }
    fprintf(f, "# x\ty\tred\tgreen\tblue: the first 16 samples of results/tutorial/{p11_base_s0,"
               "p11_rope,p11_all}/samples.png, side by side\n");
    canvas_write(&cv, f);
    free(cv.rgb);
    if (figure_data_close(f, dir, "tinydit_samples", err, errlen) != 0) return -1;
    return draw_grid(dir, "tinydit_samples",
                     "The first 16 samples of three tutorial-preset runs (20 Euler steps, the same noise for all)",
                     1, RUNS, S, xl, NULL, 1000, 420, err, errlen);
}

int draw_figures(Model *m, const CifarSet *test, const char *dir) {
    char err[ERRLEN];
    FigureTally tally = {0};
    if (test->n > 0) {   // the flow path wants a real image: test image 0 whatever the tour followed
        float *x1 = malloc(sizeof(float) * cfg_image_floats(&m->cfg));
        if (x1) cifar_range_to_float(test, 0, 1, x1);
        figure_tally_add(&tally, x1 ? figure_flow_path(m, x1, dir, err, sizeof err) : -1, "step0_tour",
                         x1 ? err : "out of memory");
        free(x1);
    } else fprintf(stderr, "step0_tour: no flow-path figure: it needs a CIFAR-10 test image\n");
    figure_tally_add(&tally, figure_euler_walk(m, dir, err, sizeof err), "step0_tour", err);
    figure_tally_add(&tally, figure_samples(m->cfg.img, dir, err, sizeof err), "step0_tour", err);
    figure_tally_add(&tally, figure_gradient_sizes(m, dir, err, sizeof err), "step0_tour", err);
    figure_tally_report(stdout, &tally, dir);
    return tally.failed ? 1 : 0;
}

