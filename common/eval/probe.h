// probe.h: the probe classifier behind probe-FD.
//
// FID measures generated images in the feature space of Inception-v3, a big
// ImageNet network we neither have nor could run cheaply. Probe-FD uses the
// same formula (common/eval/frechet.h) in the feature space of a small CIFAR-10
// CNN that the project trained once and ships (PROBE_SHIPPED, below):
//
//   image (N, 3, 32, 32) in [-1, 1]
//   conv 3x3 3->32,   ReLU, maxpool 2x2     (N, 32, 16, 16)
//   conv 3x3 32->64,  ReLU, maxpool 2x2     (N, 64, 8, 8)
//   conv 3x3 64->128, ReLU, global avg pool (N, 128)   <- the FD features
//   linear 128->10                          (N, 10)    logits, trained with
//                                                      softmax cross-entropy
//
// A network that has learned to tell the ten classes apart has features that
// respond to what makes a car look like a car, so the distance between two
// feature clouds says something about image content, not just pixel colours.
// The number depends on this exact network, down to its last bit: the same
// recipe trained on another machine (another BLAS kernel, another rounding)
// is another network with other probe-FDs. So every probe-FD is measured with
// the one shipped probe, and a run's metrics.json names the probe that scored
// it (its weights' fingerprint, probe_fingerprint below): the tables compare
// probe-FDs of one probe only.
//
// This file has two halves: the layers (probe_layers.c), each forward next to
// its backward, and the probe itself (probe.c): training, the shipped file and
// the cache, features and predicted classes.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "io/cifar.h"

// ============================================================================
// Layers. Conventions as in layers.h: dense row-major float32, images in
// (N, C, H, W) layout; every backward ACCUMULATES (+=) into the gradients it
// writes (the caller zeroes them once per step); a NULL gradient pointer means
// "not needed" (e.g. no gradient into the input images).
// ============================================================================

// conv2d, 3x3 kernel, stride 1, zero padding 1 (so H, W are kept), through
// im2col + one SGEMM per image.
// inp (N, C, H, W), weight (OC, C, 3, 3), bias (OC) or NULL, out (N, OC, H, W).
void conv3x3_forward(float *out, const float *inp, const float *weight, const float *bias,
                     int N, int C, int H, int W, int OC);
// dinp (N, C, H, W) or NULL, dweight (OC, C, 3, 3), dbias (OC) or NULL.
void conv3x3_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                      const float *inp, const float *weight, int N, int C, int H, int W, int OC);
// The im2col rearrangement on its own: one image (C, H, W) -> cols (C·9, H·W),
// row (c·9 + ky·3 + kx) holding input pixel (y + ky − 1, x + kx − 1) at column
// (y·W + x), 0 outside the image. col2im is its adjoint: it adds back.
void im2col3x3(float *cols, const float *img, int C, int H, int W);
void col2im3x3(float *img, const float *cols, int C, int H, int W);

// ReLU: out = max(0, inp). n elements. Backward uses inp (the gradient passes
// where inp > 0).
void relu_forward(float *out, const float *inp, size_t n);
void relu_backward(float *dinp, const float *dout, const float *inp, size_t n);

// 2x2 max pooling, stride 2: inp (N, C, H, W) -> out (N, C, H/2, W/2), H, W even.
// Backward routes each gradient to the window's largest input (the first one
// on a tie, as the forward picked it), found again from inp.
void maxpool2x2_forward(float *out, const float *inp, int N, int C, int H, int W);
void maxpool2x2_backward(float *dinp, const float *dout, const float *inp, int N, int C, int H, int W);

// Global average pooling: inp (N, C, HW) -> out (N, C), the mean over HW.
void global_avgpool_forward(float *out, const float *inp, int N, int C, int HW);
void global_avgpool_backward(float *dinp, const float *dout, int N, int C, int HW);

// Linear: out = inp · Wᵀ + b. inp (N, IC), weight (OC, IC), bias (OC) or NULL,
// out (N, OC). (TinyDiT's own linear lives in layers.h; the probe keeps its
// layers to itself so it can be read and tested as one small CNN.)
void fc_forward(float *out, const float *inp, const float *weight, const float *bias,
                int N, int IC, int OC);
void fc_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                 const float *inp, const float *weight, int N, int IC, int OC);

// Softmax cross-entropy, averaged over the batch. logits (N, K), labels (N) in
// [0, K). Writes probs (N, K) and returns the mean loss −(1/N)·Σ log p[n, y_n].
// Backward: dlogits += (probs − onehot(labels)) / N.
float softmax_xent_forward(float *probs, const float *logits, const uint8_t *labels, int N, int K);
void softmax_xent_backward(float *dlogits, const float *probs, const uint8_t *labels, int N, int K);

// ============================================================================
// The probe.
// ============================================================================
#define PROBE_FEATURES 128
#define PROBE_CLASSES 10
#define PROBE_RECIPE_VERSION "probe-v1"

typedef struct ProbeRecipe {
    int epochs;         // passes over the training set
    int batch;          // images per step
    float lr;           // peak AdamW learning rate (linear warm-up, cosine decay)
    float weight_decay; // AdamW decoupled weight decay on conv/linear weights
    int flip;           // random horizontal flips, p = 0.5
    uint64_t seed;      // weights, order and flips: the run is a function of it
} ProbeRecipe;

ProbeRecipe probe_default_recipe(void);

typedef struct {
    float *params;       // every weight, one flat array
    size_t n_params;
    // views into params, PyTorch-like names and shapes:
    float *conv1_w, *conv1_b;   // (32, 3, 3, 3), (32)
    float *conv2_w, *conv2_b;   // (64, 32, 3, 3), (64)
    float *conv3_w, *conv3_b;   // (128, 64, 3, 3), (128)
    float *fc_w, *fc_b;         // (10, 128), (10)
    float test_acc;             // accuracy on the test set after training, [0, 1]
    float train_seconds;        // wall time of the training (of the run that made the file)
    char key[17];               // 16 hex digits: the cache key (recipe + data)
    char weights[17];           // 16 hex digits: probe_fingerprint of the weights
    const char *source;         // where it came from: "shipped", "trained" (the cache) or "file"
} Probe;

// An empty probe with its parameters allocated (zeros). NULL if out of memory.
Probe *probe_alloc(void);
void probe_free(Probe *p);
// Initial weights drawn from seed: conv weights He-uniform (±√(6/fan_in)),
// the fc head ±1/√fan_in (PyTorch's default), every bias 0.
void probe_init(Probe *p, uint64_t seed);

// Logits (n, 10) and/or features (n, 128) of images (n, 3, 32, 32) in [-1, 1].
// Either output may be NULL. Works in batches; uses the OpenMP threads.
void probe_forward(const Probe *p, const float *images, int n, float *features, float *logits);
// The FD feature space: the 128 globally pooled ReLU activations of conv3.
void probe_features(const Probe *p, const float *images, int n, float *features);
// The class the probe sees in each image (n, 3, 32, 32): the arg-max of its
// logits (the first on a tie), a label in [0, 10) as CIFAR-10 numbers them.
void probe_predict(const Probe *p, const float *images, int n, uint8_t *classes);

// Mean cross-entropy loss of images (n, 3, 32, 32) with labels (n); if grad
// is not NULL (a Probe used as a gradient buffer, same layout), the gradient
// of that loss is ADDED to it. For tests and for a look at a trained probe.
float probe_loss_and_grad(const Probe *p, const float *images, const uint8_t *labels, int n, Probe *grad);

// Fraction of set's images whose arg-max logit is their label.
float probe_accuracy(const Probe *p, const CifarSet *set);

// Trains a fresh probe on train and measures it on test (test may be NULL:
// test_acc is then -1). verbose 1 prints a line per epoch to stderr.
// Returns NULL on out-of-memory.
Probe *probe_train(const CifarSet *train, const CifarSet *test, const ProbeRecipe *r, int verbose);

// The weights' fingerprint: FNV-1a 64 of every parameter's bytes, 16 hex
// digits. Two probes with the same fingerprint compute the same features.
void probe_fingerprint(const Probe *p, char out[17]);

// The recipe as one line: PROBE_RECIPE_VERSION, the architecture, every
// field. A saved probe keeps it (metadata "recipe").
void probe_recipe_string(const ProbeRecipe *r, char *out, size_t len);

// The cache key: FNV-1a 64 of the recipe (architecture, every field above,
// PROBE_RECIPE_VERSION) and of every byte of both sets' pixels and labels.
// A changed recipe or changed data gives a new key. out: 17 chars.
void probe_cache_key(const ProbeRecipe *r, const CifarSet *train, const CifarSet *test, char out[17]);

// Saves p (weights + metadata: key, recipe, test_acc, train_seconds, and
// the CRC32s of io/checksum.h) as safetensors at path, atomically. Loads it
// back; load checks the shapes and the CRC32s (a file without them, as an
// older cache wrote, loads unchecked). 0 on success, -1 with a message.
int probe_save(const Probe *p, const ProbeRecipe *r, const char *path, char *err, size_t errlen);
Probe *probe_load(const char *path, char *err, size_t errlen);

// The entry point: <cache_dir>/probe-<key>.safetensors if it exists, else
// train (probe_train), save there, and return the probe. cache_dir NULL means
// probe_cache_dir(); r NULL means probe_default_recipe(). A probe that cannot
// be saved is still returned (with a warning). NULL only on a failed training
// (out of memory) and err says why.
Probe *probe_get_or_train(const char *cache_dir, const CifarSet *train, const CifarSet *test,
                          const ProbeRecipe *r, int verbose, char *err, size_t errlen);

// ============================================================================
// The probe every score uses.
// ============================================================================
// The shipped probe, in the project: trained once by probe_default_recipe on
// CIFAR-10 (tools/train_probe.c says how), its SHA-256 beside it.
#define PROBE_SHIPPED "models/probe_classifier.safetensors"

// The probe that scores, chosen by $TINYDIT_PROBE:
//   unset or empty  the shipped probe (CRC32s checked); nothing is trained
//   "trained"       the default recipe's probe on train and test: from the
//                   cache (probe_get_or_train), else trained there first
//   a file path     that probe file
// Another probe than the shipped one is said on stderr, and the run's
// metrics.json names it. NULL with err when the probe cannot be had (a
// missing or damaged shipped probe is an error, never trained over).
Probe *probe_for_scoring(const CifarSet *train, const CifarSet *test, int verbose, char *err, size_t errlen);
// $TINYDIT_PROBE, or "" when unset.
const char *probe_choice(void);
