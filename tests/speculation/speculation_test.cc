// Speculative decoding: the tokens a verification yields, worked out by hand from the catalog's measured acceptance;
// the draft head's size from the model's dimensions; the physics' verdicts (a speed-up at batch 1, where decode reads
// the weights once for k + 1 positions, and a loss at large batch, where verification multiplies the compute);
// one request through serve-sim as predict answers it; and the refusals, each naming its flag.
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "api/resolve.h"
#include "dataset/request_log.h"
#include "hardware/gpu_catalog.h"
#include "llmco2/api.h"
#include "model/model_catalog.h"
#include "serving/scheduler.h"
#include "serving/serve_sim.h"
#include "sim/sim_params.h"
#include "speculation/speculation.h"
#include "support/all_modules.h"
#include "support/error_of.h"

namespace llmco2 {
namespace {

using testing_support::error_of;

TEST(Speculation, TokensPerStepAddTheMeasuredAcceptanceByPosition) {
  // 1 + P1 + ... + Pk; past the list, each position keeps the last conditional rate (here 0.5 / 0.8 = 0.625).
  const std::vector<double> through = {0.8, 0.5};
  EXPECT_DOUBLE_EQ(tokens_per_step(through, 1), 1.8);
  EXPECT_DOUBLE_EQ(tokens_per_step(through, 2), 2.3);
  EXPECT_DOUBLE_EQ(tokens_per_step(through, 3), 2.3 + 0.5 * 0.625);
  EXPECT_DOUBLE_EQ(tokens_per_step({0.875}, 2), 1 + 0.875 + 0.875 * 0.875);  // one position: its rate goes on
  // Independent positions accepted with a: (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, their equation 1).
  EXPECT_NEAR(tokens_per_step(geometric_acceptance(0.8, 3), 3), (1 - std::pow(0.8, 4)) / 0.2, 1e-12);
}

TEST(Speculation, TheCatalogReproducesTheAcceptanceLengthsItWasReadFrom) {
  // vLLM issue #20780: mean acceptance length of EAGLE-1 and EAGLE-3 on Llama-3.1-8B-Instruct, MT-bench, k = 2..7.
  const double eagle[] = {2.10, 2.29, 2.39, 2.43, 2.45, 2.47};
  const double eagle3[] = {2.36, 2.79, 3.08, 3.32, 3.46, 3.54};
  const SpecCatalog& catalog = SpecCatalog::bundled();
  for (int k = 2; k <= 7; ++k) {
    EXPECT_NEAR(tokens_per_step(catalog.get("eagle").accepted_through, k), eagle[k - 2], 0.005) << k;
    EXPECT_NEAR(tokens_per_step(catalog.get("eagle3").accepted_through, k), eagle3[k - 2], 0.005) << k;
  }
  // vLLM PR #24344: n-gram lookup, k = 5: 5,376 tokens in 993 + 821 steps.
  EXPECT_NEAR(tokens_per_step(catalog.get("ngram").accepted_through, 5), 5376.0 / 1814.0, 0.01);
  // DeepSeek-V3's MTP, k = 1: the second token accepted 85-90% of the time.
  EXPECT_NEAR(tokens_per_step(catalog.get("mtp").accepted_through, 1), 1.875, 1e-12);
}

TEST(Speculation, VerificationStepsCapTheLastStepAtWhatRemains) {
  // k = 1 accepted half the time: a step yields 1 or 2 tokens, 1.5 on average. N(1) = 1; N(2) = 1 + 0.5 N(1) = 1.5;
  // N(3) = 1 + 0.5 N(2) + 0.5 N(1) = 2.25; a long output needs tokens / 1.5 steps and a constant.
  Speculation s;
  s.draft_tokens = 1, s.accepted_through = {0.5};
  EXPECT_DOUBLE_EQ(s.verification_steps(1), 1.0);
  EXPECT_DOUBLE_EQ(s.verification_steps(2), 1.5);
  EXPECT_DOUBLE_EQ(s.verification_steps(3), 2.25);
  EXPECT_NEAR(s.verification_steps(100000) - s.verification_steps(99000), 1000 / 1.5, 1e-6);
}

TEST(Speculation, MtpNeedsAModelWithAnMtpModule) {
  const ModelSpec llama = ModelCatalog::bundled().resolve("llama-3.1-8b");
  EXPECT_NE(error_of([&] {
              resolve_speculation("mtp", 1, std::nullopt, llama, llama.default_precision);
            }).find("has no multi-token-prediction module"),
            std::string::npos);
  const ModelSpec deepseek = ModelCatalog::bundled().resolve("deepseek-v3.1");
  EXPECT_EQ(deepseek.mtp_layers, 1);  // num_nextn_predict_layers in its config.json
  const Speculation mtp = resolve_speculation("mtp", 2, std::nullopt, deepseek, deepseek.default_precision);
  EXPECT_NEAR(mtp.tokens_per_step(), 1 + 0.875 + 0.875 * 0.875, 1e-12);
  EXPECT_NE(mtp.acceptance_basis.find("past the 1 measured"), std::string::npos);
}

TEST(Speculation, TheSchedulerKeepsWhatEachVerificationAccepts) {
  // One request, prompt 32, 20 tokens; 3 drafts, 2.5 tokens a verification: credits 2.5, 3.0, 2.5, ... yield 2, 3,
  // 2, 3, 2, 3 (15 tokens), 2 (17), then 3 capped at the 2 left: 8 verifications for the 19 tokens after the first.
  SchedulerLimits limits;
  limits.kv_blocks = 100, limits.draft_tokens = 3, limits.tokens_per_step = 2.5;
  ReplicaScheduler scheduler(limits);
  ServedRequest r;
  r.prompt_tokens = 32, r.gen_tokens = 20;
  scheduler.enqueue(&r);
  int verifications = 0;
  std::vector<long> yields;
  while (!scheduler.idle()) {
    const std::vector<ScheduledWork> work = scheduler.schedule();
    ASSERT_EQ(work.size(), 1u);
    if (work[0].accepted > 0) {
      ++verifications;
      yields.push_back(work[0].accepted);
      EXPECT_EQ(work[0].tokens, 4);                             // k + 1 rows
      EXPECT_GE(r.blocks * limits.block_size, r.computed + 4);  // slots for every verified position
    }
    scheduler.complete(work);
    EXPECT_EQ(r.computed, r.prompt_tokens + r.generated - 1);
  }
  EXPECT_EQ(r.generated, 20);
  EXPECT_EQ(verifications, 8);
  EXPECT_EQ(yields, (std::vector<long>{2, 3, 2, 3, 2, 3, 2, 2}));
  EXPECT_EQ(scheduler.free_blocks(), limits.kv_blocks);
}

TEST(Speculation, APreemptedSpeculatingRequestStillFinishes) {
  // Six blocks of 16 for two requests of 30 + 30 tokens (each needs 4 blocks by its end, 64 positions with the
  // drafts' slots): one is preempted, recomputed and both produce every token.
  SchedulerLimits limits;
  limits.kv_blocks = 6, limits.draft_tokens = 3, limits.tokens_per_step = 2.0;
  ReplicaScheduler scheduler(limits);
  std::array<ServedRequest, 2> rs;
  for (ServedRequest& r : rs) r.prompt_tokens = 30, r.gen_tokens = 30, scheduler.enqueue(&r);
  for (int step = 0; step < 1000 && !scheduler.idle(); ++step) scheduler.complete(scheduler.schedule());
  EXPECT_TRUE(scheduler.idle());
  for (const ServedRequest& r : rs) EXPECT_EQ(r.generated, 30);
  EXPECT_GE(scheduler.preemptions(), 1);
  EXPECT_EQ(scheduler.free_blocks(), limits.kv_blocks);
}

TEST(Speculation, ABudgetBelowAVerificationIsRefused) {
  Deployment d;
  d.model = ModelCatalog::bundled().resolve("llama-3.1-8b");
  d.gpu = GpuCatalog::bundled().resolve("h100-sxm");
  d.setup.precision = d.model.default_precision;
  d.speculation = resolve_speculation("eagle", 7, std::nullopt, d.model, d.setup.precision);
  d.max_batched_tokens = 4;
  EXPECT_NE(error_of([&] { scheduler_limits(d); }).find("below the 8 positions a verification"), std::string::npos);
}

TEST(Speculation, AnEagleHeadIsOneLlamaLayerWithTheTargetsLmHead) {
  const ModelSpec target = ModelCatalog::bundled().resolve("llama-3.1-8b");
  const SpecMethod& eagle = SpecCatalog::bundled().get("eagle");
  const ModelSpec head = draft_head(target, eagle);
  EXPECT_EQ(head.layers, 1);
  EXPECT_EQ(head.vocab, 128256);
  // Llama-3.1-8B's layer: q and o 4096 x 4096, k and v 4096 x 1024, gate/up/down 3 x 4096 x 14336, two norms.
  const double layer = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336 + 2 * 4096;
  EXPECT_NEAR(head.layer_params(0), layer, 1.0);
  // EAGLE-1 shares the embedding and LM head: its bf16 bytes are the layer's (and the final norm's), 2 bytes each.
  const Speculation s = resolve_speculation("eagle", 3, std::nullopt, target, target.default_precision);
  EXPECT_NEAR(s.draft_weight_bytes, 2 * (layer + 4096), 2 * 4096.0);
  // EAGLE-3's head carries its own 32,000-token LM head.
  EXPECT_EQ(draft_head(target, SpecCatalog::bundled().get("eagle3")).vocab, 32000);
}

}  // namespace

namespace api {
namespace {

Request llama(long batch, const std::string& spec = "", int k = 0) {
  Request r;
  r.model = "llama-3.1-8b", r.gpu = "h100-sxm", r.scope = "gpu";
  r.batch = batch, r.prompt_tokens = 1024, r.gen_tokens = 256;
  r.spec = spec, r.spec_tokens = k;
  return r;
}

double tpot(const Session& s, const Request& r) { return *s.predict(r).figures.tpot_s; }

TEST(SpeculationPhysics, AtBatchOneItSpeedsDecodeUpButNeverBeyondItsAcceptanceLength) {
  // At batch 1 a decode step reads the 16 GB of weights for one token; a verification reads them once for k + 1
  // positions (their KV reads and operations are small beside), and EAGLE-3's 4 draft passes read ~0.7 GB each (one
  // layer, 0.44 GB, and a 32k-token LM head, 0.26 GB): ~1.2x a decode step of GPU time for 3.08 tokens. A
  // verification never costs less than a decode step, so time per token falls by at most the acceptance length.
  const Session session;
  const double plain = tpot(session, llama(1)), spec = tpot(session, llama(1, "eagle3", 4));
  EXPECT_GT(plain / spec, 1.5);
  EXPECT_LT(plain / spec, 3.08);
  EXPECT_LT(session.predict(llama(1, "eagle3", 4)).figures.energy_decode_j,
            session.predict(llama(1)).figures.energy_decode_j);
}

TEST(SpeculationPhysics, AtLargeBatchAndShortContextVerificationMultipliesTheComputeAndLoses) {
  // Batch 256 at a ~190-token context: a decode step's 256-row GEMMs do ~256 operations per weight byte, near the
  // H100's ridge (989e12 / 3.35e12 = 295), and its KV reads (256 x 192 tokens x 128 KiB = 6.4 GB) are below the
  // weights' 16 GB. Verifying 5 positions per sequence runs 1280-row GEMMs, ~5x the operations, for 3.08 tokens:
  // speculation costs more energy and time per token than plain decoding.
  const Session session;
  Request plain = llama(256), spec = llama(256, "eagle3", 4);
  plain.prompt_tokens = spec.prompt_tokens = 128, plain.gen_tokens = spec.gen_tokens = 128;
  EXPECT_GT(session.predict(spec).figures.energy_decode_j, session.predict(plain).figures.energy_decode_j);
  EXPECT_GT(tpot(session, spec), tpot(session, plain));
  // Towards it, the speed-up shrinks as the batch grows.
  double previous = 1e9;
  for (long batch : {1, 8, 32, 128}) {
    plain.batch = spec.batch = batch;
    const double speedup = tpot(session, plain) / tpot(session, spec);
    EXPECT_LT(speedup, previous) << batch;
    previous = speedup;
  }
}

TEST(SpeculationPhysics, AtLargeBatchAndLongContextTheKvReadsMakeItWinAgain) {
  // The same batch at a ~2.2k context on an H200 (its 141 GB hold the batch's KV at once): each step reads 256 x 2.2k
  // tokens x 128 KiB = 74 GB of KV, 4.6x the weights, and a verification reads it once for its 5 positions, so the
  // step stays bandwidth-bound and speculation pays again (MagicDec, Chen et al. 2024, arXiv 2408.11049: speculative
  // decoding speeds up large batches of long sequences).
  const Session session;
  Request plain = llama(256), spec = llama(256, "eagle3", 4);
  plain.prompt_tokens = spec.prompt_tokens = 2048;
  plain.gpu = spec.gpu = "h200";
  EXPECT_EQ(session.predict(plain).json["waves"], 1);
  EXPECT_LT(tpot(session, spec), tpot(session, plain));
}

TEST(SpeculationPhysics, NgramLookupAddsNoGpuWorkBesideTheVerification) {
  // No draft on the GPU: the step is a verification alone, so at batch 1 its time per token is about a decode step's
  // over the 2.96 tokens it yields (a little more: 6 positions' KV reads and logits).
  const Session session;
  const double ratio = tpot(session, llama(1)) / tpot(session, llama(1, "ngram", 5));
  EXPECT_GT(ratio, 2.5);
  EXPECT_LT(ratio, 2.97);
}

TEST(SpeculationPhysics, ServeSimOfOneRequestGivesPredictsFigures) {
  // The replay verifies step by step (whole accepted tokens, their mean the acceptance length), predict prices
  // (gen - 1) / E mean steps: with 1,023 tokens to decode they differ by under one step in 300.
  Request r = llama(1, "eagle3", 4);
  r.gen_tokens = 1024;
  const Session session;
  const Figures predicted = session.predict(r).figures;
  const ResolvedRequest resolved = resolve_request(r, false);
  RequestLog log;
  log.format = "azure";
  log.requests.push_back({0.0, r.prompt_tokens, r.gen_tokens, 2});
  std::vector<ServedRequest> served;
  replay(log, deployment(resolved), load_sim_params_or_default(""), {},
         [&](const ServedRequest& q) { served.push_back(q); });
  ASSERT_EQ(served.size(), 1u);
  EXPECT_EQ(served[0].generated, 1024);
  EXPECT_NEAR(served[0].energy_j / predicted.energy_j, 1.0, 0.01);
  EXPECT_NEAR(served[0].finish_s / predicted.latency_s, 1.0, 0.01);
  // The replay prices the 1,024-token prefill at its step-grid cell's representative (cells within 4%).
  EXPECT_NEAR(served[0].first_token_s / predicted.ttft_s, 1.0, 0.01);
}

TEST(SpeculationKnobs, BadSpeculationIsRefusedNamingTheFlag) {
  const Session session;
  Request r = llama(1, "medusa");
  EXPECT_NE(error_of([&] { session.predict(r); }).find("--spec: unknown method 'medusa'"), std::string::npos);
  r = llama(1, "draft:llama-3.2-1b");
  EXPECT_NE(error_of([&] { session.predict(r); }).find("needs --spec-acceptance"), std::string::npos);
  r.spec_acceptance = 1.2;
  EXPECT_NE(error_of([&] { session.predict(r); }).find("--spec-acceptance must be"), std::string::npos);
  r = llama(1, "draft:opt-6.7b");
  r.spec_acceptance = 0.7;
  EXPECT_NE(error_of([&] { session.predict(r); }).find("must share the tokenizer"), std::string::npos);
  r = llama(1), r.spec_tokens = 3;
  EXPECT_NE(error_of([&] { session.predict(r); }).find("need --spec METHOD"), std::string::npos);
  r = llama(1, "eagle"), r.predictor = "llmcarbon";
  EXPECT_NE(error_of([&] { session.predict(r); }).find("--predictor sim"), std::string::npos);
}

TEST(SpeculationKnobs, ADraftModelRunsItsOwnPassesAtTheGivenAcceptance) {
  // Llama-3.2-1B drafting for Llama-3.1-8B (one tokenizer): 3 draft tokens accepted 0.7 each, 1 + 0.7 + 0.49 +
  // 0.343 = 2.533 tokens a step. Its 3 passes read 2.5 GB each at batch 1, more than an EAGLE head's 4 passes.
  const Session session;
  Request r = llama(1, "draft:llama-3.2-1b", 3);
  r.spec_acceptance = 0.7;
  const Json answer = session.predict(r).json;
  EXPECT_NEAR(answer["speculation"]["tokens_per_step"].get<double>(), 2.533, 1e-9);
  Request eagle = llama(1, "eagle", 3);
  eagle.spec_acceptance = 0.7;
  EXPECT_GT(tpot(session, r), tpot(session, eagle));
  EXPECT_LT(tpot(session, r), tpot(session, llama(1)));
}

TEST(SpeculationEvidence, NoMeasuredRowRanItSoItIsExtrapolatedWithTheWiderInterval) {
  const Session session;
  const Json plain = session.predict(llama(8)).json, spec = session.predict(llama(8, "eagle", 3)).json;
  EXPECT_EQ(spec["evidence"]["label"], "extrapolated");
  EXPECT_NE(spec["evidence"]["reason"].get<std::string>().find("speculative decoding (eagle, 3 draft tokens)"),
            std::string::npos);
  EXPECT_NE(plain["evidence"]["label"], "extrapolated");
  auto width = [](const Json& answer) {  // the energy interval over the figure, high / low
    const Json& total = answer["intervals"]["energy_j"]["total"];
    return total[1].get<double>() / total[0].get<double>();
  };
  EXPECT_GT(width(spec), width(plain));
}

TEST(SpeculationKnobs, EveryCommandThatPricesARequestRunsIt) {
  // The knob reaches compare, a log's accounting and the capacity planner, not only predict: each answer moves.
  const Session session;
  CompareOptions one;
  one.gpu_types = {"h100-sxm"}, one.counts = {1};
  const auto energy = [](const Json& j) { return j["setups"][0]["energy_j"]["total"].get<double>(); };
  EXPECT_LT(energy(session.compare(llama(1, "eagle3", 4), one).json), energy(session.compare(llama(1), one).json));
  LogColumns log;
  log.prompt_tokens = {512, 1024}, log.gen_tokens = {256, 128};
  const auto trace_j = [&](const Request& r) {
    return session.score_requests(log, r, {}).json["energy_j"]["total"].get<double>();
  };
  EXPECT_LT(trace_j(llama(1, "eagle3", 4)), trace_j(llama(1)));
  const auto path = std::filesystem::path(testing::TempDir()) / "spec-capacity.csv";
  std::ofstream(path) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.0,512,256\n"
                         "2023-11-16 18:15:47.0,1024,128\n";
  CompareOptions plan = one;
  plan.trace = path.string(), plan.slo_ttft_ms = 1000, plan.slo_tpot_ms = 100, plan.tp_degrees = {1};
  const auto planned = [&](const Request& r) {
    return session.compare(r, plan).json["ranked"][0]["energy_j"]["total"].get<double>();
  };
  EXPECT_LT(planned(llama(1, "eagle3", 4)), planned(llama(1)));
}

}  // namespace
}  // namespace api
}  // namespace llmco2
