// runner.h: the one launcher of the lab (runner.c). The ablation and the
// sweep turn their runs into shell command lines and hand them here.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "io/metrics.h"
#include "train/trainer.h"

// The probe classifier of probe-FD (probe_for_scoring, common/eval/probe.h):
// the ablation and the sweep load it before they start any run, so that a
// missing or damaged probe fails them before hours of training, not after;
// with TINYDIT_PROBE=trained it is trained here once, not by two runs side
// by side. 0, or -1 with a message on stderr.
int prepare_probe(void);

// The step 6 program whose `train` command every run is, by its absolute
// path (the project's step6_ablation/step6_ablation).
const char *lab_train_program(void);

// Quotes s for a POSIX shell if it needs it ('...'), else copies it.
void shell_quote(const char *s, char *out, size_t outlen);

// Runs each shell command line, `jobs` at a time, by `xargs -0 -n 1 -P jobs
// sh -c`, and waits for all. A SIGINT or SIGTERM meanwhile is passed on to
// the commands (each run saves its checkpoint) and returned in *stop_signal.
// xargs' exit status: 0 when every command exited 0, 123 when one or more
// failed; -1 when xargs could not be started.
int run_lines(char *const *lines, int n, int jobs, int *stop_signal);

// Appends word to a shell line (empty to begin with), quoted if it needs it.
void line_add(char *line, size_t len, const char *word);
// Appends `--set key=value`.
void line_add_set(char *line, size_t len, const char *setting);
// Begins the line of one run: `EXE train --name NAME --preset P --resume`,
// and `--out DIR` unless out_dir is NULL (the train command's default).
void train_line_start(char *line, size_t len, const char *exe, const char *name, Preset preset, const char *out_dir);
// Appends ` >> DIR/NAME/train.log 2>&1` (quoted if it needs it).
void line_add_log(char *line, size_t len, const char *runs_dir, const char *name);

// Prints the lines, loads the probe if need_probe, runs them (run_lines) and
// frees them and their array. run_lines' status, or -1 when the probe failed.
int launch_lines(char **lines, int n, int jobs, bool need_probe, int *stop_signal);

// How the run DIR/NAME ended: finished (its metrics.json, read into *m),
// diverged (its diverged.json, the step in *diverged_step), or neither yet.
typedef enum { RUN_UNFINISHED, RUN_FINISHED, RUN_DIVERGED } RunOutcome;
RunOutcome run_outcome(const char *runs_dir, const char *name, RunMetrics *m, int *diverged_step);
// Whether the run DIR/NAME ever started: it wrote a checkpoint or its
// loss.tsv (its folder alone may be there, made for its log ahead of it).
bool run_started(const char *runs_dir, const char *name);
