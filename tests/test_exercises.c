// test_exercises.c: the exercise track (docs/exercises.md) can fail, and
// fails where it should.
//
//   1. The reference code passes every check of every exercise: 4. below
//      grades each reference body, one at a time (the test programs the
//      checks come from run whole on the project's build in make check).
//   2. A workbook made from the project (`make exercises`) shows no line of
//      any reference body (scripts/exercises.sh leaks, which is shown to
//      find a line planted in a page), and, graded, fails every exercise,
//      each on its own stub's "not written yet".
//   3. The markers round-trip: the workbook with the reference bodies put
//      back (scripts/exercises.sh restore) is the project, byte for byte,
//      every file but the pages (which lost their quotes of the bodies)
//      and the list of mistakes (which the workbook leaves out).
//   4. Any order: in the workbook, with every other exercise still a stub,
//      each exercise passes its grade once its own body is written (the
//      reference's, put back), so no grade needs the exercises before it.
//   5. Every learner mistake of tests/exercise_mistakes.txt, applied to the
//      reference body in the workbook, fails that exercise's grade, and the
//      message names the quantity the list says.
//   6. The tools refuse what they cannot do: an unknown exercise or step,
//      a workbook folder that exists already (saying how to start again).
// The workbook starts from the project's compiled objects of the files
// that hold no exercise and of the test programs (`make exercises` copies
// them); each round then compiles one file and links one exercise's program.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "io/paths.h"
#include "nn/layers.h"
#include "testutil.h"

// make, as a program of its own, not a job of the `make check` that may be running this
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s"

// Runs a shell command in folder `dir`; its output (stdout and stderr) goes
// to the file `log`, read back into *text. Returns the exit status.
static int run_in(const char *dir, const char *cmd, const char *log, char **text) {
    char line[16384];
    int len = snprintf(line, sizeof line, "cd '%s' && { %s ; } >'%s' 2>&1", dir, cmd, log);
    ck_assert_msg(len > 0 && (size_t)len < sizeof line, "run_in: the command is too long");
    int st = system(line);
    *text = read_whole_file(log);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// One exercise as `scripts/exercises.sh list` names it.
typedef struct { char name[48], file[128], fn[64]; } Exercise;

// The exercises, from `scripts/exercises.sh list` (name, file:line,
// function), into ex[] (at most max); returns how many.
static int exercise_list(const char *listing, Exercise *ex, int max) {
    int n = 0;
    for (const char *s = listing; *s && n < max; ) {
        const char *end = strchr(s, '\n');
        if (!end) end = s + strlen(s);
        if (sscanf(s, "%47s %127[^:]:%*d %63s", ex[n].name, ex[n].file, ex[n].fn) == 3) n++;
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

// Each round compiles the one file it changed at -O1, as a learner's own
// build might: most of a round's time is that compile at -O3, and the
// checks' tolerances (the smoke run's too, against the reference compiled
// at -O3) hold for a body that only rounds differently.
#define ROUND_OPT "-O1 -march=native -ffp-contract=fast -fno-trapping-math"

// Puts exercise `name`'s reference body back into its file in the workbook
// `wb`, makes the changes "OLD => NEW ;; ..." (or none), grades it (all its
// checks, or with --first only up to the first that fails), and puts the
// stub back. Returns the grade's exit status; its output in *out.
static int grade_with_body(const char *dir, const char *wb, const char *bodies, const Exercise *e,
                           const char *changes, int all_checks, char **out) {
    char cmd[16384], log[300];
    int len = snprintf(cmd, sizeof cmd,
        "cp '%s/%s' '%s/stub.c' && scripts/exercises.sh restore '%s/stub.c' '%s' %s > '%s/body.c' || exit 3; ",
        wb, e->file, dir, dir, bodies, e->name, dir);
    const char *c = changes;
    while (c && *c) {   // each change: OLD => NEW, separated by " ;; "
        const char *end = strstr(c, " ;; "), *arrow = strstr(c, " => ");
        size_t clen = end ? (size_t)(end - c) : strlen(c);
        ck_assert_msg(arrow && arrow < c + clen, "a change without \" => \": %s", changes);
        char old[1024], new[1024];
        snprintf(old, sizeof old, "%.*s", (int)(arrow - c), c);
        snprintf(new, sizeof new, "%.*s", (int)(c + clen - arrow - 4), arrow + 4);
        for (char *q = old; *q; q++) ck_assert_msg(*q != '\'', "no quotes in a change: %s", old);
        for (char *q = new; *q; q++) ck_assert_msg(*q != '\'', "no quotes in a change: %s", new);
        len += snprintf(cmd + len, sizeof cmd - len,
            "scripts/exercises.sh apply '%s/body.c' %s '%s' '%s' > '%s/next.c' && mv '%s/next.c' '%s/body.c' || exit 3; ",
            dir, e->name, old, new, dir, dir, dir);
        c = end ? end + 4 : NULL;
    }
    len += snprintf(cmd + len, sizeof cmd - len,
        "cp '%s/body.c' '%s/%s' && cd '%s' && " MAKE " grade EX=%s GRADE_FLAGS=%s OPT='" ROUND_OPT "'; st=$?; "
        "cp '%s/stub.c' '%s/%s'; exit $st", dir, wb, e->file, wb, e->name, all_checks ? "" : "--first",
        dir, wb, e->file);
    ck_assert_msg((size_t)len < sizeof cmd, "the command is too long");
    snprintf(log, sizeof log, "%s/round.txt", dir);
    return run_in(project_root(), cmd, log, out);
}

START_TEST(test_workbook) {
    char dir[256], wb[300], bodies[300], log[300], cmd[4096], *out;
    tmpdir_make(dir, sizeof dir, "workbook");
    snprintf(wb, sizeof wb, "%s/workbook", dir);
    snprintf(bodies, sizeof bodies, "%s/build/exercises/reference_bodies.txt", project_root());
    snprintf(log, sizeof log, "%s/log.txt", dir);
    snprintf(cmd, sizeof cmd, MAKE " -j2 exercises WORKBOOK='%s'", wb);
    int st = run_in(project_root(), cmd, log, &out);
    ck_assert_msg(st == 0, "%s: exit %d\n%s", cmd, st, out);
    free(out);
    char *listing, list_log[300];
    snprintf(list_log, sizeof list_log, "%s/list.txt", dir);
    ck_assert_int_eq(run_in(project_root(), "scripts/exercises.sh list", list_log, &listing), 0);
    Exercise ex[64];
    int n = exercise_list(listing, ex, 64);
    ck_assert_int_ge(n, 15);

    // 2. no line of a reference body in the workbook; and the check can see one
    snprintf(cmd, sizeof cmd, "scripts/exercises.sh leaks '%s' '%s'", wb, bodies);
    st = run_in(project_root(), cmd, log, &out);
    ck_assert_msg(st == 0 && out[0] == 0, "the workbook shows reference body lines (exit %d):\n%s", st, out);
    free(out);
    snprintf(cmd, sizeof cmd, "cp '%s/docs/exercises.md' '%s/saved.md' && "
             "sed -n 1p '%s.secrets' >> '%s/docs/exercises.md' && "
             "scripts/exercises.sh leaks '%s' '%s'; st=$?; cp '%s/saved.md' '%s/docs/exercises.md'; exit $st",
             wb, dir, bodies, wb, wb, bodies, dir, wb);
    st = run_in(project_root(), cmd, log, &out);
    ck_assert_msg(st == 1 && strstr(out, "docs/exercises.md:"), "a body line planted in the workbook's "
                  "docs/exercises.md was not found (exit %d):\n%s", st, out);
    free(out);

    // built (from the project's objects that `make exercises` put in it: only
    // the stubbed files compile), the workbook fails every exercise, each on
    // its own stub
    snprintf(cmd, sizeof cmd, "cd '%s' && " MAKE " -j2 grade-objects", wb);
    st = run_in(project_root(), cmd, log, &out);
    ck_assert_msg(st == 0, "the workbook does not build: exit %d\n%s", st, out);
    free(out);
    st = run_in(wb, MAKE " grade", log, &out);
    ck_assert_msg(st == 2, "make grade in the workbook: exit %d, want 2 (checks failed)\n%s", st, out);
    char want[64];
    snprintf(want, sizeof want, "0 of %d exercises pass every check", n);
    ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
    for (int i = 0; i < n; i++) {
        char *b = grade_block(out, ex[i].name), stub[256];
        snprintf(stub, sizeof stub, "FAIL: %.47s: not written yet: see docs/exercises.md#%.47s", ex[i].name, ex[i].name);
        ck_assert_msg(strstr(b, stub), "%s did not fail on its own stub in the workbook:\n%s", ex[i].name, b);
        ck_assert_msg(strstr(b, " pass") == NULL, "%s: a check passed on the stubs:\n%s", ex[i].name, b);
        free(b);
    }
    free(out);

    // 3. the reference bodies put back (in a copy): every file of the
    // project but the pages, byte for byte
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s/copy' && mkdir '%s/copy' && "
             "for f in $(scripts/exercises.sh list | awk '{ sub(/:[0-9]+$/, \"\", $2); print $2 }' | sort -u); do "
             "  mkdir -p \"$(dirname '%s/copy'/$f)\" && "
             "  scripts/exercises.sh restore '%s'/$f '%s' > '%s/copy'/$f || exit 1; "
             "done; "
             "scripts/exercises.sh files | { n=0; while read -r f; do case $f in *.md|tests/exercise_mistakes.txt) continue ;; esac; n=$((n + 1)); "
             "  if [ -f '%s/copy'/\"$f\" ]; then w='%s/copy'/\"$f\"; else w='%s'/\"$f\"; fi; "
             "  cmp -s \"$f\" \"$w\" || echo \"differs: $f\"; done; echo \"compared $n files\"; }",
             dir, dir, dir, wb, bodies, dir, dir, dir, wb);
    st = run_in(project_root(), cmd, log, &out);
    int compared = 0;
    ck_assert_msg(st == 0 && sscanf(out, "compared %d files", &compared) == 1 && compared >= 100,
                  "the workbook with its bodies restored is not the project (exit %d):\n%s", st, out);
    free(out);

    // 4. any order: each exercise, written alone, passes every check
    for (int i = 0; i < n; i++) {
        st = grade_with_body(dir, wb, bodies, &ex[i], NULL, 1, &out);
        snprintf(want, sizeof want, "1 of 1 exercises pass every check");
        ck_assert_msg(st == 0 && strstr(out, want), "%s alone (every other exercise a stub): its grade "
                      "(exit %d) does not pass:\n%s", ex[i].name, st, out);
        char *b = grade_block(out, ex[i].name);   // each check listed, pass or "-"
        ck_assert_msg(strstr(b, "  forward   ") && strstr(b, "  smoke     ") && strstr(b, " pass") &&
                      !strstr(b, "FAIL"), "%s", b);
        free(b);
        free(out);
    }

    // 5. every listed mistake fails its exercise's grade, naming the quantity
    char path[1024];
    ck_assert_int_eq(project_path(path, sizeof path, "tests/exercise_mistakes.txt"), 0);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    char line[4096];
    int per[64] = { 0 }, total = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#' || line[0] == 0) continue;
        char *bar1 = strstr(line, " | "), *bar2 = bar1 ? strstr(bar1 + 3, " | ") : NULL;
        ck_assert_msg(bar1 && bar2, "tests/exercise_mistakes.txt: not \"exercise | quantity | change\": %s", line);
        *bar1 = 0; *bar2 = 0;
        const char *name = line, *quantity = bar1 + 3, *changes = bar2 + 3;
        int k = 0;
        while (k < n && strcmp(ex[k].name, name) != 0) k++;
        ck_assert_msg(k < n, "tests/exercise_mistakes.txt: no exercise %s", name);
        // "CHECK: quantity": that check must fail naming it (every check is run)
        static const char *const checks[] = { "forward", "backward", "threads", "parity", "smoke" };
        char check_line[64] = "";
        for (int c = 0; c < 5; c++) {
            size_t len = strlen(checks[c]);
            if (strncmp(quantity, checks[c], len) == 0 && strncmp(quantity + len, ": ", 2) == 0) {
                snprintf(check_line, sizeof check_line, "\n  %-9s FAIL: ", checks[c]);
                quantity += len + 2;
            }
        }
        st = grade_with_body(dir, wb, bodies, &ex[k], changes, check_line[0] != 0, &out);
        char *b = st == 2 ? grade_block(out, name) : NULL;   // 2: make's exit when grade.sh fails
        const char *at = b ? (check_line[0] ? strstr(b, check_line) : strstr(b, "FAIL: ")) : NULL;
        const char *eol = at ? strchr(at + 1, '\n') : NULL;
        char line[4096] = "";
        if (at) snprintf(line, sizeof line, "%.*s", eol ? (int)(eol - at) : (int)strlen(at), at);
        ck_assert_msg(at && !strstr(b, "not written yet") && strstr(check_line[0] ? line : b, quantity),
                      "the mistake \"%s\" in %s: its grade (exit %d, want 2) does not fail%s%s naming %s:\n%s",
                      changes, name, st, check_line[0] ? " its check" : "", check_line, quantity, out);
        free(b); free(out);
        per[k]++; total++;
    }
    fclose(f);
    for (int i = 0; i < n; i++)
        ck_assert_msg(per[i] >= 3, "tests/exercise_mistakes.txt lists %d mistakes of %s, want 3 at least",
                      per[i], ex[i].name);
    printf("%d exercises each pass alone; %d listed mistakes each fail their grade\n", n, total);

    // 6. refusals: an existing workbook folder, unknown names, an unknown step
    snprintf(cmd, sizeof cmd, MAKE " exercises WORKBOOK='%s'", wb);
    ck_assert_int_ne(run_in(project_root(), cmd, log, &out), 0);
    ck_assert_msg(strstr(out, "exists already") && strstr(out, "To start again"), "%s", out);
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

// A stub's abort() must not lose what the program printed: with stdout a
// file (fully buffered), a child prints a line, then reaches a stub; the
// file must hold the line, and the child must have died of SIGABRT with
// the stub's message on stderr.
START_TEST(test_stub_flushes_stdout) {
    char dir[256], out_path[300], err_path[300];
    tmpdir_make(dir, sizeof dir, "stub");
    snprintf(out_path, sizeof out_path, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    fflush(stdout);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr)) _exit(3);
        printf("1. the section printed before the stub\n");
        exercise_not_written("some_exercise");
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "the stub did not abort (status %d)", st);
    char *out = read_whole_file(out_path), *err = read_whole_file(err_path);
    ck_assert_msg(strstr(out, "1. the section printed before the stub"), "stdout lost its line at the stub: "
                  "got \"%s\"", out);
    ck_assert_msg(strstr(err, "some_exercise: not written yet: see docs/exercises.md#some_exercise"), "%s", err);
    free(out); free(err);
    tmpdir_remove(dir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("exercises");
    add_tests(s, "exercises", 600, TESTS(test_workbook));
    add_tests(s, "stub", 0, TESTS(test_stub_flushes_stdout));
    return run_suite(s);
}
