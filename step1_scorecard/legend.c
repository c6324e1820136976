// legend.c: the words under step 1's scorecard: what each number is, and
// what more seeds buy (step1.h).
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include "step1.h"
#include "eval/probe.h"
#include "eval/scorecard.h"
#include "eval/spikes.h"
#include "io/bench.h"
#include "io/cifar.h"

const RunMetrics *table_probe(const RunMetrics *runs, int n, RunMetrics *shipped) {
    int first = metrics_table_probe(runs, n);
    if (first < 0) return NULL;
    char err[512];
    if (probe_shipped_metrics(shipped, err, sizeof err) == 0) return shipped;
    fprintf(stderr, "warning: %s: probe-FDs shown by the first run's probe instead\n", err);
    return &runs[first];
}

// What the numbers are. Built from the constants the scorecard uses, so the
// words cannot drift from what was measured.
void print_legend(const RunMetrics *runs, int n) {
    RunMetrics shipped;
    const RunMetrics *probe = table_probe(runs, n, &shipped);
    printf("\nwhat the numbers are:\n");
    printf("  val MSE   flow-matching loss on the first %d test images, noise and times fixed by\n"
           "            their own seed: the same exam for every model (lower is better)\n", VAL_IMAGES);
    printf("  probe-FD  Frechet distance between %d samples (%d Euler steps) and the %d test images,\n"
           "            in the features of the project's probe classifier (lower is better;\n"
           "            comparable only with the same probe's)\n", FD_SAMPLES, FD_EULER_STEPS, CIFAR_RECORDS_PER_FILE);
    if (probe) {
        char label[160];
        metrics_probe_label(probe, label, sizeof label);
        printf("            by %s\n", label);
        // each other probe once: its runs, then the probe
        for (int i = 0; i < n; i++) {
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = isfinite(runs[j].probe_fd) && metrics_same_probe(&runs[j], &runs[i]);
            if (seen || !isfinite(runs[i].probe_fd) || metrics_same_probe(&runs[i], probe)) continue;
            printf("            %s", runs[i].name);
            for (int j = i + 1; j < n; j++)
                if (isfinite(runs[j].probe_fd) && metrics_same_probe(&runs[j], &runs[i])) printf(", %s", runs[j].name);
            metrics_probe_label(&runs[i], label, sizeof label);
            printf(": by another probe, not compared with these:\n              %s\n", label);
        }
    }
    bool speed = false;
    for (int i = 0; i < n; i++) speed |= isfinite(runs[i].ms_per_step) != 0;
    if (speed)
        printf("  ms/step   mean wall time of one training step, on the run's threads, while the run shared the\n"
               "            machine with whatever else ran: noisy, and not comparable across machines\n");
    else
        printf("  ms/step   not shown (-): each run was timed beside whatever else its machine ran\n"
               "            (its metrics.json keeps it); lab speed times configurations fairly\n");
    printf("  spikes    steps whose loss is above %.1fx the median of the previous %d steps\n",
           (double)SPIKE_FACTOR, SPIKE_WINDOW);
    printf("  seed gap  |val MSE(seed 0) - val MSE(seed 1)| of one config: a change smaller\n"
           "            than this is noise, not a result\n");
}

// What N seeds per configuration buy at this spread sd.
void print_what_seeds_buy(double sd) {
    printf("\nwhat N seeds per configuration buy, at this spread: the standard error of a difference of\n"
           "two means is spread * sqrt(2/N), and a difference is resolved when it is over 2 of them\n");
    Table t;
    table_init(&t, 3, "seeds per side", "se of a difference", "smallest difference resolved");
    static const int NS[] = { 1, 2, 3, 5, 10 };
    for (size_t i = 0; i < sizeof NS / sizeof NS[0]; i++) {
        double se = sd * sqrt(2.0 / NS[i]);
        table_cell(&t, "%d", NS[i]);
        table_cell(&t, "%.4f", se);
        table_cell(&t, "%.4f", 2 * se);
    }
    table_print(&t);
}
