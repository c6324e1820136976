// blas_kernel.h: make OpenBLAS use the fast kernels on CPUs it does not know.
//
// OpenBLAS picks its matrix kernels from the CPU's model number. A CPU newer
// than the library (Debian 12's OpenBLAS 0.3.21 on an Intel
// Xeon of the Emerald Rapids generation) gets the oldest x86-64 kernels, "Prescott", and
// cblas_sgemm runs about 3x slower than it could (docs/performance.md). The
// library reads its choice once, from OPENBLAS_CORETYPE, when it is loaded,
// before main() runs, so the only cure from inside a program is to start it
// again with the variable set.
//
// Who still goes through OpenBLAS: the model's products are oneDNN's
// (nn/matmul.c); OpenBLAS does only the probe classifier's convolutions
// (eval/probe_layers.c) and the Fréchet distance's products and
// eigenvalues (eval/frechet.c), that is the scorecard's probe-FD and the
// probe's training. So the programs that train or score call
// restart_fitted first (below): step1_scorecard, step6_ablation, lab,
// and tools/train_probe. The
// tour (step 0), steps 2 to 5 and the other tools never reach it.
#pragma once
#include <stddef.h>

// Call first thing in main(). If OpenBLAS chose Prescott on a CPU that has
// AVX-512 (or AVX2), runs this program again, same arguments, with
// OPENBLAS_CORETYPE=SkylakeX (or Haswell); it does not return then. Does
// nothing if OPENBLAS_CORETYPE is set already (your choice, or the second
// start), or if the kernel is a fitting one. The arithmetic of the two
// kernels differs in rounding only; each is deterministic on its own.
void blas_use_fitting_kernel(char **argv);

// The same, and OpenMP's idle threads sleeping instead of spinning: call
// first thing in main() of a program that trains or times. libgomp reads
// OMP_WAIT_POLICY once, when it is loaded, and by default a thread that
// reaches a barrier first spins there; on a machine with other work, the
// spinning thread takes the core its partner needs to reach the barrier,
// and a step takes several times as long. So if OMP_WAIT_POLICY is not set
// (your choice is kept), it runs this program again with it set to passive
// (and OPENBLAS_CORETYPE as above, in the same restart). Neither changes a
// number the program computes.
void restart_fitted(char **argv);

// One line that says which kernels cblas_sgemm runs, for a benchmark's
// output: "OpenBLAS 0.3.21, its Cooperlake kernels (its own choice)". When
// OPENBLAS_CORETYPE holds the library to a narrower instruction set than the
// CPU has (Haswell's AVX2 on an AVX-512 CPU: half the vector width), the line
// says so and how to give OpenBLAS its own choice back.
void blas_kernel_describe(char *line, size_t cap);
