"""Distributed scoring (docs/scaling.md): a request log partitioned with Dask, each partition scored by the bindings in
worker processes of a local cluster, the totals reduced; they equal `llmco2 trace` on the whole log."""
import csv

import dask.dataframe as dd
import pandas as pd
import pytest
from dask.distributed import Client, LocalCluster

from conftest import cli

SETUP = dict(model="llama-3.1-8b", gpu="h100-sxm", region="FRA")
TOTALS = ["requests", "prompt_tokens", "gen_tokens", "energy_j", "gpu_busy_s", "co2_g"]


def score_partition(part: pd.DataFrame) -> pd.DataFrame:
    """One partition's totals, as a one-row frame (runs in a worker process)."""
    import llmco2
    s = llmco2.score_requests(part["ContextTokens"].tolist(), part["GeneratedTokens"].tolist(), **SETUP)
    return pd.DataFrame([{"requests": s["requests"], "prompt_tokens": s["prompt_tokens"],
                          "gen_tokens": s["gen_tokens"], "energy_j": s["energy_j"]["total"], "gpu_busy_s": s["gpu_busy_s"],
                          "co2_g": s["co2_g"]["total"]["total"]}])


def test_dask_totals_equal_the_cli_trace(tmp_path, azure_conv):
    expected = cli("trace", azure_conv, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--region", "FRA", "--quiet",
                   "--out", str(tmp_path / "report"), "--format", "json")
    with open(azure_conv) as f:
        rows = sum(1 for _ in csv.DictReader(f))
    assert expected["requests"] == rows and expected["skipped_lines"] == 0  # the whole conversation trace
    # Worker processes import llmco2 from the same build: they inherit this process's environment.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        log = dd.read_csv(azure_conv, blocksize=200_000, usecols=["ContextTokens", "GeneratedTokens"])
        assert log.npartitions >= 3
        meta = pd.DataFrame({k: pd.Series(dtype="float64") for k in TOTALS})
        totals = log.map_partitions(score_partition, meta=meta).sum().compute()
        assert len(client.scheduler_info()["workers"]) == 2
    assert totals["requests"] == expected["requests"]
    assert totals["prompt_tokens"] == expected["prompt_tokens"]
    assert totals["gen_tokens"] == expected["gen_tokens"]
    assert totals["energy_j"] == pytest.approx(expected["energy_j"]["total"], rel=1e-9)
    assert totals["gpu_busy_s"] == pytest.approx(expected["gpu_busy_s"], rel=1e-9)
    assert totals["co2_g"] == pytest.approx(expected["co2_g"]["total"]["total"], rel=1e-9)
