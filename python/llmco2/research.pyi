# python/llmco2/research.pyi - the types of llmco2.research (python/llmco2/research.py, over llmco2._core.research).
# Defaults are the options structs' of include/llmco2/research.h; None stands for an empty value (the CLI's default).
# tests/python/test_research.py checks that this file declares every public function with the parameters the
# module's own functions have.
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["kernel_graph", "simulate", "sample", "label_plan", "measurement_sources", "import_source", "calibrate",
           "fit_kernels", "score_campaign", "serve_validate", "check_outputs"]

Json = dict[str, Any]
Path = str | os.PathLike[str]

def kernel_graph(*, model: str = "llama-3.1-8b", model_config: Mapping[str, Any] | None = None,
                 gpu: str = "h100-sxm", gpus: int = 1, pp: int = 1, batch: int = 1, prompt: int = 1024, gen: int = 128,
                 dtype: str | None = None, flash: bool = True, engine: str = "vllm", expert_parallel: bool = False,
                 power_cap: float = 0.0, clock_mhz: float = 0.0, format: str = "json", phase: str = "prefill",
                 **rest: Any) -> Json: ...

def simulate(*, model: str = "llama-3.1-8b", model_config: Mapping[str, Any] | None = None, gpu: str = "h100-sxm",
             gpus: int = 1, pp: int = 1, batch: int = 1, prompt: int = 1024, gen: int = 128, dtype: str | None = None,
             flash: bool = True, engine: str = "vllm", expert_parallel: bool = False, power_cap: float = 0.0,
             clock_mhz: float = 0.0, params: Path | None = None, **rest: Any) -> Json: ...

def sample(out: Path, *, count: int = 1000, seed: int = 1, models: Sequence[str] | str = ("paper",),
           gpus: Sequence[str] | str = ("l4", "a100-80gb-sxm", "h100-sxm"), max_gpus: int = 4,
           batch_weights: Sequence[float] = (0.4, 0.3, 0.15, 0.15), int8_share: float = 0.0,
           **rest: Any) -> Json: ...

def label_plan(plan: Path, out: Path, *, repeats: int = 1, seed: int = 1, params: Path | None = None,
               progress: bool = False, **rest: Any) -> Json: ...

def measurement_sources() -> list[Json]: ...

def import_source(source: str, *, from_: Path = "../shared/data/measured", out_dir: Path | None = None,
                  **rest: Any) -> Json: ...

def calibrate(*, data: Path | None = None, params_out: Path | None = None, report: Path = "docs/calibration.md",
              rows_out: Path | None = None, max_evaluations: int = 2500, fit_only: bool = False, threads: int = 0,
              **rest: Any) -> Json: ...

def fit_kernels(*, vidur: Path | None = None, kernel_tables: Path | None = None, kernels_out: Path | None = None,
                kernels_report: Path = "docs/kernel-fit.md", data: Path | None = None, **rest: Any) -> Json: ...

def score_campaign(*dirs: Path, model: str = "llama-3.1-8b",
                   engines: Sequence[str] | str = ("vllm", "trt-llm", "sglang"), params: Path | None = None,
                   report: Path | None = None, **rest: Any) -> Json: ...

def serve_validate(*, data: Path | None = None, source: str = "mlenergy-v3", params: Path | None = None,
                   held_out: str = "source", rows_out: Path | None = None, markdown_out: Path | None = None,
                   progress: bool = False, **rest: Any) -> Json: ...

def check_outputs(manifest: Path) -> list[str]: ...
