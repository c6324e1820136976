// step3.h: the parts of step3_qknorm besides the idea, which is main.c's.
//   main.c      the logit table, the x10 weights check, the bound
//   one_head.c  the one head those sections score, through attention_forward
//   options.c   the command line
//   figures.c   the two pictures (figures.h), and step3_draw_figures
#pragma once
#include "figures.h"
#include "nn/layers.h"
#include "nn/rng.h"

// One head: q, k (64 tokens, head_dim 32) ~ N(0, 1), to be multiplied by a
// growth factor as if training had grown the projection weights, and
// QueryKeyNorm's gains at 1 (their start). The scores and the softmax are
// the model's: attention_forward (common/nn/attention.c) on one image with
// one head, whose qkv input (1, L, 3·hd) holds q, k and v side by side.
typedef struct {
    int L, hd;
    float *q, *k;              // (L, hd) as drawn
    float *qs, *ks;            // (L, hd) scaled copies
    float *q_gain, *k_gain;    // (hd) ones
    float *qkv, *out;          // (L, 3·hd) the attention's input, (L, hd) its output
    float *cache_mem;
    AttentionCache cache;      // att (L, L) and max_logit after each call
} OneHead;

// q, k ~ N(0, 1) from rng, the gains at 1, v at 0; free with one_head_free.
OneHead one_head(Rng *rng);
void one_head_free(OneHead *h);

// qs, ks = growth · q, k.
void one_head_scale(OneHead *h, float growth);

// The head's attention on qs, ks, without or with QK-norm: the largest
// |score| and the mean, over the L queries, of the largest softmax weight
// (1/L for uniform attention, 1 for one-hot). With att (L, L) not NULL,
// also the softmax weights, copied there.
void one_head_scores(OneHead *h, int qk_norm, double *max_abs, double *mean_top, float *att);

// The figures folder, or NULL for --no-figures, in *figures_dir.
// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step3_parse_options(int argc, char **argv, const char **figures_dir);

// The pictures, from this run's numbers: the sweep of the head's scale and
// the attention maps of section 1. 0, or 1 after a message on stderr.
int step3_draw_figures(const char *dir, OneHead *h, const AttentionMaps *maps);
