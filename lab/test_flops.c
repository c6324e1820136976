// test_flops.c: the floating-point count of a training step (speed.c), on a
// tiny config counted by hand, and on the tutorial's model. No timing here:
// `make check` must not depend on how busy the machine is.
#include "testutil.h"
#include "lab.h"

// img 8, patch 4, 3 channels: a 2x2 grid, L = 4 tokens, P = 48.
// dim 8, 2 heads (hd = 4), depth 1, mlp_ratio 2 (GELU hidden 16), freq_dim 4.
// Batch N = 2, so R = N·L = 8 token rows.
static Config tiny(void) {
    Config c = config_default();
    c.model.img = 8; c.model.patch = 4; c.model.channels = 3;
    c.model.dim = 8; c.model.heads = 2; c.model.depth = 1; c.model.mlp_ratio = 2.0f; c.model.freq_dim = 4;
    return c;
}

START_TEST(test_tiny_config_by_hand) {
    Config c = tiny();
    ck_assert_int_eq(cfg_tokens(&c.model), 4);
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 16);
    // forward, each product 2·M·N·K:
    double patch = 2.0 * 8 * 48 * 8;          // (8, 48)·(48, 8)      6,144
    double t_fc1 = 2.0 * 2 * 4 * 8;           // (2, 4)·(4, 8)          128
    double t_fc2 = 2.0 * 2 * 8 * 8;           // (2, 8)·(8, 8)          256
    double ada = 2.0 * 2 * 8 * 32;            // (2, 8)·(8, 32)       1,024
    double qkv = 2.0 * 8 * 8 * 24;            // (8, 8)·(8, 24)       3,072
    double scores = 4 * (2.0 * 4 * 4 * 4);    // 4 (image, head) pairs of (4, 4)·(4, 4): 512
    double attv = 4 * (2.0 * 4 * 4 * 4);      // the same shape again:  512
    double proj = 2.0 * 8 * 8 * 8;            // (8, 8)·(8, 8)        1,024
    double mlp = 2.0 * 8 * 8 * 16 * 2;        // fc1 (8, 8)·(8, 16) and fc2 (8, 16)·(16, 8): 4,096
    double ada_f = 2.0 * 2 * 8 * 16;          // (2, 8)·(8, 16)         512
    double head = 2.0 * 8 * 8 * 48;           // (8, 8)·(8, 48)       6,144
    double fwd = patch + t_fc1 + t_fc2 + ada + qkv + scores + attv + proj + mlp + ada_f + head;
    ck_assert(fwd == 23424.0);
    StepFlops f = train_step_flops_detail(&c.model, 2);
    ck_assert_double_eq(f.attention, scores + attv);
    ck_assert_double_eq(f.forward, fwd);
    ck_assert_double_eq(f.step, 3 * fwd);     // backward = 2 x forward
    ck_assert_double_eq(train_step_flops_detail(&c.model, 2).step, 70272.0);

    // SwiGLU: hidden int(2·2·8/3) = 10, three products of (8, 8)·(8, 10) size
    c.model.mlp = MLP_SWIGLU;
    ck_assert_int_eq(cfg_mlp_hidden(&c.model), 10);
    ck_assert_double_eq(train_step_flops_detail(&c.model, 2).forward, fwd - mlp + 3 * (2.0 * 8 * 8 * 10));
    // the other switches change no product (their work is elementwise)
    Config d = tiny();
    double base = train_step_flops_detail(&d.model, 2).step;
    d.model.norm = NORM_RMSNORM; d.model.qk_norm = true; d.model.pos = POS_ROPE2D; d.model.bias = false;
    ck_assert_double_eq(train_step_flops_detail(&d.model, 2).step, base);
    // and the count is linear in the batch
    ck_assert_double_eq(train_step_flops_detail(&d.model, 6).step, 3 * base);
}
END_TEST

START_TEST(test_tutorial_model) {
    // dim 128, depth 4, 4 heads, batch 64: the GFLOP/step of lab speed, which docs/performance.md quotes
    Config c = config_default();
    StepFlops f = train_step_flops_detail(&c.model, 64);
    ck_assert_double_eq(f.linear, 6587154432.0);
    ck_assert_double_eq(f.attention, 536870912.0);
    ck_assert_double_eq(f.step, 21372076032.0);
}
END_TEST

// The elementwise passes' bytes (the roofline's other half), on the tiny
// config by hand: R = 8, D = 8 (RD = 64), Hm = 16, S = N·H·L² = 64.
START_TEST(test_tiny_bytes_by_hand) {
    Config c = tiny();
    double fwd = 4 * 64 + 6 * 64 + 2 * 64 + 2 * 8 * 16;   // norms, residuals, softmax, GELU: 1,024
    double back = 6 * 64 + 3 * 64 + 3 * 8 * 16             // norms, softmax, GELU: 960
                + 3 * 64 + 64 + 8 * 16 + 64;               // the bias gradients' reads: qkv, proj, fc1, fc2: 448
    double final = 2 * 64 + 3 * 64, adamw = 8 * 1000.0;    // 1,000 parameters
    ck_assert_double_eq(train_step_bytes(&c.model, 2, 1000), 4 * (fwd + back + final + adamw));
    // QK-norm: q and k read and written, and 6RD back; RoPE 4RD each way
    c.model.qk_norm = true;
    ck_assert_double_eq(train_step_bytes(&c.model, 2, 1000), 4 * (fwd + back + final + adamw + 10 * 64));
    c.model.pos = POS_ROPE2D;
    ck_assert_double_eq(train_step_bytes(&c.model, 2, 1000), 4 * (fwd + back + final + adamw + 18 * 64));
    // no biases: no bias gradients; SwiGLU: 3RHm forward, 5RHm back, hidden 10
    c = tiny();
    c.model.bias = false;
    ck_assert_double_eq(train_step_bytes(&c.model, 2, 1000), 4 * (fwd + back - 448 + final + adamw));
    c.model.mlp = MLP_SWIGLU;
    ck_assert_double_eq(train_step_bytes(&c.model, 2, 1000),
                        4 * (fwd - 2 * 8 * 16 + 3 * 8 * 10 + back - 448 - 3 * 8 * 16 + 5 * 8 * 10 + final + adamw));
}
END_TEST

int main(void) {
    return run_tests("lab_flops", "flops", 0, TESTS(test_tiny_config_by_hand, test_tutorial_model,
                                                    test_tiny_bytes_by_hand));
}
