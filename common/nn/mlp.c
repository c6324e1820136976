// mlp.c: the feed-forward half of a block, GELU's or SwiGLU's, on R token
// rows. model.c runs it on every block; step 4 runs it alone on block 0's
// weights, so the FFN the step teaches is the one the model trains.
#include <string.h>
#include "model.h"

// inp (R, D) -> out (R, D) through the hidden width H, keeping in h what the
// backward needs: GELU(fc1) then fc2, or SwiGLU's silu(w1)·w2 then w3.
void mlp_forward(float *out, MlpHidden h, const float *inp, const BlockParams *p,
                 MlpKind kind, int R, int D, int H) {
    size_t RH = (size_t)R * H;
    if (kind == MLP_SWIGLU) {
        linear_forward(h.pre, inp, p->w1_w, p->w1_b, R, D, H);    // (R, H) gate
        linear_forward(h.val, inp, p->w2_w, p->w2_b, R, D, H);    // (R, H) value
        swiglu_forward(h.act, h.pre, h.val, RH);                  // (R, H)
        linear_forward(out, h.act, p->w3_w, p->w3_b, R, H, D);    // (R, D)
    } else {
        linear_forward(h.pre, inp, p->fc1_w, p->fc1_b, R, D, H);  // (R, H)
        gelu_forward(h.act, h.pre, RH);                           // (R, H)
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
    size_t RH = (size_t)R * H;
    if (kind == MLP_SWIGLU) {
        linear_backward(dh.act, g->w3_w, g->w3_b, dout, h.act, p->w3_w, R, H, D);
        swiglu_backward(dh.pre, dh.val, dh.act, h.pre, h.val, RH);
        // inp feeds both projections, so its gradient is the sum of the two
        linear_backward(dinp, g->w1_w, g->w1_b, dh.pre, inp, p->w1_w, R, D, H);
        linear_backward(dinp, g->w2_w, g->w2_b, dh.val, inp, p->w2_w, R, D, H);
    } else {
        linear_backward(dh.act, g->fc2_w, g->fc2_b, dout, h.act, p->fc2_w, R, H, D);
        gelu_backward(dh.pre, dh.act, h.pre, RH);
        linear_backward(dinp, g->fc1_w, g->fc1_b, dh.pre, inp, p->fc1_w, R, D, H);
    }
}
