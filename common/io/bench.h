// bench.h: fair timings on a shared, noisy machine, and plain aligned tables.
//
// Timing. Two functions timed one after the other see different background
// load, so bench_interleaved runs them in turns, the first one rotating,
//     round 0: A, B, C   round 1: B, C, A   round 2: C, A, B   ...
// and reports each one's MEDIAN over the rounds: a burst of load slows one
// round of every function, and the median ignores it.
//
//     static void run_a(void *ctx) { ... one call ... }
//     BenchFn fns[2] = { { "A", run_a, &ctx }, { "B", run_b, &ctx } };
//     double ms[2];
//     bench_interleaved(fns, 2, 2, 31, 10, ms);  // ms[i]: median ms per call
// Tables: columns sized to their widest cell, names left, numbers right.
//     Table t; table_init(&t, 3, "norm", "mean", "rms");
//     table_cell(&t, "%s", "LayerNorm"); table_cell(&t, "%.3f", m); table_cell(&t, "%.3f", r);
//     table_print(&t);   // cells fill rows left to right, a new row every ncols cells
#pragma once
#include "clock.h"   // now_ms

typedef struct {
    const char *name;        // for the caller's tables; bench_interleaved ignores it
    void (*fn)(void *ctx);   // one call of the code being timed
    void *ctx;
} BenchFn;

// `warmup` untimed rounds, then `rounds` (<= 1000) timed ones, each function
// `calls` times back to back a turn (enough for a millisecond or more, so the
// clock's resolution does not matter); median_ms[i], per call.
void bench_interleaved(const BenchFn *fns, int n, int warmup, int rounds, int calls,
                       double *median_ms);
int cmp_double(const void *a, const void *b);   // qsort's ascending order of doubles

// ---------------------------------------------------------------------------
#define TABLE_MAX_COLS 12
#define TABLE_MAX_ROWS 64     // body rows, the header not counted
#define TABLE_CELL 80         // bytes per cell, longer text is cut

typedef struct {
    int ncols, nrows;         // nrows counts started body rows
    int ncells;               // cells written to the body so far
    char cell[TABLE_MAX_ROWS + 1][TABLE_MAX_COLS][TABLE_CELL];  // row 0 is the header
} Table;

// ncols column headers follow ncols (const char *).
void table_init(Table *t, int ncols, ...);
// Appends one printf-formatted cell; after ncols cells the next row starts.
// Cells past TABLE_MAX_ROWS rows are dropped.
void table_cell(Table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Prints the header, a rule of dashes, and the rows, each line indented by
// two spaces.
void table_print(const Table *t);
