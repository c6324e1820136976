// args.h: the command lines of every program, read one way.
//
// Every program (and every command of step6_ablation) reads its options with
// getopt_long from glibc, in one function of this shape:
//
//     int parse_options(int argc, char **argv, Options *o);
//
// It returns one of three answers, and main exits with args_exit_code(rc):
//   ARGS_OK    go on
//   ARGS_HELP  --help (or -h) printed the usage on stdout: exit 0
//   ARGS_BAD   bad input, already reported on stderr with what to do instead
//              (args_error: the problem, then the usage where it helps; a
//              wrong value needs only the message that names it): exit 2
// A parser never calls exit(), so a test can call it and look at the answer.
// Before its loop it sets optind = 0, which makes glibc start afresh (a test
// may parse two command lines in one process), and opterr = 0: the messages
// are ours, not getopt's. getopt_long also accepts --opt=value, and any
// unambiguous prefix of a long option's name.
//
// The step programs' shared options (--figures DIR, --no-figures, --help) are
// handled in one place: ARGS_FIGURE_OPTIONS and args_figure_option, below.
//
// Plus the checked reading of a whole number, used for every integer option
// and for the step number kept in a checkpoint.
#pragma once
#include <getopt.h>
#include <stdio.h>

enum { ARGS_OK = 0, ARGS_HELP = -1, ARGS_BAD = 2 };

// The exit code of a parser's answer: 0 after --help, else the answer.
static inline int args_exit_code(int rc) { return rc == ARGS_HELP ? 0 : rc; }

// Prints "error: MESSAGE" (printf-style), a blank line and usage(stderr) on
// stderr; usage may be NULL. Returns ARGS_BAD.
typedef void UsageFn(FILE *f);
__attribute__((format(printf, 2, 3)))
int args_error(UsageFn *usage, const char *fmt, ...);

// What getopt_long's '?' means: an option it does not know, or one whose
// value is missing. Reported with args_error. Returns ARGS_BAD.
int args_unknown(UsageFn *usage, char **argv);

// The end of a timing command's options (lab speed, the tools' races): what
// getopt_long left over is an error, and the timed rounds must outnumber the
// warm-up ones. ARGS_OK, or ARGS_BAD reported with args_error.
int args_check_rounds(UsageFn *usage, int argc, char **argv, int rounds, int warmup);

// The three options every step program (step1 .. step5) takes besides its
// own, written once so that all five read them, and answer, alike:
//   --figures DIR   where its figures go
//   --no-figures    draw none
//   --help, -h      its usage on stdout (-h from the short-option string "h")
// getopt_long answers them with 'f', 'n' and 'h', letters a program's own
// options leave free. Its table lists them after its own entries, and its
// loop hands whatever its switch does not handle to args_figure_option (a
// case of its own comes first: step1 reads --figures itself, to remember
// that it was given):
//
//     static const struct option opts[] = {
//         { "rounds", required_argument, 0, 'r' }, ARGS_FIGURE_OPTIONS, { 0, 0, 0, 0 },
//     };
//     ...
//     int rc = ARGS_OK;
//     for (int c; rc == ARGS_OK && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
//         switch (c) {
//         case 'r': ...; break;
//         default: rc = args_figure_option(c, usage, argv, &o->figures_dir);
//         }
//     }
//     return rc != ARGS_OK ? rc : args_no_leftovers(usage, argc, argv);
#define ARGS_FIGURE_OPTIONS                                                         \
    { "figures", required_argument, 0, 'f' }, { "no-figures", no_argument, 0, 'n' }, \
    { "help", no_argument, 0, 'h' }

// Handles c, a getopt_long answer that a step program's switch leaves to its
// default case: one of ARGS_FIGURE_OPTIONS, or an option the program does not
// know. --figures DIR sets *figures_dir to DIR, --no-figures sets it to NULL
// (draw nothing): ARGS_OK. --help prints usage(stdout): ARGS_HELP. An empty
// DIR, or any other c (args_unknown), is reported: ARGS_BAD.
int args_figure_option(int c, UsageFn *usage, char **argv, const char **figures_dir);

// For a program that takes no words besides its options: getopt_long has moved
// any other word to argv[optind ..]; the first is reported ("unknown
// argument"): ARGS_BAD. ARGS_OK when there is none.
int args_no_leftovers(UsageFn *usage, int argc, char **argv);

// Parses s as a whole decimal number in [lo, hi]: no sign other than '-', no
// trailing characters, no empty string, nothing out of range. 0 with the
// value in *out, or -1 (and *out untouched).
int parse_int_in(const char *s, long lo, long hi, int *out);

// Whether a is --help or -h (for a command name in argv[1], before getopt).
int is_help_option(const char *a);
