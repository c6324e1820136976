// tables.h: the tables of step 4's sections (tables.c), printed with
// common/io/bench.h's table_print.
#pragma once
#include <stddef.h>
#include "eval/rms.h"
#include "io/bench.h"
#include "step4.h"

// The calls section 3 times: three whole FFNs, then two elementwise middles.
enum { NCALLS = 5 };

// Section 1: each FFN's shape, weights, biases and parameters at D = 128,
// and their difference.
void ffn_counts_table(const Step4 *s);
// Section 2: SwiGLU's hidden width at D = 128, 384 and 512, as asked (2/3 of
// 4·D), cut by int(), and rounded up to a multiple of 64.
void rounding_table(const Step4 *s);
// Section 3: ms per call of the NCALLS calls, against the GELU FFN's, and the
// matmul work flops[i] of the first three with its rate.
void timing_table(const BenchFn *fns, const double *ms_call, const double *flops);
// Section 2: the two FFNs at D = 384 without biases (and with), from the
// parameter table: as many weights when no rounding is needed.
void equal_weights_at_d384(const Step4 *s);
// Section 4: the whole model's parameters, one upgrade at a time; returns
// the baseline's count.
size_t whole_model_table(const Config *def);
