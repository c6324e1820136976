// args.h: reading a whole number from a command line or a file, checked.
#pragma once

// Parses s as a whole decimal number in [lo, hi]: no sign other than '-', no
// trailing characters, no empty string, nothing out of range. 0 with the
// value in *out, or -1 (and *out untouched). Used for every integer option
// of the programs and for the step number kept in a checkpoint.
int parse_int_in(const char *s, long lo, long hi, int *out);

// Whether a is --help or -h, the option every program answers with its usage.
int is_help_option(const char *a);
