// figure.h: the pictures of the steps, drawn by gnuplot.
//
// A figure is three files side by side in one folder: NAME.tsv, the numbers
// the program computed (tab-separated, a '#' header saying what each column
// is); NAME.gp, the gnuplot script that draws them; and NAME.png, drawn with
// gnuplot's pngcairo terminal. The scripts are committed beside each step
// (stepN_name/plots/NAME.gp, run by figure_plot with the run's numbers as
// gnuplot variables); the copy in the folder keeps the data, the numbers and
// the script beside the picture, so that a reader can check a number or
// restyle the plot.
//
// Without gnuplot the data files are still written and the program says once
// how to get the pictures; nothing else about its output changes.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

// The gnuplot command: $TINYDIT_GNUPLOT if set (tests point it at a missing
// program to see the notice), else "gnuplot".
const char *figure_gnuplot_command(void);
// True when that command runs (checked once, by `gnuplot --version`).
bool figure_gnuplot_available(void);

// The default figures folder: <project root>/runs/figures.
const char *figure_default_dir(void);

// Creates dir/NAME.tsv for writing (and dir itself, with its parents). NULL
// with a message in err on failure. Close it with fclose before drawing.
FILE *figure_data_open(const char *dir, const char *name, char *err, size_t errlen);

// Closes a data file from figure_data_open: 0, or -1 with a message in err
// when a write or the close failed (a full disk shows up here, not in
// fprintf).
int figure_data_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen);

// Writes dir/NAME.gp (the terminal and output lines, then script) and runs
// gnuplot on it inside dir, which must give a valid dir/NAME.png of
// width x height pixels. The script refers to its data as 'NAME.tsv' (no
// folder). Returns 0 when the PNG is drawn, FIGURE_NO_GNUPLOT when gnuplot is
// missing (nothing drawn, no message), or -1 with a message in err.
#define FIGURE_NO_GNUPLOT 1
int figure_draw(const char *dir, const char *name, int width, int height, const char *script,
                char *err, size_t errlen);

// Draws dir/NAME.png with the committed gnuplot script PLOTS/NAME.gp
// (plots: a folder from the project root, e.g. "step2_rmsnorm/plots") on the
// data dir/NAME.tsv the program wrote. vars are this run's numbers that the
// script uses, as gnuplot assignments, one a line ("m_ln = 0.001"; may be
// NULL). dir/NAME.gp gets the terminal, the vars and the script, so the
// folder keeps all that made the picture. Answers as figure_draw.
int figure_plot(const char *dir, const char *plots, const char *name, int width, int height, const char *vars,
                char *err, size_t errlen);
// The same with a script of another name (script: a path from the project
// root), for one script that draws several figures.
int figure_plot_script(const char *dir, const char *script, const char *name, int width, int height,
                       const char *vars, char *err, size_t errlen);

// True when path is a PNG file (its 8-byte signature and an IHDR chunk).
bool figure_png_valid(const char *path);

// The line every step prints at its end: how many figures were drawn into
// dir, or, without gnuplot, where the data went and what to install.
void figure_report(FILE *f, const char *dir, int drawn, int missing_gnuplot);

// What a step's figures came to: how many were drawn, how many found no
// gnuplot, how many failed. Start from (FigureTally){0}.
typedef struct { int drawn, no_gnuplot, failed; } FigureTally;

// Counts one figure's answer (0 drawn, FIGURE_NO_GNUPLOT, or -1 with a
// message in err) and returns it. On -1, if who is not NULL, it also prints
// "who: figures: err" to stderr.
int figure_tally_add(FigureTally *t, int status, const char *who, const char *err);

// figure_report for the tally: the PNGs drawn into dir, or the notice that
// gnuplot is missing.
void figure_tally_report(FILE *f, const FigureTally *t, const char *dir);
