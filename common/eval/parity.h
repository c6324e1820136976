// parity.h: our C layers beside PyTorch's, one layer at a time, from the
// committed reference files in tests/golden/layers (make layer-files), so
// the checks run without PyTorch.
//
// Each check feeds the file's inputs to the function the model runs (and
// its backward) and compares every result with PyTorch's: max |ours − torch|
// / max |torch|, worst tensor of the forward pass and of the backward pass.
#pragma once
#include <stdio.h>
#include "io/safetensors.h"
#include "nn/config.h"

// float32 against float64 gives 1e-7 to 1e-6 here. A layer that is wrong
// (eps 1e-5 for 1e-6, no 1/√d, gate and value swapped, RoPE turning the
// wrong pairs) is off by 1e-2 or more: the bound sits between the two.
#define PARITY_TOLERANCE 1e-4

typedef struct {
    char against[160];     // what PyTorch computed it with (the file's metadata)
    char torch[160];       // "torch 1.13.0", and the file's note on it if any
    double forward;        // worst relative error of the forward results
    double backward;       // and of the gradients
    char forward_worst[160], backward_worst[160];   // where: "tensor[i]: got x, expected y"
} Parity;

// max |ours − ref| / max |ref| over ref's elements (a NaN difference sticks):
// an error relative to the tensor's own scale, so a tensor of small values
// is judged as strictly as one of large ones. *at (if not NULL): the element
// of the largest difference.
double parity_rel_err(const float *ours, const StTensor *ref, size_t *at);

// Each: 0, or -1 with a message (a tensor missing or of a wrong shape).
int parity_norm(const SafeTensors *st, NormKind kind, Parity *p, char *err, size_t errlen);
int parity_attention(const SafeTensors *st, int qk_norm, Parity *p, char *err, size_t errlen);
int parity_ffn(const SafeTensors *st, MlpKind kind, Parity *p, char *err, size_t errlen);
int parity_rope2d(const SafeTensors *st, Parity *p, char *err, size_t errlen);

// The reference file of step 2..5 ("norms", "attention", "ffn", "rope2d").
const char *parity_file(int step);

// Prints step's parity lines from dir/<file>.safetensors (dir NULL: the
// project's tests/golden/layers), one per layer, e.g.
//   ours vs torch.nn.LayerNorm (torch 1.13.0): forward 2.4e-07, backward 3.1e-07 (float32 rounding)
// The number of layers above PARITY_TOLERANCE, or -1 after a message.
int parity_print(FILE *f, int step, const char *dir);
