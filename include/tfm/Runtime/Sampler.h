//===- Sampler.h - choosing the next token from logits ----------*- C++ -*-===//
//
// Decoding controls over one row of f32 logits, with Hugging Face's
// semantics and order (transformers' `generate` with `do_sample`):
//
//   1. repetition penalty over the tokens seen so far (prompt and output):
//      a positive logit is divided by the penalty, a negative one multiplied;
//   2. temperature: logits / T;
//   3. top-k: logits below the k-th largest become -inf (ties with it stay);
//   4. top-p: sorted ascending, the tokens whose cumulative probability is at
//      most 1 - p become -inf, the most likely token always stays;
//   5. greedy: the first largest logit; sampling: one draw from
//      softmax(logits).
//
// Steps 1-4 are done in f32 like PyTorch; the softmax and the draw in double.
// The draw is portable rather than libstdc++'s distributions, so that a seed
// gives the same tokens on every platform and a script can reproduce them:
//
//   SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c):
//     state += 0x9E3779B97F4A7C15
//     z = state; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9
//     z = (z ^ z >> 27) * 0x94D049BB133111EB; return z ^ z >> 31
//   u = (next() >> 11) * 2^-53, uniform in [0, 1)
//   w_i = exp(l_i - max l) for the tokens left (0 for -inf), in id order;
//   the token is the first i with w_0 + ... + w_i > u * (w_0 + ... + w_V-1)
//   (summed left to right in double).
//
// Pure C++ over float arrays: no MLIR, usable from any front end.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_SAMPLER_H
#define TFM_RUNTIME_SAMPLER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::tfm::runtime {

/// The portable generator described above.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double nextDouble();

private:
  uint64_t state;
};

/// How one token is chosen; the defaults are those of Hugging Face's
/// GenerationConfig (greedy; top-k 50 applies once sampling is on).
struct SamplingOptions {
  /// false: the largest logit (after the repetition penalty), and
  /// temperature, top-k and top-p are not used.
  bool doSample = false;
  float temperature = 1.0f;
  /// 0 turns top-k off.
  int64_t topK = 50;
  /// 1 turns top-p off.
  float topP = 1.0f;
  /// 1 turns it off.
  float repetitionPenalty = 1.0f;
  uint64_t seed = 0;
};

/// An error naming the first option out of range (temperature and penalty
/// > 0, top-k >= 0, 0 < top-p <= 1).
llvm::Error verifySamplingOptions(const SamplingOptions &options);

/// The first largest of `logits`; NaN counts as largest, as in torch.argmax.
int64_t argmax(llvm::ArrayRef<float> logits);

/// Step 1: each distinct token of `seen` penalised once. Ids outside
/// `logits` are an error of the caller (asserted).
void applyRepetitionPenalty(llvm::MutableArrayRef<float> logits,
                            llvm::ArrayRef<int64_t> seen, float penalty);
/// Step 2.
void applyTemperature(llvm::MutableArrayRef<float> logits, float temperature);
/// Step 3, keeping at least `minTokensToKeep`.
void applyTopK(llvm::MutableArrayRef<float> logits, int64_t k,
               int64_t minTokensToKeep = 1);
/// Step 4, keeping at least `minTokensToKeep` (ties in the sort broken by
/// id, the smaller id counting as less likely).
void applyTopP(llvm::MutableArrayRef<float> logits, float p,
               int64_t minTokensToKeep = 1);
/// Steps 1-4 in order (only step 1 when `options.doSample` is false).
void processLogits(llvm::MutableArrayRef<float> logits,
                   llvm::ArrayRef<int64_t> seen,
                   const SamplingOptions &options);
/// Step 5's draw for a uniform `u` in [0, 1).
int64_t sampleFromLogits(llvm::ArrayRef<float> logits, double u);

/// Chooses tokens with one generator for the whole generation; rows of a
/// batch draw from it in order, one number per row and step.
class Sampler {
public:
  explicit Sampler(const SamplingOptions &options)
      : options(options), random(options.seed) {}

  /// The next token after `seen` (the sequence so far) given its `logits`,
  /// which are left untouched.
  int64_t next(llvm::ArrayRef<float> logits, llvm::ArrayRef<int64_t> seen);

  const SamplingOptions &getOptions() const { return options; }

private:
  SamplingOptions options;
  SplitMix64 random;
  std::vector<float> scratch;
};

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_SAMPLER_H
