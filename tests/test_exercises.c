// test_exercises.c: the exercise track (docs/exercises.md) can fail.
//
//   1. The reference code passes every check of every exercise
//      (scripts/grade.sh on this project's own build).
//   2. A workbook made from the project (scripts/exercises.sh workbook, what
//      `make exercises` runs), built in a temporary folder, fails every
//      exercise's grade, each exercise on a stub's "not written yet".
//   3. The markers round-trip: the workbook with the reference bodies put
//      back (scripts/exercises.sh restore) is the project, byte for byte,
//      every file of it.
//   4. One exercise at a time: the project with only that body stubbed
//      fails that exercise's grade on its own stub, so each grade depends
//      on its own exercise and not only on the ones before it.
//   5. The tools refuse what they cannot do: an unknown exercise or step,
//      a workbook folder that exists already.
// The workbook is built from scratch (the library and the four test
// programs the grader runs), then once more per exercise, a file at a
// time: about a minute on two cores.
#include <sys/stat.h>
#include "io/paths.h"
#include "testutil.h"

// Runs a shell command in folder `dir`; its output (stdout and stderr) goes
// to dir/../NAME.txt, read back into *text. Returns the exit status.
static int run_in(const char *dir, const char *cmd, const char *log, char **text) {
    char line[8192];
    int len = snprintf(line, sizeof line, "cd '%s' && { %s ; } >'%s' 2>&1", dir, cmd, log);
    ck_assert_msg(len > 0 && (size_t)len < sizeof line, "run_in: the command is too long");
    int st = system(line);
    *text = read_whole_file(log);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The exercises' names, from `scripts/exercises.sh list` (the first word of
// each line), into names[] (at most max); returns how many.
static int exercise_names(const char *listing, char names[][64], int max) {
    int n = 0;
    for (const char *s = listing; *s && n < max; ) {
        const char *end = strchr(s, '\n');
        if (!end) end = s + strlen(s);
        if (sscanf(s, "%63s", names[n]) == 1) n++;
        s = *end ? end + 1 : end;
    }
    return n;
}

// The block of the grade output about one exercise: from its name line to
// the next exercise's (or the summary line). Returns a copy.
static char *grade_block(const char *out, const char *name) {
    char head[96];
    snprintf(head, sizeof head, "\n%s (", name);
    const char *s = strncmp(out, head + 1, strlen(head + 1)) == 0 ? out : strstr(out, head);
    ck_assert_msg(s != NULL, "no block for %s in the grade output:\n%s", name, out);
    if (s != out) s++;   // past the newline
    const char *e = s + 1;
    while ((e = strchr(e, '\n')) && e[1] == ' ') e++;
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char *b = malloc(len + 1);
    ck_assert_ptr_nonnull(b);
    memcpy(b, s, len);
    b[len] = 0;
    return b;
}

START_TEST(test_reference_passes_every_grade) {
    char dir[256], log[300], *out;
    tmpdir_make(dir, sizeof dir, "grade");
    snprintf(log, sizeof log, "%s/grade.txt", dir);
    int st = run_in(project_root(), "scripts/grade.sh", log, &out);
    ck_assert_msg(st == 0, "scripts/grade.sh on the reference: exit %d\n%s", st, out);
    ck_assert_msg(strstr(out, "FAIL") == NULL, "a check failed on the reference:\n%s", out);
    char *listing;
    snprintf(log, sizeof log, "%s/list.txt", dir);
    ck_assert_int_eq(run_in(project_root(), "scripts/exercises.sh list", log, &listing), 0);
    char names[32][64];
    int n = exercise_names(listing, names, 32);
    ck_assert_msg(n >= 8, "only %d exercises marked:\n%s", n, listing);
    char want[64];
    snprintf(want, sizeof want, "%d of %d exercises pass every check", n, n);
    ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
    for (int i = 0; i < n; i++) {   // each marked exercise is graded, each check pass or "-"
        char *b = grade_block(out, names[i]);
        ck_assert_msg(strstr(b, "  forward   ") && strstr(b, "  smoke     "), "%s", b);
        ck_assert_msg(strstr(b, " pass"), "%s: no check passed:\n%s", names[i], b);
        free(b);
    }
    free(out); free(listing);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(test_workbook_fails_and_round_trips) {
    char dir[256], wb[300], bodies[300], log[300], cmd[4096], *out;
    tmpdir_make(dir, sizeof dir, "workbook");
    snprintf(wb, sizeof wb, "%s/workbook", dir);
    snprintf(bodies, sizeof bodies, "%s/bodies.txt", dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(cmd, sizeof cmd, "scripts/exercises.sh workbook '%s' '%s'", wb, bodies);
    int st = run_in(project_root(), cmd, log, &out);
    ck_assert_msg(st == 0, "%s: exit %d\n%s", cmd, st, out);
    free(out);

    // 2. built, the workbook fails every exercise, each on a stub
    // (a make of its own, not a job of the `make check` that may be running this)
    st = run_in(wb, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 grade-programs", log, &out);
    ck_assert_msg(st == 0, "the workbook does not build: exit %d\n%s", st, out);
    free(out);
    st = run_in(wb, "scripts/grade.sh", log, &out);
    ck_assert_msg(st == 1, "grade.sh in the workbook: exit %d, want 1 (checks failed)\n%s", st, out);
    char *listing, list_log[300];
    snprintf(list_log, sizeof list_log, "%s/list.txt", dir);
    ck_assert_int_eq(run_in(project_root(), "scripts/exercises.sh list", list_log, &listing), 0);
    char names[32][64];
    int n = exercise_names(listing, names, 32);
    char want[64];
    snprintf(want, sizeof want, "0 of %d exercises pass every check", n);
    ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
    for (int i = 0; i < n; i++) {
        char *b = grade_block(out, names[i]);
        ck_assert_msg(strstr(b, "FAIL: ") && strstr(b, ": not written yet: see docs/exercises.md#"),
                      "%s did not fail on a stub in the workbook:\n%s", names[i], b);
        ck_assert_msg(strstr(b, " pass") == NULL, "%s: a check passed on the stubs:\n%s", names[i], b);
        free(b);
    }
    free(out);

    // 3. the reference bodies put back: every file of the project, byte for byte
    snprintf(cmd, sizeof cmd,
             "for f in $(scripts/exercises.sh list | awk '{ sub(/:[0-9]+$/, \"\", $2); print $2 }' | sort -u); do "
             "  scripts/exercises.sh restore '%s'/$f '%s' > '%s'/$f.restored && mv '%s'/$f.restored '%s'/$f || exit 1; "
             "done; "
             "scripts/exercises.sh files | { n=0; while read -r f; do n=$((n + 1)); "
             "  cmp -s \"$f\" '%s'/\"$f\" || echo \"differs: $f\"; done; echo \"compared $n files\"; }",
             wb, bodies, wb, wb, wb, wb);
    st = run_in(project_root(), cmd, log, &out);
    int compared = 0;
    ck_assert_msg(st == 0 && sscanf(out, "compared %d files", &compared) == 1 && compared >= 100,
                  "the workbook with its bodies restored is not the project (exit %d):\n%s", st, out);
    free(out);

    // 4. one exercise at a time, in the restored workbook. Built with -O1:
    // each round compiles the grader's test programs again, most of the
    // round's time at -O3, and every check has tolerances that -O1's other
    // roundings stay well inside.
    for (int i = 0; i < n; i++) {
        char file[256] = "";
        const char *at = strstr(listing, names[i]);
        ck_assert_msg(at && sscanf(at + strlen(names[i]), " %255[^:]", file) == 1, "%s", listing);
        snprintf(cmd, sizeof cmd,
                 "scripts/exercises.sh stub %s '%s/one.txt' %s > '%s/%s' && cd '%s' && "
                 "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 OPT=-O1 grade-programs && "
                 "scripts/grade.sh %s; st=$?; cp '%s/%s' '%s/%s'; exit $st",
                 file, dir, names[i], wb, file, wb, names[i], project_root(), file, wb, file);
        st = run_in(project_root(), cmd, log, &out);
        char want_stub[128];
        snprintf(want_stub, sizeof want_stub, "FAIL: %s: not written yet", names[i]);
        ck_assert_msg(st == 1 && strstr(out, want_stub), "with only %s stubbed, its grade "
                      "(exit %d, want 1) does not fail on its stub:\n%s", names[i], st, out);
        free(out);
    }

    // 5. refusals: an existing workbook folder, unknown names, an unknown step
    snprintf(cmd, sizeof cmd, "scripts/exercises.sh workbook '%s' '%s'", wb, bodies);
    ck_assert_int_eq(run_in(project_root(), cmd, log, &out), 1);
    ck_assert_msg(strstr(out, "exists already"), "%s", out);
    free(out);
    ck_assert_int_eq(run_in(project_root(), "scripts/grade.sh no_such_exercise", log, &out), 2);
    ck_assert_msg(strstr(out, "no exercise no_such_exercise"), "%s", out);
    free(out);
    ck_assert_int_eq(run_in(project_root(), "scripts/grade.sh --step 9", log, &out), 2);
    ck_assert_msg(strstr(out, "no such step"), "%s", out);
    free(out);
    free(listing);
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("exercises");
    TCase *tc = tcase_create("exercises");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_reference_passes_every_grade);
    tcase_add_test(tc, test_workbook_fails_and_round_trips);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
