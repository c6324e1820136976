// embed.c: how an image, a time and a label become tokens and a condition:
// patchify / unpatchify, the learned row and column position tables, the
// class labels' table and the sinusoidal timestep features.
#include <math.h>
#include <string.h>
#include "layers.h"

// ---------------------------------------------------------------------------
// Patches: img (N, C, S, S) -> tokens (N, L, C·p·p), L = g², g = S/p.
// Token (gr, gc) is number gr·g + gc; inside it the values run channel by
// channel, then row, then column of the patch.
void patchify(float *tokens, const float *img, int N, int C, int S, int p) {
    // EXERCISE(patchify) begin
    int g = S / p, P = C * p * p, L = g * g;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int tok = 0; tok < L; tok++) {
            int gr = tok / g, gc = tok % g;                   // the patch's grid row, column
            float *t = tokens + ((size_t)n * L + tok) * P;    // (P) = (C, p, p)
            for (int c = 0; c < C; c++)
                for (int i = 0; i < p; i++)
                    for (int j = 0; j < p; j++)
                        t[(c * p + i) * p + j] =
                            img[(((size_t)n * C + c) * S + gr * p + i) * S + gc * p + j];
        }
    // EXERCISE end
}

// The exact inverse: every pixel belongs to one patch, so this is a copy back.
void unpatchify(float *img, const float *tokens, int N, int C, int S, int p) {
    // EXERCISE(unpatchify) begin
    int g = S / p, P = C * p * p, L = g * g;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int tok = 0; tok < L; tok++) {
            int gr = tok / g, gc = tok % g;                   // the patch's grid row, column
            const float *t = tokens + ((size_t)n * L + tok) * P;   // (P) = (C, p, p)
            for (int c = 0; c < C; c++)
                for (int i = 0; i < p; i++)
                    for (int j = 0; j < p; j++)
                        img[(((size_t)n * C + c) * S + gr * p + i) * S + gc * p + j] =
                            t[(c * p + i) * p + j];
        }
    // EXERCISE end
}

// ---------------------------------------------------------------------------
// Learned positions: token (r, c) gets pos_row[r] + pos_col[c] added.
// Two tables of g rows each instead of one of g² rows: the model learns "which
// row" and "which column" separately.
void pos_add_forward(float *h, const float *pos_row, const float *pos_col, int N, int g, int D) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; n++)
        for (int tok = 0; tok < g * g; tok++) {
            const float *pr = pos_row + (size_t)(tok / g) * D, *pc = pos_col + (size_t)(tok % g) * D; // (D)
            float *x = h + ((size_t)n * g * g + tok) * D;                                            // (D)
            for (int i = 0; i < D; i++) x[i] += pr[i] + pc[i];
        }
}

// Each table row collects the gradient of every token in its row (column) of
// every image. Summed on one thread in a fixed order: deterministic.
void pos_add_backward(float *dpos_row, float *dpos_col, const float *dh, int N, int g, int D) {
    for (int n = 0; n < N; n++)
        for (int tok = 0; tok < g * g; tok++) {
            const float *d = dh + ((size_t)n * g * g + tok) * D;                                   // (D)
            float *dr = dpos_row + (size_t)(tok / g) * D, *dc = dpos_col + (size_t)(tok % g) * D;  // (D)
            for (int i = 0; i < D; i++) { dr[i] += d[i]; dc[i] += d[i]; }
        }
}

// ---------------------------------------------------------------------------
// Class labels: image n's condition gets row y[n] of the table added. The
// last row, y = classes, is the null label: what a dropped label becomes in
// training, and the unconditional half of a guided sample. A lookup, not a
// product: one row per image, whatever the number of classes.
void label_embed_forward(float *c, const float *table, const int *y, int N, int D) {
    for (int n = 0; n < N; n++) {
        const float *row = table + (size_t)y[n] * D;     // (D) the label's row
        float *cn = c + (size_t)n * D;                   // (D)
        for (int i = 0; i < D; i++) cn[i] += row[i];
    }
}

// The gather's gradient is a scatter: each image's dc lands on the row it
// read. Images of the same label add into one row, so on one thread, in
// image order: deterministic.
void label_embed_backward(float *dtable, const float *dc, const int *y, int N, int D) {
    for (int n = 0; n < N; n++) {
        float *drow = dtable + (size_t)y[n] * D;         // (D)
        const float *d = dc + (size_t)n * D;             // (D)
        for (int i = 0; i < D; i++) drow[i] += d[i];
    }
}

// ---------------------------------------------------------------------------
// Timestep features: F/2 frequencies from 1 down to 1/10000 (geometric), each
// giving a cosine and a sine of 1000·t. t in [0, 1] is stretched to [0, 1000]
// so the fast waves wrap around many times across the range. In double: 1000·t·f
// reaches 1000, where float32 would lose the 5th digit of the angle.
void timestep_embedding(float *e, const float *t, int N, int F) {
    // EXERCISE(time_embedding) begin
    int half = F / 2;
    for (int n = 0; n < N; n++)
        for (int j = 0; j < half; j++) {
            float f = (float)exp(-log(10000.0) * j / half);   // float32 like the reference
            double arg = 1000.0 * (double)t[n] * (double)f;
            e[(size_t)n * F + j] = (float)cos(arg);          // e (N, F): cosines first,
            e[(size_t)n * F + half + j] = (float)sin(arg);   // then sines
        }
    // EXERCISE end
}
