// linear.c: the Linear layer, y = x·Wᵀ + b, through cblas_sgemm.
#include <cblas.h>
#include <string.h>
#include "layers.h"

// The textbook version: one dot product per output. Slow, obviously right;
// the tests check linear_forward against it.
void linear_forward_naive(float *out, const float *inp, const float *weight, const float *bias,
                          int R, int IC, int OC) {
    for (int r = 0; r < R; r++) {
        for (int o = 0; o < OC; o++) {
            float acc = bias ? bias[o] : 0.0f;
            for (int i = 0; i < IC; i++) acc += inp[(size_t)r * IC + i] * weight[(size_t)o * IC + i];
            out[(size_t)r * OC + o] = acc;
        }
    }
}

void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int R, int IC, int OC) {
    // out (R, OC) = inp (R, IC) · weightᵀ (IC, OC)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, OC, IC,
                1.0f, inp, IC, weight, IC, 0.0f, out, OC);
    if (bias) {
        #pragma omp parallel for schedule(static) if ((size_t)R * OC > 32768)
        for (int r = 0; r < R; r++) {
            float *o = out + (size_t)r * OC;
            for (int j = 0; j < OC; j++) o[j] += bias[j];
        }
    }
}

void linear_backward(float *dinp, float *dweight, float *dbias,
                     const float *dout, const float *inp, const float *weight,
                     int R, int IC, int OC) {
    // dinp (R, IC) += dout (R, OC) · weight (OC, IC)
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, IC, OC,
                    1.0f, dout, OC, weight, IC, 1.0f, dinp, IC);
    // dweight (OC, IC) += doutᵀ (OC, R) · inp (R, IC)
    if (dweight)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, R,
                    1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
    // dbias (OC) += Σ_r dout[r, :]. Each thread owns a block of columns and
    // walks the rows in order, so the sum is the same whatever the thread count.
    if (dbias) {
        const int CH = 64;
        int nchunks = (OC + CH - 1) / CH;
        #pragma omp parallel for schedule(static) if ((size_t)R * OC > 32768)
        for (int ch = 0; ch < nchunks; ch++) {
            int o0 = ch * CH, o1 = o0 + CH < OC ? o0 + CH : OC;
            float acc[64];
            for (int o = o0; o < o1; o++) acc[o - o0] = 0.0f;
            for (int r = 0; r < R; r++) {
                const float *d = dout + (size_t)r * OC;
                for (int o = o0; o < o1; o++) acc[o - o0] += d[o];
            }
            for (int o = o0; o < o1; o++) dbias[o] += acc[o - o0];
        }
    }
}
