// mlp.c: the feed-forward half of a block, GELU's or SwiGLU's, on R token
// rows, each a chain of the layers above it (linear.c, activations.c).
// model.c runs one of the two on every block, as the config's mlp says;
// step 4 runs both alone on block 0's weights, so the FFN the step teaches
// is the one the model trains.
#include "layers.h"

// inp (R, D) -> out (R, D) through the hidden width H: GELU(fc1) then fc2,
// keeping in h what the backward needs (h.val is unused).
void gelu_mlp_forward(float *out, MlpHidden h, const float *inp, const float *fc1_w,
                      const float *fc1_b, const float *fc2_w, const float *fc2_b, int R, int D, int H) {
    linear_forward(h.pre, inp, fc1_w, fc1_b, R, D, H);        // (R, H)
    gelu_forward(h.act, h.pre, (size_t)R * H);                // (R, H)
    linear_forward(out, h.act, fc2_w, fc2_b, R, H, D);        // (R, D)
}

// The same chain in reverse, from dout (R, D) = dL/d(out). Like every
// layer's backward it adds into its outputs: dinp (R, D), the weight
// gradients and the hidden gradients dh (R, H each) must start at zero
// (the model clears them in one place, model_backward).
void gelu_mlp_backward(float *dinp, float *dfc1_w, float *dfc1_b, float *dfc2_w, float *dfc2_b,
                       MlpHidden dh, const float *dout, const float *inp, MlpHidden h,
                       const float *fc1_w, const float *fc2_w, int R, int D, int H) {
    linear_backward(dh.act, dfc2_w, dfc2_b, dout, h.act, fc2_w, R, H, D);
    gelu_backward(dh.pre, dh.act, h.pre, (size_t)R * H);
    linear_backward(dinp, dfc1_w, dfc1_b, dh.pre, inp, fc1_w, R, D, H);
}

// SwiGLU's: silu(w1(inp)) · w2(inp), then w3. h.pre keeps the gate w1(inp),
// h.val the value w2(inp), h.act their product.
void swiglu_mlp_forward(float *out, MlpHidden h, const float *inp, const float *w1_w,
                        const float *w1_b, const float *w2_w, const float *w2_b, const float *w3_w,
                        const float *w3_b, int R, int D, int H) {
    linear_forward(h.pre, inp, w1_w, w1_b, R, D, H);          // (R, H) gate
    linear_forward(h.val, inp, w2_w, w2_b, R, D, H);          // (R, H) value
    swiglu_forward(h.act, h.pre, h.val, (size_t)R * H);       // (R, H)
    linear_forward(out, h.act, w3_w, w3_b, R, H, D);          // (R, D)
}

// In reverse, accumulating as gelu_mlp_backward does.
void swiglu_mlp_backward(float *dinp, float *dw1_w, float *dw1_b, float *dw2_w, float *dw2_b,
                         float *dw3_w, float *dw3_b, MlpHidden dh, const float *dout,
                         const float *inp, MlpHidden h, const float *w1_w, const float *w2_w,
                         const float *w3_w, int R, int D, int H) {
    linear_backward(dh.act, dw3_w, dw3_b, dout, h.act, w3_w, R, H, D);
    swiglu_backward(dh.pre, dh.val, dh.act, h.pre, h.val, (size_t)R * H);
    // inp feeds both projections, so its gradient is the sum of the two
    linear_backward(dinp, dw1_w, dw1_b, dh.pre, inp, w1_w, R, D, H);
    linear_backward(dinp, dw2_w, dw2_b, dh.val, inp, w2_w, R, D, H);
}
