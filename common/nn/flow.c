// flow.c: the flow-matching loss, its times, the Euler and Heun samplers,
// and classifier-free guidance.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "errors.h"
#include "flow.h"

void flow_logit_normal_times(float *t, const float *u, int n, float mean, float std) {
    // EXERCISE(logit_normal) begin
    for (int i = 0; i < n; i++) t[i] = 1.0f / (1.0f + expf(-(mean + std * u[i])));
    // EXERCISE end
}

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

void flow_heun_step(float *x, const float *v1, const float *v2, float h, size_t n) {
    // EXERCISE(heun_step) begin
    #pragma omp parallel for schedule(static)
    for (size_t j = 0; j < n; j++) x[j] += h * 0.5f * (v1[j] + v2[j]);
    // EXERCISE end
}

void flow_guided_velocity(float *v, const float *v_both, float w, size_t n) {
    // EXERCISE(guided_velocity) begin
    const float *v_null = v_both, *v_label = v_both + n;   // (n) each
    #pragma omp parallel for schedule(static)
    for (size_t j = 0; j < n; j++) v[j] = v_null[j] + w * (v_label[j] - v_null[j]);
    // EXERCISE end
}

int flow_guided_rows(int N, float w) { return w == 1.0f ? N : 2 * N; }

// What one evaluation of the sampler needs: the model, the rows it runs
// (N, or 2N for [null | y] when guided at w != 1) with their labels, and a
// buffer for [x | x].
typedef struct {
    Model *m;
    Activations *a;
    int N, rows;
    const int *labels;   // (rows), or NULL: the model's own velocity
    float w;
    float *both;         // (2n) when rows > N
    float *t;            // (rows)
    size_t n;            // floats of the N images
} Velocity;

// The velocity at (x, time) into a->v's first n floats: v(x, t), v(x, t, y)
// at w = 1, else the guided v(null) + w·(v(y) − v(null)) of one batch.
static void velocity_at(Velocity *vel, const float *x, float time) {
    for (int r = 0; r < vel->rows; r++) vel->t[r] = time;   // every image at the same time
    if (vel->rows == vel->N) {
        model_forward(vel->m, vel->a, x, vel->t, vel->labels);
        return;
    }
    memcpy(vel->both, x, vel->n * sizeof(float));
    memcpy(vel->both + vel->n, x, vel->n * sizeof(float));
    model_forward(vel->m, vel->a, vel->both, vel->t, vel->labels);     // a->v (2N, C, S, S)
    flow_guided_velocity(vel->a->v, vel->a->v, vel->w, vel->n);      // its first N: the guided v
}

static int check_sampling(const Model *m, const Activations *a, const int *y, int N, float w, int steps,
                          char *err, size_t errlen) {
    int classes = m->cfg.classes, null_label = cfg_null_label(&m->cfg), rows = y ? flow_guided_rows(N, w) : N;
    if (steps < 0) return errorf(err, errlen, "steps=%d: must be an integer >= 0", steps);
    if (y && classes <= 0) return errorf(err, errlen, "guided sampling needs a class-conditional model (classes > 0)");
    if (y && (!(w >= 0.0f) || !isfinite(w))) return errorf(err, errlen, "guidance=%g: must be a finite number >= 0", w);
    if (N < 1 || rows > a->N)
        return errorf(err, errlen, "%d images at guidance %g need activations for %d, not %d", N, w, rows, a->N);
    for (int n = 0; y && n < N; n++)
        if (y[n] < 0 || y[n] > null_label)
            return errorf(err, errlen, "label %d of image %d: not a class 0..%d nor the null label %d", y[n], n,
                          classes - 1, null_label);
    return 0;
}

int flow_sample_with(Model *m, Activations *a, float *x, const int *y, int N, float w, SamplerKind sampler,
                     int steps, char *err, size_t errlen) {
    if (check_sampling(m, a, y, N, w, steps, err, errlen) != 0) return -1;
    if (sampler != SAMPLER_EULER && sampler != SAMPLER_HEUN) return errorf(err, errlen, "unknown sampler %d", (int)sampler);
    int null_label = cfg_null_label(&m->cfg), N_given = a->N;
    Velocity vel = { .m = m, .a = a, .N = N, .rows = y ? flow_guided_rows(N, w) : N, .w = w,
                     .n = (size_t)N * cfg_image_floats(&m->cfg) };
    size_t n = vel.n;
    int *labels = y ? malloc(sizeof(int) * vel.rows) : NULL;     // (rows) [null | y], or y at w = 1
    vel.t = malloc(sizeof(float) * vel.rows);
    vel.both = vel.rows > N ? malloc(sizeof(float) * 2 * n) : NULL;
    float *v1 = sampler == SAMPLER_HEUN ? malloc(sizeof(float) * 2 * n) : NULL;   // (n) v₁, then (n) x + h·v₁
    if (!vel.t || (y && !labels) || (vel.rows > N && !vel.both) || (sampler == SAMPLER_HEUN && !v1)) {
        free(labels); free(vel.t); free(vel.both); free(v1);
        return errorf(err, errlen, "out of memory for a sample of %d images", N);
    }
    if (y) for (int r = 0; r < vel.rows; r++) labels[r] = vel.rows > N && r < N ? null_label : y[r % N];
    vel.labels = labels;
    a->N = vel.rows;
    float h = 1.0f / (float)steps;
    for (int i = 0; i < steps; i++) {
        float time = (float)i / (float)steps;
        velocity_at(&vel, x, time);                              // a->v: v(x, t)
        if (sampler == SAMPLER_EULER) {
            flow_euler_step(x, a->v, h, n);
            continue;
        }
        float *x_guess = v1 + n;                                 // Heun: the Euler guess, then its velocity
        memcpy(v1, a->v, n * sizeof(float));
        memcpy(x_guess, x, n * sizeof(float));
        flow_euler_step(x_guess, v1, h, n);
        velocity_at(&vel, x_guess, (float)(i + 1) / (float)steps);   // a->v: v(x + h·v₁, t + h)
        flow_heun_step(x, v1, a->v, h, n);
    }
    a->N = N_given;
    free(labels); free(vel.t); free(vel.both); free(v1);
    return 0;
}

void flow_sample(Model *m, Activations *a, float *x, int steps) {
    char err[256];
    flow_sample_with(m, a, x, NULL, a->N, 1.0f, SAMPLER_EULER, steps, err, sizeof err);
}
