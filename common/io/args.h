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
// Plus the checked reading of a whole number, used for every integer option
// and for the step number kept in a checkpoint.
#pragma once
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

// Parses s as a whole decimal number in [lo, hi]: no sign other than '-', no
// trailing characters, no empty string, nothing out of range. 0 with the
// value in *out, or -1 (and *out untouched).
int parse_int_in(const char *s, long lo, long hi, int *out);

// Whether a is --help or -h (for a command name in argv[1], before getopt).
int is_help_option(const char *a);
