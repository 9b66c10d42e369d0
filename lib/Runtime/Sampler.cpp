//===- Sampler.cpp - choosing the next token from logits ------------------===//
#include "tfm/Runtime/Sampler.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir::tfm;
using namespace mlir::tfm::runtime;

static constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

uint64_t SplitMix64::next() {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::nextDouble() {
  return double(next() >> 11) * 0x1.0p-53;
}

llvm::Error runtime::verifySamplingOptions(const SamplingOptions &options) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  // The negated comparisons also refuse NaN.
  if (!(options.temperature > 0) || std::isinf(options.temperature))
    return error(llvm::formatv("temperature {0}: must be positive and finite",
                               options.temperature));
  if (options.topK < 0)
    return error(llvm::formatv("top-k {0}: must be at least 0 (0: off)",
                               options.topK));
  if (!(options.topP > 0 && options.topP <= 1))
    return error(llvm::formatv("top-p {0}: must be in (0, 1] (1: off)",
                               options.topP));
  if (!(options.repetitionPenalty > 0) ||
      std::isinf(options.repetitionPenalty))
    return error(llvm::formatv("repetition penalty {0}: must be positive and "
                               "finite (1: off)",
                               options.repetitionPenalty));
  return llvm::Error::success();
}

int64_t runtime::argmax(llvm::ArrayRef<float> logits) {
  int64_t best = 0, count = logits.size();
  for (int64_t i = 1; i < count && !std::isnan(logits[best]); ++i)
    if (std::isnan(logits[i]) || logits[i] > logits[best])
      best = i;
  return best;
}

void runtime::applyRepetitionPenalty(llvm::MutableArrayRef<float> logits,
                                     llvm::ArrayRef<int64_t> seen,
                                     float penalty) {
  if (penalty == 1.0f)
    return;
  // Each token once, however often it was seen (a gather then a scatter in
  // Hugging Face's RepetitionPenaltyLogitsProcessor).
  std::vector<bool> done(logits.size());
  for (int64_t id : seen) {
    assert(id >= 0 && id < int64_t(logits.size()) && "token out of range");
    if (done[id])
      continue;
    done[id] = true;
    float &logit = logits[id];
    logit = logit < 0 ? logit * penalty : logit / penalty;
  }
}

void runtime::applyTemperature(llvm::MutableArrayRef<float> logits,
                               float temperature) {
  if (temperature == 1.0f)
    return;
  // As transformers divides, unless that overflows (a temperature so small
  // that a logit over it is infinite: every positive logit would become
  // +inf, and the softmax inf - inf, a NaN distribution). Then the logits
  // are shifted by the largest first, which the softmax does not see: the
  // largest stay 0, the rest go to -inf, the limit of the distribution as
  // the temperature goes to 0 (the argmax, ties shared).
  float max = kMinusInf;
  bool overflows = false;
  for (float logit : logits) {
    max = std::max(max, logit);
    overflows |= std::isfinite(logit) && !std::isfinite(logit / temperature);
  }
  if (!overflows || !std::isfinite(max)) {
    for (float &logit : logits)
      logit /= temperature;
    return;
  }
  for (float &logit : logits)
    logit = (logit - max) / temperature;
}

void runtime::applyTopK(llvm::MutableArrayRef<float> logits, int64_t k,
                        int64_t minTokensToKeep) {
  int64_t count = logits.size();
  if (k <= 0)
    return;
  k = std::min(std::max(k, minTokensToKeep), count);
  if (k == count)
    return;
  std::vector<float> sorted(logits.begin(), logits.end());
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(),
                   std::greater<float>());
  float threshold = sorted[k - 1];
  for (float &logit : logits)
    if (logit < threshold)
      logit = kMinusInf;
}

void runtime::applyTopP(llvm::MutableArrayRef<float> logits, float p,
                        int64_t minTokensToKeep) {
  int64_t count = logits.size();
  if (p >= 1.0f || count == 0)
    return;
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return logits[a] < logits[b] || (logits[a] == logits[b] && a < b);
  });
  double max = logits[order.back()];
  std::vector<double> weights(count);
  double total = 0;
  for (int64_t i = 0; i < count; ++i) {
    float logit = logits[order[i]];
    weights[i] = logit == kMinusInf ? 0.0 : std::exp(double(logit) - max);
    total += weights[i];
  }
  // Ascending: remove while the probability mass so far is at most 1 - p,
  // but never the last (most likely) `minTokensToKeep`.
  double limit = 1.0 - double(p), cumulative = 0;
  int64_t removable = count - std::min(std::max<int64_t>(minTokensToKeep, 1),
                                       count);
  for (int64_t i = 0; i < removable; ++i) {
    cumulative += weights[i] / total;
    if (cumulative > limit)
      break;
    logits[order[i]] = kMinusInf;
  }
}

int64_t runtime::sampleFromLogits(llvm::ArrayRef<float> logits, double u) {
  int64_t count = logits.size();
  float max = kMinusInf;
  for (float logit : logits)
    max = std::max(max, logit);
  if (max == kMinusInf || std::isnan(max))
    return argmax(logits);
  std::vector<double> weights(count);
  double total = 0;
  for (int64_t i = 0; i < count; ++i) {
    weights[i] =
        logits[i] == kMinusInf ? 0.0 : std::exp(double(logits[i]) - max);
    total += weights[i];
  }
  double target = u * total, cumulative = 0;
  int64_t last = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (weights[i] == 0)
      continue;
    cumulative += weights[i];
    last = i;
    if (cumulative > target)
      return i;
  }
  // Rounding left the target at the very end: the last possible token.
  return last;
}

void runtime::processLogits(llvm::MutableArrayRef<float> logits,
                            llvm::ArrayRef<int64_t> seen,
                            const SamplingOptions &options) {
  applyRepetitionPenalty(logits, seen, options.repetitionPenalty);
  if (!options.doSample)
    return;
  applyTemperature(logits, options.temperature);
  applyTopK(logits, options.topK);
  applyTopP(logits, options.topP);
}

int64_t Sampler::next(llvm::ArrayRef<float> logits,
                      llvm::ArrayRef<int64_t> seen) {
  // Greedy without a penalty reads the logits as they are.
  if (!options.doSample && options.repetitionPenalty == 1.0f)
    return argmax(logits);
  scratch.assign(logits.begin(), logits.end());
  processLogits(scratch, seen, options);
  if (!options.doSample)
    return argmax(scratch);
  return sampleFromLogits(scratch, random.nextDouble());
}
