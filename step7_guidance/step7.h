// step7.h: the parts of step7_guidance besides the idea, which is main.c's.
//   main.c     the null label, label dropout, the guided velocity, the grid
//   sweep.c    `sweep`: one checkpoint's guided scorecard at each w (sweep.h)
//   figures.c  the grid of samples (PNG) and `curves`, the sweeps against w
//   options.c  the command line
#pragma once
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "io/args.h"
#include "nn/flow.h"
#include "nn/model.h"
#include "io/shipped.h"   // SHIPPED_C10, GRID_W_COUNT, GRID_STEPS
#define SWEEP_W_DEFAULT "0,1,2,3,4,5,6"
#define SWEEP_MAX_W 32
#define ERRLEN 1024

extern const char *const CIFAR_CLASS[10];   // CIFAR-10's labels 0..9 by name
extern const float GRID_W[GRID_W_COUNT];    // the grid's guidance scales, its columns

typedef struct {
    const char *model, *model_name;  // the class-conditional checkpoint; as printed
    const char *figures;             // NULL: no figures
    const char *w_list, *out;        // sweep: the guidance scales, the .tsv written
    int samples, steps;              // sweep: how many samples (a multiple of 10), sampler steps
    const char *sampler_name;        // sweep: euler | heun
    SamplerKind sampler;             // sweep: that sampler
    bool ema;                        // sweep: the checkpoint's EMA weights, not its trained ones
    char **words;                    // `sweep`, `curves TSV...`, or nothing
    int nwords;
} Options;

// Root mean square of n floats, in double.
static inline double rms(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return n ? sqrt(s / n) : 0;
}

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step7_parse_options(int argc, char **argv, Options *o);

// "0,1,2.5" into w (at most max values, each finite and >= 0): the count,
// or -1 with a message in err.
int parse_w_list(const char *s, float *w, int max, char *err, size_t errlen);

// The guided samples of the grid: for each class (rows) and each GRID_W
// (columns) one sample from the same noise (one noise image a class),
// into grid (10 * GRID_W_COUNT, C, S, S), row-major. 0, or -1 with err.
int grid_samples(Model *m, float *grid, char *err, size_t errlen);
// The grid as dir/step7_grid.png (each pixel doubled). 0, or -1 with err.
int grid_write_png(const char *dir, const float *grid, int C, int S, char *err, size_t errlen);

// `sweep` (sweep.c) and `curves` (figures.c): exit codes.
int cmd_sweep(const Options *o);
int cmd_curves(const Options *o);
