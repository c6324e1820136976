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
// The number depends on this exact network, down to its last bit (the same
// recipe trained with another BLAS kernel is another network), so every
// probe-FD is measured with the one shipped probe, and a run's metrics.json
// names the probe that scored it by its weights' fingerprint.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "io/cifar.h"
#include "io/metrics.h"

// ============================================================================
// Layers (probe_layers.c): the probe's own, not nn/'s, to read and test as one
// small CNN. Conventions as in layers.h: images (N, C, H, W); every backward
// ACCUMULATES (+=) into its gradients; a NULL gradient means "not needed".
// ============================================================================

// conv2d 3x3, stride 1, zero padding 1: inp (N, C, H, W), weight (OC, C, 3, 3),
// bias (OC) or NULL, out (N, OC, H, W). im2col3x3 and its adjoint col2im3x3
// (which adds) turn one image (C, H, W) into cols (C·9, H·W) and back.
void conv3x3_forward(float *out, const float *inp, const float *weight, const float *bias,
                     int N, int C, int H, int W, int OC);
void conv3x3_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                      const float *inp, const float *weight, int N, int C, int H, int W, int OC);
void im2col3x3(float *cols, const float *img, int C, int H, int W);
void col2im3x3(float *img, const float *cols, int C, int H, int W);

void relu_forward(float *out, const float *inp, size_t n);
void relu_backward(float *dinp, const float *dout, const float *inp, size_t n);

// 2x2 max pooling, stride 2: (N, C, H, W) -> (N, C, H/2, W/2), H and W even.
void maxpool2x2_forward(float *out, const float *inp, int N, int C, int H, int W);
void maxpool2x2_backward(float *dinp, const float *dout, const float *inp, int N, int C, int H, int W);

// Global average pooling: (N, C, HW) -> (N, C).
void global_avgpool_forward(float *out, const float *inp, int N, int C, int HW);
void global_avgpool_backward(float *dinp, const float *dout, int N, int C, int HW);

// out (N, OC) = inp (N, IC) · weightᵀ + bias.
void fc_forward(float *out, const float *inp, const float *weight, const float *bias,
                int N, int IC, int OC);
void fc_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                 const float *inp, const float *weight, int N, int IC, int OC);

// Softmax cross-entropy of logits (N, K) with labels (N): writes probs (N, K),
// returns the mean loss; backward adds (probs − onehot(labels)) / N.
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
    char key[17];               // 16 hex digits: probe_cache_key (recipe + data)
    char weights[17];           // 16 hex digits: probe_fingerprint of the weights
    const char *source;         // where it came from: "shipped", "trained" or "file"
} Probe;

// An empty probe with its parameters allocated (zeros); NULL if out of memory.
Probe *probe_alloc(void);
void probe_free(Probe *p);
// Weights from seed: He-uniform convs, a smaller fc head, biases 0 (probe.c).
void probe_init(Probe *p, uint64_t seed);

// Features (n, 128) and/or logits (n, 10) of images (n, 3, 32, 32) in [-1, 1];
// either may be NULL. PROBE_BATCH images at a time, in buffers new each call.
#define PROBE_BATCH 64
void probe_forward(const Probe *p, const float *images, int n, float *features, float *logits);
void probe_features(const Probe *p, const float *images, int n, float *features);
// The arg-max class of each image (the first on a tie).
void probe_predict(const Probe *p, const float *images, int n, uint8_t *classes);

// Mean cross-entropy of images (n) with labels (n); with grad (a Probe used
// as a gradient buffer), its gradient is ADDED there. Training keeps its own
// buffers; this one is for the probe's gradient check (tests/test_probe.c).
float probe_loss_and_grad(const Probe *p, const float *images, const uint8_t *labels, int n, Probe *grad);

// Fraction of set's images whose arg-max logit is their label.
float probe_accuracy(const Probe *p, const CifarSet *set);

// A fresh probe trained on train, measured on test (NULL: test_acc -1);
// verbose prints each epoch on stderr. NULL when out of memory.
Probe *probe_train(const CifarSet *train, const CifarSet *test, const ProbeRecipe *r, int verbose);

// The weights' fingerprint: FNV-1a 64 of the parameters' bytes, 16 hex digits.
void probe_fingerprint(const Probe *p, char out[17]);

// The recipe as one line (PROBE_RECIPE_VERSION, the architecture, every
// field), kept in a saved probe's metadata.
void probe_recipe_string(const ProbeRecipe *r, char *out, size_t len);

// The probe's key, kept in its file: FNV-1a 64 of the recipe line and of
// every byte of both sets: a changed recipe or changed data gives a new key.
void probe_cache_key(const ProbeRecipe *r, const CifarSet *train, const CifarSet *test, char out[17]);

// p's weights, key, recipe, test_acc, train_seconds and CRC32s
// (io/checksum.h) as safetensors, atomically; load checks the shapes and the
// CRC32s. 0 (or the probe), or -1 (NULL) with a message.
int probe_save(const Probe *p, const ProbeRecipe *r, const char *path, char *err, size_t errlen);
Probe *probe_load(const char *path, char *err, size_t errlen);

// ============================================================================
// The probe every score uses: the shipped one, trained once by
// probe_default_recipe (tools/train_probe.c says how), its SHA-256 beside it.
#define PROBE_SHIPPED "models/probe_classifier.safetensors"

// The shipped probe, its CRC32s checked; verbose names it on stderr. NULL
// with err when it cannot be read: nothing is trained in its place.
Probe *probe_for_scoring(int verbose, char *err, size_t errlen);

// The shipped probe as a run's metrics.json names it (probe_key,
// probe_test_acc, probe_weights, probe_source "shipped"); 0, or -1 with err.
int probe_shipped_metrics(RunMetrics *out, char *err, size_t errlen);
