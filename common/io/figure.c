// figure.c: data files, gnuplot scripts and PNGs (see figure.h).
#include "figure.h"
#include "nn/errors.h"
#include "fileio.h"
#include "paths.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *figure_gnuplot_command(void) {
    const char *env = getenv("TINYDIT_GNUPLOT");
    return (env && env[0]) ? env : "gnuplot";
}

bool figure_gnuplot_available(void) {
    static int known = -1;
    if (known < 0) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", figure_gnuplot_command());
        int rc = system(cmd);
        known = rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
    }
    return known;
}

const char *figure_default_dir(void) {
    static char dir[4096];
    if (!dir[0]) snprintf(dir, sizeof dir, "%s/figures", default_runs_dir());
    return dir;
}

FILE *figure_data_open(const char *dir, const char *name, char *err, size_t errlen) {
    if (make_dirs(dir, err, errlen) != 0) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tsv", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) errorf(err, errlen, "cannot write %s", path);
    return f;
}

int figure_data_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen) {
    int failed = ferror(f);
    if (fclose(f) != 0 || failed) return errorf(err, errlen, "cannot write %s/%s.tsv", dir, name);
    return 0;
}

// The PNGs drawn since the last figure_report, which names them: a step
// run between a job's runs then says what it drew.
static char g_drawn[1024];

int figure_draw(const char *dir, const char *name, int width, int height, const char *script,
                char *err, size_t errlen) {
    if (!figure_gnuplot_available()) return FIGURE_NO_GNUPLOT;
    if (make_dirs(dir, err, errlen) != 0) return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.gp", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return errorf(err, errlen, "cannot write %s", path);
    fprintf(f, "set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,10'\n", width, height);
    fprintf(f, "set output '%s.png'\n", name);
    fputs(script, f);
    fputs("\nunset output\n", f);
    if (fclose(f) != 0) return errorf(err, errlen, "cannot write %s", path);

    // gnuplot runs inside dir, so the script names its data without a folder.
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s.gp' 2>'%s.log'", dir, figure_gnuplot_command(), name, name);
    int rc = system(cmd);
    snprintf(path, sizeof path, "%s/%s.png", dir, name);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
        return errorf(err, errlen, "gnuplot failed on %s/%s.gp (its messages: %s/%s.log)", dir, name, dir, name);
    if (!figure_png_valid(path)) return errorf(err, errlen, "gnuplot wrote no valid PNG at %s", path);
    snprintf(path, sizeof path, "%s/%s.log", dir, name);
    remove(path);                            // empty when all went well
    size_t used = strlen(g_drawn);
    snprintf(g_drawn + used, sizeof g_drawn - used, "%s%s.png", used ? ", " : "", name);
    return 0;
}

int figure_plot(const char *dir, const char *plots, const char *name, int width, int height, const char *vars,
                char *err, size_t errlen) {
    char script[1024];
    snprintf(script, sizeof script, "%s/%s.gp", plots, name);
    return figure_plot_script(dir, script, name, width, height, vars, err, errlen);
}

int figure_plot_script(const char *dir, const char *rel, const char *name, int width, int height,
                       const char *vars, char *err, size_t errlen) {
    if (!figure_gnuplot_available()) return FIGURE_NO_GNUPLOT;
    char path[4096];
    if (project_path(path, sizeof path, rel) != 0) return errorf(err, errlen, "path too long: %s", rel);
    char why[4200], *body = read_file_all(path, NULL, why, sizeof why), *script = NULL;
    if (!body) return errorf(err, errlen, "the gnuplot script: %s", why);
    int len = asprintf(&script, "# %s's numbers in this run\n%s\n\n# %s\n%s", name, vars ? vars : "", rel, body);
    free(body);
    if (len < 0) return errorf(err, errlen, "out of memory for %s", path);
    int rc = figure_draw(dir, name, width, height, script, err, errlen);
    free(script);
    return rc;
}

bool figure_png_valid(const char *path) {
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char head[16];
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, signature, 8) == 0 && memcmp(head + 12, "IHDR", 4) == 0;
}

void figure_report(FILE *f, const char *dir, int drawn, int missing_gnuplot) {
    if (missing_gnuplot)
        fprintf(f, "figures: %s was not found, so no pictures were drawn; their data is in %s.\n"
                   "         Install gnuplot (apt-get install gnuplot-nox, or `make deps`) and run again.\n",
                figure_gnuplot_command(), dir);
    else
        fprintf(f, "figures: %d PNG%s in %s%s%s\n", drawn, drawn == 1 ? "" : "s", dir, g_drawn[0] ? ": " : "", g_drawn);
    g_drawn[0] = 0;
}

int figure_tally_add(FigureTally *t, int status, const char *who, const char *err) {
    if (status == 0) t->drawn++;
    else if (status == FIGURE_NO_GNUPLOT) t->no_gnuplot++;
    else {
        t->failed++;
        if (who) fprintf(stderr, "%s: figures: %s\n", who, err);
    }
    return status;
}

void figure_tally_report(FILE *f, const FigureTally *t, const char *dir) {
    figure_report(f, dir, t->drawn, t->no_gnuplot > 0);
}
