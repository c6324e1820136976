// test_progress.c: when a plain progress line (a log, a pipe) is printed:
// every plain_every steps, the last step, and, so that a long phase says
// its ETA within seconds, after PROGRESS_FIRST_LINE_S without any line,
// then every PROGRESS_PLAIN_EVERY_S. The clock is given, not read: no timing.
#include "testutil.h"
#include "io/progress.h"

START_TEST(test_plain_lines_come_early) {
    Progress p;
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    progress_begin(&p, f, "probe", 0, 1560);
    ck_assert_int_eq(p.plain_every, 100);
    double t0 = p.t0;
    // the steps: every 100th, and the last
    ck_assert(progress_plain_due(&p, 100, t0 + 0.5));
    ck_assert(progress_plain_due(&p, 1560, t0 + 0.5));
    ck_assert(!progress_plain_due(&p, 7, t0 + 0.5));
    // no line yet: one after 3 s, whatever the step
    ck_assert(!progress_plain_due(&p, 7, t0 + PROGRESS_FIRST_LINE_S - 0.1));
    ck_assert(progress_plain_due(&p, 7, t0 + PROGRESS_FIRST_LINE_S));
    // after a line: the next after a minute
    p.last_draw = t0 + 3;
    ck_assert(!progress_plain_due(&p, 8, t0 + 3 + PROGRESS_PLAIN_EVERY_S - 0.1));
    ck_assert(progress_plain_due(&p, 8, t0 + 3 + PROGRESS_PLAIN_EVERY_S));
    // the line itself: the label, the steps, the rate in its unit, an ETA
    p.last_draw = 0;
    p.unit = "images";
    progress_update(&p, 800, "epoch 3/4");
    rewind(f);
    char line[256] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_msg(strncmp(line, "probe step 800/1560 epoch 3/4 ", 30) == 0, "%s", line);
    ck_assert_msg(strstr(line, " images/s elapsed ") && strstr(line, " ETA "), "%s", line);
    fclose(f);
}
END_TEST

int main(void) {
    return run_tests("progress", "progress", 0, TESTS(test_plain_lines_come_early));
}
