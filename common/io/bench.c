// bench.c: interleaved timing with medians, and aligned tables (see bench.h).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Median of x (n values), sorted in place.
static double bench_median(double *x, int n) {
    if (n <= 0) return 0.0;
    qsort(x, n, sizeof(double), cmp_double);
    // even n: the mean of the two middle values
    return (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void bench_interleaved(const BenchFn *fns, int n, int warmup, int rounds, int calls,
                       double *median_ms) {
    if (rounds < 1) rounds = 1;
    if (rounds > 1000) rounds = 1000;
    if (calls < 1) calls = 1;
    double *t = malloc(sizeof(double) * n * rounds);   // t[i·rounds + r], ms per call
    for (int r = -warmup; r < rounds; r++) {
        int first = ((r % n) + n) % n;                 // rotate who goes first
        for (int j = 0; j < n; j++) {
            int i = (first + j) % n;
            double t0 = now_ms();
            for (int c = 0; c < calls; c++) fns[i].fn(fns[i].ctx);
            double dt = (now_ms() - t0) / calls;
            if (r >= 0) t[(size_t)i * rounds + r] = dt;
        }
    }
    for (int i = 0; i < n; i++) median_ms[i] = bench_median(t + (size_t)i * rounds, rounds);
    free(t);
}

// ---------------------------------------------------------------------------
void table_init(Table *t, int ncols, ...) {
    memset(t, 0, sizeof *t);
    if (ncols > TABLE_MAX_COLS) ncols = TABLE_MAX_COLS;
    t->ncols = ncols;
    va_list ap;
    va_start(ap, ncols);
    for (int c = 0; c < ncols; c++)
        snprintf(t->cell[0][c], TABLE_CELL, "%s", va_arg(ap, const char *));
    va_end(ap);
}

void table_cell(Table *t, const char *fmt, ...) {
    int row = t->ncells / t->ncols, col = t->ncells % t->ncols;
    if (row >= TABLE_MAX_ROWS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->cell[row + 1][col], TABLE_CELL, fmt, ap);
    va_end(ap);
    t->ncells++;
    t->nrows = (t->ncells + t->ncols - 1) / t->ncols;
}

void table_print(const Table *t) {
    int w[TABLE_MAX_COLS] = {0}, total = 0;
    for (int r = 0; r <= t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            int len = (int)strlen(t->cell[r][c]);
            if (len > w[c]) w[c] = len;
        }
    for (int c = 0; c < t->ncols; c++) total += w[c] + (c ? 2 : 0);
    for (int r = 0; r <= t->nrows; r++) {
        printf("  ");
        for (int c = 0; c < t->ncols; c++) {
            if (c == 0) printf("%-*s", w[c], t->cell[r][c]);
            else        printf("  %*s", w[c], t->cell[r][c]);
        }
        printf("\n");
        if (r == 0) {
            printf("  ");
            for (int i = 0; i < total; i++) putchar('-');
            printf("\n");
        }
    }
}
