// figure.h: the pictures of the steps, drawn by gnuplot.
//
// A figure is three files side by side in one folder: NAME.tsv, the numbers
// (a '#' header says what each column is); NAME.gp, the gnuplot script that
// draws them (a copy of the committed stepN_name/plots/NAME.gp with the run's
// numbers as variables); and NAME.png. Without gnuplot the data files are
// still written and the program says once how to get the pictures.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

// $TINYDIT_GNUPLOT if set (tests point it at a missing program), else
// "gnuplot"; and whether it runs (checked once).
const char *figure_gnuplot_command(void);
bool figure_gnuplot_available(void);

// The default figures folder: <project root>/runs/figures.
const char *figure_default_dir(void);

// Creates dir/NAME.tsv (and dir); NULL with a message. Its close says
// whether every write went through (a full disk shows up there, not in
// fprintf): 0, or -1 with a message.
FILE *figure_data_open(const char *dir, const char *name, char *err, size_t errlen);
int figure_data_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen);

// Writes dir/NAME.gp (the terminal and output lines, then script, which
// names its data 'NAME.tsv') and runs gnuplot on it inside dir. 0 when a
// valid PNG is drawn, FIGURE_NO_GNUPLOT (no message), or -1 with a message.
#define FIGURE_NO_GNUPLOT 1
int figure_draw(const char *dir, const char *name, int width, int height, const char *script,
                char *err, size_t errlen);

// figure_draw with the committed script PLOTS/NAME.gp (plots: a folder from
// the project root, e.g. "step2_rmsnorm/plots") after vars, this run's
// numbers as gnuplot assignments one a line ("m_ln = 0.001"; may be NULL).
int figure_plot(const char *dir, const char *plots, const char *name, int width, int height, const char *vars,
                char *err, size_t errlen);
// The same with a script of another name, a path from the project root.
int figure_plot_script(const char *dir, const char *script, const char *name, int width, int height,
                       const char *vars, char *err, size_t errlen);

// Whether path starts as a PNG file does (signature, IHDR chunk).
bool figure_png_valid(const char *path);

// The line every step ends with: the PNGs drawn into dir, or, without
// gnuplot, where the data went and what to install.
void figure_report(FILE *f, const char *dir, int drawn, int missing_gnuplot);

// What a step's figures came to. Start from (FigureTally){0}.
typedef struct { int drawn, no_gnuplot, failed; } FigureTally;

// Counts one figure's answer and returns it; a failure is printed
// ("who: figures: err") when who is not NULL.
int figure_tally_add(FigureTally *t, int status, const char *who, const char *err);
void figure_tally_report(FILE *f, const FigureTally *t, const char *dir);
