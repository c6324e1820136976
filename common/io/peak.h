// peak.h: the machine's limit, measured: how many float multiply-adds per
// second the cores can do.
//
// A matrix product is nothing but fused multiply-adds (FMAs), so no product,
// and no training step, can run faster than the cores start them. The peak
// loop keeps every FMA unit busy: FMA_PEAK_CHAINS independent accumulators,
// each a vector of the widest kind the compiler targets (16 floats with
// AVX-512, 8 with AVX2), each updated by one FMA per iteration,
//
//     acc[c] = acc[c] · FMA_PEAK_MUL + FMA_PEAK_ADD      c = 0 .. FMA_PEAK_CHAINS-1
//
// An FMA's result is ready a few cycles after it starts, and a core starts
// one or two per cycle, so one chain alone would wait for itself; a dozen
// chains keep the units full. The values go to 1 (the fixed point of the
// update) and stay normal floats, so no slow path is taken.
//
// lab speed and build/tools/gemm_race time it in the same rounds as what
// they measure (common/io/bench.h), on as many threads, one per core:
//
//     FmaPeakRun peak = { .threads = 2, .iters = FMA_PEAK_ITERS };
//     BenchFn fn = { "FMA peak", fma_peak_run, &peak };
//     ... bench_interleaved(...) gives ms;  peak.flop * 1e-6 / ms = GFLOP/s
#pragma once

#define FMA_PEAK_CHAINS 12
#define FMA_PEAK_MUL 0.9990234375f   // 1 - 2^-10
#define FMA_PEAK_ADD 0.0009765625f   // 2^-10: the fixed point is 1

// Floats per vector in the peak loop: 16, 8 or 4 (the instruction set the
// library was compiled for), or 1 without FMA instructions.
int fma_peak_lanes(void);
// The instructions the loop uses, e.g. "AVX-512 (16 floats)".
const char *fma_peak_isa(void);

// The loop on the calling thread: `iters` iterations from the starting values
// fma_peak_start(i) (i = c·lanes + lane), the final accumulators written to
// out[FMA_PEAK_CHAINS · lanes]. Returns the floating-point operations done
// (2 per FMA per lane).
double fma_peak_kernel(long iters, float *out);
// The starting value of accumulator lane i.
float fma_peak_start(int i);

// The loop on `threads` OpenMP threads at once, one kernel each; the last
// thread's accumulators go to out (FMA_PEAK_CHAINS · lanes floats). Returns
// the operations done by all threads.
double fma_peak_parallel(int threads, long iters, float *out);

// Iterations per timed call: about 4 ms per thread with AVX-512 at 4 GHz.
#define FMA_PEAK_ITERS (1L << 22)

// A timed call (a BenchFn's fn): one fma_peak_parallel of run->threads
// threads and run->iters iterations; run->flop says how many operations.
typedef struct {
    int threads;
    long iters;
    double flop;
    float out[FMA_PEAK_CHAINS * 16];
} FmaPeakRun;
void fma_peak_run(void *run);
