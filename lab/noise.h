// noise.h: where the spread of a configuration's seeds comes from (noise.c).
//
// A table reads each configuration against the spread of its seeds. Three
// things besides the seed itself could make that spread:
//   the machine and the build  the same seed trained twice, on two machines
//                              or by two builds, lands on two val MSEs;
//   the last check's wobble    val MSE measured at one step of a curve that
//                              still moves from check to check;
// `lab noise RUNS --against OTHER` measures the first on runs of the same
// names in two folders, and the second on each run's val.tsv.
#pragma once
#include "eval/ablation_runs.h"

// One configuration's seeds, here and in the other folder.
typedef struct {
    int n_here, n_there;      // seeds present in each folder
    int n_pairs;              // seeds present in both
    double sd_here, sd_there; // the seeds' spread in each folder (NAN below 2 seeds)
    double mean_diff;         // mean over the pairs of val(here) - val(there), NAN without pairs
    double rms_diff;          // root mean square of those differences, NAN without pairs
} NoiseRerun;

void noise_rerun(const AblationResults *here, const AblationResults *there, int config, NoiseRerun *out);

// The wobble of the last check: with the val MSE v1, v2, v3 of the last three
// checks, how far the middle one lies off the straight line through the
// other two, w = v2 - (v1 + v3) / 2. If each check carried independent noise
// of sd s around a smooth curve (straight over two intervals), w would have
// sd s * sqrt(1.5); so s is estimated as rms(w) / sqrt(1.5) over many runs.
// Reads DIR/NAME/val.tsv: 0 with *w set, or -1 when there are fewer than
// three checks (or no file).
int noise_last_wobble(const char *run_dir, double *w);

int cmd_noise(int argc, char **argv);
