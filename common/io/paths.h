// paths.h: where the project's folders are, found when a program runs.
//
// A program may be started from the project root, from its step folder or
// from a test's temporary folder; its runs/, models/ and data/ are the
// project's all the same, so the root is looked up at run time.
#pragma once
#include <stddef.h>

// $TINYDIT_HOME if set, else the nearest folder above the program's own
// file that holds mk/common.mk (a copy of the checkout writes into the
// copy), else ".".
const char *project_root(void);

// root + "/" + relative into out. 0, or -1 if out is too small.
int project_path(char *out, size_t outlen, const char *relative);

// A project file as a command typed here would name it
// ("step6_ablation/step6_ablation", "./step6_ablation",
// "../step6_ablation/step6_ablation", else the absolute path).
void project_command(char *out, size_t outlen, const char *relative);

// The default folder of the runs: <root>/runs.
const char *default_runs_dir(void);
