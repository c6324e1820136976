// adamw.c: the AdamW update (see adamw.h).
#include "adamw.h"
#include "layers.h"   // OMP_MIN_FLOATS
#include <math.h>

AdamWConfig adamw_default(float lr) {
    AdamWConfig c = { lr, 0.9f, 0.999f, 1e-8f, 0.0f };
    return c;
}

void adamw_update(float *p, const float *g, float *m, float *v, size_t n,
                  int t, const AdamWConfig *c, float wd) {
    // EXERCISE(adamw_update) begin
    // Bias corrections, in double: 1 - 0.999^t is tiny in the first steps.
    float bc1 = (float)(1.0 - pow(c->beta1, t));
    float bc2 = (float)(1.0 - pow(c->beta2, t));
    float step_size = c->lr / bc1;
    float sqrt_bc2 = sqrtf(bc2);
    #pragma omp parallel for schedule(static) if (n > OMP_MIN_FLOATS)
    for (size_t i = 0; i < n; i++) {
        float gi = g[i];
        p[i] -= c->lr * wd * p[i];
        m[i] = c->beta1 * m[i] + (1.0f - c->beta1) * gi;
        v[i] = c->beta2 * v[i] + (1.0f - c->beta2) * gi * gi;
        // torch: denom = sqrt(v)/sqrt(bc2) + eps; p -= (lr/bc1) * m / denom
        float denom = sqrtf(v[i]) / sqrt_bc2 + c->eps;
        p[i] -= step_size * m[i] / denom;
    }
    // EXERCISE end
}
