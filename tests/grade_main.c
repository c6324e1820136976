// grade_main.c: the one program `make grade` links for an exercise
// (scripts/grade.sh). It holds every test program it grades with, each
// one's main renamed grade_main_<program> (the Makefile's objcopy), and
// runs the one named first:
//
//   grader test_layers      the test program test_layers, as if run alone
//   grader golden_check DIR
//
// One program instead of one per test program: an exercise's checks need
// one link after an edit, not four. Linked with -rdynamic, so that the
// programs are found by name and a crash names its functions (crash.h).
#include <dlfcn.h>
#include <stdio.h>
#include "crash.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PROGRAM [ARGS...]  (a test program: test_layers, golden_check, ...)\n", argv[0]);
        return 2;
    }
    char name[128];
    snprintf(name, sizeof name, "grade_main_%s", argv[1]);
    int (*program)(int, char **) = (int (*)(int, char **))dlsym(RTLD_DEFAULT, name);
    if (!program) {
        fprintf(stderr, "%s: no test program %s in this grader (%s)\n", argv[0], argv[1], name);
        return 2;
    }
    crash_report_install();
    crash_context("%s", argv[1]);
    return program(argc - 1, argv + 1);
}
