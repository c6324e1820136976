// step8.h: the parts of step8_recipe besides the ideas, which are main.c's.
//   main.c     logit-normal times, the EMA's decay and width, Euler against
//              Heun on a flow with a known answer and on the shipped model
//   nfe.c      `nfe`: a checkpoint's probe-FD against the model evaluations
//              of each sampler; `curves`: those over seeds; `table`: runs'
//              val MSE and probe-FD, raw and EMA, against the first's
//   options.c  the command line
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "io/args.h"
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

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step8_parse_options(int argc, char **argv, Options *o);
int cmd_nfe(const Options *o);
int cmd_curves(const Options *o);
int cmd_table(const Options *o);
int cmd_cost(const Options *o);
