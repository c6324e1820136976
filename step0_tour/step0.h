// step0.h: the parts of step0_tour besides the tour, which is main.c's.
//   main.c     the tour: one image through the model part by part, the sampler
//   figures.c  the page's three pictures (--figures DIR)
//   export.c   `export`: a run's checkpoint without its optimizer state
//   backward.c `backward`: the backward pass against finite differences, and
//              the picture of the gradient's size through the blocks
//   gates.c    `gates`: adaLN-Zero's gradients over the first updates
//   options.c  the command line
#pragma once
#include <math.h>
#include <stddef.h>
#include "io/args.h"
#include "eval/rms.h"
#include "io/cifar.h"
#include "nn/model.h"
#include "io/shipped.h"   // SHIPPED_MODEL

#define TOUR_T 0.5f              // the time the tour's image is noised to
#define TOUR_NOISE_SEED 2024ULL  // its noise (any fixed seed: the numbers repeat)
#define WALK_IMAGES 6            // rows of the sampler's walk
#define EULER_STEPS 20           // as the scorecard samples (FD_EULER_STEPS)
#define ERRLEN 1024

typedef struct {
    const char *model, *model_name, *figures;   // model_name: as printed (the shipped one relative)
    bool test_image, val_mse, timed;
    int threads;
    char **words;                               // `export RUN_CKPT OUT`, `backward`, `gates`, or nothing
    int nwords;
    ArgList sets;                               // --set key=value: `backward`'s or `gates`' model
} Options;

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step0_parse_options(int argc, char **argv, Options *o);

// x_t = (1 - t)·x0 + t·x1 of one image (per floats; walk.c).
void noised(float *xt, const float *x0, const float *x1, float t, size_t per);

// The Euler sampler's loop written out (walk.c): snaps (n_snaps, n, per)
// gets x after the steps listed in at[] (0 = the noise itself).
void euler_walk(Model *m, float *x, int n, int steps, const int *at, int n_snaps, float *snaps);

// The figures into dir (the flow path from test image 0, when test has
// images), and the line that says where they are. 0, or 1 when one failed.
int draw_figures(Model *m, const CifarSet *test, const char *dir);

// `backward`: the tiny model (with o->sets) checked by finite differences,
// group by group, printed. 0 when every group is within 1e-2 of its scale,
// 1 when one is not, 2 on a bad setting.
int backward_check(const Options *o);

// The figure tinydit_gradient_sizes into dir: the RMS of the gradient of
// each part of m's configuration at its initialisation and of m itself.
// Answers as figure_plot.
int figure_gradient_sizes(Model *m, const char *dir, char *err, size_t errlen);

// `gates`: the default model with ada=zero (and o->sets) trained three steps
// on random images, the RMS of each group's gradient printed. 0, or 2 on a
// bad setting.
int gate_grads(const Options *o);

// Writes the weights and config of the checkpoint in to out. 0, or 1 after
// a message.
int export_weights(const char *in, const char *out);

// The model o names into m (checksums checked, its description printed),
// and the CIFAR-10 test set into test when an option needs it (test->n 0
// when it is missing and only --figures wanted it). 0, or 1 after a message.
int load_tour(const Options *o, Model *m, CifarSet *test);

// Small numbers the tour prints (and eval/rms.h's rms).

static inline double mean_abs(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += fabs((double)x[i]);
    return s / (double)n;
}

static inline double mse(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return s / (double)n;
}
