// step2.h: the parts of step2_rmsnorm besides the idea, which is main.c's.
//   main.c        the two norms: what they do, ours by what RMSNorm must do, timings
//   norm_bench.c  the tokens of sections 1-2 and the four timed calls of section 3
//   options.c     the command line
//   figures.c     the two pictures (figures.h)
#pragma once
#include "io/bench.h"
#include "nn/rng.h"

typedef struct {
    int rounds, threads;
    const char *figures_dir;   // NULL: --no-figures
} Options;

// ARGS_OK, ARGS_HELP or ARGS_BAD (common/io/args.h).
int step2_parse_options(int argc, char **argv, Options *o);

// The four timed calls work on the same (N, L, D) tokens, R = N·L rows; each
// norm runs as the model's blocks run it, fused with the adaLN modulation
// (shift and scale per image, in ada), without a gain: they do the same job
// apart from the centring.
typedef struct {
    int N, L, D, R;
    float *x, *out, *dout, *dinp;   // (N, L, D)
    float *ada, *dada;              // (N, 2D) shift then scale, and their gradients
    float *mean, *rstd;             // (R) LayerNorm's statistics
    float *rms_rstd;                // (R) RMSNorm's one statistic
} NormBench;

// Random tokens x and gradients dout of TinyDiT's training shape, (128·64, 128),
// and both norms' statistics filled once, so the backward passes read real values.
NormBench norm_bench_make(Rng *rng);
void norm_bench_free(NormBench *b);

// The four calls on b, in the order LayerNorm forward, RMSNorm forward,
// LayerNorm backward, RMSNorm backward, for bench_interleaved.
void norm_bench_calls(NormBench *b, BenchFn fns[4]);

// Section 1's tokens with a non-zero mean: x = 3·N(0,1) + 1, shape (4, 64,
// 128), i.e. 256 tokens of 128 channels, and room for both norms' outputs.
typedef struct {
    int N, L, D, R;                 // R = N·L tokens of D channels
    float *x, *y_ln, *y_rms;        // (R, D)
    float *mean, *rstd;             // (R) LayerNorm's statistics; rstd is reused
} ShiftedTokens;
ShiftedTokens shifted_tokens(Rng *rng);
void shifted_tokens_free(ShiftedTokens *s);

// Per-token statistics of y (R, D), averaged over the R tokens:
// the mean |mean of a token| and the mean RMS of a token.
void token_stats(const float *y, int R, int D, double *mean_abs, double *mean_rms);
