// ema.c: the power-function EMA of the weights (see ema.h).
#include <math.h>
#include "ema.h"

double ema_gamma(double sigma_rel) {
    double s2 = 1.0 / (sigma_rel * sigma_rel);
    double a = 7.0, b = 16.0 - s2, c = 12.0 - s2;
    // Newton from above every root (Cauchy's bound): the cubic rises and
    // curves upward there, so the steps fall monotonically onto the largest.
    double g = 1.0 + fmax(a, fmax(fabs(b), fabs(c)));
    for (int i = 0; i < 200; i++) {
        double f = ((g + a) * g + b) * g + c, df = (3.0 * g + 2.0 * a) * g + b;
        double next = g - f / df;
        if (next == g) break;
        g = next;
    }
    return g;
}

void ema_update(float *ema, const float *params, size_t n, long step, double gamma) {
    // EXERCISE(ema_update) begin
    float beta = (float)pow(1.0 - 1.0 / (double)step, gamma + 1.0);
    for (size_t i = 0; i < n; i++) ema[i] = beta * ema[i] + (1.0f - beta) * params[i];
    // EXERCISE end
}
