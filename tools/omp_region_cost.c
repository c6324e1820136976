// omp_region_cost.c: what an OpenMP region costs when it is opened inside
// another one, as a row loop with `#pragma omp parallel for ... if (...)`
// would be when the attention calls it for one (image, head) pair from
// inside its own parallel loop (docs/performance.md, "No OpenMP region
// inside another"; common/nn/norms.c).
//
//   build/tools/omp_region_cost            # on as many threads as OpenMP gives
//
// It times, inside a parallel loop over many calls, a function whose small
// row loop (64 rows) carries an OpenMP pragma whose `if` is false, against
// the same loop without the pragma, and prints the cost per call. Best of
// five repeats each; about a second in all.
#include <omp.h>
#include <stdio.h>

#define ROWS 64
#define CALLS 200000

static _Thread_local float rows[ROWS];   // each thread its own: no race

// The two functions differ only in the pragma. Its `if` is false (the size
// is below any threshold), so the region runs on the calling thread alone,
// but OpenMP still starts a team of one for it.
__attribute__((noinline)) static void rows_with_region(int n) {
    #pragma omp parallel for schedule(static) if (n > 1000000)
    for (int r = 0; r < ROWS; r++) rows[r] = rows[r] * 0.5f + 1.0f;
}

__attribute__((noinline)) static void rows_plain(int n) {
    (void)n;
    for (int r = 0; r < ROWS; r++) rows[r] = rows[r] * 0.5f + 1.0f;
}

// Microseconds per call and thread: CALLS calls spread over the threads.
static double time_calls(void (*fn)(int), int threads) {
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = omp_get_wtime();
        #pragma omp parallel for schedule(static) num_threads(threads)
        for (int i = 0; i < CALLS; i++) fn(i % 7);
        double us = (omp_get_wtime() - t0) * 1e6 * threads / CALLS;
        if (us < best) best = us;
    }
    return best;
}

int main(int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: omp_region_cost (no options)\n"
                        "  times an OpenMP region nested inside a parallel loop\n");
        return 2;
    }
    int threads = omp_get_max_threads();
    double nested = time_calls(rows_with_region, threads), plain = time_calls(rows_plain, threads);
    printf("a %d-row loop called %d times from a parallel loop of %d thread%s (best of 5):\n"
           "  with a one-thread OpenMP region around it: %.3f us per call\n"
           "  without it:                                %.3f us per call\n",
           ROWS, CALLS, threads, threads == 1 ? "" : "s", nested, plain);
    return 0;
}
