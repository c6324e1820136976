// rope_probe.c: see rope_probe.h.
#include "rope_probe.h"

#include <math.h>
#include <stddef.h>
#include "nn/layers.h"

double table_angle(const float *cos_t, const float *sin_t, int hd, int tok, int i) {
    return atan2(sin_t[(size_t)tok * hd + 2 * i], cos_t[(size_t)tok * hd + 2 * i]);
}

// To turn one vector as token l, hand rope_forward row l of the tables and L = 1.
double rope_score(const float *q, const float *k, const float *cos_t, const float *sin_t,
                  int grid, int hd, int rq, int cq, int rk, int ck) {
    float qr[hd], kr[hd];
    int iq = rq * grid + cq, ik = rk * grid + ck;   // tokens are row-major over the grid
    rope_forward(qr, q, cos_t + (size_t)iq * hd, sin_t + (size_t)iq * hd, 1, 1, hd);
    rope_forward(kr, k, cos_t + (size_t)ik * hd, sin_t + (size_t)ik * hd, 1, 1, hd);
    double s = 0.0;
    for (int j = 0; j < hd; j++) s += (double)qr[j] * kr[j];
    return s;
}
