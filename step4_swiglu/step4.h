// step4.h: the parts of step4_swiglu besides the idea, which is main.c's.
//   main.c     the two FFNs: shapes and counts, the rounding rule, time, the model
//   ffn.c      one block's FFN on its own (ffn.h), and the models it comes from
//   options.c  the command line
//   figures.c  the pictures (figures.h), and step4_draw_figures
#pragma once
#include "io/config_parse.h"
#include "nn/model.h"
#include "nn/rng.h"

typedef struct {
    int rounds;               // timed rounds per call in section 3
    int batch;                // images in section 3's batch
    const char *figures_dir;  // NULL: no figures
} Options;

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step4_parse_options(int argc, char **argv, Options *o);

// What the sections share: the default config and a model built each way
// (block 0 of each holds one FFN, weights drawn as in model_init_weights), and
// one random stream for the inputs of sections 1 and 3.
typedef struct {
    Config def;
    Model gelu, swiglu;
    int D, L, H_gelu, H_swiglu;
    Rng rng;
} Step4;

void step4_init(Step4 *s);

// Builds the parameter table of cfg with its `--set` changes applied, or exits.
void step4_build(Model *m, Config cfg, const char *const *sets, int nsets);

// The figures (figures.c), computed afresh in this run, and the one line that
// says where they are. 0, or 1 after a message on stderr.
int step4_draw_figures(const char *dir);
