// step3.h: the parts of step3_qknorm besides the idea, which is main.c's.
//   main.c      the logit table, the x10 weights check, the bound
//   one_head.c  the one head those sections score, through attention_forward,
//               the attention layer of section 2, section 3's inputs
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

// Section 2: a whole attention layer without biases (a bias would not grow
// with the weights): out = proj(attention(qkv(x))). x (N, L, D), w_qkv
// (3D, D), w_proj (D, D), out (N, L, D); q_gain, k_gain (D/H) or NULL for no
// QK-norm. Returns the largest |logit|.
float attention_layer(float *out, const float *x, const float *w_qkv, const float *w_proj,
                      const float *q_gain, const float *k_gain, int N, int L, int D, int H);

// Section 3: the table's rows of inputs. Rows 0-3 scale q and k by one of
// BOUND_SCALES each, row 4 gives every value its own scale from 10^-6 to
// 10^6, row 5 sets every key equal to its query at scale 10^3 (the worst
// case). Draws the head's qs, ks for row `row`.
#define BOUND_SPREAD 6.0f        // row 4: every value its own scale, 10^-6 to 10^6
#define BOUND_PARALLEL 1e3f      // row 5: k = q at this scale
extern const float BOUND_SCALES[4];
void draw_row_inputs(OneHead *h, Rng *rng, int row);
