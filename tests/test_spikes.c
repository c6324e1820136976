// test_spikes.c: the loss-spike counter of common/eval/spikes.h on made-up curves.
#include "testutil.h"
#include "eval/spikes.h"

static float *curve(int n, float value) {
    float *c = alloc_floats((size_t)n);
    for (int i = 0; i < n; i++) c[i] = value;
    return c;
}

START_TEST(test_flat_curve) {
    float *c = curve(1000, 0.3f);
    ck_assert_int_eq(count_loss_spikes(c, 1000), 0);
    free(c);
}
END_TEST

START_TEST(test_one_jump_after_window) {
    float *c = curve(400, 1.0f);
    c[250] = 2.0f;                      // 2x the median (1.0) of steps 150..249
    ck_assert_int_eq(count_loss_spikes(c, 250), 0);   // the steps before it
    ck_assert_int_eq(count_loss_spikes(c, 251), 1);   // it is the one
    // The spike sits in the next windows too, but the median ignores it.
    ck_assert_int_eq(count_loss_spikes(c, 400), 1);
    free(c);
}
END_TEST

START_TEST(test_first_full_window_step_is_judged) {
    // Step 100 is the first with 100 steps before it.
    float *c = curve(200, 1.0f);
    c[100] = 2.0f;
    ck_assert_int_eq(count_loss_spikes(c, 200), 1);
    free(c);
}
END_TEST

START_TEST(test_jump_in_first_window_is_not_a_spike) {
    // The documented rule: steps 0..99 have no full window and are never
    // spikes, however large (the early loss falls too fast for a baseline).
    float *c = curve(300, 1.0f);
    c[0] = 50.0f;
    c[50] = 10.0f;
    c[99] = 3.0f;
    ck_assert_int_eq(count_loss_spikes(c, 300), 0);
    // A run no longer than the window has nothing to judge.
    ck_assert_int_eq(count_loss_spikes(c, 100), 0);
    free(c);
}
END_TEST

START_TEST(test_slowly_rising_curve) {
    // +0.1% a step: each loss is ~5% above the median of the 100 before it.
    float *c = alloc_floats(2000);
    for (int i = 0; i < 2000; i++) c[i] = 1.0f + 0.001f * i;
    ck_assert_int_eq(count_loss_spikes(c, 2000), 0);
    free(c);
}
END_TEST

START_TEST(test_noisy_falling_curve) {
    // A realistic training curve: decaying loss with ±10% noise.
    float *c = alloc_floats(4000);
    Rng r; rng_seed(&r, 3);
    for (int i = 0; i < 4000; i++)
        c[i] = (0.25f + 0.5f * expf(-i / 300.0f)) * (1.0f + 0.1f * rng_uniform_range(&r, -1, 1));
    ck_assert_int_eq(count_loss_spikes(c, 4000), 0);
    c[3000] = 2.0f * (0.25f + 0.5f * expf(-10.0f));   // ~2x the median: one spike
    ck_assert_int_eq(count_loss_spikes(c, 4000), 1);
    free(c);
}
END_TEST

START_TEST(test_threshold_is_strict) {
    float *c = curve(200, 2.0f);
    c[150] = 3.0f;                      // exactly 1.5 x 2.0: not above it
    ck_assert_int_eq(count_loss_spikes(c, 200), 0);
    c[150] = 3.001f;
    ck_assert_int_eq(count_loss_spikes(c, 200), 1);
    free(c);
}
END_TEST

START_TEST(test_median_of_even_window) {
    // A window of fifty 1s and fifty 3s: median (1 + 3)/2 = 2, threshold 3.
    float c[SPIKE_WINDOW + 2];
    for (int i = 0; i < SPIKE_WINDOW; i++) c[i] = i % 2 ? 3 : 1;
    c[SPIKE_WINDOW] = 3.5f;
    c[SPIKE_WINDOW + 1] = 2.9f;         // its window's median is 3 now: threshold 4.5
    ck_assert_int_eq(count_loss_spikes(c, SPIKE_WINDOW + 2), 1);
    c[SPIKE_WINDOW] = 2.9f;             // under the threshold 3
    ck_assert_int_eq(count_loss_spikes(c, SPIKE_WINDOW + 1), 0);
}
END_TEST

START_TEST(test_non_finite_losses) {
    float *c = curve(300, 1.0f);
    c[200] = NAN;                       // a blow-up after the first window: a spike
    c[250] = INFINITY;
    c[20] = NAN;                        // in the first window: not judged
    ck_assert_int_eq(count_loss_spikes(c, 300), 2);
    free(c);
}
END_TEST

// The count pinned on a fixed series, by another route: 700 losses falling
// as 400/(400 + i) with noise, and at every 37th step from 60 a jump of
// 1.375 to 2.25 times, some above the 1.5x line and some below; every value
// a whole number of 1/1024, so that C and Python hold the same floats. The
// PyTorch replay's counter (tools/torch_train.py, loss_spikes: numpy's
// median) counts 12 on it:
//   python3 -c "import sys; sys.path.insert(0, 'tools'); import numpy as np; from torch_train import loss_spikes;
//     print(loss_spikes(np.array([(2048*400//(400+i) + (n := (i*2654435761 % 2**32) >> 24)) * ((11 + n % 8)
//     if i >= 60 and (i - 60) % 37 == 0 else 8) // 8 / 1024 for i in range(700)], dtype=np.float32)))"
START_TEST(test_count_on_a_fixed_series) {
    float c[700];
    for (uint32_t i = 0; i < 700; i++) {
        uint32_t noise = (i * 2654435761u) >> 24;
        uint32_t k = 2048 * 400 / (400 + i) + noise;
        if (i >= 60 && (i - 60) % 37 == 0) k = k * (11 + noise % 8) / 8;
        c[i] = (float)k / 1024.0f;
    }
    ck_assert_int_eq(count_loss_spikes(c, 700), 12);
}
END_TEST

int main(void) {
    return run_tests("spikes", "core", 0, TESTS(test_flat_curve, test_one_jump_after_window,
                                                test_first_full_window_step_is_judged,
                                                test_jump_in_first_window_is_not_a_spike, test_slowly_rising_curve,
                                                test_noisy_falling_curve, test_threshold_is_strict,
                                                test_median_of_even_window, test_non_finite_losses,
                                                test_count_on_a_fixed_series));
}
