// exercise.c: what stands in for an exercise's body in the workbook
// (make exercises; docs/exercises.md lists the exercises).
#include <stdio.h>
#include <stdlib.h>
#include "layers.h"

void exercise_not_written(const char *name) {
    fflush(stdout);   // what the program printed so far reaches its file or pipe before abort()
    fprintf(stderr, "%s: not written yet: see docs/exercises.md#%s\n", name, name);
    abort();
}
