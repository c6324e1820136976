// test_blas_race.c: tools/blas_race, the race of another BLAS against OpenBLAS
// on the model's own steps (docs/performance.md). Timings are not checked
// (they belong to benchmarks); what is checked is that the swap happens.
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

#define BLIS "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4"
#define SMALL "--batch 2 --threads 2 --rounds 3 --warmup 1"

// Under `make sanitize` the tool must refuse with a message (AddressSanitizer
// cannot load a library with RTLD_DEEPBIND). True when it did.
static int refused_under_sanitizer(int st, const char *dir) {
#ifdef __SANITIZE_ADDRESS__
    ck_assert_int_eq(st, 2);
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), "AddressSanitizer") != NULL, "%s", read_text_in(dir, "err.txt"));
    printf("blas_race refuses to run under AddressSanitizer, as it should\n");
    tmpdir_remove(dir);
    return 1;
#else
    (void)st, (void)dir;
    return 0;
#endif
}

// OpenBLAS against itself, loaded a second time: every call is counted on
// the side that made it, and both sides compute the same bits.
START_TEST(test_race_counts_both_sides) {
    char dir[512];
    tmpdir_make(dir, sizeof dir, "blas_race");
    int st = run_program("", "build/tools/blas_race", "--lib libopenblas.so.0 " SMALL, dir);
    if (refused_under_sanitizer(st, dir)) return;
    const char *out = read_text_in(dir, "out.txt");
    ck_assert_msg(st == 0, "exit %d\n%s\n%s", st, out, read_text_in(dir, "err.txt"));
    long a = 0, b = 0;
    const char *line = strstr(out, "cblas_sgemm calls received:");
    ck_assert_msg(line && sscanf(line, "cblas_sgemm calls received: OpenBLAS %ld, other %ld", &a, &b) == 2, "%s", out);
    ck_assert_msg(a > 0 && a == b, "calls: OpenBLAS %ld, other %ld", a, b);
    ck_assert_msg(strstr(out, "largest difference 0.00e+00 (the same bits") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "train_step, all four") != NULL, "%s", out);
    tmpdir_remove(dir);
}
END_TEST

// With Debian's BLIS installed, its calls must reach BLIS and not OpenBLAS
// (without RTLD_DEEPBIND they silently did: the same bits on both sides).
START_TEST(test_blis_is_really_blis) {
    if (access(BLIS, R_OK) != 0) {
        printf("test_blis_is_really_blis: SKIPPED, %s is not installed (apt-get install libblis4-serial)\n", BLIS);
        return;
    }
    char dir[512];
    tmpdir_make(dir, sizeof dir, "blas_race");
    int st = run_program("", "build/tools/blas_race", SMALL, dir);
    if (refused_under_sanitizer(st, dir)) return;
    const char *out = read_text_in(dir, "out.txt");
    ck_assert_msg(st == 0, "exit %d\n%s\n%s", st, out, read_text_in(dir, "err.txt"));
    ck_assert_msg(strstr(out, "against BLIS ") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "(the same bits") == NULL, "BLIS gave OpenBLAS's bits:\n%s", out);
    tmpdir_remove(dir);
}
END_TEST

// A library that is not there, or bad numbers: a message and exit 2.
START_TEST(test_bad_input) {
    char dir[512];
    tmpdir_make(dir, sizeof dir, "blas_race");
    ck_assert_int_eq(run_program("", "build/tools/blas_race", "--lib /nonexistent/libblis.so.4", dir), 2);
#ifndef __SANITIZE_ADDRESS__
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), "apt-get install libblis4-serial") != NULL, "%s",
                  read_text_in(dir, "err.txt"));
#endif
#ifndef __SANITIZE_ADDRESS__
    ck_assert_int_eq(run_program("", "build/tools/blas_race", "--lib libm.so.6", dir), 2);
    ck_assert_msg(strstr(read_text_in(dir, "err.txt"), "no cblas_sgemm in libm.so.6") != NULL, "%s",
                  read_text_in(dir, "err.txt"));
#endif
    ck_assert_int_eq(run_program("", "build/tools/blas_race", "--rounds 2 --warmup 2", dir), 2);
    ck_assert_int_eq(run_program("", "build/tools/blas_race", "--batch 0", dir), 2);
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("blas_race");
    TCase *tc = tcase_create("race");
    tcase_add_test(tc, test_race_counts_both_sides);
    tcase_add_test(tc, test_blis_is_really_blis);
    tcase_add_test(tc, test_bad_input);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
