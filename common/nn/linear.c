// linear.c: the Linear layer, y = x·Wᵀ + b, through matmul (matmul.c).
#include <string.h>
#include "layers.h"
#include "matmul.h"

// The textbook version: one dot product per output. Slow, obviously right;
// the tests check linear_forward against it.
void linear_forward_naive(float *out, const float *inp, const float *weight, const float *bias,
                          int R, int IC, int OC) {
    for (int r = 0; r < R; r++) {
        for (int o = 0; o < OC; o++) {
            float acc = bias ? bias[o] : 0.0f;   // out[r, o] = bias[o] + inp[r, :] · weight[o, :]
            for (int i = 0; i < IC; i++) acc += inp[(size_t)r * IC + i] * weight[(size_t)o * IC + i];
            out[(size_t)r * OC + o] = acc;
        }
    }
}

// Threads: we split every product ourselves into blocks of a FIXED size and
// hand each block to matmul inside an OpenMP loop, where it runs on the
// calling thread. Two reasons:
//   - determinism: a library's own threading splits a product by the thread
//     count, and rounds differently on 1 and on 2 threads (tests/test_model.c
//     found it with OpenBLAS). Our blocks do not depend on the thread count,
//     so neither do the results;
//   - locality: the bias is added to a block while it is still in cache, and
//     the bias gradient of a block of columns is summed right after its
//     weight gradient.
//   (The loops have no `if (nblocks > 1)` clause on purpose: outside a
//   parallel region the library would thread a one-block product itself.)
// The blocks are handed out by schedule(runtime): OMP_SCHEDULE chooses, and
// without it libgomp hands them out one at a time to whichever thread is
// free (dynamic, 1), so a thread slowed by another process on its core does
// fewer blocks instead of holding the others up at the loop's end. A block's
// result does not depend on the thread that computes it, so the numbers are
// the same under every schedule (tests/test_model.c, test_determinism_*).
#define ROW_BLOCK 128   // rows of inp / out per task (forward and dinp)
#define COL_BLOCK 64    // output features per task (dweight, dbias)

void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int R, int IC, int OC) {
    int nblocks = (R + ROW_BLOCK - 1) / ROW_BLOCK;
    #pragma omp parallel for schedule(runtime)
    for (int b = 0; b < nblocks; b++) {
        int r0 = b * ROW_BLOCK, rows = R - r0 < ROW_BLOCK ? R - r0 : ROW_BLOCK;
        float *o = out + (size_t)r0 * OC;                            // (rows, OC)
        // out (rows, OC) = inp (rows, IC) · weightᵀ (IC, OC)
        matmul(0, 1, rows, OC, IC, 1.0f, inp + (size_t)r0 * IC, IC, weight, IC, 0.0f, o, OC);
        if (bias)
            for (int r = 0; r < rows; r++)
                for (int j = 0; j < OC; j++) o[(size_t)r * OC + j] += bias[j];
    }
}

void linear_backward(float *dinp, float *dweight, float *dbias,
                     const float *dout, const float *inp, const float *weight,
                     int R, int IC, int OC) {
    int row_blocks = dinp ? (R + ROW_BLOCK - 1) / ROW_BLOCK : 0;
    int col_blocks = dweight || dbias ? (OC + COL_BLOCK - 1) / COL_BLOCK : 0;
    // One parallel region for both products: they write different arrays, so
    // a thread done with its blocks of dinp goes on to those of dweight
    // (nowait) instead of waiting for the other at the end of the first loop.
    #pragma omp parallel
    {
        // dinp (R, IC) += dout (R, OC) · weight (OC, IC), by blocks of rows
        #pragma omp for schedule(runtime) nowait
        for (int b = 0; b < row_blocks; b++) {
            int r0 = b * ROW_BLOCK, rows = R - r0 < ROW_BLOCK ? R - r0 : ROW_BLOCK;
            matmul(0, 0, rows, IC, OC, 1.0f, dout + (size_t)r0 * OC, OC, weight, IC,
                   1.0f, dinp + (size_t)r0 * IC, IC);
        }
        // dweight (OC, IC) += doutᵀ (OC, R) · inp (R, IC), and dbias (OC) += Σ_r dout[r, :],
        // by blocks of output features: each block sums over all R rows in order.
        #pragma omp for schedule(runtime) nowait
        for (int b = 0; b < col_blocks; b++) {
            int o0 = b * COL_BLOCK, cols = OC - o0 < COL_BLOCK ? OC - o0 : COL_BLOCK;
            if (dweight)
                matmul(1, 0, cols, IC, R, 1.0f, dout + o0, OC, inp, IC, 1.0f, dweight + (size_t)o0 * IC, IC);
            if (dbias) {
                float acc[COL_BLOCK] = { 0 };                        // (cols)
                for (int r = 0; r < R; r++) {
                    const float *d = dout + (size_t)r * OC + o0;     // (cols) of row r
                    for (int j = 0; j < cols; j++) acc[j] += d[j];
                }
                for (int j = 0; j < cols; j++) dbias[o0 + j] += acc[j];
            }
        }
    }
}
