# python/llmco2/__init__.pyi - the types of the llmco2 package (python/llmco2/__init__.py, over the extension
# llmco2._core). Defaults are api::Request's (include/llmco2/api.h); None stands for its empty or absent value.
# Units: power_cap W (0: the TDP), clock_mhz MHz (0: not locked), ci gCO2e/kWh, lifetime years,
# embodied_kg kgCO2e per GPU, slo_ms ms, bin_s s (serve_sim: slo_ttft_ms and slo_tpot_ms ms, duration_s s);
# prompt and gen are tokens per sequence. tests/python/test_bindings.py checks that this file declares every public
# function with the parameters the package's own functions have.
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from . import research as research

__all__ = ["Error", "predict", "predict_many", "compare", "score_trace", "score_requests", "serve_sim", "models",
           "gpus", "nodes", "regions", "versions", "request_keys"]

Json = dict[str, Any]
# A column of predict_many: one value for every row, or one value per row.
Column = Any

class Error(ValueError):
    """Bad input: the message is the one the CLI prints after 'llmco2: error: '."""

def predict(*, model: str = "llama-3.1-8b", model_config: Mapping[str, Any] | None = None, gpu: str = "h100-sxm",
            gpus: int = 1, pp: int = 1, batch: int = 1, prompt: int = 1024, gen: int = 128, dtype: str | None = None,
            flash: bool = True, engine: str = "vllm", expert_parallel: bool = False, power_cap: float = 0.0,
            clock_mhz: float = 0.0,
            spec: str | None = None, spec_tokens: int = 0, spec_acceptance: float | None = None,
            scope: str = "node", node: str | None = None, region: str | None = None, ci: float | None = None,
            pue: float | str | None = None, lifetime: float | None = None, embodied_basis: str = "llmcarbon",
            embodied_kg: float | None = None, predictor: str = "sim",
            site: str | os.PathLike[str] | None = None, **rest: Any) -> Json: ...

def predict_many(frame: Any = None, threads: int = 0, *, model: Column = None, model_config: Column = None,
                 gpu: Column = None, gpus: Column = None, pp: Column = None,
                 batch: Column = None, prompt: Column = None,
                 gen: Column = None, dtype: Column = None, flash: Column = None, engine: Column = None,
                 expert_parallel: Column = None, power_cap: Column = None, clock_mhz: Column = None,
                 spec: Column = None, spec_tokens: Column = None, spec_acceptance: Column = None,
                 scope: Column = None, node: Column = None,
                 region: Column = None, ci: Column = None, pue: Column = None, lifetime: Column = None,
                 embodied_basis: Column = None, embodied_kg: Column = None, predictor: Column = None,
                 **rest: Column) -> dict[str, npt.NDArray[np.float64]]: ...

def compare(*, model: str = "llama-3.1-8b", model_config: Mapping[str, Any] | None = None, gpu: str = "h100-sxm",
            gpus: int = 1, pp: int = 1, batch: int = 1, prompt: int = 1024, gen: int = 128, dtype: str | None = None,
            flash: bool = True, engine: str = "vllm", expert_parallel: bool = False, power_cap: float = 0.0,
            clock_mhz: float = 0.0,
            spec: str | None = None, spec_tokens: int = 0, spec_acceptance: float | None = None,
            scope: str = "node", node: str | None = None, region: str | None = None, ci: float | None = None,
            pue: float | str | None = None, lifetime: float | None = None, embodied_basis: str = "llmcarbon",
            embodied_kg: float | None = None, predictor: str = "sim",
            site: str | os.PathLike[str] | None = None, gpu_types: Sequence[str] | None = None,
            counts: Sequence[int] = (1, 2, 4, 8), slo_ms: float | None = None, **rest: Any) -> Json: ...

def score_trace(path: str, *, model: str = "llama-3.1-8b", model_config: Mapping[str, Any] | None = None,
                gpu: str = "h100-sxm", gpus: int = 1, pp: int = 1,
                batch: int = 1, dtype: str | None = None, flash: bool = True,
                engine: str = "vllm", expert_parallel: bool = False, power_cap: float = 0.0, clock_mhz: float = 0.0,
                spec: str | None = None, spec_tokens: int = 0, spec_acceptance: float | None = None,
                scope: str = "node", node: str | None = None, region: str | None = None, ci: float | None = None,
                pue: float | str | None = None, lifetime: float | None = None, embodied_basis: str = "llmcarbon",
                embodied_kg: float | None = None, predictor: str = "sim",
                site: str | os.PathLike[str] | None = None, grid: float = 1.1, bin_s: float = 0.0,
                keep_time_outliers: bool = False, report_dir: str | None = None, by_request_csv: str | None = None,
                **rest: Any) -> Json: ...

def score_requests(prompt_tokens: Sequence[int], gen_tokens: Sequence[int], time_s: Sequence[float] | None = None,
                   source: str = "columns", *, model: str = "llama-3.1-8b",
                   model_config: Mapping[str, Any] | None = None, gpu: str = "h100-sxm", gpus: int = 1, pp: int = 1,
                   batch: int = 1, dtype: str | None = None, flash: bool = True, engine: str = "vllm",
                   expert_parallel: bool = False, power_cap: float = 0.0, clock_mhz: float = 0.0,
                   spec: str | None = None, spec_tokens: int = 0, spec_acceptance: float | None = None,
                   scope: str = "node", node: str | None = None, region: str | None = None, ci: float | None = None,
                   pue: float | str | None = None, lifetime: float | None = None, embodied_basis: str = "llmcarbon",
                   embodied_kg: float | None = None, predictor: str = "sim",
                   site: str | os.PathLike[str] | None = None, grid: float = 1.1, bin_s: float = 0.0,
                   keep_time_outliers: bool = False, report_dir: str | None = None,
                   by_request_csv: str | None = None, **rest: Any) -> Json: ...

def serve_sim(log: str | os.PathLike[str] | None = None, *, model: str = "llama-3.1-8b",
              model_config: Mapping[str, Any] | None = None, gpu: str = "h100-sxm", gpus: int = 1, pp: int = 1,
              batch: int = 1,
              dtype: str | None = None, flash: bool = True, engine: str = "vllm", expert_parallel: bool = False,
              power_cap: float = 0.0, clock_mhz: float = 0.0, spec: str | None = None, spec_tokens: int = 0,
              spec_acceptance: float | None = None, scope: str = "node", node: str | None = None,
              region: str | None = None, ci: float | None = None, pue: float | str | None = None,
              lifetime: float | None = None, embodied_basis: str = "llmcarbon", embodied_kg: float | None = None,
              replicas: int = 1, router: str = "round-robin", max_num_seqs: int = 0, max_batched_tokens: int = 0,
              block_size: int = 16, gpu_memory_utilization: float = 0.0, rate_scale: float = 1.0,
              duration_s: float = 0.0, slo_ttft_ms: float = 0.0, slo_tpot_ms: float = 0.0,
              ci_profile: str | os.PathLike[str] | None = None, attribute_idle: bool = False,
              keep_time_outliers: bool = False, progress: bool = False,
              requests_csv: str | os.PathLike[str] | None = None, plot_dir: str | os.PathLike[str] | None = None,
              bin_s: float = 60.0, num_prompts: int = 0, input_len: int = 1024, output_len: int = 128,
              range_ratio: float = 0.0, seed: int = 0, concurrency: int = 0, prefix_caching: bool = True,
              prefix_share: float = 0.0, request_rate: float = 0.0, disaggregate: str | None = None,
              decode_gpu: str | None = None, decode_gpus: int = 0, kv_link_gbps: float = 0.0,
              params: str | os.PathLike[str] | None = None,
              site: str | os.PathLike[str] | None = None, **rest: Any) -> Json: ...

def models() -> list[Json]: ...
def gpus() -> list[Json]: ...
def nodes() -> list[Json]: ...
def regions() -> Json: ...
def versions() -> Json: ...
def request_keys() -> list[str]: ...
