// walk.c: the flow's path for the tour and its figures: an image noised to
// time t, and the Euler sampler's steps written out.
#include <stdlib.h>
#include <string.h>
#include "step0.h"
#include "nn/flow.h"

// x_t = (1 - t)·x0 + t·x1 of one image (flow_interpolate with N = 1).
void noised(float *xt, const float *x0, const float *x1, float t, size_t per) {
    float *target = malloc(sizeof(float) * per);
    flow_interpolate(xt, target, x1, x0, &t, 1, per);
    free(target);
}

// The Euler sampler, step by step: flow_sample's loop, written out so that
// the images between the steps can be kept (each step is flow_euler_step,
// an exercise of docs/exercises.md). snaps (n_snaps, n, per) gets x
// after the steps listed in at[] (0 = the noise itself).
void euler_walk(Model *m, float *x, int n, int steps, const int *at, int n_snaps, float *snaps) {
    size_t per = cfg_image_floats(&m->cfg);
    Activations a;
    activations_alloc(&a, m, n, false);
    float *t = malloc(sizeof(float) * n);
    for (int i = 0; i <= steps; i++) {
        for (int s = 0; s < n_snaps; s++)
            if (at[s] == i) memcpy(snaps + (size_t)s * n * per, x, sizeof(float) * n * per);
        if (i == steps) break;
        for (int k = 0; k < n; k++) t[k] = (float)i / (float)steps;
        model_forward(m, &a, x, t, NULL);
        flow_euler_step(x, a.v, 1.0f / (float)steps, (size_t)n * per);   // as flow_sample
    }
    free(t);
    activations_free(&a);
}
