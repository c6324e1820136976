// step0_tour: step 0, a trained TinyDiT looked at part by part (docs/tinydit.md).
//
//   step0_tour/step0_tour                    the tour of the shipped model
//   step0_tour/step0_tour --model FILE       any checkpoint (a run's ckpt.safetensors too)
//   step0_tour/step0_tour --test-image       follows CIFAR-10's test image 0 instead
//   step0_tour/step0_tour --val-mse          adds the val MSE on 2,000 test images
//   step0_tour/step0_tour --time             adds the wall time of loading and sampling
//   step0_tour/step0_tour --figures DIR      adds the page's three pictures (gnuplot)
//   step0_tour/step0_tour export RUN_CKPT OUT    a run's checkpoint, weights only
//
// The tour loads models/tinydit_rope_tutorial.safetensors through
// checkpoint_load (checksums checked, like any checkpoint), sends one image
// through the model in the order model_forward runs (patches, embedding,
// positions, time, adaLN, blocks, final layer), printing each part's shape
// and a number, then samples 8 images with 20 Euler steps. The image is the
// model's own first sample, so the tour needs no data and prints the same
// numbers every time: docs/tinydit.md quotes it and tests/test_docs.c runs it
// again. Timings only with --time, for the same reason. It writes nothing
// unless --figures is given.
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/scorecard.h"
#include "io/args.h"
#include "io/bench.h"
#include "io/checkpoint.h"
#include "io/checksum.h"
#include "io/cifar.h"
#include "io/figure.h"
#include "io/metrics.h"
#include "io/paths.h"
#include "io/progress.h"
#include "nn/flow.h"
#include "nn/layers.h"
#include "nn/rng.h"

#define STB_IMAGE_IMPLEMENTATION
#include "stb_image.h"
#include "io/blas_kernel.h"

#define SHIPPED_MODEL "models/tinydit_rope_tutorial.safetensors"
#define TOUR_T 0.5f              // the time the tour's image is noised to
#define TOUR_NOISE_SEED 2024ULL  // its noise (any fixed seed: the numbers repeat)
#define WALK_IMAGES 6            // rows of the sampler's walk
#define EULER_STEPS 20           // as the scorecard samples (FD_EULER_STEPS)
#define ERRLEN 1024

static void usage(FILE *f) {
    fprintf(f,
        "usage: step0_tour [--model FILE] [--test-image] [--val-mse] [--time] [--figures DIR]\n"
        "                  [--threads N]\n"
        "       step0_tour export RUN_CKPT OUT\n"
        "  the tour: the model's first sample through the trained model part by part, then\n"
        "  8 samples of 20 Euler steps (model default: %s)\n"
        "  --test-image   follow CIFAR-10's test image 0 instead (needs the data)\n"
        "  --val-mse      also the val MSE on the first 2,000 CIFAR-10 test images (needs the data)\n"
        "  --time         also the wall time of loading and of the 8 samples\n"
        "  --figures DIR  also draws tinydit_flow_path (needs the data), tinydit_euler_walk,\n"
        "                 tinydit_samples\n"
        "  export         writes RUN_CKPT's weights and config without the optimizer state\n",
        SHIPPED_MODEL);
}

// ---------------------------------------------------------------------------
// Small numbers to print

static double rms(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s / (double)n);
}

static double mean_abs(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += fabs((double)x[i]);
    return s / (double)n;
}

static double mse(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return s / (double)n;
}

// ---------------------------------------------------------------------------
// export: a run's checkpoint without the AdamW moments and trainer state.
// Loaded and saved by the checkpoint code every program uses, so the file
// has the config in its metadata and a CRC32 per tensor like any checkpoint.
static int export_weights(const char *in, const char *out) {
    char err[ERRLEN];
    Model m;
    SafeTensors st;
    if (checkpoint_load(in, &m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return 1;
    }
    const char *step = st_meta(&st, "train.step"), *preset = st_meta(&st, "train.preset");
    CheckpointMeta meta[2] = { { "train.step", step ? step : "unknown" },
                               { "train.preset", preset ? preset : "unknown" } };
    Config stored;   // the run that trained it goes along with the model
    int rc = checkpoint_config_from(&st, in, &stored, err, sizeof err);
    if (rc == 0) rc = checkpoint_save(out, &m, &stored.run, NULL, 0, meta, 2, err, sizeof err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err);
    else printf("%s: %zu parameters of %s (step %s), no optimizer state\n",
                out, m.n_params, in, step ? step : "unknown");
    st_free(&st);
    model_free(&m);
    return rc == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------
// The tour: one image through the model, part by part. Every number is read
// from the Activations that model_forward filled, so nothing here computes
// the model a second time.
static void print_embedding(const Model *m, const Activations *a, const float *x) {
    const ModelConfig *c = &m->cfg;
    int L = cfg_tokens(c), P = cfg_patch_dim(c), D = c->dim;
    size_t per = (size_t)c->channels * c->img * c->img;
    float *back = malloc(sizeof(float) * per);
    unpatchify(back, a->tokens, 1, c->channels, c->img, c->patch);
    printf("1. patches: x_t (1, %d, %d, %d) -> tokens (1, %d, %d): %dx%d patches of %dx%dx%d numbers\n",
           c->channels, c->img, c->img, L, P, cfg_grid(c), cfg_grid(c), c->channels, c->patch, c->patch);
    printf("   unpatchify(patchify(x_t)) == x_t: %s\n",
           memcmp(back, x, sizeof(float) * per) == 0 ? "yes, bit for bit" : "NO");
    free(back);
    printf("2. patch embedding: (1, %d, %d) -> (1, %d, %d), rms of the tokens %.3f\n",
           L, P, L, D, rms(a->resid, (size_t)L * D));
    if (c->pos == POS_LEARNED)
        printf("3. positions: learned, pos_row[r] + pos_col[c] added: both (%d, %d)\n", cfg_grid(c), D);
    else
        printf("3. positions: none added here; 2D RoPE turns q and k inside attention (step 5)\n");
    printf("4. time: t = %.2f -> sinusoidal features (1, %d) -> t_fc1, SiLU, t_fc2 -> c (1, %d), rms %.3f\n",
           TOUR_T, c->freq_dim, D, rms(a->c, (size_t)D));
}

static void print_blocks(const Model *m, const Activations *a) {
    const ModelConfig *c = &m->cfg;
    int L = cfg_tokens(c), D = c->dim;
    size_t LD = (size_t)L * D;
    int chunks = cfg_ada_chunks(c);   // 6 with ada=zero: a gate for each half too
    printf("5. adaLN: each block's ada Linear turns SiLU(c) (1, %d) into (1, %d):\n"
           "   %s; mean |value| of each\n", D, chunks * D, c->ada == ADA_ZERO ?
           "shift_a, scale_a, gate_a, shift_m, scale_m, gate_m" : "shift_a, scale_a, shift_m, scale_m");
    for (int b = 0; b < c->depth; b++) {
        printf("   block %d:", b);
        for (int k = 0; k < chunks; k++) printf(" %.3f", mean_abs(a->ada[b] + (size_t)k * D, D));
        printf("\n");
    }
    printf("6. blocks: the residual stream (1, %d, %d), rms after each half\n", L, D);
    printf("   input %.3f\n", rms(a->resid, LD));
    for (int b = 0; b < c->depth; b++)
        printf("   block %d: after attention %.3f, after the MLP %.3f\n", b,
               rms(a->resid + (2 * (size_t)b + 1) * LD, LD), rms(a->resid + (2 * (size_t)b + 2) * LD, LD));
}

static void print_output(const Model *m, const Activations *a, const float *x0, const float *x1,
                         const float *xt) {
    const ModelConfig *c = &m->cfg;
    size_t per = (size_t)c->channels * c->img * c->img;
    float *target = calloc(per, sizeof(float)), *guess = calloc(per, sizeof(float));
    for (size_t i = 0; i < per; i++) {
        target[i] = x1[i] - x0[i];
        guess[i] = xt[i] + (1.0f - TOUR_T) * a->v[i];     // one Euler step of 1 - t to t = 1
    }
    printf("7. final layer: norm, modulate (ada_f), head -> (1, %d, %d) -> unpatchify -> v (1, %d, %d, %d)\n",
           cfg_tokens(c), cfg_patch_dim(c), c->channels, c->img, c->img);
    printf("8. flow matching: target x1 - x0, rms %.3f; v, rms %.3f; loss mean((v - target)^2) = %.4f\n",
           rms(target, per), rms(a->v, per), mse(a->v, target, per));
    printf("   the image itself: x_t is %.4f from it (mse), x_t + (1 - t)·v is %.4f\n",
           mse(xt, x1, per), mse(guess, x1, per));
    free(target);
    free(guess);
}

// x_t = (1 - t)·x0 + t·x1 of one image (flow_interpolate with N = 1).
static void noised(float *xt, const float *x0, const float *x1, float t, size_t per) {
    float *target = malloc(sizeof(float) * per);
    flow_interpolate(xt, target, x1, x0, &t, 1, per);
    free(target);
}

static void tour(Model *m, const float *x1) {
    const ModelConfig *c = &m->cfg;
    size_t per = (size_t)c->channels * c->img * c->img;
    float *x0 = malloc(sizeof(float) * per), *xt = malloc(sizeof(float) * per);
    Rng r;
    rng_seed(&r, TOUR_NOISE_SEED);
    rng_fill_normal(&r, x0, (long)per, 1.0f);
    noised(xt, x0, x1, TOUR_T, per);
    Activations a;
    activations_alloc(&a, m, 1);
    float t = TOUR_T;
    model_forward(m, &a, xt, &t);
    print_embedding(m, &a, xt);
    print_blocks(m, &a);
    print_output(m, &a, x0, x1, xt);
    activations_free(&a);
    free(x0);
    free(xt);
}

// ---------------------------------------------------------------------------
// The Euler sampler, step by step: flow_sample's loop, written out so that
// the images between the steps can be kept. snaps (n_snaps, n, per) gets x
// after the steps listed in at[] (0 = the noise itself).
static void euler_walk(Model *m, float *x, int n, int steps, const int *at, int n_snaps, float *snaps) {
    size_t per = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img;
    Activations a;
    activations_alloc(&a, m, n);
    float *t = malloc(sizeof(float) * n);
    for (int i = 0; i <= steps; i++) {
        for (int s = 0; s < n_snaps; s++)
            if (at[s] == i) memcpy(snaps + (size_t)s * n * per, x, sizeof(float) * n * per);
        if (i == steps) break;
        for (int k = 0; k < n; k++) t[k] = (float)i / (float)steps;
        model_forward(m, &a, x, t);
        float h = 1.0f / (float)steps;                    // as flow_sample: x += h·v
        for (size_t j = 0; j < (size_t)n * per; j++) x[j] += h * a.v[j];
    }
    free(t);
    activations_free(&a);
}

// 8 samples from the scorecard's noise (FD_SEED), timed if asked; then the
// same walk written out, which must land on the same images.
static void sample_and_check(Model *m, int timed) {
    int n = 8;
    size_t per = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img;
    float *x = malloc(sizeof(float) * per * n), *y = malloc(sizeof(float) * per * n);
    double t0 = wall_seconds();
    scorecard_samples(m, x, n, EULER_STEPS);
    double secs = wall_seconds() - t0;
    Rng r;
    rng_seed(&r, FD_SEED);
    rng_fill_normal(&r, y, (long)(per * n), 1.0f);
    int at[1] = { EULER_STEPS };
    float *last = malloc(sizeof(float) * per * n);
    euler_walk(m, y, n, EULER_STEPS, at, 1, last);
    float worst = 0;
    int finite = 1;
    for (size_t j = 0; j < per * n; j++) {
        finite &= isfinite(x[j]) != 0;
        float d = fabsf(x[j] - last[j]);
        if (d > worst) worst = d;
    }
    printf("9. Euler sampler: %d samples x %d steps; rms %.3f, all finite: %s\n"
           "   the walk written out step by step lands %g from flow_sample's images\n",
           n, EULER_STEPS, rms(x, per * n), finite ? "yes" : "NO", worst);
    if (timed) printf("   (--time: the %d samples took %.2f s)\n", n, secs);
    free(x); free(y); free(last);
}

// ---------------------------------------------------------------------------
// Pictures. An image panel is written as its pixels, one line each
// (x, y, r, g, b), and gnuplot draws the lines `with rgbimage`: the numbers
// stay beside the picture like every figure of the project (io/figure.h).
#define GAP 4                 // pixels between panels

static int to_byte(float v) {
    float p = (v + 1.0f) * 127.5f;                 // [-1, 1] -> [0, 255], as samples.png
    return p < 0 ? 0 : p > 255 ? 255 : (int)(p + 0.5f);
}

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
                    (unsigned char)to_byte(img[((size_t)(C == 3 ? c : 0) * S + y) * S + x]);
}

static void canvas_write(const Canvas *cv, FILE *f) {
    for (int y = 0; y < cv->H; y++)
        for (int x = 0; x < cv->W; x++) {
            const unsigned char *p = cv->rgb + ((size_t)y * cv->W + x) * 3;
            fprintf(f, "%d\t%d\t%d\t%d\t%d\n", x, y, p[0], p[1], p[2]);
        }
}

// The script's common part: rows grow downwards, no axes, one label per
// column (xlabels) and per row (ylabels, may be NULL).
static void grid_script(FILE *gp, const char *name, const char *title, int rows, int cols, int S,
                        const char *const *xlabels, const char *const *ylabels) {
    int W = cols * (S + GAP) - GAP, H = rows * (S + GAP) - GAP;
    fprintf(gp, "set title \"%s\" font ',12'\n"
                "set termoption noenhanced\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset size ratio -1\n"
                "unset border\nunset key\nset tics scale 0 font ',11'\nset xtics (", title, W - 1, H - 1);
    for (int c = 0; c < cols; c++)
        fprintf(gp, "%s\"%s\" %g", c ? ", " : "", xlabels[c], c * (S + GAP) + (S - 1) / 2.0);
    fprintf(gp, ") nomirror\nunset x2tics\nunset y2tics\n");
    if (ylabels) {
        fprintf(gp, "set ytics nomirror (");
        for (int r = 0; r < rows; r++)
            fprintf(gp, "%s\"%s\" %g", r ? ", " : "", ylabels[r], r * (S + GAP) + (S - 1) / 2.0);
        fprintf(gp, ")\n");
    } else fprintf(gp, "unset ytics\n");
    fprintf(gp, "plot '%s.tsv' using 1:2:3:4:5 with rgbimage\n", name);
}

// Draws the grid figure NAME from the panels already written to its .tsv.
static int draw_grid(const char *dir, const char *name, const char *title, int rows, int cols, int S,
                     const char *const *xlabels, const char *const *ylabels, int width, int height,
                     char *err, size_t errlen) {
    FigureScript script;
    if (figure_script_open(&script, err, errlen) != 0) return -1;
    grid_script(script.f, name, title, rows, cols, S, xlabels, ylabels);
    return figure_script_draw(&script, dir, name, width, height, err, errlen);
}

// One test image on the straight path at t = 0, 0.25, ..., 1 (top row), and
// below it what the model makes of each: x_t + (1 - t)·v, one Euler step to t = 1.
static int figure_flow_path(Model *m, const float *x1, const char *dir, char *err, size_t errlen) {
    const ModelConfig *c = &m->cfg;
    size_t per = (size_t)c->channels * c->img * c->img;
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
    activations_alloc(&a, m, 1);
    for (int k = 0; k < cols; k++) {
        float t = 0.25f * k;
        noised(xt, x0, x1, t, per);
        model_forward(m, &a, xt, &t);
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
    size_t per = (size_t)c->channels * c->img * c->img;
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

static int draw_figures(Model *m, const float *x1, int have_image, const char *dir) {
    char err[ERRLEN];
    FigureTally tally = {0};
    if (have_image) figure_tally_add(&tally, figure_flow_path(m, x1, dir, err, sizeof err), "step0_tour", err);
    else fprintf(stderr, "step0_tour: no flow-path figure: it needs a CIFAR-10 test image\n");
    figure_tally_add(&tally, figure_euler_walk(m, dir, err, sizeof err), "step0_tour", err);
    figure_tally_add(&tally, figure_samples(m->cfg.img, dir, err, sizeof err), "step0_tour", err);
    figure_tally_report(stdout, &tally, dir);
    return tally.failed ? 1 : 0;
}

// ---------------------------------------------------------------------------

typedef struct {
    const char *model, *model_name, *figures;   // model_name: as printed (the shipped one relative)
    int test_image, val_mse, timed, threads;
} Options;

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
static int parse_options(int argc, char **argv, Options *o) {
    static const struct option opts[] = {
        { "test-image", no_argument, 0, 'i' },   { "val-mse", no_argument, 0, 'v' },
        { "time", no_argument, 0, 't' },         { "model", required_argument, 0, 'm' },
        { "figures", required_argument, 0, 'f' }, { "threads", required_argument, 0, 'T' },
        { "help", no_argument, 0, 'h' },         { 0, 0, 0, 0 },
    };
    static char shipped[1024];
    project_path(shipped, sizeof shipped, SHIPPED_MODEL);
    *o = (Options){ shipped, SHIPPED_MODEL, NULL, 0, 0, 0, 0 };
    optind = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 'i': o->test_image = 1; break;
        case 'v': o->val_mse = 1; break;
        case 't': o->timed = 1; break;
        case 'm': o->model = o->model_name = optarg; break;
        case 'f': o->figures = optarg; break;
        case 'T':
            if (parse_int_in(optarg, 0, 1024, &o->threads) != 0)
                return args_error(usage, "--threads wants a whole number from 0 to 1024, not '%s'", optarg);
            break;
        case 'h': usage(stdout); return ARGS_HELP;
        default: return args_unknown(usage, argv);
        }
    }
    if (optind < argc) return args_error(usage, "unexpected argument '%s'", argv[optind]);
    return ARGS_OK;
}


int main(int argc, char **argv) {
    blas_use_fitting_kernel(argv);   // OpenBLAS on a CPU newer than it: io/blas_kernel.h
    if (argc >= 2 && strcmp(argv[1], "export") == 0)
        return argc == 4 ? export_weights(argv[2], argv[3])
                         : args_error(usage, "export wants RUN_CKPT and OUT");
    Options o;
    int rc = parse_options(argc, argv, &o);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (o.threads > 0) omp_set_num_threads(o.threads);
    char err[ERRLEN];
    // the test set only for what needs it: the tour itself runs without data
    CifarSet test = {0};
    int need_data = o.test_image || o.val_mse, want_data = need_data || o.figures;
    if (want_data && cifar_load_test(NULL, &test, err, sizeof err) != 0) {
        if (need_data) {
            fprintf(stderr, "error: --test-image and --val-mse need CIFAR-10's test set: %s\n", err);
            return 1;
        }
        fprintf(stderr, "step0_tour: %s\n", err);   // --figures: all but the flow path
    }
    Model m;
    double t0 = wall_seconds();
    SafeTensors st;
    if (checkpoint_load(o.model, &m, &st, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        cifar_free(&test);
        return 1;
    }
    double load_secs = wall_seconds() - t0;
    int checksums = st_checksum_count(&st);
    Config stored = { m.cfg, run_config_default() };   // the model's config and the run's that trained it
    checkpoint_config_from(&st, o.model, &stored, err, sizeof err);   // read by checkpoint_load already
    st_free(&st);
    // the test images go into buffers of the model's img and channels
    if (test.n > 0 && cifar_check_config(&m.cfg, o.model, err, sizeof err) != 0) {
        if (need_data) {
            fprintf(stderr, "error: --test-image and --val-mse need a model of CIFAR-10's shape: %s\n", err);
            cifar_free(&test);
            model_free(&m);
            return 1;
        }
        fprintf(stderr, "step0_tour: %s; the figures leave out the flow path\n", err);
        cifar_free(&test);
    }
    char desc[1024];
    config_describe(&stored, desc, sizeof desc);
    if (checksums > 0) printf("%s: %zu parameters, checksums verified\n   %s\n", o.model_name, m.n_params, desc);
    else printf("%s: %zu parameters (the file has no checksums to verify)\n   %s\n", o.model_name, m.n_params, desc);
    if (o.timed) printf("   (--time: loaded in %.2f s)\n", load_secs);
    size_t per = (size_t)m.cfg.channels * m.cfg.img * m.cfg.img;
    float *x1 = malloc(sizeof(float) * per);
    if (o.test_image) cifar_range_to_float(&test, 0, 1, x1);
    else scorecard_samples(&m, x1, 1, EULER_STEPS);   // the model's own first sample
    printf("\nthe tour: %s, noised to t = %.2f (noise seed %llu)\n",
           o.test_image ? "CIFAR-10 test image 0" : "the model's first sample (20 Euler steps)",
           TOUR_T, (unsigned long long)TOUR_NOISE_SEED);
    tour(&m, x1);
    sample_and_check(&m, o.timed);
    if (o.val_mse)
        printf("10. val MSE on the first %d test images: %.4f\n", VAL_IMAGES,
               scorecard_val_mse(&m, &test, VAL_IMAGES));
    rc = 0;
    if (o.figures) {
        // the flow path wants a real image: test image 0 whatever the tour followed
        int have_image = test.n > 0;
        if (have_image) cifar_range_to_float(&test, 0, 1, x1);
        rc = draw_figures(&m, x1, have_image, o.figures);
    }
    free(x1);
    cifar_free(&test);
    model_free(&m);
    return rc;
}
