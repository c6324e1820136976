// report.h: runs/report.md, the tables of step 6 as Markdown (report.c).
#pragma once
#include <stddef.h>
#include "../step6_ablation/ablation_runs.h"

// DIR/report.md: the same content in Markdown, with links to DIR/plots/*.png
// that exist. 0, or -1 with a message.
int report_write(const AblationResults *res, const char *path, char *err, size_t errlen);

int cmd_report(int argc, char **argv);
