// golden.h: checks the C model against a golden file written by the PyTorch
// reference (spec §7): forward output, loss, every gradient, one AdamW step
// and an Euler sample, each at the spec's tolerance.
#pragma once
#include <stddef.h>

typedef struct {
    char config[256];       // one-line description of the file's config
    double loss_rel;        // |loss − ref| / |ref|               (tolerance 1e-5)
    double out_err;         // max |v − ref| / max |ref|          (1e-3)
    double grad_err;        // worst over tensors of the same     (1e-3)
    char grad_worst[64];    // the tensor with that worst error
    double adamw_err;       // max |p − ref| / lr, AdamW on the file's gradients (0.05)
    double adamw_e2e_err;   // the same with our gradients, resolvable elements (0.05)
    long adamw_unresolved;  // elements whose gradient is below float32 resolution
    double sample_err;      // max |x − ref| / max |ref|          (1e-3)
    int n_grads;            // gradient tensors compared
    int pass;
} GoldenReport;

#define GOLDEN_TOL_LOSS 1e-5
#define GOLDEN_TOL_OUT 1e-3
#define GOLDEN_TOL_GRAD 1e-3
#define GOLDEN_TOL_ADAMW 0.05
#define GOLDEN_TOL_SAMPLE 1e-3

// 0 when the comparison ran (see rep->pass), -1 with a message if the file
// could not be read or does not describe a model we can build.
int golden_compare(const char *path, GoldenReport *rep, char *err, size_t errlen);
