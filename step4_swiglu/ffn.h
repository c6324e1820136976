// ffn.h: step 4's two feed-forward networks, run alone. Each is the model's
// own MLP half (gelu_mlp_* or swiglu_mlp_*, common/nn/layers.c) on block 0's
// weights of a model built with mlp=gelu or mlp=swiglu, with its buffers
// sized for R token rows instead of a whole batch of activations.
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
    MlpKind kind;             // the model's: GELU or SwiGLU
    const BlockParams *p;     // block 0's weights
    BlockParams *g;           // and its gradients
    float *x, *y, *dy, *dx;   // (R, D)
    MlpHidden h, dh;          // (R, H) each: the hidden values and their gradients
} Ffn;

// x and dy (R, D) belong to the caller; the rest is allocated here.
void ffn_alloc(Ffn *f, const Model *m, int R, float *x, float *dy);
void ffn_free(Ffn *f);

void ffn_forward(Ffn *f);    // y = fc2(GELU(fc1(x))) or w3(SiLU(w1(x)) ⊙ w2(x))
void ffn_backward(Ffn *f);   // dx and the weight gradients from dy

// The timed calls of step 4, as BenchFn functions (void * is an Ffn *).
// A whole step: forward then backward, as in a training step.
void ffn_step(void *f);
// The elementwise middle alone, forward and backward: GELU on (R, 4D), or
// SwiGLU's gating on (R, 2/3·4D). Reads what a full step left in the buffers.
void ffn_mid_step(void *f);
