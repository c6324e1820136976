// flow.c: the flow-matching loss and the Euler sampler.
#include <stdlib.h>
#include "flow.h"

void flow_interpolate(float *xt, float *target, const float *x1, const float *x0,
                      const float *t, int N, size_t per_image) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        float tn = t[n];                                  // image n's time
        for (size_t i = 0; i < per_image; i++) {          // its C·S·S values
            size_t j = (size_t)n * per_image + i;
            xt[j] = (1.0f - tn) * x0[j] + tn * x1[j];
            target[j] = x1[j] - x0[j];
        }
    }
}

double flow_mse(float *dv, const float *v, const float *target, size_t n) {
    // EXERCISE(flow_loss) begin
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {                      // v, target, dv (n)
        double d = (double)v[i] - (double)target[i];
        sum += d * d;
        if (dv) dv[i] = (float)(2.0 * d / (double)n);
    }
    return sum / (double)n;
    // EXERCISE end
}

void flow_euler_step(float *x, const float *v, float h, size_t n) {
    // EXERCISE(euler_step) begin
    #pragma omp parallel for schedule(static)
    for (size_t j = 0; j < n; j++) x[j] += h * v[j];
    // EXERCISE end
}

void flow_sample(Model *m, Activations *a, float *x, int steps) {
    int N = a->N;
    size_t per_image = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img;
    float *t = malloc(sizeof(float) * N);                 // (N) every image at the same time
    for (int i = 0; i < steps; i++) {
        for (int n = 0; n < N; n++) t[n] = (float)i / (float)steps;
        model_forward(m, a, x, t);                        // a->v (N, C, S, S)
        flow_euler_step(x, a->v, 1.0f / (float)steps, (size_t)N * per_image);
    }
    free(t);
}
