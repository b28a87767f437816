"""llmco2: energy, latency and CO2 of LLM inference requests, before they run.

The same C++ core as the ``llmco2`` command line and its HTTP server (include/llmco2/api.h): every answer here equals
the CLI's ``--format json`` for the same request. Keywords are the CLI's flags (model, gpu, gpus, batch, prompt, gen,
dtype, flash, engine, expert_parallel, power_cap, scope, node, region, ci, pue, lifetime, embodied_basis,
embodied_kg, predictor) plus
model_config (a config.json as a dict). Bad input raises llmco2.Error (a ValueError) with the CLI's message.

    >>> import llmco2
    >>> r = llmco2.predict(model="llama-3.1-8b", gpu="h100-sxm", batch=1, prompt=1024, gen=128, region="FRA")
    >>> r["energy_j"]["total"], r["co2_g"]["total"]["total"]
"""

from ._core import (Error, compare, gpus, models, nodes, regions, request_keys, score_requests, score_trace,
                    versions)
from ._core import predict as _predict
from ._core import predict_many as _predict_many

__all__ = ["Error", "predict", "predict_many", "compare", "score_trace", "score_requests", "models", "gpus", "nodes",
           "regions", "versions", "request_keys"]


def predict(**request):
    """One request -> dict equal to ``llmco2 predict --format json`` (plus "warnings")."""
    return _predict(**request)


def predict_many(frame=None, threads=0, **columns):
    """Many requests -> dict of numpy arrays (energy_j, energy_prefill_j, energy_decode_j, latency_s, ttft_s, tpot_s,
    co2_operational_g, co2_embodied_g, co2_total_g), one value per row.

    The rows come from a pandas DataFrame (its columns named as the keywords of predict), from a dict of columns, or
    from keyword columns; a scalar applies to every row. ``threads``: 0 uses every core. The GIL is released while the
    core predicts. Each row is answered as predict would answer it.
    """
    table = {}
    if frame is not None:
        if hasattr(frame, "to_dict"):  # a pandas DataFrame
            table.update(frame.to_dict("list"))
        elif isinstance(frame, dict):
            table.update(frame)
        else:
            raise Error("predict_many: expected a pandas DataFrame or a dict of columns, got "
                        + type(frame).__name__)
    table.update(columns)
    return _predict_many(table, threads)
