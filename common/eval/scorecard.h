// scorecard.h: the four numbers every run reports, computed the
// same way for every model so that runs can be compared:
//   val MSE    the flow-matching loss on the first 2,000 test images, noise
//              and times from VAL_SEED: every model sits the same exam.
//   probe-FD   Fréchet distance between 1,000 samples (the run's sampler:
//              20 Euler steps by default, noise from FD_SEED) and the 10,000
//              test images, in the features of the shipped probe classifier
//              (common/eval/probe.h).
//   ms/step    training speed (measured by the trainer).
//   spikes     steps whose loss exceeds 1.5x the median of the previous 100.
// A class-conditional model's too: FD_SAMPLES more samples from the same
// noise, 100 a class, at the run's guidance: their probe-FD, and the share
// the probe puts in the class asked for.
#pragma once
#include "io/cifar.h"
#include "frechet.h"
#include "nn/flow.h"
#include "nn/model.h"
#include "probe.h"
#include "io/progress.h"

#define VAL_SEED 1234ULL
#define VAL_IMAGES 2000
#define FD_SEED 4321ULL
#define FD_SAMPLES 1000
#define FD_EULER_STEPS 20

// The val-MSE exam's noise x0 (n_images, per_image) and times t (n_images).
void scorecard_exam(float *x0, float *t, size_t per_image, int n_images);

// val MSE of m on the first n_images of test (at most test->n); NAN if
// its buffers cannot be allocated.
double scorecard_val_mse(Model *m, const CifarSet *test, int n_images);

// The val exam and the sampling run this many images at a time: at 250 they
// took more memory and time (results/performance/scorecard_batch.txt).
#define SCORECARD_BATCH 64

// The same exam with its buffers kept between calls, for a run that examines
// itself every val_every steps (fresh buffers cost more to fault in than a pass).
typedef struct {
    Activations a;              // for SCORECARD_BATCH images
    float *x0, *t;              // the exam's noise (n_images, per) and times (n_images)
    float *x1, *xt, *target;    // one batch: images, x_t, velocity target
    int *y;                     // its labels, for a class-conditional model (else NULL)
    int n_images;
    size_t per;                 // floats per image
} ValExam;
// The exam of the first n_images of test, a class-conditional model's with
// each image's label. -1 when out of memory or m and test do not fit.
int val_exam_init(ValExam *e, const Model *m, const CifarSet *test, int n_images);
// val MSE of m on that exam; test must be the set given to val_exam_init.
double val_exam_run(ValExam *e, Model *m, const CifarSet *test);
void val_exam_free(ValExam *e);

// n samples, `steps` Euler steps from the fixed FD noise, into out (n, C, S, S).
void scorecard_samples(Model *m, float *out, int n, int steps);
// The same with either sampler, updating pr (counting image forward
// passes, done_before of them before these) after each batch.
void scorecard_samples_shown(Model *m, float *out, int n, SamplerKind sampler, int steps, Progress *pr,
                             long done_before);

// The class sample i asks for, in the class-conditional scorecard: i % 10,
// so that every batch and every first 64 hold each class.
void scorecard_labels(int *y, int n);

// The class-conditional samples from the same FD noise (two guidance scales
// differ by w only), image i asked for y[i]. pr as above. 0, or -1 with a
// message.
int scorecard_guided_samples(Model *m, float *out, const int *y, int n, float w, SamplerKind sampler, int steps,
                             Progress *pr, long done_before, char *err, size_t errlen);

// The share of samples whose probe class is the one asked for (y), overall
// and per class into per_class (NAN for a class none asked for) and asked.
double scorecard_class_accuracy(const Probe *p, const float *samples, const int *y, int n,
                                double *per_class, int *asked);

// Feature statistics of the real test images (10,000 probe forward passes).
int scorecard_real_stats(const Probe *p, const CifarSet *test, FeatureStats *out);

// probe-FD of samples (n images) against the real statistics.
double scorecard_probe_fd(const Probe *p, const FeatureStats *real, const float *samples, int n);
