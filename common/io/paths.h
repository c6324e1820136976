// paths.h: where the project's folders are, found when a program runs.
//
// A program may be started from the project root (make tutorial), from its
// step folder (cd step3_qknorm && ./step3_qknorm) or from a test's temporary
// folder. Its default runs/ folder, probe cache and data/ folder are the
// project's, not the current folder's, so the root is looked up at run time:
// the nearest folder above the running program's own file that holds
// mk/common.mk. A copy of the checkout therefore writes into the copy.
#pragma once
#include <stddef.h>

// The project root: $TINYDIT_HOME if set, else the nearest folder above the
// program's executable (/proc/self/exe) that holds mk/common.mk, else ".".
// The string is computed once and lives for the whole program.
const char *project_root(void);

// root + "/" + relative into out. 0, or -1 if out is too small.
int project_path(char *out, size_t outlen, const char *relative);

// A project file as a command typed here would name it: relative to the
// current folder when that is the root ("step6_ablation/step6_ablation"),
// the file's own folder ("./step6_ablation") or another folder right below
// the root ("../step6_ablation/step6_ablation"), else the absolute path.
// For the "try it" lines a program prints.
void project_command(char *out, size_t outlen, const char *relative);

// The default folder of the runs: <root>/runs.
const char *default_runs_dir(void);
