// step7.h: the parts of step7_guidance besides the idea, which is main.c's.
//   main.c     the null label, label dropout, the guided velocity, the grid
//   sweep.c    `sweep`: one checkpoint's guided scorecard at each w; the models
//   figures.c  the grid of samples (PNG) and `curves`, the sweeps against w
//   options.c  the command line
#pragma once
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "eval/rms.h"
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

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step7_parse_options(int argc, char **argv, Options *o);

// "0,1,2.5" into w (at most max values, each finite and >= 0): the count,
// or -1 with a message in err.
int parse_w_list(const char *s, float *w, int max, char *err, size_t errlen);

// The guided samples of the grid: for each class (rows) and each GRID_W
// (columns) one sample from the same noise (one noise image a class),
// into grid (10 * GRID_W_COUNT, C, S, S), row-major. 0, or -1 with err.
int grid_samples(Model *m, float *grid, char *err, size_t errlen);
// The grid as dir/step7_grid.png (each pixel doubled), and a line saying
// so. 0, or -1 with err.
int grid_write_png(const char *dir, const float *grid, int C, int S, char *err, size_t errlen);

// The small model of sections 1-3 (the tutorial's, narrower and shallower,
// class-conditional), weights from seed 0.
void small_model(Model *m);
// One noise image x (seed 7) at t = 0.5, N times, through m with labels y
// (N): a's rows differ by the label alone (activations_free a afterwards).
void one_x_forward(Model *m, Activations *a, int N, const int *y);
// The CIFAR-10 class-conditional checkpoint at path (name: as printed) into
// m, model_free it afterwards. 0, or -1 with err (another kind of model).
int load_guided(const char *path, const char *name, Model *m, char *err, size_t errlen);
// The class the shipped probe classifier sees in each of the grid's samples.
// 0, or -1 with err.
int grid_probe_classes(const float *grid, uint8_t *seen, char *err, size_t errlen);
// The grid's table: the class the probe sees in each sample (seen: the
// grid's order), the right ones starred and counted.
void grid_table_print(const uint8_t *seen);

// `sweep` (sweep.c) and `curves` (figures.c): exit codes.
int cmd_sweep(const Options *o);
int cmd_curves(const Options *o);
