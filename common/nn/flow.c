// flow.c: the flow-matching loss, the Euler sampler, and classifier-free
// guidance.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "errors.h"
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
        model_forward(m, a, x, t, NULL);                  // a->v (N, C, S, S)
        flow_euler_step(x, a->v, 1.0f / (float)steps, (size_t)N * per_image);
    }
    free(t);
}

void flow_guided_velocity(float *v, const float *v_both, float w, size_t n) {
    // EXERCISE(guided_velocity) begin
    const float *v_null = v_both, *v_label = v_both + n;   // (n) each
    #pragma omp parallel for schedule(static)
    for (size_t j = 0; j < n; j++) v[j] = v_null[j] + w * (v_label[j] - v_null[j]);
    // EXERCISE end
}

int flow_guided_rows(int N, float w) { return w == 1.0f ? N : 2 * N; }

int flow_sample_guided(Model *m, Activations *a, float *x, const int *y, int N, float w, int steps,
                       char *err, size_t errlen) {
    int classes = m->cfg.classes, rows = flow_guided_rows(N, w), N_given = a->N;
    if (classes <= 0) return errorf(err, errlen, "guided sampling needs a class-conditional model (classes > 0)");
    if (!(w >= 0.0f) || !isfinite(w)) return errorf(err, errlen, "guidance=%g: must be a finite number >= 0", w);
    if (!y) return errorf(err, errlen, "guided sampling needs a label for each image (the null label %d: none)", classes);
    if (N < 1 || rows > N_given)
        return errorf(err, errlen, "%d images at guidance %g need activations for %d, not %d", N, w, rows, N_given);
    for (int n = 0; n < N; n++)
        if (y[n] < 0 || y[n] > classes)
            return errorf(err, errlen, "label %d of image %d: not a class 0..%d nor the null label %d", y[n], n,
                          classes - 1, classes);
    size_t per_image = (size_t)m->cfg.channels * m->cfg.img * m->cfg.img, n = (size_t)N * per_image;
    float *t = malloc(sizeof(float) * rows);                 // (rows) every image at the same time
    int *labels = malloc(sizeof(int) * rows);                // (rows) [null | y], or y at w = 1
    float *both = rows > N ? malloc(sizeof(float) * 2 * n) : NULL;   // (2N, C, S, S) [x | x]
    if (!t || !labels || (rows > N && !both)) {
        free(t); free(labels); free(both);
        return errorf(err, errlen, "out of memory for a guided sample of %d images", N);
    }
    for (int r = 0; r < rows; r++) labels[r] = rows > N && r < N ? classes : y[r % N];
    a->N = rows;
    for (int i = 0; i < steps; i++) {
        for (int r = 0; r < rows; r++) t[r] = (float)i / (float)steps;
        if (rows == N) {                                       // w = 1: v(x, t, y) itself
            model_forward(m, a, x, t, labels);
        } else {                                               // one batch, both velocities
            memcpy(both, x, n * sizeof(float));
            memcpy(both + n, x, n * sizeof(float));
            model_forward(m, a, both, t, labels);              // a->v (2N, C, S, S)
            flow_guided_velocity(a->v, a->v, w, n);            // its first N: the guided v
        }
        flow_euler_step(x, a->v, 1.0f / (float)steps, n);
    }
    a->N = N_given;
    free(t); free(labels); free(both);
    return 0;
}
