// gradcheck.h: the backward pass against finite differences, for the whole
// model (docs/backward.md). The parameters are taken in the order the
// backward pass reaches them, from the loss back to the patch embedding and
// the time MLP, each block's ada Linear by the rows of each of its chunks
// (shift, scale and gate of each half: the gradients of those vectors), so
// that the first group whose gradient is wrong is the one nearest the
// mistake. tests/test_model.c holds every group to a tolerance;
// `step0_tour/step0_tour backward` prints them.
#pragma once
#include "model.h"

// Weights where every gradient is alive, for a check: the model's
// initialisation from seed, then the norm gains moved off 1 (where a bug
// that confuses gain and 1/gain cancels) and adaLN-Zero's zero tensors
// given values in ±0.3 (at 0 its gates block every branch's gradient).
void grad_check_weights(Model *m, unsigned long long seed);

// A group of parameters: a tensor, or some of its rows, contiguous.
typedef struct {
    char name[96];            // "blocks.1.mlp.fc2.weight", "blocks.1.ada.weight, rows of scale_m"
    const ParamTensor *tensor;
    size_t offset, size;      // its floats in the model's params and grads
} GradGroup;

// The model's groups in the order the backward pass reaches them, into g
// (at most max). Returns how many.
int grad_groups(const Model *m, GradGroup *g, int max);

// One group's check: up to `probes` elements, spread from its first to its
// last, each moved by ±h and the loss recomputed (loss(ctx), from the
// model's params); the central difference against the backward's gradient
// grads (the model's n_params). The error is relative to the group's own
// scale, its largest |gradient| (or |finite difference| if larger).
typedef struct {
    int probes;                 // elements probed
    double scale;               // the group's largest |gradient|
    double worst;               // worst |backward − finite difference| / scale
    size_t worst_at;            // its element, counted from the group's first
    double backward, numeric;   // the gradient and the finite difference there
} GradCheck;

void grad_check_group(Model *m, const GradGroup *g, const float *grads, double (*loss)(void *), void *ctx,
                      int probes, float h, GradCheck *r);
