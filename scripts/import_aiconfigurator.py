#!/usr/bin/env python3
"""Copies the part of NVIDIA's AIConfigurator kernel database that `llmco2 calibrate --kernels` uses into
data/measured/aiconfigurator/ as plain CSV (the shared copy is gzipped, and llmco2 links no zlib).

Usage: scripts/import_aiconfigurator.py [SHARED_DIR] [OUT_DIR]
  SHARED_DIR  default ../shared/data/measured/aiconfigurator_kernels (read only)
  OUT_DIR     default data/measured/aiconfigurator

What is kept (data/measured/aiconfigurator/README.md says why): for every GPU system and engine, the GEMMs of the
dtypes bfloat16, fp8 (per-tensor scales), fp8_block (128-element block scales) and nvfp4 at M = 1, 2, 4, ..., 16384
rows and N, K in {1024, 2048, 4096, 6144, 8192, 12288, 16384}; prefill (context) and decode (generation) attention
of head_dim 128 with 16 or 64 query heads and 2 or 8 KV heads per GPU (GQA groups of 2-32),
decode at batch 1-512 and contexts of 2-131,072 tokens, full (not sliding-window) attention, bf16 or fp8 KV
cache; all-reduces of bf16 (NCCL's nccl-tests rows of dtype half, and each engine's own all-reduce replayed in a
CUDA graph: vLLM's and SGLang's *_graph rows, TensorRT-LLM's, which are graph replays only) on 2-8 GPUs, with the
message in bytes (the tables count bf16 elements); DeepSeek-V3's multi-head latent attention (the only geometry the
tables time: latent 512 + rope 64, nope 128, v 128) with 16, 32, 64 or 128 local heads (DeepSeek-V3/R1 at TP 8 to 1,
Kimi-K2 at TP 1), decode over a bf16 or fp8 latent cache at batch 1-512 and the decode contexts above, prefill in the
expanded form (TensorRT-LLM's kernels, and SGLang's trtllm_mla backend; SGLang's other backends time the absorbed
form in prefill, which no engine profile runs, and vLLM's MLA table is a 0.14 Triton build). Latencies in
milliseconds, rounded to 6 significant digits.
"""
import csv
import gzip
import os
import sys
import tempfile

GEMM_DTYPES = {"bfloat16", "fp8", "fp8_block", "nvfp4"}
GEMM_M = {2**i for i in range(15)}
GEMM_NK = {1024, 2048, 4096, 6144, 8192, 12288, 16384}
HEADS = {16, 64}
KV_HEADS = {2, 8}
DECODE_BATCH = {2**i for i in range(10)}
DECODE_STEPS = {1, 7, 31, 127, 511, 2047, 8191, 32767, 131071}
MLA_HEADS = {16, 32, 64, 128}
MLA_EXPANDED_PREFILL = {"default", "trtllm_mla"}  # TensorRT-LLM's kernels (SGLang's trtllm_mla backend calls them)
GLITCH = 3.0  # a row this many times both context neighbours' time is a glitch (merge_mla)


def rows(path):
    with gzip.open(path, "rt", newline="") as f:
        yield from csv.DictReader(f)


def tables(shared, op, name):
    """(system, engine, version, path) of every `<system>/<op>/<engine>/<version>/<name>` table, sorted."""
    for system in sorted(os.listdir(shared)):
        op_dir = os.path.join(shared, system, op)
        if not os.path.isdir(op_dir):
            continue
        for engine in sorted(os.listdir(op_dir)):
            for version in sorted(os.listdir(os.path.join(op_dir, engine))):
                path = os.path.join(op_dir, engine, version, name)
                if os.path.exists(path):
                    yield system, engine, version, path


def keep_gemm(r):
    return (r["gemm_dtype"] in GEMM_DTYPES and int(r["m"]) in GEMM_M and int(r["n"]) in GEMM_NK
            and int(r["k"]) in GEMM_NK)


def keep_decode(r):
    return keep_attention(r) and int(r["batch_size"]) in DECODE_BATCH and int(r["step"]) in DECODE_STEPS


def keep_attention(r):
    heads, kv = int(r["num_heads"]), int(r["num_key_value_heads"])
    return (int(r["head_dim"]) == 128 and heads in HEADS and kv in KV_HEADS and kv <= heads
            and int(r.get("window_size") or 0) == 0 and int(r["beam_width"]) == 1
            and r["attn_dtype"] == "bfloat16" and r["kv_cache_dtype"] in ("bfloat16", "fp8"))


def keep_nccl(r):
    return r["op_name"] == "all_reduce" and r["nccl_dtype"] == "half"


def keep_custom(r):
    # vLLM and SGLang rows name their mode in `backend` (*_graph, *_eager); TensorRT-LLM's are CUDA-graph replays only
    # (kernel_source TRTLLM; the A100 table of TensorRT-LLM 1.0 has no backend or implementation column).
    graph = (r.get("backend") or "").endswith("_graph") or r["kernel_source"] == "TRTLLM"
    return r["op_name"] == "all_reduce" and r["allreduce_dtype"] == "bfloat16" and graph


def keep_mla(r):
    if r["framework"] == "VLLM" or int(r["num_heads"]) not in MLA_HEADS or r["mla_dtype"] != "bfloat16":
        return False
    if int(r["step"]) == 0:  # prefill
        return r["kernel_source"] in MLA_EXPANDED_PREFILL
    return int(r["batch_size"]) in DECODE_BATCH and int(r["step"]) in DECODE_STEPS


GEMM_COLUMNS = ["system", "engine", "version", "kernel_source", "dtype", "m", "n", "k", "latency_ms"]
ATTENTION_COLUMNS = ["system", "engine", "version", "kernel_source", "batch", "isl", "step", "heads", "kv_heads",
                     "head_dim", "kv_dtype", "latency_ms"]


MLA_COLUMNS = ["system", "engine", "version", "kernel_source", "phase", "batch", "isl", "step", "heads", "kv_dtype",
               "latency_ms"]
ALLREDUCE_COLUMNS = ["system", "engine", "version", "kernel_source", "gpus", "bytes", "latency_ms"]


def allreduce_row(system, engine, version, r):
    """message_size counts 2-byte elements (collect_nccl.py records bytes // 2 for half; collect_all_reduce.py
    allocates [size] bf16 elements)."""
    return [system, engine, version, r["kernel_source"], r["num_gpus"], str(2 * int(r["message_size"])), latency(r)]


def latency(r):
    """Milliseconds to 6 significant digits (the tables print 16; repeat-to-repeat noise is ~1e-2)."""
    return f"{float(r['latency']):.6g}"


def gemm_row(system, engine, version, r):
    return [system, engine, version, r["kernel_source"], r["gemm_dtype"], r["m"], r["n"], r["k"], latency(r)]


def attention_row(system, engine, version, r):
    return [system, engine, version, r["kernel_source"], r["batch_size"], r["isl"], r["step"], r["num_heads"],
            r["num_key_value_heads"], r["head_dim"], r["kv_cache_dtype"], latency(r)]


def merge_mla(body):
    """Averages the rows of one key (SGLang's tables time some keys twice, 1-2% apart; TensorRT-LLM 1.0's A100 and
    L40S tables repeat a key for each TP size giving its head count) and drops glitches: a row more than GLITCH x the
    rows on both sides of it along its series (the same setup at the next shorter and the next longer context: the
    ends of a series are kept), where time only grows with the context (one H200 TensorRT-LLM decode row reads
    1.47 ms between 0.014 ms neighbours)."""
    groups = {}
    for row in body:
        groups.setdefault(tuple(row[:-1]), []).append(float(row[-1]))
    merged = {key: sum(v) / len(v) for key, v in groups.items()}
    series = {}
    for key, value in merged.items():  # series: every column but the context (isl for prefill, step for decode)
        context = int(key[6]) if key[4] == "prefill" else int(key[7])
        series.setdefault(key[:6] + key[8:] if key[4] == "prefill" else key[:7] + key[8:], []).append(
            (context, key, value))
    out = []
    for points in series.values():
        points.sort()
        for i, (_, key, value) in enumerate(points):
            around = [points[j][2] for j in (i - 1, i + 1) if 0 <= j < len(points)]
            if len(around) == 2 and all(value > GLITCH * v for v in around):
                print(f"mla.csv: dropped {','.join(key)} at {value:.6g} ms (neighbours {around})", file=sys.stderr)
                continue
            out.append(list(key) + [f"{value:.6g}"])
    out.sort(key=lambda row: (row[0], row[1], row[2], row[3], row[4], int(row[5]), int(row[6]), int(row[7]),
                              int(row[8]), row[9]))
    return out


def mla_row(system, engine, version, r):
    phase = "prefill" if int(r["step"]) == 0 else "decode"
    return [system, engine, version, r["kernel_source"], phase, r["batch_size"], r["isl"], r["step"], r["num_heads"],
            r["kv_cache_dtype"], latency(r)]


def write_atomic(path, header, body):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".import-", suffix=".csv")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(body)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def collect(shared, op, name, keep, convert):
    out = []
    for system, engine, version, path in tables(shared, op, name):
        for r in rows(path):
            if keep(r):
                out.append(convert(system, engine, version, r))
    return out


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/measured/aiconfigurator_kernels"
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "data/measured/aiconfigurator"
    os.makedirs(out_dir, exist_ok=True)
    jobs = [("gemm", "gemm_perf.csv.gz", keep_gemm, gemm_row, GEMM_COLUMNS, "gemm.csv"),
            ("attention", "context_attention_perf.csv.gz", keep_attention, attention_row, ATTENTION_COLUMNS,
             "context_attention.csv"),
            ("attention", "generation_attention_perf.csv.gz", keep_decode, attention_row, ATTENTION_COLUMNS,
             "generation_attention.csv"),
            ("mla", "context_mla_perf.csv.gz", keep_mla, mla_row, MLA_COLUMNS, None),
            ("mla", "generation_mla_perf.csv.gz", keep_mla, mla_row, MLA_COLUMNS, "mla.csv")]
    jobs_comm = [("nccl_perf.csv.gz", keep_nccl), ("custom_allreduce_perf.csv.gz", keep_custom)]
    body = []
    for name, keep in jobs_comm:
        body += collect(shared, "comm", name, keep, allreduce_row)
    write_atomic(os.path.join(out_dir, "allreduce.csv"), ALLREDUCE_COLUMNS, body)
    print(f"allreduce.csv: {len(body)} rows", file=sys.stderr)
    body = []
    for op, name, keep, convert, header, out_name in jobs:  # out_name None: the next job's file continues
        body += collect(shared, op, name, keep, convert)
        if out_name is None:
            continue
        if out_name == "mla.csv":
            body = merge_mla(body)
        write_atomic(os.path.join(out_dir, out_name), header, body)
        print(f"{out_name}: {len(body)} rows", file=sys.stderr)
        body = []


if __name__ == "__main__":
    main()
