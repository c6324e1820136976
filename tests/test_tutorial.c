// test_tutorial.c: what the README tells a newcomer to do, done in a copy of
// the project, start to end:
//
//   1. the project is copied into a temporary folder (without runs/, data/
//      and .git). The built programs come along with their timestamps, so make
//      finds them up to date instead of spending a minute compiling. They were
//      compiled in the original folder, which is the point: a program must find
//      the project it sits in when it runs, and write there;
//   2. a small synthetic data set in CIFAR-10's layout (tests/synth_cifar.h)
//      goes beside the copy, and CIFAR_DIR names it by a RELATIVE path, as the
//      README's example does;
//   3. `make tutorial PRESET=smoke` runs in the copy, with the default RUNS.
//
// Then: make succeeded; runs/report.md and the plots are there; no probe was
// trained (the scorecard's is the shipped one); step 1 read
// the baseline pair that step 6 trained first ("finished already") instead of
// training its own; no step folder grew a runs/ of its own; and the original
// project's runs/ did not change. About two minutes on two idle cores.
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include "io/paths.h"
#include "synth_cifar.h"
#include "testutil.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    s[n] = 0;
    return s;
}

// The last part of a long text, for failure messages.
static const char *tail_of(const char *text) {
    size_t n = strlen(text);
    return n > 3000 ? text + n - 3000 : text;
}

// The names in a folder, one string ("" if it does not exist), to see that
// the original project's runs/ is left as it was.
static void list_names(const char *dir, char *out, size_t outlen) {
    out[0] = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    size_t used = 0;
    while ((e = readdir(d)) != NULL && used + 2 < outlen)
        used += (size_t)snprintf(out + used, outlen - used, "%s\n", e->d_name);
    closedir(d);
}

START_TEST(test_tutorial_in_a_copy) {
    const char *root = project_root();
    char tmp[256], tree[300], data[300], log[300], cmd[4096];
    snprintf(tmp, sizeof tmp, "/tmp/test_tutorial_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(tree, sizeof tree, "%s/tinydit", tmp);
    snprintf(data, sizeof data, "%s/cifar", tmp);
    snprintf(log, sizeof log, "%s/make.log", tmp);

    // 1. the copy (--format=posix keeps the timestamps to the nanosecond)
    snprintf(cmd, sizeof cmd,
             "mkdir '%s' && tar -C '%s' --format=posix -cf - --exclude=./runs --exclude=./data "
             "--exclude=./.git --exclude=./fuzz/out --exclude=./build/sanitize --exclude=./build/valgrind "
             "--exclude=./build/fuzz . | tar -C '%s' -xf -", tree, root, tree);
    ck_assert_msg(system(cmd) == 0, "could not copy %s into %s", root, tree);
    // 2. the data beside it
    ck_assert_int_eq(mkdir(data, 0755), 0);
    ck_assert_int_eq(synth_cifar_write(data, SYNTH_CIFAR_RECORDS), 0);

    char original_runs[4200], before[8192], after[8192];
    snprintf(original_runs, sizeof original_runs, "%s/runs", root);
    list_names(original_runs, before, sizeof before);

    // 3. make tutorial, as a user would type it: nothing of this make's
    // environment that would change where things go (MAKEFLAGS would also
    // hand over the jobserver of the make running this test)
    snprintf(cmd, sizeof cmd,
             "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u RUNS -u TINYDIT_HOME "
             "-u GOLDEN_DIR CIFAR_DIR=../cifar CIFAR_RECORDS=%d make tutorial PRESET=smoke ESTIMATE=no > '%s' 2>&1",
             tree, SYNTH_CIFAR_RECORDS, log);
    printf("test_tutorial: in %s: CIFAR_DIR=../cifar make tutorial PRESET=smoke\n", tree);
    fflush(stdout);
    double t0 = now_s();
    int rc = system(cmd);
    double seconds = now_s() - t0;
    char *text = slurp(log);
    ck_assert_msg(rc == 0, "make tutorial failed (status %d), log %s:\n%s", rc, log, tail_of(text));

    // the report and the plots, in the copy's runs/
    char path[600];
    snprintf(path, sizeof path, "%s/runs/report.md", tree);
    ck_assert_msg(exists(path), "no %s:\n%s", path, tail_of(text));
    const char *figures[] = { "loss.png", "val_mse.png", "samples.png" };
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/runs/plots/%s", tree, figures[i]);
        ck_assert_msg(exists(path), "no %s:\n%s", path, tail_of(text));
    }

    // no probe trained: every probe-FD is the shipped probe's
    ck_assert_msg(!strstr(text, "probe: training"), "make tutorial trained a probe:\n%s", tail_of(text));

    // step 1 read step 6's baseline pair instead of training its own
    const char *step1 = strstr(text, "Step 1: the baseline");
    ck_assert_msg(step1 != NULL, "step 1 did not run:\n%s", tail_of(text));
    ck_assert_msg(strstr(step1, "[p11_base_s0] finished already") && strstr(step1, "[p11_base_s1] finished already"),
                  "step 1 did not read runs/p11_base_s0 and _s1:\n%s", tail_of(step1));
    snprintf(path, sizeof path, "%s/runs/step1_smoke_s0", tree);
    ck_assert_msg(!exists(path), "step 1 trained its own baseline into %s", path);
    // every run in the copy's runs/, none in a step folder
    for (int s = 1; s <= 6; s++) {
        snprintf(cmd, sizeof cmd, "ls -d '%s'/step%d_*/runs >/dev/null 2>&1", tree, s);
        ck_assert_msg(system(cmd) != 0, "step %d wrote a runs/ folder inside its step folder", s);
    }
    // and nothing in the original project's runs/
    list_names(original_runs, after, sizeof after);
    ck_assert_msg(strcmp(before, after) == 0, "make tutorial in the copy changed %s", original_runs);

    // step 1's table, for the log
    const char *end = strstr(step1, "\nwhat the numbers are");
    printf("%.*s\n", end ? (int)(end - step1) : 600, step1);
    printf("test_tutorial: make tutorial PRESET=smoke in a copy, relative CIFAR_DIR: %.0f s\n", seconds);
    free(text);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

// What `make tutorial` builds before the job: the programs it runs, by a
// make of their own in parallel, and nothing else (no test, no tool, not
// step 0's tour). `make -n -B` prints every command the build would run,
// none run, whatever is built already.
START_TEST(test_tutorial_builds_only_the_job) {
    char cmd[1024], out[400];
    snprintf(out, sizeof out, "/tmp/test_tutorial_build_%ld.txt", (long)getpid());
    snprintf(cmd, sizeof cmd, "cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -B tutorial PRESET=smoke "
             "CIFAR_DIR=/tmp > '%s' 2>&1", project_root(), out);
    ck_assert_msg(system(cmd) == 0, "make -n -B tutorial failed: see %s", out);
    char *text = slurp(out);
    const char *build = strstr(text, "make -s -j$(nproc) ");
    ck_assert_msg(build != NULL, "make tutorial does not build in parallel, one compiler a core:\n%s", tail_of(text));
    const char *programs[] = { "step1_scorecard", "step2_rmsnorm", "step3_qknorm", "step4_swiglu", "step5_rope2d",
                               "step6_ablation", "step7_guidance", "lab" };
    for (int i = 0; i < 8; i++) {
        char link[128];
        snprintf(link, sizeof link, "-o %s/%s ", programs[i], programs[i]);
        ck_assert_msg(strstr(text, link), "make tutorial does not build %s:\n%s", programs[i], tail_of(text));
    }
    const char *not_needed[] = { "-o build/tests/", "-o build/tools/", "/test_", "-o step0_tour/", "build/grade/" };
    for (int i = 0; i < 5; i++)
        ck_assert_msg(!strstr(text, not_needed[i]), "make tutorial builds what the job does not run (%s):\n%.300s",
                      not_needed[i], strstr(text, not_needed[i]));
    free(text);
    unlink(out);
}
END_TEST

int main(void) {
    // minutes; more on a loaded machine
    return run_tests("tutorial", "tutorial", 1800, TESTS(test_tutorial_builds_only_the_job, test_tutorial_in_a_copy));
}
