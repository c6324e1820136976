// progress.h: a one-line progress bar on a terminal, plain lines otherwise.
//
// Either way the first line comes within seconds, so that a long phase says
// how long it will take: in a file or a pipe a plain line is printed every
// plain_every steps, and also once PROGRESS_FIRST_LINE_S seconds have passed
// without one (then every PROGRESS_PLAIN_EVERY_S).
#pragma once
#include <stdio.h>
#include "clock.h"   // wall_seconds

#define PROGRESS_FIRST_LINE_S 3.0
#define PROGRESS_PLAIN_EVERY_S 60.0

typedef struct {
    FILE *out;
    int tty;            // redraw one line in place, or print plain lines
    long total;
    long start;         // first step of this process (a resumed run starts late)
    double t0;          // seconds when this process started training
    double last_draw;   // 0 until the first line
    int plain_every;    // steps between plain lines
    char label[48];
    const char *unit;   // what a step is, in the rate ("it" unless set)
} Progress;

void progress_begin(Progress *p, FILE *out, const char *label, long start, long total);
// step = steps done so far; extra is a short text shown after the rate.
void progress_update(Progress *p, long step, const char *extra);
void progress_end(Progress *p);
// Whether a plain line is due at step, now seconds (exposed for the tests).
int progress_plain_due(const Progress *p, long step, double now);
