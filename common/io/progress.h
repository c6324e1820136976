// progress.h: a one-line progress bar on a terminal, plain lines otherwise.
#pragma once
#include <stdio.h>
#include "clock.h"   // wall_seconds

typedef struct {
    FILE *out;
    int tty;            // redraw one line in place, or print plain lines
    long total;
    long start;         // first step of this start (a resumed run starts late)
    double t0;          // seconds when this start began
    double last_draw;
    int plain_every;    // steps between plain lines
    char label[32];
} Progress;

void progress_begin(Progress *p, FILE *out, const char *label, long start, long total);
// step = steps done so far; extra is a short text shown after the rate.
void progress_update(Progress *p, long step, const char *extra);
void progress_end(Progress *p);
