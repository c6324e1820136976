// mlp.c: the feed-forward half of a block, GELU's or SwiGLU's, on R token
// rows. model.c runs it on every block; step 4 runs it alone on block 0's
// weights, so the FFN the step teaches is the one the model trains.
#include <string.h>
#include "model.h"

// The activation, on one block of rows [r0, r0 + rows) of the hidden layer,
// called by linear_forward_then / linear_backward_then right after the
// block's product, while it is in cache (the same bits as one call on the
// whole layer after the product: the functions are elementwise).
typedef struct { MlpHidden h, dh; int H; } HiddenRows;

static void gelu_rows(void *ctx, int r0, int rows) {             // h.act = GELU(h.pre)
    const HiddenRows *c = ctx;
    size_t off = (size_t)r0 * c->H, n = (size_t)rows * c->H;
    gelu_forward(c->h.act + off, c->h.pre + off, n);
}

static void swiglu_rows(void *ctx, int r0, int rows) {           // h.act = SiLU(h.pre) · h.val
    const HiddenRows *c = ctx;
    size_t off = (size_t)r0 * c->H, n = (size_t)rows * c->H;
    swiglu_forward(c->h.act + off, c->h.pre + off, c->h.val + off, n);
}

static void gelu_backward_rows(void *ctx, int r0, int rows) {    // dh.pre += dh.act · GELU'(h.pre)
    const HiddenRows *c = ctx;
    size_t off = (size_t)r0 * c->H, n = (size_t)rows * c->H;
    gelu_backward(c->dh.pre + off, c->dh.act + off, c->h.pre + off, n);
}

static void swiglu_backward_rows(void *ctx, int r0, int rows) {  // dh.pre, dh.val from dh.act
    const HiddenRows *c = ctx;
    size_t off = (size_t)r0 * c->H, n = (size_t)rows * c->H;
    swiglu_backward(c->dh.pre + off, c->dh.val + off, c->dh.act + off, c->h.pre + off,
                    c->h.val + off, n);
}

// inp (R, D) -> out (R, D) through the hidden width H, keeping in h what the
// backward needs: GELU(fc1) then fc2, or SwiGLU's silu(w1)·w2 then w3. The
// activation is applied block by block as the product makes the hidden layer
// (the `_then` Linears): the same as
//     linear_forward(h.pre, ...fc1...); gelu_forward(h.act, h.pre, R·H);
// with one pass less over the (R, H) hidden layer.
void mlp_forward(float *out, MlpHidden h, const float *inp, const BlockParams *p,
                 MlpKind kind, int R, int D, int H) {
    HiddenRows rows = { h, { NULL, NULL, NULL }, H };
    if (kind == MLP_SWIGLU) {
        linear_forward(h.pre, inp, p->w1_w, p->w1_b, R, D, H);    // (R, H) gate
        linear_forward_then(h.val, inp, p->w2_w, p->w2_b, R, D, H,
                            swiglu_rows, &rows);                  // (R, H) value, then act (R, H)
        linear_forward(out, h.act, p->w3_w, p->w3_b, R, H, D);    // (R, D)
    } else {
        linear_forward_then(h.pre, inp, p->fc1_w, p->fc1_b, R, D, H,
                            gelu_rows, &rows);                    // (R, H), then act (R, H)
        linear_forward(out, h.act, p->fc2_w, p->fc2_b, R, H, D);  // (R, D)
    }
}

// The same chain in reverse, from dout (R, D) = dL/d(out). Like every
// layer's backward it adds into its outputs: dinp (R, D), the weight
// gradients g and the hidden gradients dh (R, H each) must start at zero
// (the model clears them in one place, model_backward).
void mlp_backward(float *dinp, BlockParams *g, MlpHidden dh, const float *dout,
                  const float *inp, MlpHidden h, const BlockParams *p,
                  MlpKind kind, int R, int D, int H) {
    HiddenRows rows = { h, dh, H };
    if (kind == MLP_SWIGLU) {
        linear_backward_then(dh.act, g->w3_w, g->w3_b, dout, h.act, p->w3_w, R, H, D,
                             swiglu_backward_rows, &rows);        // dh.act, then dh.pre, dh.val
        // inp feeds both projections, so its gradient is the sum of the two
        linear_backward(dinp, g->w1_w, g->w1_b, dh.pre, inp, p->w1_w, R, D, H);
        linear_backward(dinp, g->w2_w, g->w2_b, dh.val, inp, p->w2_w, R, D, H);
    } else {
        linear_backward_then(dh.act, g->fc2_w, g->fc2_b, dout, h.act, p->fc2_w, R, H, D,
                             gelu_backward_rows, &rows);          // dh.act, then dh.pre
        linear_backward(dinp, g->fc1_w, g->fc1_b, dh.pre, inp, p->fc1_w, R, D, H);
    }
}
