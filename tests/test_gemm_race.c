// test_gemm_race.c: tools/gemm_race, the libraries raced on the model's
// products (docs/performance.md). Timings are not checked (they belong to
// benchmarks); what is checked on tiny shapes (batch 1) is that the tool
// runs every product with every library it found, and that every library
// computed OpenBLAS's products to float rounding.
#include <check.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"

#define TOOL "build/tools/gemm_race"
// Check carries a failure's message in a few kilobytes: the tool's output is
// cut to its first 1,500 characters there.
#define TINY "--batch 1 --threads 1,2 --rounds 2 --warmup 0 --calls 1"

static const char *const LIBRARIES[] = { "OpenBLAS", "oneDNN", "oneDNN packed", "BLIS", "libxsmm" };
#define NLIBRARIES (int)(sizeof LIBRARIES / sizeof *LIBRARIES)
static const char *const PRODUCTS[] = { "qkv forward", "qkv dX", "qkv dW", "proj forward", "proj dX", "proj dW",
                                        "fc1 forward", "fc1 dX", "fc1 dW", "fc2 forward", "fc2 dX", "fc2 dW",
                                        "att q.kT (NT)", "att att.v (NN)", "att attT.dy (TN)" };

START_TEST(test_every_library_computes_openblas_products) {
    char dir[512];
    tmpdir_make(dir, sizeof dir, "gemm_race");
    int st = run_program("", TOOL, TINY, dir);
    const char *out = read_text_in(dir, "out.txt");
    ck_assert_msg(st == 0, "exit %d\n%.1500s\n%.1500s", st, out, read_text_in(dir, "err.txt"));
    const char *agree_at = strstr(out, "to OpenBLAS's largest entry):");
    ck_assert_msg(agree_at != NULL, "%.1500s", out);
    // that line alone (the tables below it name every library too)
    char agree[512];
    snprintf(agree, sizeof agree, "%.*s", (int)strcspn(agree_at, "\n"), agree_at);
    int others = 0;
    for (int lib = 0; lib < NLIBRARIES; lib++) {
        char key[64];
        snprintf(key, sizeof key, " %s ", LIBRARIES[lib]);
        const char *at = strstr(agree, key);
        // the header gives each library a line: its version, or why it was left out
        // (not installed, or not loadable in this build)
        char head[64];
        snprintf(head, sizeof head, "\n%-9s ", LIBRARIES[lib]);
        size_t n = strlen(head + 1);
        const char *line = strstr(out, head), *about = strncmp(out, head + 1, n) == 0 ? out + n
                                                       : line ? line + 1 + n : NULL;
        ck_assert_msg(about != NULL, "%s: no line in the header\n%.1500s", LIBRARIES[lib], out);
        if (strncmp(about, "not ", 4) == 0 || strncmp(about, "no ", 3) == 0) {
            ck_assert_msg(at == NULL, "%s: left out in the header, yet compared\n%.1500s", LIBRARIES[lib], out);
            printf("gemm_race: %s not raced here\n", LIBRARIES[lib]);
            continue;
        }
        ck_assert_msg(at != NULL, "%s: in the header, not compared\n%.1500s", LIBRARIES[lib], out);
        double diff = -1;
        ck_assert_msg(sscanf(at + strlen(key), "%lf", &diff) == 1, "%s", agree);
        ck_assert_msg(diff >= 0 && diff <= 1e-4, "%s differs from OpenBLAS by %g", LIBRARIES[lib], diff);
        // Equal bits are no sign of a mix-up: at batch 1 a library whose
        // kernel sums in OpenBLAS's order (oneDNN and libxsmm on some CPUs)
        // gives the same floats. The header's line names each one's version.
        if (lib > 0) others++;
    }
    printf("gemm_race: %d other librar%s compared with OpenBLAS\n", others, others == 1 ? "y" : "ies");
    // every product, in the table of each thread count
    for (size_t k = 0; k < sizeof PRODUCTS / sizeof *PRODUCTS; k++) {
        const char *first = strstr(out, PRODUCTS[k]);
        ck_assert_msg(first && strstr(first + 1, PRODUCTS[k]), "%s: not in both tables\n%s", PRODUCTS[k], out);
    }
    ck_assert_msg(strstr(out, "1 thread: the FMA peak") && strstr(out, "2 threads: the FMA peak"), "%.1500s", out);
    tmpdir_remove(dir);
}
END_TEST

// Bad numbers: a message and exit 2.
START_TEST(test_bad_input) {
    char dir[512];
    tmpdir_make(dir, sizeof dir, "gemm_race");
    const char *bad[][2] = {
        { "--threads 0", "--threads wants" }, { "--threads 1,2,3,4,5", "--threads wants" },
        { "--threads ,", "--threads wants" }, { "--batch 0", "--batch wants" },
        { "--rounds 2 --warmup 2", "must be more than" }, { "--frobnicate", "frobnicate" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ck_assert_int_eq(run_program("", TOOL, bad[k][0], dir), 2);
        ck_assert_msg(strstr(read_text_in(dir, "err.txt"), bad[k][1]) != NULL, "%s: %s", bad[k][0],
                      read_text_in(dir, "err.txt"));
    }
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    return run_tests("gemm_race", "race", 120, TESTS(test_every_library_computes_openblas_products, test_bad_input));
}
