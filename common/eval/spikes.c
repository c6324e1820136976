// spikes.c: the loss-spike counter (see spikes.h for the rule).
#include "spikes.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

// Sort key for the window: finite values in order, then +inf and NaN, which
// rank above everything (qsort needs a total order, and NaN compares false
// with everything, so it gets its own rank).
static int rank_of(float x) { return isnan(x) ? 2 : (isinf(x) && x > 0) ? 1 : 0; }

static int cmp_loss(const void *pa, const void *pb) {
    float a = *(const float *)pa, b = *(const float *)pb;
    int ra = rank_of(a), rb = rank_of(b);
    if (ra != rb || ra == 2) return ra - rb;
    return (a > b) - (a < b);
}

int count_loss_spikes(const float *loss, int n) {
    const int window = SPIKE_WINDOW;
    const float factor = SPIKE_FACTOR;
    if (!loss || n <= window) return 0;
    float *buf = malloc(sizeof(float) * (size_t)window);
    if (!buf) return -1;
    int spikes = 0;
    for (int i = window; i < n; i++) {
        if (!isfinite(loss[i])) { spikes++; continue; }
        // Sorting 100 numbers per step is ~4,000 × 700 compares for a
        // whole run: nothing, next to a training step.
        memcpy(buf, loss + i - window, sizeof(float) * (size_t)window);
        qsort(buf, (size_t)window, sizeof(float), cmp_loss);
        double med = (window % 2) ? buf[window / 2]
                                  : 0.5 * ((double)buf[window / 2 - 1] + buf[window / 2]);
        // A NaN median (more than half the window blew up) compares false:
        // the finite loss after it is not called a spike.
        spikes += (double)loss[i] > (double)factor * med;
    }
    free(buf);
    return spikes;
}
