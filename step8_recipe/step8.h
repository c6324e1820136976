// step8.h: the parts of step8_recipe besides the ideas, which are main.c's.
//   main.c     logit-normal times, the EMA's decay and width, Euler against
//              Heun on a flow with a known answer
//   nfe.c      the samplers on the shipped model (main's section 4);
//              `nfe`: a checkpoint's probe-FD against the model evaluations
//              of each sampler; `curves`: those over seeds; `table`: runs'
//              val MSE and probe-FD, raw and EMA, against the first's
//   figures.c  the figures of sections 1 and 3
//   options.c  the command line
#pragma once
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include "io/args.h"
#include "io/figure.h"
#include "nn/flow.h"
#include "nn/model.h"
#include "io/shipped.h"   // SHIPPED_MODEL

#define NFE_COUNT 6
extern const int NFE_LIST[NFE_COUNT];   // 2, 4, ..., 64 model evaluations
#define ERRLEN 1024

typedef struct {
    const char *model, *model_name;  // the checkpoint of section 4 and of `nfe`
    const char *figures;             // NULL: no figures
    const char *out;                 // nfe: the .tsv it writes
    int samples;                     // nfe: samples per point
    bool ema;                        // nfe: the checkpoint's EMA of the weights
    int rounds;                      // cost: timed rounds
    char **words;                    // `nfe`, `curves TSV...`, `table RUN...`, `cost`, or nothing
    int nwords;
} Options;

// P(t <= a) for logit-normal times t = σ(mean + std·u), u ~ N(0, 1):
// Φ((logit(a) − mean)/std), what section 1's draws approach.
static inline double logit_normal_cdf(double a, double mean, double std) {
    if (a <= 0) return 0;
    if (a >= 1) return 1;
    return 0.5 * erfc(-(log(a / (1 - a)) - mean) / std / sqrt(2.0));
}
// Section 1's figure, step8_times, from the draws of both kinds of times
// (n each), and section 3's, step8_orders, from each sampler's errors at
// NFE_LIST: figure_tally_add's answer.
int times_figure(const char *figures, const float *flat, const float *t, int n, FigureTally *tally);
int orders_figure(const char *figures, const double *err_e, const double *err_h, FigureTally *tally);

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step8_parse_options(int argc, char **argv, Options *o);
// Section 4: each sampler's RMS distance from many small steps, at the same
// evaluations, on o->model's samples (nfe.c). 0, or 1 after a message.
int on_the_model(const Options *o);
int cmd_nfe(const Options *o);
int cmd_curves(const Options *o);
int cmd_table(const Options *o);
int cmd_cost(const Options *o);
