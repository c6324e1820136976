// sweep_curves.h: sweep --curves (sweep_curves.c).
#pragma once
#include <stdbool.h>
#include "sweep_plan.h"

// --curves: at every val check (val.tsv), each configuration's mean val MSE
// over its seeds minus the first configuration's, with its standard error;
// as a table, or with tsv one line per check for scripts/gap_plot.sh.
void sweep_curves(const SweepPlan *p, bool tsv);
