// step1.h: the parts of step1_scorecard, shared by main.c and the tests.
//   main.c     the baseline's seeds, their scorecard, the seed gap, the noise
//   figures.c  the pictures of the noise: the seeds' loss curves and val MSEs
#pragma once
#include "io/metrics.h"

// The most baseline seeds step 1 reads.
#define STEP1_MAX_SEEDS 32

// Draws into dir, with common/io/figure.h:
//   step1_loss_curves  the training loss of every seed (from each run's
//                      loss.tsv, beside its metrics.json), raw and smoothed
//   step1_val_mse      every seed's val MSE, the band of the first pair's seed
//                      gap around their mean (the tutorial's yardstick) and the
//                      band of one spread around the mean of all seeds
// and prints one figure_report line. Returns the number of PNGs drawn, or -1
// after an error message (the scorecard printed before it stands).
int step1_figures(const RunMetrics *runs, int n, const char *dir);
