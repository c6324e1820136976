// blas_kernel.h: make OpenBLAS use the fast kernels on CPUs it does not know.
//
// OpenBLAS picks its matrix kernels from the CPU's model number. A CPU newer
// than the library (Debian 12's OpenBLAS 0.3.21 on an Emerald Rapids Xeon)
// gets the oldest x86-64 kernels, "Prescott", and cblas_sgemm runs about 3x
// slower than it could (docs/performance.md). The model's products are
// oneDNN's (nn/matmul.c); OpenBLAS does only the probe's convolutions and the
// Fréchet distance's algebra, so only the programs that train or score call
// restart_fitted (step1_scorecard, step6_ablation, lab, tools/train_probe).
#pragma once
#include <stddef.h>

// Call first thing in main(). Two settings are read once, when their library
// is loaded, before main() runs, so the only cure from inside a program is to
// start it again with them set (your own setting of either is kept; neither
// changes a number the program computes):
//   - OPENBLAS_CORETYPE=SkylakeX (or Haswell) when OpenBLAS chose Prescott
//     on a CPU with AVX-512 (or AVX2); the two kernels differ in rounding
//     only, each deterministic on its own;
//   - OMP_WAIT_POLICY=passive: by default a libgomp thread that reaches a
//     barrier first spins there, and on a machine with other work the
//     spinning thread takes the core its partner needs to reach the
//     barrier, so a step takes several times as long.
void restart_fitted(char **argv);

// One line that says which kernels cblas_sgemm runs, for a benchmark's
// output: "OpenBLAS 0.3.21, its Cooperlake kernels (its own choice)", or
// that OPENBLAS_CORETYPE holds it to a narrower instruction set than the CPU
// has, and how to give OpenBLAS its own choice back.
void blas_kernel_describe(char *line, size_t cap);
