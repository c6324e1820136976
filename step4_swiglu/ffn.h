// ffn.h: step 4's two feed-forward networks, written out with the model's
// own layers (linear_*, gelu_*, swiglu_* from common/nn/layers.h), exactly as
// model_forward and model_backward string them together in a block's MLP half.
#pragma once
#include <stddef.h>
#include "nn/model.h"

// What block 0's FFN holds, read from the model's parameter table: the
// tensors named blocks.0.mlp.*, split into matrices (2-D) and biases (1-D).
typedef struct { size_t weights, biases; } FfnCount;
FfnCount ffn_count(const Model *m);

// One FFN on R token rows of width D. Weights come from block 0 of a model;
// the buffers are sized for R rows.
typedef struct {
    int R, D, H;
    const BlockParams *p;     // block 0's weights
    BlockParams *g;           // and its gradients
    float *x, *y, *dy, *dx;   // (R, D)
    float *pre, *val, *act;   // (R, H): gate (or fc1 output), value, activation
    float *dpre, *dval, *dact;
} Ffn;

// x and dy (R, D) belong to the caller; the rest is allocated here.
void ffn_alloc(Ffn *f, const Model *m, int R, float *x, float *dy);
void ffn_free(Ffn *f);

void gelu_ffn_forward(Ffn *f);     // y = fc2(GELU(fc1(x)))
void swiglu_ffn_forward(Ffn *f);   // y = w3(SiLU(w1(x)) ⊙ w2(x))
void gelu_ffn_backward(Ffn *f);    // dx and the weight gradients from dy
void swiglu_ffn_backward(Ffn *f);

// The timed calls of step 4, as BenchFn functions (void * is an Ffn *).
// A whole step: forward then backward, as in a training step.
void gelu_ffn_step(void *f);
void swiglu_ffn_step(void *f);
// The elementwise middle alone, forward and backward: GELU on (R, 4D), or
// SwiGLU's gating on (R, 2/3·4D). Reads what a full step left in the buffers.
void gelu_mid_step(void *f);
void swiglu_mid_step(void *f);
