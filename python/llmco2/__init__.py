"""llmco2: energy, latency and CO2 of LLM inference requests, before they run.

The same C++ core as the ``llmco2`` command line and its HTTP server (include/llmco2/api.h): every answer here equals
the CLI's ``--format json`` for the same request. Keywords are the CLI's flags (model, gpu, gpus, pp, batch, prompt,
gen, dtype, flash, engine, expert_parallel, power_cap, clock_mhz, spec, spec_tokens, spec_acceptance, scope, node,
region, ci, pue, lifetime, embodied_basis, embodied_kg, predictor) plus model_config (a config.json as a dict);
``help(llmco2.predict)`` lists each with its unit and default. Bad input raises llmco2.Error (a ValueError) with the
CLI's message. ``llmco2.serve_sim`` replays a request log through a deployment; the research commands (simulate,
graph, sample, import, calibrate, serve-validate, score-campaign, check-outputs) are in ``llmco2.research``.

    >>> import llmco2
    >>> r = llmco2.predict(model="llama-3.1-8b", gpu="h100-sxm", batch=1, prompt=1024, gen=128, region="FRA")
    >>> r["energy_j"]["total"], r["co2_g"]["total"]["total"]
"""

from __future__ import annotations

import inspect
import os as _os

# An installed package (pip install .) carries the bundled catalogs beside it; a build folder's package reads the
# repository's data/, compiled in. LLMCO2_DATA_DIR, where set, wins either way.
_DATA = _os.path.join(_os.path.dirname(__file__), "data")
if _os.path.isdir(_DATA) and not _os.environ.get("LLMCO2_DATA_DIR"):
    _os.environ["LLMCO2_DATA_DIR"] = _DATA

from ._core import Error, gpus, models, nodes, regions, request_keys, versions
from . import _core

__all__ = ["Error", "predict", "predict_many", "compare", "score_trace", "score_requests", "serve_sim", "models",
           "gpus", "nodes", "regions", "versions", "request_keys"]

# What each keyword means, with its unit; its default is the signature's (api::Request's, checked by the tests).
# None stands for api::Request's empty or absent value: the default the description names.
_MEANING = {
    "model": "bundled model id (llmco2.models()), Hugging Face repo id, a config.json path or a Hugging Face "
             "snapshot folder; with model_config, the name the answer gives the model",
    "model_config": "a config.json's content (a dict), used instead of the catalog",
    "gpu": "GPU id (llmco2.gpus()), alias (h100), nvidia-smi name or a GPU JSON path",
    "gpus": "number of GPUs, tensor parallel",
    "pp": "pipeline stages (vLLM --pipeline-parallel-size), each of `gpus` GPUs: pp x gpus GPUs in all",
    "batch": "sequences per batch",
    "prompt": "prompt tokens per sequence",
    "gen": "generated (output) tokens per sequence",
    "dtype": "precision: bf16, fp16, fp8, int8, ... or per tensor class (w8a16kv16, wfp8afp8kvfp8); None: the "
             "config's quantization_config, else its torch_dtype",
    "flash": "fused flash attention; False: eager attention kernels",
    "engine": "serving engine: vllm, vllm-eager, vllm-v0, sglang, trt-llm, tgi, llama.cpp, deepspeed, "
              "hf-transformers",
    "expert_parallel": "a mixture of experts over the GPUs with whole experts per GPU (vLLM's "
                       "--enable-expert-parallel)",
    "power_cap": "each GPU's power limit, W (nvidia-smi -pl), above its idle power; 0 = the TDP",
    "clock_mhz": "each GPU's locked SM clock, MHz (nvidia-smi -lgc), at most its maximum; 0 = not locked",
    "spec": "speculative decoding: eagle, eagle3, mtp, ngram (their measured acceptance) or draft:MODEL (a draft "
            "model by id, with spec_acceptance); None: off",
    "spec_tokens": "draft tokens per decode step; 0 = the method's default (eagle 3, eagle3 4, mtp 1, ngram 5)",
    "spec_acceptance": "per-token acceptance rate of the drafts, in (0, 1); None: the method's measured acceptance",
    "scope": "energy counted: \"node\" (the server node at the wall, the used GPUs' share) or \"gpu\" (the GPU "
             "boards, as NVML reads them)",
    "node": "server node id (llmco2.nodes()) or a node JSON path, for scope=\"node\"; None: the GPU type's node",
    "region": "grid region: a country code (USA, FRA), a cloud region (gcp:us-central1) or WORLD; None: WORLD "
              "unless ci is given",
    "ci": "grid carbon intensity, gCO2e/kWh; overrides the region's; None: the region's",
    "pue": "data-centre PUE: a number (at least 1) or gcp, aws, azure, industry-average, public-cloud-average, "
           "on-prem-average; None: the region's cloud provider, else 1.0",
    "lifetime": "GPU lifetime over which its embodied carbon is spread, years; None: 5 (LLMCarbon's)",
    "embodied_basis": "embodied carbon per GPU from \"llmcarbon\" (die area and memory); \"vendor\" (a GPU "
                      "file's product carbon footprint) once a GPU file carries one, which no bundled one does",
    "embodied_kg": "embodied carbon of one GPU, kgCO2e (your own figure); None: from embodied_basis",
    "predictor": "sim (the calibrated simulator), llmco2 (the GNN), nnlqp, deepen or llmcarbon",
    # compare's own keywords
    "gpu_types": "GPU types to compare; None: every bundled GPU type the embodied basis can price",
    "counts": "GPU counts to compare each type at (1 to 1024 each, at most 16)",
    "slo_ms": "latency objective, ms: marks the lowest-carbon setup that meets it; None: none",
    # score_trace's and score_requests' own keywords
    "grid": "ratio between neighbouring token counts of the shape table (1: every distinct shape exactly)",
    "bin_s": "timeline bin, s; 0: a minute, an hour for logs over 6 h",
    "keep_time_outliers": "keep requests whose timestamps lie far outside the log's span",
    "report_dir": "a folder to write the report into (plots, CSVs); None: none",
    "by_request_csv": "a CSV file to write one row per request into; None: none",
    # predict_many's own
    "frame": "a pandas DataFrame whose columns are named as predict's keywords, or a dict of columns",
    "threads": "threads predicting at once; 0: every core",
    # score_trace's and score_requests' positional arguments
    "path": "the request log: a CSV with ContextTokens and GeneratedTokens columns (Azure's format) and optional "
            "TIMESTAMP",
    "prompt_tokens": "prompt tokens of each request",
    "gen_tokens": "generated tokens of each request",
    "time_s": "arrival time of each request, seconds since 1970 (UTC); None: the log has no timestamps",
    "source": "the log's name in messages and reports",
    # serve_sim's own (api::ServeSimOptions; its CLI flags are --requests-out, --plot and --duration for
    # requests_csv, plot_dir and duration_s)
    "log": "the request log: Azure's TIMESTAMP,ContextTokens,GeneratedTokens CSV or a dataset CSV; None with "
           "num_prompts",
    "num_prompts": "instead of a log, vllm bench serve's random dataset: this many requests, all sent at time 0",
    "input_len": "with num_prompts: prompt tokens per request (--random-input-len)",
    "output_len": "with num_prompts: generated tokens per request (--random-output-len)",
    "range_ratio": "with num_prompts: lengths drawn uniformly within this ratio of input_len and output_len",
    "seed": "with range_ratio or request_rate: the draws' seed",
    "request_rate": "with num_prompts: requests per second, a Poisson process (vllm bench serve --request-rate); 0: "
                    "all at time 0",
    "disaggregate": "\"P:D\": disaggregated prefill and decode, P prefill replicas (gpu, gpus) and D decode replicas "
                    "(decode_gpu, decode_gpus), each request's KV cache moved between them; None: co-located",
    "decode_gpu": "with disaggregate: the decode pool's GPU; None: gpu",
    "decode_gpus": "with disaggregate: GPUs per decode replica, tensor parallel; 0: gpus",
    "kv_link_gbps": "with disaggregate: the link between the pools, Gb/s per GPU and direction; 0: the node catalog's",
    "concurrency": "a closed loop of this many clients, each sending its next request when its previous one ends "
                   "(vllm bench serve --max-concurrency); 0: open loop, the log's times",
    "replicas": "data-parallel replicas, each on `gpus` GPUs",
    "router": "how arrivals go to replicas: \"round-robin\", \"least-loaded\" or \"session\" (a conversation's "
              "turns to the replica holding its prefix)",
    "max_num_seqs": "running requests per replica; 0: vLLM's default for the GPU",
    "max_batched_tokens": "tokens per iteration; 0: vLLM serve's default for the GPU",
    "block_size": "tokens per KV-cache block",
    "gpu_memory_utilization": "share of GPU memory for weights and KV cache; 0: the engine's (vLLM 0.9)",
    "rate_scale": "arrivals this many times faster than logged",
    "duration_s": "seconds of the log replayed from its first arrival, s; 0: all",
    "slo_ttft_ms": "time-to-first-token objective for goodput, ms; 0: none",
    "slo_tpot_ms": "time-per-output-token objective for goodput, ms; 0: none",
    "ci_profile": "a CSV of timestamp,g_per_kwh (each value holds until the next) replacing the region's annual "
                  "mean; None: the region's",
    "attribute_idle": "give each idle gap's energy to the requests of the iteration that ends it",
    "progress": "progress lines on stderr while the call runs",
    "requests_csv": "a CSV to write one row per request into (atomically, at the end); None: none",
    "plot_dir": "a folder for timeline.png, latency-cdf.png and timeline.csv; None: none",
    "params": "the simulator's parameters (a params.json); None: data/sim/params.json",
    "site": "a site profile (site-NAME.json, written by llmco2 calibrate --site) correcting the simulator for your "
            "GPUs and engines; None: the global parameters",
}
# serve_sim's bin_s: the timeline's, not the trace report's.
_SERVE_SIM_MEANING = {"bin_s": "seconds per point of the timeline (with plot_dir), s",
                      "prefix_caching": "automatic prefix caching (vLLM v1's default); False: every prompt computed",
                      "prefix_share": "share of every prompt that is one prompt all requests share, for a log without "
                                      "SessionId/SharedPrefixTokens columns; 0: none",
                      "keep_time_outliers": "replay arrivals more than 30 days after the previous one"}


def _documented(function=None, *, meaning=None):
    """Appends a "Keywords" section to `function`'s docstring: every parameter with its default and its meaning,
    from `meaning` where it names the parameter, else from the package's table. As @_documented or
    @_documented(meaning={...})."""
    if function is None:
        return lambda f: _documented(f, meaning=meaning)
    table = {**_MEANING, **(meaning or {})}
    lines = ["", "Keywords (a None default stands for the CLI's default, which the text names):"]
    for name, p in inspect.signature(function).parameters.items():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            lines.append(f"  **{name}: any other keyword is refused with llmco2.Error naming it and the keys taken")
            continue
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            lines.append(f"  *{name}: {table[name]}")
            continue
        default = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
        lines.append(f"  {name}{default}: {table[name]}")
    function.__doc__ = inspect.cleandoc(function.__doc__ or "") + "\n" + "\n".join(lines) + "\n"
    return function


def _given(arguments, rest):
    """The keywords to hand to the core: None means the core's default, so it is left out."""
    request = {k: v for k, v in arguments.items() if v is not None}
    request.update(rest)
    return request


@_documented
def predict(*, model="llama-3.1-8b", model_config=None, gpu="h100-sxm", gpus=1, pp=1, batch=1, prompt=1024, gen=128,
            dtype=None, flash=True, engine="vllm", expert_parallel=False, power_cap=0.0, clock_mhz=0.0,
            spec=None, spec_tokens=0, spec_acceptance=None, scope="node",
            node=None, region=None, ci=None, pue=None, lifetime=None, embodied_basis="llmcarbon", embodied_kg=None,
            predictor="sim", site=None, **rest):
    """One request -> dict equal to ``llmco2 predict --format json``, plus "warnings" (the notes the CLI prints).

    The dict holds energy_j, energy_wh, latency_s and co2_g (operational, embodied, total), each split into prefill,
    decode and total; ttft_s, tpot_s, output_tokens_per_s, energy_per_1k_output_tokens_j; energy_scope and node;
    intervals (80%).
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    return _core.predict(**_given(arguments, rest))


@_documented
def predict_many(frame=None, threads=0, *, model=None, model_config=None, gpu=None, gpus=None, pp=None, batch=None,
                 prompt=None, gen=None, dtype=None, flash=None, engine=None, expert_parallel=None, power_cap=None,
                 clock_mhz=None, spec=None, spec_tokens=None,
                 spec_acceptance=None, scope=None, node=None, region=None, ci=None, pue=None, lifetime=None,
                 embodied_basis=None, embodied_kg=None, predictor=None, **rest):
    """Many requests -> dict of numpy arrays, one value per row: energy_j, energy_prefill_j, energy_decode_j (J),
    latency_s, ttft_s, tpot_s (s; NaN with one generated token), co2_operational_g, co2_embodied_g (NaN where the GPU
    has no embodied figure), co2_total_g (g).

    The rows come from a pandas DataFrame (its columns named as the keywords of predict), from a dict of columns, or
    from keyword columns; a scalar applies to every row, and a keyword given neither way takes predict's default
    (see help(llmco2.predict): the units are the same). The GIL is released while the core predicts. Each row is
    answered as predict would answer it; a bad row raises llmco2.Error naming it.
    """
    arguments = dict(locals())
    rest, frame, threads = arguments.pop("rest"), arguments.pop("frame"), arguments.pop("threads")
    table = {}
    if frame is not None:
        if hasattr(frame, "to_dict"):  # a pandas DataFrame
            table.update(frame.to_dict("list"))
        elif isinstance(frame, dict):
            table.update(frame)
        else:
            raise Error("predict_many: expected a pandas DataFrame or a dict of columns, got "
                        + type(frame).__name__)
    given = _given(arguments, rest)
    twice = sorted(set(table) & set(given))
    if twice:  # a keyword would replace the frame's column, and with it the frame's row count
        raise Error("predict_many: " + ", ".join(repr(k) for k in twice)
                    + " given both as a column of the frame and as a keyword; give each once")
    table.update(given)
    return _core.predict_many(table, threads)


@_documented
def compare(*, model="llama-3.1-8b", model_config=None, gpu="h100-sxm", gpus=1, pp=1, batch=1, prompt=1024, gen=128,
            dtype=None, flash=True, engine="vllm", expert_parallel=False, power_cap=0.0, clock_mhz=0.0,
            spec=None, spec_tokens=0, spec_acceptance=None, scope="node",
            node=None, region=None, ci=None, pue=None, lifetime=None, embodied_basis="llmcarbon", embodied_kg=None,
            predictor="sim", site=None, gpu_types=None, counts=(1, 2, 4, 8), slo_ms=None, **rest):
    """The request on every GPU type and count -> dict equal to ``llmco2 compare --format json``.

    Its "setups" hold one row per GPU type and count: gpu, gpus, dtype, notes, energy_scope, node, energy_j,
    latency_s, co2_g (operational, embodied, total), meets_slo, best; a setup the model does not fit has
    "unavailable" with the reason. gpu and gpus are the request's own setup (its data type and node defaults).
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    if arguments["counts"] is not None:
        arguments["counts"] = list(arguments["counts"])
    return _core.compare(**_given(arguments, rest))


@_documented
def score_trace(path, *, model="llama-3.1-8b", model_config=None, gpu="h100-sxm", gpus=1, pp=1, batch=1, dtype=None,
                flash=True, engine="vllm", expert_parallel=False, power_cap=0.0, clock_mhz=0.0,
                spec=None, spec_tokens=0, spec_acceptance=None, scope="node",
                node=None, region=None, ci=None, pue=None, lifetime=None, embodied_basis="llmcarbon", embodied_kg=None,
                predictor="sim", site=None, grid=1.1, bin_s=0.0, keep_time_outliers=False, report_dir=None,
                by_request_csv=None, **rest):
    """A request log file on one setup -> dict equal to ``llmco2 trace --format json``: totals of requests,
    prompt_tokens, gen_tokens, energy_j, gpu_busy_s and co2_g, and their distribution. Each request's prompt and
    generated tokens come from the log (no prompt or gen keyword); the other keywords are predict's.
    """
    arguments = dict(locals())
    rest, path = arguments.pop("rest"), arguments.pop("path")
    return _core.score_trace(path, **_given(arguments, rest))


@_documented
def score_requests(prompt_tokens, gen_tokens, time_s=None, source="columns", *, model="llama-3.1-8b",
                   model_config=None, gpu="h100-sxm", gpus=1, pp=1, batch=1, dtype=None, flash=True, engine="vllm",
                   expert_parallel=False, power_cap=0.0, clock_mhz=0.0,
                   spec=None, spec_tokens=0, spec_acceptance=None, scope="node", node=None, region=None, ci=None,
                   pue=None, lifetime=None, embodied_basis="llmcarbon", embodied_kg=None, predictor="sim", site=None,
                   grid=1.1, bin_s=0.0, keep_time_outliers=False, report_dir=None, by_request_csv=None, **rest):
    """A request log held in memory (columns of prompt and generated tokens, one entry per request) on one setup ->
    dict as score_trace answers it. Requests are scored one by one on a fixed token grid, so the totals of a log's
    partitions add up to the whole log's.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    columns = [arguments.pop(k) for k in ("prompt_tokens", "gen_tokens", "time_s", "source")]
    return _core.score_requests(*columns, **_given(arguments, rest))


@_documented(meaning=_SERVE_SIM_MEANING)
def serve_sim(log=None, *, model="llama-3.1-8b", model_config=None, gpu="h100-sxm", gpus=1, pp=1, batch=1, dtype=None,
              flash=True, engine="vllm", expert_parallel=False, power_cap=0.0, clock_mhz=0.0,
              spec=None, spec_tokens=0, spec_acceptance=None, scope="node", node=None,
              region=None, ci=None, pue=None, lifetime=None, embodied_basis="llmcarbon", embodied_kg=None, replicas=1,
              router="round-robin", max_num_seqs=0, max_batched_tokens=0, block_size=16, gpu_memory_utilization=0.0,
              rate_scale=1.0, duration_s=0.0, slo_ttft_ms=0.0, slo_tpot_ms=0.0, ci_profile=None, attribute_idle=False,
              keep_time_outliers=False, progress=False, requests_csv=None, plot_dir=None, bin_s=60.0, num_prompts=0,
              input_len=1024, output_len=128, range_ratio=0.0, seed=0, concurrency=0, prefix_caching=True,
              prefix_share=0.0, request_rate=0.0, disaggregate=None, decode_gpu=None, decode_gpus=0,
              kv_link_gbps=0.0, params=None, site=None, **rest):
    """A request log replayed through a deployment in virtual time (replicas of a continuous-batching engine, each
    on `gpus` GPUs of type `gpu`) -> dict equal to ``llmco2 serve-sim --format json``, plus "warnings" (plots that
    could not be drawn): requests (completed, rejected_too_long, preemptions), per_request (queue_s, ttft_s, tpot_s,
    e2e_s percentiles; mean energy_j), throughput, energy_j (busy, idle, total), co2_g, peaks, the deployment
    (with the engine's defaults filled in). Each request's tokens come from the log (no prompt or gen keyword); the
    serving simulation prices every step (no predictor keyword). Ctrl-C stops it at its next step.

    Instead of a log, num_prompts requests of input_len prompt and output_len generated tokens (``vllm bench serve``'s
    random dataset; range_ratio draws lengths within that ratio, seeded by seed; request_rate=R sends them as a
    Poisson process of R per second). concurrency=N replays a closed loop of N clients, each sending its next request
    when its previous one ends (``--max-concurrency N``); 0: open loop. disaggregate="P:D" serves prefill and decode
    on separate pools (``--disaggregate``), the KV cache of each request moved between them.
    """
    arguments = dict(locals())
    rest, log = arguments.pop("rest"), arguments.pop("log")
    return _core.serve_sim("" if log is None else _os.fspath(log), **_given(arguments, rest))


from . import research  # noqa: E402  (llmco2.research: the research calls, over _core.research)
