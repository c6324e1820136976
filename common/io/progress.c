// progress.c: see progress.h.
#include <string.h>
#include <unistd.h>
#include "progress.h"

void progress_begin(Progress *p, FILE *out, const char *label, long start, long total) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = isatty(fileno(out));
    p->start = start;
    p->total = total;
    p->t0 = wall_seconds();
    p->plain_every = total >= 1000 ? 100 : (total >= 100 ? 10 : 1);
    snprintf(p->label, sizeof p->label, "%s", label);
    p->unit = "it";
}

static void fmt_time(char *buf, size_t n, double s) {
    if (s < 0 || s > 1e7) { snprintf(buf, n, "--:--"); return; }
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    else snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

int progress_plain_due(const Progress *p, long step, double now) {
    if (step >= p->total || step % p->plain_every == 0) return 1;
    double since = now - (p->last_draw > 0 ? p->last_draw : p->t0);
    return since >= (p->last_draw > 0 ? PROGRESS_PLAIN_EVERY_S : PROGRESS_FIRST_LINE_S);
}

void progress_update(Progress *p, long step, const char *extra) {
    double now = wall_seconds();
    int last = step >= p->total;
    if (p->tty && !last && now - p->last_draw < 0.1) return;   // ≤ 10 redraws a second
    if (!p->tty && !progress_plain_due(p, step, now)) return;
    p->last_draw = now;
    double el = now - p->t0;
    double rate = step > p->start && el > 0 ? (step - p->start) / el : 0.0;
    char eta[32], elapsed[32];
    fmt_time(eta, sizeof eta, rate > 0 ? (p->total - step) / rate : -1);
    fmt_time(elapsed, sizeof elapsed, el);
    if (p->tty) {
        char bar[31];
        int w = 30, filled = p->total ? (int)(w * step / p->total) : w;
        for (int i = 0; i < w; i++) bar[i] = i < filled ? '#' : '.';
        bar[w] = 0;
        fprintf(p->out, "\r%s %ld/%ld [%s] %s %.2f %s/s ETA %s  ", p->label, step, p->total, bar,
                extra ? extra : "", rate, p->unit, eta);
    } else {
        fprintf(p->out, "%s step %ld/%ld %s %.2f %s/s elapsed %s ETA %s\n", p->label, step, p->total,
                extra ? extra : "", rate, p->unit, elapsed, eta);
    }
    fflush(p->out);
}

void progress_end(Progress *p) {
    if (p->tty) fputc('\n', p->out);
    fflush(p->out);
}
