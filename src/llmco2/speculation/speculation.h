// speculation/speculation.h - speculative decoding as the simulator needs it: how many tokens one verification step
// yields (from measured acceptance by draft position, data/engines/speculation.json, or a rate the user gives), what
// the target verifies (k + 1 positions per sequence) and what the draft runs per step (k passes of a draft head or
// draft model; nothing on the GPU for n-gram lookup).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/model_spec.h"
#include "speculation/module.h"

namespace llmco2::speculation {

enum class DraftKind { head, model, none };  // head: one layer + LM head of the target's width; none: host n-gram

// One method of the catalog.
struct SpecMethod {
  std::string id;
  DraftKind draft = DraftKind::head;
  long head_vocab = 0;                   // a draft head's own LM-head vocabulary (0: the target's, shared)
  int default_tokens = 3;                // k when the user gives none
  std::vector<double> accepted_through;  // P(the first i draft tokens are all accepted), i = 1..n, measured
  std::string measured_on, source;
};

class SpecCatalog {
 public:
  static const SpecCatalog& bundled();  // data/engines/speculation.json
  explicit SpecCatalog(const std::string& path);
  // Throws Error naming the methods when `id` is none of them.
  const SpecMethod& get(const std::string& id) const;
  std::vector<std::string> ids() const;

 private:
  std::vector<SpecMethod> methods_;
};

// The mean tokens a verification of k draft tokens yields: 1 + sum_{i <= k} P_i, where positions past the measured
// ones keep the last measured conditional rate P_n / P_(n-1) (P_1 alone: P_1 per position).
double tokens_per_step(const std::vector<double>& accepted_through, int k);
// P_i = a^i: every draft token accepted independently with probability a (Leviathan et al. 2023, arXiv 2211.17192,
// whose expected tokens per step are (1 - a^(k+1)) / (1 - a)).
std::vector<double> geometric_acceptance(double acceptance_rate, int k);

// Speculative decoding of one setup, resolved: what a decode step verifies, yields and drafts.
struct Speculation {
  std::string method;    // empty: off
  int draft_tokens = 0;  // k
  // What each of the k draft passes runs per decoding sequence (one token); nullopt: nothing on the GPU (n-gram).
  std::optional<ModelSpec> draft;
  // Weights the draft adds to each GPU beside the target's (a head shares the target's embedding, and its LM head
  // unless it has its own vocabulary), at the request's precision.
  double draft_weight_bytes = 0;
  std::string acceptance_basis;          // where accepted_through comes from
  std::vector<double> accepted_through;  // P(the first i drafts accepted), i = 1..k, as used
  bool active() const { return draft_tokens > 0; }
  // The mean tokens one verification yields (1 .. k + 1); 1 when off.
  double tokens_per_step() const { return speculation::tokens_per_step(accepted_through, draft_tokens); }
  // The mean verifications that produce `tokens` tokens when each yields 1 + (the drafts accepted) but never more
  // than remain: tokens / tokens_per_step() for long outputs, a whole step for the last few (one for one token).
  double verification_steps(long tokens) const;
  long verify_positions() const { return draft_tokens + 1L; }
  double draft_passes() const { return draft ? static_cast<double>(draft_tokens) : 0.0; }
  bool operator==(const Speculation&) const = default;
};

// The draft head of `method` for `target`: one decoder layer (EAGLE: a dense attention layer of the target's width,
// FFN and attention shape; MTP: a layer of the target's own last kind) with an LM head of `head_vocab` (or the
// target's vocabulary).
ModelSpec draft_head(const ModelSpec& target, const SpecMethod& method);

// Resolves `method` ("eagle", "eagle3", "mtp", "ngram" or "draft") with k draft tokens (0: the method's default), an
// acceptance rate per token (nullopt: the method's measured acceptance; required for "draft"), the target and, for
// "draft", the draft model. Throws Error naming the flag (--spec, --spec-tokens, --spec-acceptance); "mtp" needs a
// target with multi-token-prediction modules (ModelSpec::mtp_layers).
Speculation resolve_speculation(const std::string& method, int draft_tokens, std::optional<double> acceptance_rate,
                                const ModelSpec& target, const Precision& precision,
                                const ModelSpec* draft_model = nullptr);

}  // namespace llmco2::speculation
