// golden.h: checks the C model against a golden file written by the PyTorch
// reference: forward output, loss, every gradient, one AdamW step (and K
// steps when the file holds them) and an Euler sample, each at a tolerance.
//
// A file with K optimizer steps has the metadata "adamw.steps" = K and, for
// k = 1..K, the reference's gradient at step k ("adamw<k>.grad.<param>",
// taken at the weights after step k-1, on the file's one batch) and its
// weights after step k ("adamw<k>.<param>"). A first AdamW step from zero
// moments is lr·g/(|g|+ε) whatever β1 and β2 are; from the second step on
// the moments' recurrences and bias corrections decide it.
#pragma once
#include <stddef.h>

typedef struct {
    char config[256];       // one-line description of the file's config
    double loss_rel;        // |loss − ref| / |ref|               (tolerance 1e-5)
    double out_err;         // max |v − ref| / max |ref|          (1e-3)
    double grad_err;        // worst over tensors of the same     (1e-3)
    char grad_worst[64];    // the tensor with that worst error
    double adamw_err;       // max |p − ref| / lr, AdamW on the file's gradients (1e-3)
    double adamw_e2e_err;   // the same with our gradients, resolvable elements (0.05)
    long adamw_unresolved;  // elements whose gradient is below float32 resolution
    int adamw_steps;        // K of a K-step file, 0 for a one-step file
    double adamw_step_err[8];   // step k: AdamW on the file's gradients, max |p − ref| / lr (1e-3)
    double adamw_step_e2e[8];   // step k: with our own gradients, resolvable elements (0.05)
    long adamw_step_unresolved; // elements left out of the K-step e2e check
    double sample_err;      // max |x − ref| / max |ref|          (1e-3)
    int n_grads;            // gradient tensors compared
    int pass;
} GoldenReport;

#define GOLDEN_TOL_LOSS 1e-5
#define GOLDEN_TOL_OUT 1e-3
#define GOLDEN_TOL_GRAD 1e-3
#define GOLDEN_TOL_ADAMW 0.05
// Our AdamW on the reference's own gradients, one step or K: float32 against
// float64 arithmetic only, so much tighter than the end-to-end 5%. A missing
// weight decay (wd·|p| is several % of lr in the golden files), a missing
// bias correction or a wrong β is off by more than 1e-2 of lr.
#define GOLDEN_TOL_ADAMW_STEPS 1e-3
#define GOLDEN_MAX_STEPS 8
#define GOLDEN_TOL_SAMPLE 1e-3

// 0 when the comparison ran (see rep->pass), -1 with a message if the file
// could not be read or does not describe a model we can build.
int golden_compare(const char *path, GoldenReport *rep, char *err, size_t errlen);
