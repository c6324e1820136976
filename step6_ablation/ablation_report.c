// ablation_report.c: runs/report.md, the tables of ablation_table.c in
// Markdown with the plots that exist, written by `step6_ablation table
// --report` (which `lab report` runs). The text is built in an
// open_memstream buffer and written with write_file_atomic.
#include <limits.h>
#include <stdlib.h>
#include "ablation_table.h"
#include "io/bench.h"
#include "io/fileio.h"
#include "io/paths.h"

// ---------------------------------------------------------------------------
// runs/report.md

// Text as Markdown shows it: its lines joined into one paragraph, and a '*'
// (the mark of an assumed spread) escaped, so that it is not read as
// emphasis or a list.
static void put_joined(FILE *s, const char *text) {
    for (const char *c = text; *c; c++) {
        if (*c == '\n') {
            if (c[1] != ' ' && c[1] != 0) fputc(' ', s);
            continue;
        }
        if (*c == ' ' && c > text && c[-1] == '\n') continue;
        if (*c == '*') fputs("\\*", s);
        else fputc(*c, s);
    }
}
static void put_paragraph(FILE *s, const char *text) {
    put_joined(s, text);
    fputs("\n\n", s);
}

// A table as Markdown: the first column left-aligned, the others right.
static void put_table(FILE *s, const Table *t) {
    for (int r = 0; r <= t->nrows; r++) {
        fprintf(s, "|");
        for (int c = 0; c < t->ncols; c++) { fprintf(s, " "); put_joined(s, t->cell[r][c]); fprintf(s, " |"); }
        fprintf(s, "\n");
        if (r == 0) {
            fprintf(s, "|");
            for (int c = 0; c < t->ncols; c++) fprintf(s, "%s|", c ? "---:" : "---");
            fprintf(s, "\n");
        }
    }
}

// The plots that `make plots` draws (scripts/plots.sh and the attention
// maps), in the report's order.
static const struct { const char *file, *what; } PLOTS[] = {
    { "loss.png",      "Training loss of every run (smoothed)" },
    { "lr2e3.png",     "The lr 2e-3 pair against the baseline at the default lr" },
    { "max_logit.png", "Largest attention logit during training: baseline vs QK-norm, both learning rates" },
    { "val_mse.png",   "Val MSE of each run, with the band of one seed gap around the baseline" },
    { "val_mse_seeds.png", "Val MSE of every seed, each configuration's mean with +-1 spread, the baseline's band" },
    { "val_curve.png", "Val MSE during training (the val exam every few hundred steps), every run" },
    { "step6_attention_offsets.png", "Where a trained model looks, by offset: learned positions vs 2D RoPE, per layer" },
    { "step6_attention_centre.png", "Where the centre patch looks: learned positions vs 2D RoPE, per layer" },
    { "samples.png",   "Samples of every run (20 Euler steps, the same noise for all)" },
};

static void report_tables(FILE *s, const AblationResults *res) {
    Table t;
    fprintf(s, "## The tutorial's method: one run per configuration, one seed gap\n\n");
    fill_tutorial_table(res, &t);
    put_table(s, &t);
    fprintf(s, "\n");
    print_probe_note(s, res, true);
    if (res->have_gap)
        fprintf(s, "\n**Seed gap** (|val MSE seed 0 − seed 1| of the baseline): %.4f; baseline mean %.4f. "
                 "*vs baseline* is a run's val MSE minus that mean. The tutorial's verdict: within one seed "
                 "gap *same* (noise); beyond it a *gain* (lower val MSE) or a *loss*, counted in gaps. One "
                 "pair is one draw of the noise; the table over seeds below measures it.\n\n",
             res->gap, res->base_mean);
    else
        fprintf(s, "\nNo seed gap yet (it needs both `p11_base_s0` and `p11_base_s1`), so no verdicts.\n\n");
    fprintf(s, "## Over seeds: each configuration's own noise\n\n");
    AblationResults *committed = any_one_seed(res) ? load_committed(res) : NULL;
    fill_seeds_table(res, committed, &t);
    free(committed);
    put_table(s, &t);
    fprintf(s, "\n");
    put_paragraph(s, SEEDS_FOOTNOTE);
    if (any_one_seed(res)) put_paragraph(s, ONE_SEED_FOOTNOTE);
    put_paragraph(s, SHARED_MACHINE_NOTE);
    const ConfigResults *base = &res->cfg[CFG_BASE];
    if (res->have_gap && base->n >= 3)
        fprintf(s, "The tutorial's one pair against the baseline's %d seeds: the pair's gap is %.4f, the spread "
                "%.4f. Two draws of the same noise differ by 1.13 spreads on average (2 sd / √π), so one "
                "pair is one noisy draw of the noise, not a measure of it.\n\n", base->n, res->gap, base->val.sd);
}

static void report_lr_pair(FILE *s, const AblationResults *res) {
    const AblationRow *b = results_run(res, RUN_BASE_LR2E3), *q = results_run(res, RUN_QKNORM_LR2E3);
    if (!b->present && !q->present) return;
    Table t;
    fprintf(s, "## The high learning rate (lr 2e-3), seed 0\n\n");
    fill_lr_table(res, &t);
    put_table(s, &t);
    if (b->present && q->present && res->have_gap) {
        char v[48];
        verdict(q->m.val_mse, b->m.val_mse, res->gap, v, sizeof v, NULL);
        fprintf(s, "\nAt lr 2e-3, QK-norm against the baseline at the same lr: %+.4f (the tutorial's verdict: %s); loss spikes %d and %d.\n",
             q->m.val_mse - b->m.val_mse, v, b->m.loss_spikes, q->m.loss_spikes);
    }
    for (int r = RUN_BASE_LR2E3; r <= RUN_QKNORM_LR2E3; r++) {
        char losses[4096], steps[4096];
        if (!curve_lists(res, r, losses, steps, sizeof losses)) continue;
        fprintf(s, "%s- %s, loss curve: %s at steps %s\n", r == RUN_BASE_LR2E3 ? "\n" : "", ABLATION[r].label,
             losses, steps);
    }
    fprintf(s, "\n");
}

// Links to the plots that exist, relative to the report's folder; then notes.
static void report_plots_and_notes(FILE *s, const AblationResults *res, const char *dir) {
    fprintf(s, "## Plots\n\n");
    int shown = 0;
    for (size_t i = 0; i < sizeof PLOTS / sizeof PLOTS[0]; i++) {
        char p[2200];
        snprintf(p, sizeof p, "%s/plots/%s", dir, PLOTS[i].file);
        if (!file_exists(p)) continue;
        fprintf(s, "%s\n\n![%s](plots/%s)\n\n", PLOTS[i].what, PLOTS[i].what, PLOTS[i].file);
        shown++;
    }
    if (!shown) fprintf(s, "No plots yet: `make plots` draws them into `plots/` next to this report.\n\n");
    if (res->nine_present < ABLATION_RUNS || res->not_seed_pair || res->mixed_presets) fprintf(s, "## Notes\n\n");
    for (int r = 0; r < ABLATION_RUNS; r++)
        if (!results_run(res, r)->present) fprintf(s, "- `%s`: %s\n", ABLATION[r].name, results_run(res, r)->note);
    if (res->not_seed_pair)
        fprintf(s, "- `p11_base_s0` and `p11_base_s1` differ in more than their seed: their gap is not a seed gap.\n");
    if (res->mixed_presets) fprintf(s, "- The runs come from different presets, so their numbers are not comparable.\n");
}

int report_write(const AblationResults *res, const char *dir, char *err, size_t errlen) {
    // the report is written into memory first and then to its file in one
    // go (temporary file, rename), so a failure leaves the old report whole
    char *text = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&text, &len);
    if (!s) { snprintf(err, errlen, "out of memory"); return -1; }
    const char *preset = preset_of(res);
    fprintf(s, "# TinyDiT ablation: RMSNorm, QK-norm, SwiGLU, 2D RoPE\n\n");
    if (is_smoke(res)) { fputs("**", s); put_joined(s, SMOKE_NOTE); fputs("**\n\n", s); }
    fprintf(s, "Written by `lab report` from the runs in `%s`%s%s%s: %d of the tutorial's %d runs "
               "and %d runs in all have a `metrics.json`, and every number below is read from them.\n\n",
            res->dir, preset ? " (" : "", preset ? preset : "", preset ? " preset)" : "", res->nine_present,
            ABLATION_RUNS, res->n_present);
    report_tables(s, res);
    report_lr_pair(s, res);
    report_plots_and_notes(s, res, dir);
    if (fclose(s) != 0 || !text) { free(text); snprintf(err, errlen, "out of memory"); return -1; }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/report.md", dir);
    int rc = write_file_atomic(path, text, len, err, errlen);
    free(text);
    return rc;
}
