// step5.h: the parts of step5_rope2d besides the idea, which is main.c's.
//   main.c        the tables, same offset same score, base 100, prefix tokens, the model
//   rope_probe.c  reading the tables back and scoring (rope_probe.h), and Step5
//   options.c     the command line
//   figures.c     the pictures (figures.h), and step5_draw_figures
#pragma once
#include "nn/config.h"

typedef struct {
    int seed;                 // of the random q and k
    const char *figures_dir;  // NULL: no figures
} Options;

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step5_parse_options(int argc, char **argv, Options *o);

// What the sections share: the model's sizes, its cos/sin tables, and one
// random query and key.
typedef struct {
    ModelConfig cfg;
    int grid, L, hd;
    int quarter;              // pairs per axis: hd/2 pairs, half for rows, half for columns
    float base;
    float *cos_t, *sin_t;     // (L, hd) each, n_prefix 0
    int seed;
    float *q, *k;             // (hd) each
    int tok_row, tok_col;     // the token whose table row section 1 shows
} Step5;

void step5_init(Step5 *s, int seed);
void step5_free(Step5 *s);

// The figures (figures.c), computed afresh from this run's q and k, and the
// one line that says where they are. 0, or 1 after a message on stderr.
int step5_draw_figures(const char *dir, const float *q, const float *k, int seed);
