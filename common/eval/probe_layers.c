// probe_layers.c: the probe CNN's layers, each forward next to its backward
// (see probe.h for shapes and conventions).
#include "probe.h"
#include "nn/layers.h"   // OMP_MIN_FLOATS
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ----------------------------------------------------------------------------
// conv2d 3x3, pad 1, via im2col.
//
// A convolution is a matrix product in disguise. For one image, lay out every
// 3x3 input neighbourhood of every output pixel as a column:
//     cols (C·9, H·W),  cols[c·9 + ky·3 + kx][y·W + x] = inp[c][y+ky−1][x+kx−1]
// Then out (OC, H·W) = weight (OC, C·9) · cols, where the weight's natural
// (OC, C, 3, 3) layout already is an (OC, C·9) matrix with the same row order.
// One SGEMM per image does all the multiply-adds at BLAS speed; the copy into
// cols costs 9× the input's memory traffic, which is cheap next to the FLOPs.

void im2col3x3(float *cols, const float *img, int C, int H, int W) {
    int HW = H * W;
    for (int c = 0; c < C; c++) {
        const float *plane = img + (size_t)c * HW;
        for (int ky = 0; ky < 3; ky++) {
            for (int kx = 0; kx < 3; kx++) {
                float *row = cols + (size_t)(c * 9 + ky * 3 + kx) * HW;
                // Output column x reads input column x + kx − 1, which is inside
                // the image for x in [x_lo, x_hi); the rest is the zero padding.
                int x_lo = kx == 0 ? 1 : 0;
                int x_hi = kx == 2 ? W - 1 : W;
                for (int y = 0; y < H; y++) {
                    int iy = y + ky - 1;
                    float *dst = row + y * W;
                    if (iy < 0 || iy >= H) {
                        memset(dst, 0, sizeof(float) * W);
                        continue;
                    }
                    const float *src = plane + iy * W;
                    for (int x = 0; x < x_lo; x++) dst[x] = 0.0f;
                    for (int x = x_lo; x < x_hi; x++) dst[x] = src[x + kx - 1];
                    for (int x = x_hi; x < W; x++) dst[x] = 0.0f;
                }
            }
        }
    }
}

// The adjoint of im2col: every input pixel appears in up to 9 columns, so its
// gradient is the sum of those 9 entries of dcols. Accumulates into img.
void col2im3x3(float *img, const float *cols, int C, int H, int W) {
    int HW = H * W;
    for (int c = 0; c < C; c++) {
        float *plane = img + (size_t)c * HW;
        for (int ky = 0; ky < 3; ky++) {
            for (int kx = 0; kx < 3; kx++) {
                const float *row = cols + (size_t)(c * 9 + ky * 3 + kx) * HW;
                int x_lo = kx == 0 ? 1 : 0;
                int x_hi = kx == 2 ? W - 1 : W;
                for (int y = 0; y < H; y++) {
                    int iy = y + ky - 1;
                    if (iy < 0 || iy >= H) continue;    // padding: no input there
                    float *dst = plane + iy * W;
                    const float *src = row + y * W;
                    for (int x = x_lo; x < x_hi; x++) dst[x + kx - 1] += src[x];
                }
            }
        }
    }
}

void conv3x3_forward(float *out, const float *inp, const float *weight, const float *bias,
                     int N, int C, int H, int W, int OC) {
    int K = C * 9, HW = H * W;
    // One image per iteration, each thread with its own cols buffer. Inside a
    // parallel region OpenBLAS runs single-threaded, so the two levels of
    // threading do not fight over the cores.
    #pragma omp parallel
    {
        float *cols = malloc(sizeof(float) * (size_t)K * HW);   // (C·9, H·W)
        #pragma omp for schedule(static)
        for (int n = 0; n < N; n++) {
            float *o = out + (size_t)n * OC * HW;               // (OC, H·W)
            im2col3x3(cols, inp + (size_t)n * C * HW, C, H, W);
            for (int oc = 0; oc < OC; oc++) {                   // start from the bias...
                float b = bias ? bias[oc] : 0.0f;
                for (int i = 0; i < HW; i++) o[oc * HW + i] = b;
            }
            // ...and add weight (OC, K) · cols (K, HW) onto it (beta = 1).
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, HW, K,
                        1.0f, weight, K, cols, HW, 1.0f, o, HW);
        }
        free(cols);
    }
}

// The weight gradient sums over every image of the batch. Summing per thread
// and then across threads would make the result depend on the thread count
// (float addition is not associative), so the batch is cut into a fixed
// number of chunks, each chunk sums its own partial gradient, and the
// partials are added in chunk order: same bits on 1 or 16 threads.
#define CONV_GRAD_CHUNKS 8

void conv3x3_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                      const float *inp, const float *weight, int N, int C, int H, int W, int OC) {
    int K = C * 9, HW = H * W;
    int nchunks = N < CONV_GRAD_CHUNKS ? N : CONV_GRAD_CHUNKS;
    size_t wsize = (size_t)OC * K;
    float *dw_part = calloc((size_t)nchunks * wsize, sizeof(float));   // (chunks, OC, K)
    float *db_part = calloc((size_t)nchunks * OC, sizeof(float));      // (chunks, OC)
    #pragma omp parallel
    {
        // cols is recomputed from inp rather than kept from the forward pass:
        // for a batch that would be 9× the input's memory, for a copy that
        // costs far less than the SGEMMs around it.
        float *cols = malloc(sizeof(float) * (size_t)K * HW);          // (K, HW)
        float *dcols = dinp ? malloc(sizeof(float) * (size_t)K * HW) : NULL;
        #pragma omp for schedule(static)
        for (int ch = 0; ch < nchunks; ch++) {
            float *dw = dw_part + (size_t)ch * wsize;
            float *db = db_part + (size_t)ch * OC;
            int n0 = (int)((long)N * ch / nchunks), n1 = (int)((long)N * (ch + 1) / nchunks);
            for (int n = n0; n < n1; n++) {
                const float *dout_n = dout + (size_t)n * OC * HW;      // (OC, HW)
                im2col3x3(cols, inp + (size_t)n * C * HW, C, H, W);
                // out = W·cols  =>  dW += dout · colsᵀ   (OC, HW)·(HW, K)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, OC, K, HW,
                            1.0f, dout_n, HW, cols, HW, 1.0f, dw, K);
                // the bias was added to every pixel: its gradient is the sum
                for (int oc = 0; oc < OC; oc++) {
                    float s = 0.0f;
                    for (int i = 0; i < HW; i++) s += dout_n[oc * HW + i];
                    db[oc] += s;
                }
                if (dinp) {
                    // dcols = Wᵀ · dout   (K, OC)·(OC, HW), then fold back.
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, HW, OC,
                                1.0f, weight, K, dout_n, HW, 0.0f, dcols, HW);
                    col2im3x3(dinp + (size_t)n * C * HW, dcols, C, H, W);
                }
            }
        }
        free(cols);
        free(dcols);
    }
    for (int ch = 0; ch < nchunks; ch++) {
        const float *dw = dw_part + (size_t)ch * wsize;
        for (size_t i = 0; i < wsize; i++) dweight[i] += dw[i];
        if (dbias)
            for (int oc = 0; oc < OC; oc++) dbias[oc] += db_part[(size_t)ch * OC + oc];
    }
    free(dw_part);
    free(db_part);
}

void relu_forward(float *out, const float *inp, size_t n) {
    #pragma omp parallel for schedule(static) if (n > OMP_MIN_FLOATS)
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    // d max(0, x)/dx is 1 for x > 0 and 0 below; at exactly 0 we take 0,
    // like PyTorch.
    #pragma omp parallel for schedule(static) if (n > OMP_MIN_FLOATS)
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0.0f) dinp[i] += dout[i];
}

void maxpool2x2_forward(float *out, const float *inp, int N, int C, int H, int W) {
    int OH = H / 2, OW = W / 2;
    #pragma omp parallel for schedule(static)
    for (int nc = 0; nc < N * C; nc++) {                     // one (n, c) plane each
        const float *in = inp + (size_t)nc * H * W;          // (H, W)
        float *o = out + (size_t)nc * OH * OW;               // (H/2, W/2)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                const float *p = in + (2 * oy) * W + 2 * ox;
                float m = p[0];
                if (p[1] > m) m = p[1];
                if (p[W] > m) m = p[W];
                if (p[W + 1] > m) m = p[W + 1];
                o[oy * OW + ox] = m;
            }
    }
}

void maxpool2x2_backward(float *dinp, const float *dout, const float *inp, int N, int C, int H, int W) {
    int OH = H / 2, OW = W / 2;
    // Only the window's winner influenced the output, so only it gets the
    // gradient. We find the winner again from inp instead of storing an index
    // per output: the first of the 4 that equals the max, which is the one
    // the forward's strict > kept on a tie.
    //
    // Two details make this loop several times faster than the obvious one:
    //  - no branches: the winner's position is a coin toss on real data, so
    //    the tests are written with & and | (not && and ||) and selects;
    //  - two phases per pair of rows: first the gradients of a strip of
    //    windows go to a small local buffer, then they are added to dinp.
    //    Interleaving loads of inp with stores to dinp stalls the CPU: the two
    //    big buffers start at the same offset within a 4 KiB page, and the
    //    load unit then mistakes every load for one that depends on the
    //    store before it ("4K aliasing").
    enum { STRIP = 64 };
    #pragma omp parallel for schedule(static)
    for (int nc = 0; nc < N * C; nc++) {
        const float *in = inp + (size_t)nc * H * W;       // (H, W)
        float *din = dinp + (size_t)nc * H * W;           // (H, W)
        const float *d = dout + (size_t)nc * OH * OW;     // (H/2, W/2)
        float top[2 * STRIP], bot[2 * STRIP];             // the strip's gradient, 2 rows
        for (int oy = 0; oy < OH; oy++) {
            const float *r0 = in + (2 * oy) * W, *r1 = r0 + W;
            for (int ox0 = 0; ox0 < OW; ox0 += STRIP) {
                int cnt = OW - ox0 < STRIP ? OW - ox0 : STRIP;
                for (int k = 0; k < cnt; k++) {
                    int x = 2 * (ox0 + k);
                    float a = r0[x], b = r0[x + 1], c = r1[x], e = r1[x + 1];
                    float ab = a > b ? a : b, ce = c > e ? c : e;
                    float m = ab > ce ? ab : ce;
                    float g = d[oy * OW + ox0 + k];
                    int wa = a == m;
                    int wb = (b == m) & !wa;
                    int wc = (c == m) & !(wa | wb);
                    int we = !(wa | wb | wc);
                    top[2 * k] = wa ? g : 0.0f;  top[2 * k + 1] = wb ? g : 0.0f;
                    bot[2 * k] = wc ? g : 0.0f;  bot[2 * k + 1] = we ? g : 0.0f;
                }
                float *d0 = din + (2 * oy) * W + 2 * ox0, *d1 = d0 + W;
                for (int k = 0; k < 2 * cnt; k++) { d0[k] += top[k]; d1[k] += bot[k]; }
            }
        }
    }
}

void global_avgpool_forward(float *out, const float *inp, int N, int C, int HW) {
    for (int nc = 0; nc < N * C; nc++) {
        const float *p = inp + (size_t)nc * HW;
        float s = 0.0f;
        for (int i = 0; i < HW; i++) s += p[i];
        out[nc] = s / (float)HW;
    }
}

void global_avgpool_backward(float *dinp, const float *dout, int N, int C, int HW) {
    // Every pixel contributed 1/HW of the mean.
    for (int nc = 0; nc < N * C; nc++) {
        float g = dout[nc] / (float)HW;
        float *d = dinp + (size_t)nc * HW;
        for (int i = 0; i < HW; i++) d[i] += g;
    }
}

void fc_forward(float *out, const float *inp, const float *weight, const float *bias,
                int N, int IC, int OC) {
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) out[n * OC + o] = bias ? bias[o] : 0.0f;
    // out (N, OC) += inp (N, IC) · weightᵀ (IC, OC)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC,
                1.0f, inp, IC, weight, IC, 1.0f, out, OC);
}

void fc_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                 const float *inp, const float *weight, int N, int IC, int OC) {
    if (dinp)   // dinp (N, IC) += dout (N, OC) · weight (OC, IC)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC,
                    1.0f, dout, OC, weight, IC, 1.0f, dinp, IC);
    // dweight (OC, IC) += doutᵀ (OC, N) · inp (N, IC)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N,
                1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
    if (dbias)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++) dbias[o] += dout[n * OC + o];
}

float softmax_xent_forward(float *probs, const float *logits, const uint8_t *labels, int N, int K) {
    double loss = 0.0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * K;
        float *p = probs + (size_t)n * K;
        // Subtracting the max changes nothing mathematically and keeps exp()
        // from overflowing on large logits.
        float mx = z[0];
        for (int k = 1; k < K; k++) if (z[k] > mx) mx = z[k];
        double sum = 0.0;
        for (int k = 0; k < K; k++) { p[k] = expf(z[k] - mx); sum += p[k]; }
        for (int k = 0; k < K; k++) p[k] = (float)(p[k] / sum);
        // −log softmax(z)_y = log Σ exp(z − mx) − (z_y − mx): no log of a tiny p.
        loss += log(sum) - (double)(z[labels[n]] - mx);
    }
    return (float)(loss / N);
}

void softmax_xent_backward(float *dlogits, const float *probs, const uint8_t *labels, int N, int K) {
    // The famous simplification: d(−log softmax(z)_y)/dz = softmax(z) − onehot(y).
    float inv = 1.0f / (float)N;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            dlogits[(size_t)n * K + k] += (probs[(size_t)n * K + k] - (k == labels[n] ? 1.0f : 0.0f)) * inv;
}
