// Keys seen by causal, sliding-window and block-sparse attention, summed in closed form vs by hand and brute force.
#include <gtest/gtest.h>

#include "graph/context.h"
#include "support/all_modules.h"

namespace llmco2 {
namespace {

const LayerAttention kFull{8, 0, 0};
const LayerAttention kWindow3{8, 3, 0};

TEST(Context, KeysSeen) {
  EXPECT_DOUBLE_EQ(keys_seen(5, kFull), 5);
  EXPECT_DOUBLE_EQ(keys_seen(5, kWindow3), 3);
  EXPECT_DOUBLE_EQ(keys_seen(10, LayerAttention{8, 4, 2}), 7);  // 4 local + (10 - 4) / 2 strided
}

TEST(Context, SumsByHand) {
  EXPECT_DOUBLE_EQ(sum_keys_seen(1, 5, kFull), 15);                     // 1+2+3+4+5
  EXPECT_DOUBLE_EQ(sum_keys_seen(1, 5, kWindow3), 12);                  // 1+2+3+3+3
  EXPECT_DOUBLE_EQ(sum_keys_seen(4, 6, kWindow3), 9);                   // 3+3+3
  EXPECT_DOUBLE_EQ(sum_keys_seen(1, 4, LayerAttention{8, 2, 2}), 8.5);  // 1+2+2.5+3
  EXPECT_DOUBLE_EQ(sum_keys_seen(5, 4, kFull), 0);                      // empty range
}

// Chunked local attention (Llama-4): a query sees the keys of its own chunk only.
const LayerAttention kChunk4{8, 0, 0, 4};

TEST(Context, ChunkedAttentionRestartsAtEachChunk) {
  EXPECT_DOUBLE_EQ(keys_seen(4, kChunk4), 4);
  EXPECT_DOUBLE_EQ(keys_seen(5, kChunk4), 1);  // the first key of the second chunk
  EXPECT_DOUBLE_EQ(keys_seen(10, kChunk4), 2);
  EXPECT_DOUBLE_EQ(sum_keys_seen(1, 10, kChunk4), 23);  // 1+2+3+4 + 1+2+3+4 + 1+2
  EXPECT_DOUBLE_EQ(sum_keys_seen(6, 9, kChunk4), 10);   // 2+3+4+1
}

TEST(Context, FlashChunkedPrefillComputesOnlyItsChunkAndReadsEachKeyOnce) {
  Request r;
  r.prompt_tokens = 512;  // chunks of 256: each query sees its chunk's keys up to itself
  EXPECT_DOUBLE_EQ(attention_span(Phase::prefill, r, LayerAttention{8, 0, 0, 256}).loaded_keys, 512);
  EXPECT_DOUBLE_EQ(attention_span(Phase::prefill, r, LayerAttention{8, 0, 0, 256}).computed_keys, 2 * 256 * 257 / 2);
}

TEST(Context, ClosedFormEqualsBruteForce) {
  for (const LayerAttention a :
       {kFull, kWindow3, LayerAttention{1, 7, 0}, LayerAttention{1, 5, 3}, kChunk4, LayerAttention{1, 0, 0, 13}})
    for (long first = 1; first < 40; first += 7)
      for (long last = first; last < 90; last += 11) {
        double brute = 0;
        for (long c = first; c <= last; ++c) brute += keys_seen(static_cast<double>(c), a);
        EXPECT_NEAR(sum_keys_seen(first, last, a), brute, 1e-9) << first << ".." << last;
      }
}

TEST(Context, PrefillFlashSkipsMaskedTilesEagerComputesTheSquare) {
  Request r;
  r.prompt_tokens = 8;
  r.gen_tokens = 3;
  AttentionSpan flash = attention_span(Phase::prefill, r, kFull);
  EXPECT_DOUBLE_EQ(flash.computed_keys, 36);  // 8 x 9 / 2
  EXPECT_DOUBLE_EQ(flash.loaded_keys, 8);     // one query tile reads the 8 keys once
  r.flash_attention = false;
  const AttentionSpan eager = attention_span(Phase::prefill, r, kFull);
  EXPECT_DOUBLE_EQ(eager.computed_keys, 64);
  EXPECT_DOUBLE_EQ(eager.loaded_keys, 8);
}

// K/V rows come from DRAM once per prefill whatever the query tiles (later tiles read them from L2), windowed or not.
TEST(Context, FlashPrefillReadsEachKeyOnce) {
  Request r;
  r.prompt_tokens = 300;
  EXPECT_DOUBLE_EQ(attention_span(Phase::prefill, r, kFull).loaded_keys, 300);
  EXPECT_DOUBLE_EQ(attention_span(Phase::prefill, r, LayerAttention{8, 100, 0}).loaded_keys, 300);
  r.prompt_tokens = 1L << 22;
  EXPECT_DOUBLE_EQ(attention_span(Phase::prefill, r, kFull).loaded_keys, 4194304.0);
}

TEST(Context, DecodeGrowsTheCacheEachStep) {
  Request r;
  r.prompt_tokens = 4;
  r.gen_tokens = 3;  // 2 decode steps with contexts 5 and 6
  EXPECT_DOUBLE_EQ(attention_span(Phase::decode, r, kFull).computed_keys, 11);
  EXPECT_DOUBLE_EQ(attention_span(Phase::decode, r, kWindow3).computed_keys, 6);  // capped at 3 each
  r.gen_tokens = 1;                                                               // no decode step
  EXPECT_DOUBLE_EQ(attention_span(Phase::decode, r, kFull).computed_keys, 0);
}

}  // namespace
}  // namespace llmco2
