// test_peak.c: the FMA peak loop (common/io/peak.c), which lab speed and
// build/tools/gemm_race time as the machine's limit. Its speed is not
// checked here (timings belong to benchmarks); what it computes is: every
// lane of every chain must hold exactly what fmaf, applied `iters` times to
// that lane's starting value, gives. A loop that skipped iterations, mixed
// lanes, or multiplied and added in two roundings instead of one FMA would
// give other bits.
#include "testutil.h"
#include "io/peak.h"

// What one accumulator lane must hold after `iters` FMAs.
static float reference_lane(int i, long iters) {
    float x = fma_peak_start(i);
    for (long it = 0; it < iters; it++) x = fmaf(x, FMA_PEAK_MUL, FMA_PEAK_ADD);
    return x;
}

static void check_lanes(const float *out, long iters) {
    for (int i = 0; i < FMA_PEAK_CHAINS * fma_peak_lanes(); i++) {
        float want = reference_lane(i, iters);
        ck_assert_msg(out[i] == want, "lane %d after %ld iterations: %.9g, fmaf gives %.9g", i, iters, out[i], want);
    }
}

START_TEST(test_kernel_is_fmas) {
    float out[FMA_PEAK_CHAINS * 16];
    const long counts[] = { 0, 1, 7, 1000, 50000 };
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        double flop = fma_peak_kernel(counts[k], out);
        ck_assert_double_eq(flop, 2.0 * FMA_PEAK_CHAINS * fma_peak_lanes() * (double)counts[k]);
        check_lanes(out, counts[k]);
    }
    // a separate multiply and add rounds twice: after a few steps from a
    // start that is not the fixed point, that must differ somewhere, or the
    // test above could not tell an FMA from two operations
    int differs = 0;
    for (int i = 0; i < FMA_PEAK_CHAINS * fma_peak_lanes(); i++) {
        volatile float x = fma_peak_start(i);
        for (int it = 0; it < 1000; it++) { volatile float p = x * FMA_PEAK_MUL; x = p + FMA_PEAK_ADD; }
        differs |= x != reference_lane(i, 1000);
    }
    ck_assert_msg(differs, "multiply-then-add gives the FMA's bits on every lane: the test cannot see the difference");
    printf("FMA peak loop: %d chains of %s, every lane as fmaf computes it\n", FMA_PEAK_CHAINS, fma_peak_isa());
}
END_TEST

// The lanes the compiler targets: AVX-512 16 floats, AVX2 8.
START_TEST(test_lanes_match_the_target) {
#if defined(__AVX512F__)
    ck_assert_int_eq(fma_peak_lanes(), 16);
#elif defined(__FMA__)
    ck_assert_int_eq(fma_peak_lanes(), 8);
#else
    ck_assert_int_eq(fma_peak_lanes(), 1);
#endif
}
END_TEST

// On two threads: twice the work, each thread the same values.
START_TEST(test_parallel_counts_every_thread) {
    FmaPeakRun run = { .threads = 2, .iters = 5000 };
    fma_peak_run(&run);
    ck_assert_double_eq(run.flop, 2 * 2.0 * FMA_PEAK_CHAINS * fma_peak_lanes() * 5000.0);
    check_lanes(run.out, 5000);
}
END_TEST

int main(void) {
    return run_tests("peak", "peak", 0, TESTS(test_kernel_is_fmas, test_lanes_match_the_target,
                                              test_parallel_counts_every_thread));
}
