// noise.c: `lab noise`, where the spread of a configuration's seeds comes
// from: the same seeds trained twice (two machines, two builds), and the
// wobble of the check the val MSE is read at (noise.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "noise.h"
#include "io/args.h"
#include "io/fileio.h"
#include "io/paths.h"

void noise_rerun(const AblationResults *here, const AblationResults *there, int config, NoiseRerun *out) {
    const ConfigResults *a = &here->cfg[config], *b = &there->cfg[config];
    double sum = 0, sq = 0;
    int n = 0;
    for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
        if (!a->seed[k].present || !b->seed[k].present) continue;
        double d = a->seed[k].m.val_mse - b->seed[k].m.val_mse;
        sum += d;
        sq += d * d;
        n++;
    }
    out->n_here = a->n;
    out->n_there = b->n;
    out->n_pairs = n;
    out->sd_here = a->val.sd;
    out->sd_there = b->val.sd;
    out->mean_diff = n ? sum / n : NAN;
    out->rms_diff = n ? sqrt(sq / n) : NAN;
}

int noise_last_wobble(const char *run_dir, double *w) {
    char path[2048];
    snprintf(path, sizeof path, "%s/val.tsv", run_dir);
    if (!file_exists(path)) return -1;
    size_t len;
    char err[256];
    char *text = read_file_all(path, &len, err, sizeof err);
    if (!text) return -1;
    double v[3] = { NAN, NAN, NAN };   // the last three checks, oldest first
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int step;
        double val;
        if (sscanf(line, "%d %lf", &step, &val) != 2) continue;   // the header
        v[0] = v[1];
        v[1] = v[2];
        v[2] = val;
        rows++;
    }
    free(text);
    if (rows < 3) return -1;
    *w = v[1] - (v[0] + v[2]) / 2;
    return 0;
}

// "0.0012", or "-" for a number that is not there.
static const char *num(char *buf, size_t n, double x, const char *fmt) {
    if (isnan(x)) snprintf(buf, n, "-");
    else snprintf(buf, n, fmt, x);
    return buf;
}

// Section 1: the same runs in two folders, run by run, then per configuration.
static void print_reruns(const AblationResults *here, const AblationResults *there, const char *here_name) {
    printf("the same seed trained twice: val MSE here (%s) and there (%s)\n", here_name, there->dir);
    printf("  %-22s %10s %10s %12s\n", "run", "here", "there", "here - there");
    int pairs = 0;
    for (int c = 0; c < ABLATION_CONFIGS; c++)
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            const AblationRow *a = &here->cfg[c].seed[k], *b = &there->cfg[c].seed[k];
            if (!a->present || !b->present) continue;
            char name[64];
            ablation_run_name(c, k, name, sizeof name);
            // differences from a rounding's few bits to a whole other path: in
            // exponent form, so that 1e-7 does not print as 0.0000
            printf("  %-22s %10.6f %10.6f %+12.1e\n", name, a->m.val_mse, b->m.val_mse, a->m.val_mse - b->m.val_mse);
            pairs++;
        }
    if (!pairs) {
        printf("  no run is in both folders: nothing to compare\n\n");
        return;
    }
    printf("\n  %-20s %6s %12s %12s %10s %10s\n", "configuration", "pairs", "spread here", "spread there",
           "mean diff", "rms diff");
    double sq = 0, spread_sq = 0;
    int n = 0, n_spread = 0;
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        NoiseRerun r;
        noise_rerun(here, there, c, &r);
        if (!r.n_pairs) continue;
        char s1[16], s2[16], s3[16], s4[16];
        printf("  %-20s %6d %12s %12s %10s %10s\n", ABLATION_CONFIG[c].label, r.n_pairs,
               num(s1, sizeof s1, r.sd_here, "%.4f"), num(s2, sizeof s2, r.sd_there, "%.4f"),
               num(s3, sizeof s3, r.mean_diff, "%+.1e"), num(s4, sizeof s4, r.rms_diff, "%.1e"));
        sq += r.rms_diff * r.rms_diff * r.n_pairs;
        n += r.n_pairs;
        if (!isnan(r.sd_here)) { spread_sq += r.sd_here * r.sd_here; n_spread++; }
    }
    double rms = sqrt(sq / n);
    printf("\n  over the %d pairs, a seed's val MSE moves by %.1e (rms) from one folder to the other", n, rms);
    if (n_spread) {
        double spread = sqrt(spread_sq / n_spread);
        // Two independent draws of the same noise differ by sqrt(2) sd (rms).
        printf(";\n  the seeds' spread here is %.4f (rms over configurations), and two unrelated draws\n"
               "  of that noise would differ by %.4f (sqrt(2) spreads): the moves are %.1e of that\n",
               spread, sqrt(2.0) * spread, rms / (sqrt(2.0) * spread));
    } else {
        printf(" (no configuration has two seeds here: no spread to set it against)\n");
    }
    printf("\n");
}

// Section 2: the wobble of the last check, from each run's val.tsv. The
// offsets share a part (the curve's own bend over the last two intervals,
// the same sign in every run); what varies around their mean is the wobble.
static void print_wobble(const AblationResults *res, const char *name) {
    printf("the last check's wobble in %s (val.tsv: the middle of the last three checks\n"
           "against the line through the other two)\n", name);
    double w[ABLATION_CONFIGS * ABLATION_MAX_SEEDS], spread_sq = 0;
    int n = 0, n_spread = 0;
    for (int c = 0; c < ABLATION_CONFIGS; c++) {
        for (int k = 0; k < ABLATION_MAX_SEEDS; k++) {
            if (!res->cfg[c].seed[k].present) continue;
            char name[64], dir[2048];
            ablation_run_name(c, k, name, sizeof name);
            snprintf(dir, sizeof dir, "%s/%s", res->dir, name);
            if (noise_last_wobble(dir, &w[n]) == 0) n++;
        }
        if (!isnan(res->cfg[c].val.sd)) { spread_sq += res->cfg[c].val.sd * res->cfg[c].val.sd; n_spread++; }
    }
    if (n < 2) {
        printf("  %s\n\n", n ? "one run has three checks in a val.tsv: no spread to measure"
                               : "no run has three checks in a val.tsv");
        return;
    }
    SeedSpread s = seed_spread(w, n);
    printf("  %d runs: the offsets average %+.4f (the curve's bend, shared) and spread %.4f around it,\n"
           "  so one check wobbles by about %.4f (that spread / sqrt(1.5))", n, s.mean, s.sd, s.sd / sqrt(1.5));
    if (n_spread) printf(";\n  the seeds' spread is %.4f (rms over configurations)", sqrt(spread_sq / n_spread));
    printf("\n\n");
}

int cmd_noise(int argc, char **argv) {
    const char *against = NULL;
    char **words = NULL;
    int nwords = 0;
    const ArgOption opts[] = {
        ARG_FOLDER("against", "DIR", &against, "the same runs trained elsewhere"),
        ARG_END,
    };
    const ArgSpec spec = {
        .program = "lab noise", .options = opts, .words = "[runs-dir]", .word_v = &words, .word_n = &nwords,
        .about = "  where the spread of the seeds comes from: the same seeds trained twice (runs of\n"
                 "  the same names in runs-dir, default the project's results/tutorial, and DIR, e.g.\n"
                 "  two machines or builds), and the wobble of the last val check (each run's val.tsv)",
    };
    int rc = args_parse(&spec, argc, argv);
    if (rc != ARGS_OK) return args_exit_code(rc);
    if (nwords > 1) return args_error(NULL, "one runs folder at most, got %d (lab noise --help)", nwords);
    char dflt[1024];
    project_path(dflt, sizeof dflt, "results/tutorial");
    const char *dir = nwords ? words[0] : dflt;
    const char *name = nwords ? words[0] : "results/tutorial";   // as a reader would type it
    AblationResults *there = NULL;
    AblationResults *here = results_load_pair(dir, against, &there);
    if (!here) return 1;
    if (here->dir_missing || (there && there->dir_missing)) {
        fprintf(stderr, "error: no such folder: %s\n", here->dir_missing ? dir : against);
        rc = 2;
    } else {
        if (there) print_reruns(here, there, name);
        print_wobble(here, name);
    }
    free(here);
    free(there);
    return rc;
}
