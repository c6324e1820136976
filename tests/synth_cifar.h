// synth_cifar.h: a small data set in CIFAR-10's binary layout, made by the
// tests that exercise the training machinery (resume, kill and resume, a
// full disk, a NaN, the smoke ablation) so that they run in every clone,
// with or without the real images.
//
// The files are the real ones' names and format: data_batch_1..5.bin and
// test_batch.bin, each record a label byte then 3,072 pixel bytes (red,
// green, blue planes, 32x32, row-major). Only the count differs:
// SYNTH_CIFAR_RECORDS per file instead of 10,000. The loader reads such a
// set when CIFAR_RECORDS says its size (common/io/cifar.h), which
// synth_cifar_use sets, together with CIFAR_DIR, for the test and for every
// program it starts.
//
// The images are simple patterns a model can learn a little of: each class
// has its own colour and its own stripes (direction and period), shifted
// per image, plus a little noise. Everything comes from the record's index,
// so the set is the same on every machine.
//
// Header only, for test programs: #include "synth_cifar.h".
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io/cifar.h"

#define SYNTH_CIFAR_RECORDS 64   // per file: 320 training images, 64 test images

// One image of class `label`; `index` (unique in the set) picks its phase
// and noise. pixels: (3, 32, 32) bytes.
static inline void synth_cifar_image(int label, uint32_t index, uint8_t *pixels) {
    // a colour per class (red, green, blue, 0..255)
    static const uint8_t colour[CIFAR_NUM_CLASSES][3] = {
        {220, 60, 60}, {60, 200, 60}, {60, 80, 220}, {220, 200, 50}, {200, 60, 200},
        {50, 200, 200}, {240, 140, 40}, {130, 130, 130}, {120, 60, 30}, {240, 240, 240},
    };
    int direction = label % 3;        // 0 rows, 1 columns, 2 diagonals
    int period = 4 + 2 * (label % 4); // 4, 6, 8 or 10 pixels
    int phase = (int)(index % (uint32_t)period);
    uint32_t noise = index * 2654435761u + 12345u;   // a small LCG per image
    for (int c = 0; c < CIFAR_CHANNELS; c++)
        for (int y = 0; y < CIFAR_IMG; y++)
            for (int x = 0; x < CIFAR_IMG; x++) {
                int along = direction == 0 ? y : direction == 1 ? x : x + y;
                int bright = ((along + phase) % period) < period / 2;   // stripe or gap
                noise = noise * 1664525u + 1013904223u;
                int v = (bright ? colour[label][c] : colour[label][c] / 4) + (int)(noise >> 28) - 8;
                pixels[(c * CIFAR_IMG + y) * CIFAR_IMG + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
}

// Writes the six files into dir (which must exist), `records` records each.
// 0, or -1 with a message on stderr.
static inline int synth_cifar_write(const char *dir, int records) {
    static const char *names[6] = { "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin" };
    uint8_t record[CIFAR_RECORD_BYTES];
    for (int f = 0; f < 6; f++) {
        char path[4300];   // dir (up to 4,200, see below) and a name
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        FILE *out = fopen(path, "wb");
        if (!out) { perror(path); return -1; }
        for (int r = 0; r < records; r++) {
            uint32_t index = (uint32_t)(f * records + r);
            record[0] = (uint8_t)((r * 7 + f) % CIFAR_NUM_CLASSES);   // every class in every file
            synth_cifar_image(record[0], index, record + 1);
            if (fwrite(record, 1, sizeof record, out) != sizeof record) { perror(path); fclose(out); return -1; }
        }
        if (fclose(out) != 0) { perror(path); return -1; }
    }
    return 0;
}

// For a test of the machinery, not of the data: a synthetic set written
// into <tmp>/synth_cifar, whether or not CIFAR-10 is here (the same runs on
// every machine, in seconds; the tests of the real images need them by name:
// test_cifar, test_trainer's smoke run, test_faults' bad files, test_probe's
// shipped probe), with CIFAR_DIR and CIFAR_RECORDS set for this process and
// its children.
// Returns 1, or -1 if the set could not be written. `who` names the test in
// the line that says which data it uses.
static inline int synth_cifar_use(const char *tmp, const char *who) {
    char dir[4200], records[16];
    snprintf(dir, sizeof dir, "%s/synth_cifar", tmp);
    snprintf(records, sizeof records, "%d", SYNTH_CIFAR_RECORDS);
    if (mkdir(dir, 0755) != 0 || synth_cifar_write(dir, SYNTH_CIFAR_RECORDS) != 0) return -1;
    setenv("CIFAR_DIR", dir, 1);
    setenv("CIFAR_RECORDS", records, 1);
    printf("%s: on a synthetic set of %d images per file in %s\n", who,
           SYNTH_CIFAR_RECORDS, dir);
    fflush(stdout);
    return 1;
}
