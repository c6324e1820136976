// golden.h: checks the C model against a golden file written by the PyTorch
// reference: forward output, loss, every gradient, AdamW steps and an Euler
// sample, each at a tolerance.
//
// A file of K AdamW steps ("adamw.steps" = K) holds, for each step k, the
// reference's gradient ("adamw<k>.grad.<param>") and weights after it
// ("adamw<k>.<param>"); a file without it one step ("grad.", "adamw.").
// Several steps, because a first step from zero moments is lr·g/(|g|+ε)
// whatever β1 and β2 are.
//
// Step k is judged from the reference's weights of step k-1, never from a
// path of ours that has drifted: what is measured is the code, not the order
// in which this CPU adds floats.
#pragma once
#include <stddef.h>
#include <stdio.h>

#define GOLDEN_TOL_LOSS 1e-5     // |loss − ref| / |ref|
#define GOLDEN_TOL_OUT 1e-3      // output, gradients, sample: max |v − ref| / max |ref|
#define GOLDEN_TOL_GRAD 1e-3
#define GOLDEN_TOL_SAMPLE 1e-3
// Logit-normal times from the same normal draws, and the EMA's γ: float32's
// sigmoid against float64's (a few 1e-8), where a wrong mean or scale is
// off by 1e-2 or more.
#define GOLDEN_TOL_TIMES 1e-5
// Our AdamW on the reference's own gradients: float32 against float64
// arithmetic only (about 1e-5 of lr). A missing weight decay (wd·|p| is
// several % of lr in the golden files), a missing bias correction or a
// wrong β is off by more than 1e-2 of lr.
#define GOLDEN_TOL_ADAMW_STEPS 1e-3
// Our AdamW on our own gradients, from the reference's weights and moments
// (end to end), on the weights whose gradient we resolve (GOLDEN_RESOLVED).
#define GOLDEN_TOL_ADAMW 0.05
// An AdamW step normalises a gradient by its own size: a gradient of ours
// off by a fraction r of itself moves the step by at most r/2 of lr (r/4
// at the first step: d/dg of g/(|g|+ε) times g is at most 1/4), while one
// under our error can flip its sign, a whole 2·lr, by rounding alone. So
// the end-to-end check judges a weight only where the reference's gradient
// is at least this many times the worst error of our gradients in its
// tensor (there the step is off by at most 5e-3 of lr, a tenth of the
// tolerance); the others are counted, and the gradient check judges them.
#define GOLDEN_RESOLVED 100.0
#define GOLDEN_MAX_STEPS 8
#define GOLDEN_MAX_CHECKS (6 + 3 * GOLDEN_MAX_STEPS)

// One comparison: its worst error and where, and its tolerance.
typedef struct {
    const char *quantity;   // "loss", "output", "grads", "adamw/lr", "e2e/lr", "sample", "times", "ema.gamma", "ema/lr"
    int step;               // 1..K for the per-step checks, 0 otherwise
    double err, tol;
    char where[64];         // the tensor of the worst error, or ""
} GoldenCheck;

typedef struct {
    char config[256];       // one-line description of the file's config
    GoldenCheck check[GOLDEN_MAX_CHECKS];
    int n_checks;
    int steps;              // K (1 for a file without "adamw.steps")
    long not_judged;        // weights × steps left out of the end-to-end checks
    long judged;            // and those judged
    int pass;               // every check within its tolerance
} GoldenReport;

// 0 when the comparison ran (see rep->pass), -1 with a message.
int golden_compare(const char *path, GoldenReport *rep, char *err, size_t errlen);

// The checks over their tolerance, e.g. "grads at step 2 2.1e-03 > 1e-03
// (blocks.1.attn.q_norm.weight)", separated by "; ".
void golden_failures(const GoldenReport *rep, char *out, size_t cap);

// The table's header, then a file's lines: each quantity's worst error, the
// smallest margin, the verdict; a K-step file's per-step errors; the misses.
void golden_print_header(FILE *f);
void golden_print(FILE *f, const char *name, const GoldenReport *rep);
