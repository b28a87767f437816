#!/usr/bin/env python3
"""Kernel campaign on one NVIDIA GPU (issue 37, item 8): GEMM and attention microbenchmarks and a closed-loop
Llama-3.1-8B-shaped serving run, timed with CUDA events, GPU energy from NVML's total-energy counter.

Runs where PyTorch and nvidia-ml-py are installed (the lent H100/H200 machines):
    python3 scripts/gpu_campaign/kernel_campaign.py --out DIR [--budget-s 330]
Every row is flushed as soon as it is measured, so a run stopped at its limit keeps what it measured; a case that
fails is written with its error and the run goes on. What each column means: data/measured/gpu_campaign/SOURCE.md.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F

try:
    import pynvml
except ImportError:  # the run still times kernels; energy columns are then empty
    pynvml = None

L2_FLUSH_BYTES = 256e6   # operands cycled over at least this many bytes, so no case runs from the 50-60 MB L2
GRAPH_MIN_S = 2e-3       # one graph replay holds at least this much GPU work, so launches never gate the timing
BF16, FP8 = torch.bfloat16, torch.float8_e4m3fn


class Gpu:
    """NVML readings: the board's energy counter and a 20 ms sampler of power, clocks and temperature."""

    def __init__(self, samples_path):
        self.h = None
        self.samples = []
        self.stop = False
        if pynvml is not None:
            pynvml.nvmlInit()
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
        self.file = open(samples_path, "w", newline="")
        self.out = csv.writer(self.file)
        self.out.writerow(["unix_s", "power_w", "sm_mhz", "mem_mhz", "temp_c"])
        if self.h is not None:
            threading.Thread(target=self._run, daemon=True).start()

    def energy_j(self):
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(self.h) / 1e3 if self.h else float("nan")

    def _run(self):
        while not self.stop:
            try:
                row = (time.time(), pynvml.nvmlDeviceGetPowerUsage(self.h) / 1e3,
                       pynvml.nvmlDeviceGetClockInfo(self.h, pynvml.NVML_CLOCK_SM),
                       pynvml.nvmlDeviceGetClockInfo(self.h, pynvml.NVML_CLOCK_MEM),
                       pynvml.nvmlDeviceGetTemperature(self.h, pynvml.NVML_TEMPERATURE_GPU))
                self.samples.append(row)
                self.out.writerow([f"{row[0]:.3f}", f"{row[1]:.1f}", row[2], row[3], row[4]])
                if len(self.samples) % 50 == 0:
                    self.file.flush()
            except Exception:  # a failed poll leaves a gap, never stops the campaign
                pass
            time.sleep(0.02)

    def window(self, t0, t1):
        rows = [r for r in list(self.samples) if t0 <= r[0] <= t1]
        if not rows:
            return {"sm_mhz": "", "power_sampled_w": "", "temp_c": ""}
        n = len(rows)
        return {"sm_mhz": round(sum(r[2] for r in rows) / n), "power_sampled_w": round(sum(r[1] for r in rows) / n, 1),
                "temp_c": max(r[4] for r in rows)}

    def close(self):
        self.stop = True
        time.sleep(0.05)
        self.file.close()


class Table:
    """A CSV written row by row and flushed, with a fixed header."""

    def __init__(self, path, columns):
        self.columns = columns
        self.file = open(path, "w", newline="")
        self.out = csv.DictWriter(self.file, fieldnames=columns, extrasaction="ignore")
        self.out.writeheader()
        self.file.flush()

    def write(self, row):
        self.out.writerow({c: fmt(row.get(c, "")) for c in self.columns})
        self.file.flush()


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def capture(fn):
    """fn captured in a CUDA graph after two warm-up calls on a side stream (cuBLAS workspaces, autotuning)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    torch.cuda.synchronize()
    return g


def measure(replay, ops_per_replay, gpu, min_s):
    """GPU time and energy per op over >= min_s of back-to-back replays."""
    replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    replay()
    torch.cuda.synchronize()
    one_s = time.perf_counter() - t0
    n = max(3, min(200000, int(math.ceil(min_s / max(one_s, 1e-6)))))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    w0, e0 = time.time(), gpu.energy_j()
    start.record()
    for _ in range(n):
        replay()
    end.record()
    end.synchronize()
    e1, w1 = gpu.energy_j(), time.time()
    ops = n * ops_per_replay
    gpu_s = start.elapsed_time(end) / 1e3
    row = {"time_s": gpu_s / ops, "energy_j": (e1 - e0) / ops, "window_s": w1 - w0, "ops_timed": ops,
           "avg_power_w": (e1 - e0) / (w1 - w0)}
    row.update(gpu.window(w0, w1))
    return row


def reps_for(est_s):
    return int(min(256, max(1, math.ceil(GRAPH_MIN_S / max(est_s, 1e-7)))))


def free():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


# --- GEMM -------------------------------------------------------------------------------------------------------

def gemm_case(m, n, k, dtype, gpu, min_s):
    elem = 1 if dtype == "fp8" else 2
    copies = int(min(16, max(1, math.ceil(L2_FLUSH_BYTES / (n * k * elem)))))
    if dtype == "bf16":
        a = torch.randn(m, k, device="cuda", dtype=BF16)
        ws = [torch.randn(n, k, device="cuda", dtype=BF16) for _ in range(copies)]
        out = torch.empty(m, n, device="cuda", dtype=BF16)

        def op(i):
            torch.matmul(a, ws[i % copies].t(), out=out)
    else:  # per-tensor scaled e4m3 x e4m3 -> bf16, as vLLM's and TRT-LLM's fp8 linear layers run it
        a = torch.randn(m, k, device="cuda").to(FP8)
        ws = [torch.randn(n, k, device="cuda").to(FP8) for _ in range(copies)]
        sa = torch.ones((), device="cuda", dtype=torch.float32)
        sb = torch.ones((), device="cuda", dtype=torch.float32)

        def op(i):
            torch._scaled_mm(a, ws[i % copies].t(), scale_a=sa, scale_b=sb, out_dtype=BF16)
    flops = 2.0 * m * n * k
    bytes_ = (m * k + n * k) * elem + m * n * 2
    est = max(flops / (700e12 if elem == 2 else 1300e12), bytes_ / 4e12)
    reps = reps_for(est)

    def fn():
        for i in range(reps):
            op(i)
    g = capture(fn)
    row = measure(g.replay, reps, gpu, min_s)
    row.update(m=m, n=n, k=k, dtype=dtype, operand_copies=copies, reps_per_graph=reps, flops=flops, bytes=bytes_,
               tflops=flops / row["time_s"] / 1e12, gbps=bytes_ / row["time_s"] / 1e9)
    del g, a, ws
    free()
    return row


def gemm_cases(dtypes):
    """Llama-3.1-8B's linear layers at TP 1 (qkv, o, gate_up, down), its LM head, and one square reference."""
    nk = [(6144, 4096, "qkv"), (4096, 4096, "o"), (28672, 4096, "gate_up"), (4096, 14336, "down")]
    ms = [1, 16, 64, 256, 1024, 4096, 16384]
    cases = []
    for dtype in dtypes:
        cases.append((8192, 8192, 8192, dtype, "square"))
        for n, k, name in nk:
            for m in ms:
                if dtype == "fp8" and m % 16:
                    continue  # cuBLASLt fp8 needs m % 16 == 0; engines pad such steps to 16 rows
                cases.append((m, n, k, dtype, name))
        for m in [1, 16, 64, 256]:
            if dtype == "fp8" and m % 16:
                continue
            cases.append((m, 128256, 4096, dtype, "lm_head"))
    return cases


# --- attention --------------------------------------------------------------------------------------------------

def sdpa_backends():
    from torch.nn.attention import SDPBackend
    return [("flash", [SDPBackend.FLASH_ATTENTION]), ("efficient", [SDPBackend.EFFICIENT_ATTENTION]),
            ("cudnn", [SDPBackend.CUDNN_ATTENTION]), ("math", [SDPBackend.MATH])]


def with_backend(build):
    """The first SDPA backend that captures; returns (graph, name)."""
    from torch.nn.attention import sdpa_kernel
    last = None
    for name, backends in sdpa_backends():
        try:
            with sdpa_kernel(backends):
                return build(), name
        except Exception as e:  # this backend refuses the shape; try the next
            last = e
            free()
    raise RuntimeError(f"no SDPA backend: {last}")


def decode_attention_case(b, ctx, kv_dtype, gpu, min_s, heads=32, kv_heads=8, head_dim=128):
    """One decode step's attention: b sequences, a KV cache of ctx tokens each, Llama-3.1-8B's GQA (32 q, 8 kv).
    The 4 query heads sharing a KV head ride as 4 query rows of that head, as decode kernels group them."""
    g = heads // kv_heads
    elem = 1 if kv_dtype == "fp8" else 2
    kv_bytes = 2 * b * ctx * kv_heads * head_dim * elem
    copies = int(min(64, max(1, math.ceil(L2_FLUSH_BYTES / kv_bytes))))
    dt = FP8 if kv_dtype == "fp8" else BF16
    ks = [torch.randn(b, kv_heads, ctx, head_dim, device="cuda").to(dt) for _ in range(copies)]
    vs = [torch.randn(b, kv_heads, ctx, head_dim, device="cuda").to(dt) for _ in range(copies)]
    q = torch.randn(b, kv_heads, g, head_dim, device="cuda", dtype=BF16)
    reps = reps_for(kv_bytes / 3.5e12)

    def fn():
        for i in range(reps):
            k, v = ks[i % copies], vs[i % copies]
            if kv_dtype == "fp8":  # dequantised to bf16 first, then bf16 attention: the software path
                k, v = k.to(BF16), v.to(BF16)
            F.scaled_dot_product_attention(q, k, v)
    graph, backend = with_backend(lambda: capture(fn))
    row = measure(graph.replay, reps, gpu, min_s)
    row.update(batch=b, context=ctx, kv_dtype=kv_dtype, phase="decode", backend=backend, kv_bytes=kv_bytes,
               operand_copies=copies, reps_per_graph=reps, gbps=kv_bytes / row["time_s"] / 1e9,
               flops=4.0 * b * heads * ctx * head_dim,
               path="bf16 attention" if kv_dtype == "bf16" else "fp8 cache -> bf16 copy -> bf16 attention")
    row["tflops"] = row["flops"] / row["time_s"] / 1e12
    del graph, ks, vs, q
    free()
    return row


def prefill_attention_case(seq, gpu, min_s, heads=32, kv_heads=8, head_dim=128):
    """Causal prefill attention of one sequence, Llama-3.1-8B's GQA."""
    q = torch.randn(1, heads, seq, head_dim, device="cuda", dtype=BF16)
    k = torch.randn(1, kv_heads, seq, head_dim, device="cuda", dtype=BF16)
    v = torch.randn(1, kv_heads, seq, head_dim, device="cuda", dtype=BF16)
    flops = 4.0 * heads * head_dim * seq * seq / 2  # QK^T and PV over the causal half
    reps = reps_for(flops / 400e12)
    ke, ve = k.repeat_interleave(heads // kv_heads, 1), v.repeat_interleave(heads // kv_heads, 1)

    def fn():
        for _ in range(reps):
            F.scaled_dot_product_attention(q, ke, ve, is_causal=True)
    graph, backend = with_backend(lambda: capture(fn))
    row = measure(graph.replay, reps, gpu, min_s)
    row.update(batch=1, context=seq, kv_dtype="bf16", phase="prefill", backend=backend, flops=flops,
               reps_per_graph=reps, tflops=flops / row["time_s"] / 1e12,
               path="causal bf16 attention, KV heads expanded to 32 (same FLOPs)")
    del graph, q, k, v, ke, ve
    free()
    return row


# --- closed-loop Llama-3.1-8B -----------------------------------------------------------------------------------

class Llama:
    """Llama-3.1-8B's shapes with random bf16 weights (timing and power do not depend on trained values): eager
    chunked prefill with SDPA, decode steps replayed as CUDA graphs per 128-token context bucket."""

    def __init__(self, cfg, batch, max_len, dtype="bf16"):
        self.fp8 = dtype == "fp8"
        self.hs, self.H, self.KV = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.D = self.hs // self.H
        self.inter, self.V, self.L = cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
        self.B, self.max_len = batch, max_len

        def w(*shape):
            return torch.randn(*shape, device="cuda", dtype=BF16) * 0.02
        qkv = (self.H + 2 * self.KV) * self.D
        def lin(*shape):  # fp8: e4m3 weights with a per-tensor scale, as an fp8 checkpoint (FP8-Dynamic) holds them
            return (torch.randn(*shape, device="cuda") * 4).to(FP8) if self.fp8 else w(*shape)
        self.layers = [dict(wqkv=lin(qkv, self.hs), wo=lin(self.hs, self.H * self.D), wgu=lin(2 * self.inter, self.hs),
                            wd=lin(self.hs, self.inter), n1=torch.ones(self.hs, device="cuda", dtype=BF16),
                            n2=torch.ones(self.hs, device="cuda", dtype=BF16)) for _ in range(self.L)]
        self.w_scale = torch.full((), 0.005, device="cuda", dtype=torch.float32)
        self.embed, self.head = w(self.V, self.hs), w(self.V, self.hs)
        self.nf = torch.ones(self.hs, device="cuda", dtype=BF16)
        theta = float(cfg.get("rope_theta") or 500000.0)
        inv = 1.0 / (theta ** (torch.arange(0, self.D, 2, device="cuda", dtype=torch.float32) / self.D))
        f = torch.outer(torch.arange(max_len, device="cuda", dtype=torch.float32), inv)
        self.cos, self.sin = torch.cat([f, f], -1).cos().to(BF16), torch.cat([f, f], -1).sin().to(BF16)
        self.positions = torch.arange(max_len, device="cuda")
        self.kc = [torch.zeros(batch, self.KV, max_len, self.D, device="cuda", dtype=BF16) for _ in range(self.L)]
        self.vc = [torch.zeros(batch, self.KV, max_len, self.D, device="cuda", dtype=BF16) for _ in range(self.L)]
        self.tok = torch.zeros(batch, device="cuda", dtype=torch.long)
        self.pos = torch.zeros(1, device="cuda", dtype=torch.long)
        self.graphs = {}
        self.attention = "sdpa"

    def linear(self, x, w):
        """x @ w.T; fp8: x quantised per tensor on the fly (amax, scale, cast: vLLM's dynamic per-tensor scheme), rows
        padded to 16 for cuBLASLt, bf16 output."""
        if not self.fp8:
            return x @ w.t()
        scale = (x.abs().amax().float() / 448.0).clamp(min=1e-8)
        q = (x / scale).to(FP8)
        rows = q.shape[0]
        if rows % 16:
            buf = torch.zeros(rows + 16 - rows % 16, q.shape[1], device="cuda", dtype=torch.uint8)
            buf[:rows].copy_(q.view(torch.uint8))
            q = buf.view(FP8)
        y = torch._scaled_mm(q, w.t(), scale_a=scale, scale_b=self.w_scale, out_dtype=BF16)
        return y[:rows]

    @staticmethod
    def norm(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(BF16) * w

    @staticmethod
    def rope(x, cos, sin):
        h = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., h:], x[..., :h]], -1) * sin

    def mlp(self, x, p):
        gu = self.linear(self.norm(x, p["n2"]), p["wgu"])
        g, u = gu.chunk(2, -1)
        return x + self.linear(F.silu(g) * u, p["wd"])

    def prefill(self, tokens, b0):
        b, s = tokens.shape
        H, KV, D = self.H, self.KV, self.D
        x = self.embed[tokens].view(b * s, self.hs)
        cos, sin = self.cos[:s], self.sin[:s]
        for l, p in enumerate(self.layers):
            qkv = self.linear(self.norm(x, p["n1"]), p["wqkv"])
            q = self.rope(qkv[:, :H * D].view(b, s, H, D).transpose(1, 2), cos, sin)
            k = self.rope(qkv[:, H * D:(H + KV) * D].view(b, s, KV, D).transpose(1, 2), cos, sin)
            v = qkv[:, (H + KV) * D:].view(b, s, KV, D).transpose(1, 2)
            self.kc[l][b0:b0 + b, :, :s] = k
            self.vc[l][b0:b0 + b, :, :s] = v
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.linear(a.transpose(1, 2).reshape(b * s, H * D), p["wo"])
            x = self.mlp(x, p)
        last = x.view(b, s, self.hs)[:, -1]
        return (self.norm(last, self.nf) @ self.head.t()).argmax(-1)

    def step(self, ctx_bucket):
        """One decode step of every sequence at position self.pos, attending to ctx_bucket cache slots (masked
        beyond pos); writes the next tokens into self.tok and advances self.pos."""
        B, H, KV, D = self.B, self.H, self.KV, self.D
        x = self.embed[self.tok]
        cos, sin = self.cos.index_select(0, self.pos), self.sin.index_select(0, self.pos)
        mask = (self.positions[:ctx_bucket] <= self.pos).view(1, 1, 1, ctx_bucket)
        for l, p in enumerate(self.layers):
            qkv = self.linear(self.norm(x, p["n1"]), p["wqkv"])
            q = self.rope(qkv[:, :H * D].view(B, KV, H // KV, D), cos, sin)
            k = self.rope(qkv[:, H * D:(H + KV) * D].view(B, KV, 1, D), cos, sin)
            v = qkv[:, (H + KV) * D:].view(B, KV, 1, D)
            self.kc[l].index_copy_(2, self.pos, k)
            self.vc[l].index_copy_(2, self.pos, v)
            a = self.decode_attention(q, self.kc[l][:, :, :ctx_bucket], self.vc[l][:, :, :ctx_bucket], mask)
            x = x + self.linear(a.reshape(B, H * D), p["wo"])
            x = self.mlp(x, p)
        self.tok.copy_((self.norm(x, self.nf) @ self.head.t()).argmax(-1))
        self.pos.add_(1)

    def decode_attention(self, q, k, v, mask):
        if self.attention == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        s = torch.matmul(q, k.transpose(-1, -2)).float() * (q.shape[-1] ** -0.5)
        s = s.masked_fill(~mask, float("-inf"))
        return torch.matmul(torch.softmax(s, -1).to(BF16), v)

    def graph(self, ctx):
        bucket = min(self.max_len, int(math.ceil(ctx / 128.0)) * 128)
        if bucket not in self.graphs:
            try:
                self.graphs[bucket] = capture(lambda: self.step(bucket))
            except Exception as e:  # SDPA refused the masked, strided cache slice: plain matmul-softmax-matmul
                if self.attention != "sdpa":
                    raise
                log(f"decode SDPA failed ({e!r}); using matmul attention")
                self.attention = "matmul"
                free()
                self.graphs[bucket] = capture(lambda: self.step(bucket))
        return self.graphs[bucket]


def closed_loop(cfg, clients, isl, osl, rounds, gpu, table, dtype="bf16", prefill_tokens=8192):
    """`clients` clients with fixed prompt and output lengths, each sending its next request when the last ends:
    every round all clients' prompts are prefilled in chunks of <= prefill_tokens tokens, then decoded together."""
    max_len = int(math.ceil((isl + osl) / 128.0)) * 128
    m = Llama(cfg, clients, max_len, dtype)
    for ctx in range(isl + 1, isl + osl, 128):  # capture every bucket before timing
        m.graph(ctx)
    m.graph(isl + osl - 1)
    per_chunk = max(1, prefill_tokens // isl)
    for r in range(rounds + 1):
        prompts = torch.randint(0, m.V, (clients, isl), device="cuda")
        first = torch.empty(clients, device="cuda", dtype=torch.long)
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        torch.cuda.synchronize()
        w0, e0 = time.time(), gpu.energy_j()
        ev[0].record()
        for b0 in range(0, clients, per_chunk):
            first[b0:b0 + per_chunk] = m.prefill(prompts[b0:b0 + per_chunk], b0)
        ev[1].record()
        m.tok.copy_(first)
        m.pos.fill_(isl)
        for j in range(osl - 1):
            m.graph(isl + j + 1).replay()
        ev[2].record()
        ev[2].synchronize()
        e1, w1 = gpu.energy_j(), time.time()
        prefill_s, decode_s = ev[0].elapsed_time(ev[1]) / 1e3, ev[1].elapsed_time(ev[2]) / 1e3
        row = dict(dtype=dtype, clients=clients, isl=isl, osl=osl, round=r, warmup=int(r == 0), prefill_s=prefill_s,
                   decode_s=decode_s, total_s=prefill_s + decode_s, itl_s=decode_s / (osl - 1),
                   energy_j=e1 - e0, window_s=w1 - w0, avg_power_w=(e1 - e0) / (w1 - w0),
                   output_tokens=clients * osl, j_per_output_token=(e1 - e0) / (clients * osl),
                   prefill_chunk_tokens=per_chunk * isl, decode_attention=m.attention)
        row.update(gpu.window(w0, w1))
        table.write(row)
        log(f"closed loop {dtype} {clients} clients round {r}: prefill {prefill_s:.3f} s, ITL {row['itl_s']*1e3:.2f} ms, "
            f"{row['j_per_output_token']:.3f} J/token, {row['avg_power_w']:.0f} W")
    del m
    free()


# --- the run ----------------------------------------------------------------------------------------------------

def environment(out_dir, gpu, idle_s):
    env = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "torch": torch.__version__,
           "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
           "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
           "memory_bytes": torch.cuda.get_device_properties(0).total_memory}
    try:
        env["cudnn"] = torch.backends.cudnn.version()
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit,power.default_limit,"
                            "clocks.max.sm,clocks.max.mem,pstate", "--format=csv"],
                           capture_output=True, text=True, timeout=20)
        env["nvidia_smi"] = q.stdout.strip()
    except Exception as e:
        env["nvidia_smi_error"] = str(e)
    torch.cuda.synchronize()
    time.sleep(1.0)
    w0, e0 = time.time(), gpu.energy_j()
    time.sleep(idle_s)
    e1, w1 = gpu.energy_j(), time.time()
    env["idle_power_w"] = (e1 - e0) / (w1 - w0)
    env["idle_window"] = gpu.window(w0, w1)
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=330.0, help="stop starting new cases after this long")
    ap.add_argument("--min-s", type=float, default=0.8, help="timed window per microbenchmark case")
    ap.add_argument("--model", default="data/models/meta-llama-Llama-3.1-8B.json")
    ap.add_argument("--loops", default="bf16:1,bf16:16,bf16:64",
                    help="closed-loop runs, DTYPE:CLIENTS each (DTYPE bf16, or fp8 linear layers)")
    ap.add_argument("--parts", default="gemm,attention,loop,fp8",
                    help="what runs: gemm, attention, loop (closed loop), fp8 (the fp8 microbenchmarks)")
    ap.add_argument("--isl", type=int, default=1024)
    ap.add_argument("--osl", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t_start = time.time()
    torch.manual_seed(0)
    gpu = Gpu(os.path.join(args.out, "samples.csv"))
    env = environment(args.out, gpu, idle_s=3.0)
    log(f"{env['device']}, torch {env['torch']}, idle {env['idle_power_w']:.1f} W")
    with open(os.path.join(args.out, "env.json"), "w") as f:
        json.dump(env, f, indent=1)

    # Warm the GPU to its working temperature and clocks on a large bf16 GEMM before timing anything.
    warm = gemm_case(8192, 8192, 8192, "bf16", gpu, 4.0)
    env["warm_gemm_tflops"] = warm["tflops"]
    log(f"warm-up 8192^3 bf16: {warm['tflops']:.0f} TFLOP/s, {warm['avg_power_w']:.0f} W")

    def over():
        return time.time() - t_start > args.budget_s

    gemm_cols = ["dtype", "name", "m", "n", "k", "time_s", "energy_j", "avg_power_w", "power_sampled_w", "sm_mhz",
                 "temp_c", "tflops", "gbps", "flops", "bytes", "operand_copies", "reps_per_graph", "ops_timed",
                 "window_s", "error"]
    att_cols = ["phase", "batch", "context", "kv_dtype", "path", "backend", "time_s", "energy_j", "avg_power_w",
                "power_sampled_w", "sm_mhz", "temp_c", "gbps", "tflops", "kv_bytes", "flops", "operand_copies",
                "reps_per_graph", "ops_timed", "window_s", "error"]
    e2e_cols = ["dtype", "clients", "isl", "osl", "round", "warmup", "prefill_s", "decode_s", "total_s", "itl_s", "energy_j",
                "avg_power_w", "power_sampled_w", "sm_mhz", "temp_c", "output_tokens", "j_per_output_token",
                "prefill_chunk_tokens", "decode_attention", "window_s", "error"]
    gemm_t = Table(os.path.join(args.out, "gemm.csv"), gemm_cols)
    att_t = Table(os.path.join(args.out, "attention.csv"), att_cols)
    e2e_t = Table(os.path.join(args.out, "closed_loop.csv"), e2e_cols)
    cfg = json.load(open(args.model))

    def run_gemms(dtype):
        for m, n, k, dt, name in gemm_cases([dtype]):
            if over():
                log("budget spent: GEMM cases left out")
                return
            try:
                row = gemm_case(m, n, k, dt, gpu, args.min_s)
                row["name"] = name
                log(f"gemm {dt} {name} m={m} n={n} k={k}: {row['time_s']*1e6:.1f} us, {row['tflops']:.0f} TFLOP/s, "
                    f"{row['gbps']:.0f} GB/s, {row['avg_power_w']:.0f} W")
            except Exception as e:
                row = dict(m=m, n=n, k=k, dtype=dt, name=name, error=repr(e)[:300])
                log(f"gemm {dt} m={m} n={n} k={k} failed: {e!r}")
                free()
            gemm_t.write(row)

    def run_decode_attention(kv_dtype):
        for b in [1, 8, 32, 128]:
            for ctx in [1024, 4096, 16384, 65536]:
                if b * ctx > 2 ** 21:
                    continue
                if over():
                    log("budget spent: attention cases left out")
                    return
                try:
                    row = decode_attention_case(b, ctx, kv_dtype, gpu, args.min_s)
                    log(f"decode attention {kv_dtype} b={b} ctx={ctx}: {row['time_s']*1e6:.1f} us, "
                        f"{row['gbps']:.0f} GB/s ({row['backend']}), {row['avg_power_w']:.0f} W")
                except Exception as e:
                    row = dict(phase="decode", batch=b, context=ctx, kv_dtype=kv_dtype, error=repr(e)[:300])
                    log(f"decode attention {kv_dtype} b={b} ctx={ctx} failed: {e!r}")
                    free()
                att_t.write(row)

    def run_closed_loop():
        for spec in args.loops.split(","):
            dtype, c = spec.split(":")[0], int(spec.split(":")[1])
            if over():
                log("budget spent: closed-loop runs left out")
                return
            try:
                closed_loop(cfg, c, args.isl, args.osl, args.rounds, gpu, e2e_t, dtype)
            except Exception as e:
                e2e_t.write(dict(dtype=dtype, clients=c, isl=args.isl, osl=args.osl, error=repr(e)[:300]))
                log(f"closed loop {dtype} {c} clients failed: {e!r}")
                free()

    def run_prefill_attention():
        for seq in [1024, 4096, 16384]:
            if over():
                return
            try:
                row = prefill_attention_case(seq, gpu, args.min_s)
                log(f"prefill attention s={seq}: {row['time_s']*1e6:.1f} us, {row['tflops']:.0f} TFLOP/s")
            except Exception as e:
                row = dict(phase="prefill", batch=1, context=seq, error=repr(e)[:300])
                log(f"prefill attention s={seq} failed: {e!r}")
                free()
            att_t.write(row)

    # Most telling first, so that a run cut short still answers the main questions.
    parts = set(args.parts.split(","))
    if "gemm" in parts:
        run_gemms("bf16")
    if "attention" in parts:
        run_decode_attention("bf16")
    if "loop" in parts:
        run_closed_loop()
    if "fp8" in parts:
        run_gemms("fp8")
        run_decode_attention("fp8")
    if "attention" in parts:
        run_prefill_attention()
    env["elapsed_s"] = time.time() - t_start
    env["max_memory_allocated_bytes"] = torch.cuda.max_memory_allocated()
    with open(os.path.join(args.out, "env.json"), "w") as f:
        json.dump(env, f, indent=1)
    gpu.close()
    log(f"done in {env['elapsed_s']:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
