// table.c: step6_ablation's `table` command: its options, and which of
// the tables' printers (ablation_table.h) runs.
#include <getopt.h>
#include <stdlib.h>
#include "ablation_table.h"
#include "io/args.h"
#include "io/paths.h"

static void table_usage(FILE *f) {
    fprintf(f, "usage: step6_ablation table [--tsv | --tsv-seeds | --curves | --report] [--compare DIR] [runs-dir]\n"
               "  --report writes runs-dir/report.md, the tables in Markdown with the plots (lab report)\n");
}

// argv[0] is the command; getopt_long reads the rest (common/io/args.h).
int cmd_table(int argc, char **argv) {
    static const struct option opts[] = {
        { "tsv", no_argument, 0, 't' },    { "tsv-seeds", no_argument, 0, 's' },
        { "curves", no_argument, 0, 'c' }, { "compare", required_argument, 0, 'C' },
        { "report", no_argument, 0, 'r' }, { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *dir = default_runs_dir(), *ref_dir = NULL;
    enum { TABLE, TSV, TSV_SEEDS, CURVES, REPORT } mode = TABLE;
    optind = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 't': mode = TSV; break;
        case 's': mode = TSV_SEEDS; break;
        case 'c': mode = CURVES; break;
        case 'r': mode = REPORT; break;
        case 'C': ref_dir = optarg; break;
        case 'h': table_usage(stdout); return 0;
        default: return args_unknown(table_usage, argv);
        }
    }
    for (; optind < argc; optind++) dir = argv[optind];   // the runs' folder: the last one named
    AblationResults *ref, *res = results_load_pair(dir, ref_dir, &ref);
    if (!res) return 1;
    int rc = 0;
    if (mode == REPORT) {
        char err[2400];
        rc = report_write(res, dir, err, sizeof err) == 0 ? 0 : 1;
        if (rc == 0) printf("wrote %s/report.md (%d runs)\n", dir, res->n_present);
        else fprintf(stderr, "error: %s\n", err);
    } else if (mode == TSV) results_print_tsv(res, stdout);
    else if (mode == TSV_SEEDS) results_print_seeds_tsv(res, stdout);
    else if (mode == CURVES) results_print_curves(res);
    else results_print(res, ref);
    free(res);
    free(ref);
    return rc;
}
