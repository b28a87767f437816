"""The Python bindings answer as the CLI does: the same JSON, the same error messages, many rows as one by one."""
import csv
import glob
import os

import pandas as pd
import pytest

import llmco2
from conftest import SOURCE, cli

REQUEST = dict(model="llama-3.1-8b", gpu="h100-sxm", batch=4, prompt=512, gen=256, region="FRA")
FLAGS = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "4", "--prompt", "512", "--gen", "256",
         "--region", "FRA"]


def test_predict_equals_the_cli():
    answer = llmco2.predict(**REQUEST)
    assert answer.pop("warnings") == []
    assert answer == cli("predict", *FLAGS, "--format", "json")


def test_every_request_key_is_accepted_as_a_keyword():
    keys = llmco2.request_keys()
    assert keys[:7] == ["model", "model_config", "gpu", "gpus", "batch", "prompt", "gen"]
    answer = llmco2.predict(model="qwen2-0.5b", gpu="a100-80gb-sxm", gpus=1, batch=2, prompt=128, gen=16, dtype="bf16",
                            flash=True, engine="vllm", power_cap=300, scope="gpu", region="USA", ci=400, pue=1.2,
                            lifetime=4, embodied_basis="llmcarbon", predictor="llmco2")
    # Operational CO2 is energy x PUE x intensity: 1 kWh = 3.6e6 J.
    energy_j = answer["energy_j"]["total"]
    assert answer["co2_g"]["operational"]["total"] == pytest.approx(energy_j / 3.6e6 * 1.2 * 400, rel=1e-12)


def test_errors_carry_the_cli_message():
    with pytest.raises(llmco2.Error) as e:
        llmco2.predict(model="llama-3.1-8b", gpu="h100-sxn")
    assert str(e.value) == cli("predict", "--model", "llama-3.1-8b", "--gpu", "h100-sxn", expect_error=True)
    assert isinstance(e.value, ValueError)
    with pytest.raises(llmco2.Error, match="unknown key 'bacth'"):
        llmco2.predict(bacth=4)
    with pytest.raises(llmco2.Error, match="key 'batch': expected an integer"):
        llmco2.predict(batch="four")
    with pytest.raises(llmco2.Error, match="key 'batch': an integer beyond 64 bits"):
        llmco2.predict(batch=2**70)
    with pytest.raises(llmco2.Error, match="key 'counts': expected GPU counts between 1 and 1024, got 18446744073709551615"):
        llmco2.compare(counts=[2**64 - 1])


def test_a_posted_config_answers_as_the_bundled_model():
    import json
    with open(os.path.join(SOURCE, "data", "models", "meta-llama-Llama-3.1-8B.json")) as f:
        config = json.load(f)
    posted = llmco2.predict(**{**REQUEST, "model": "mine", "model_config": config})
    bundled = llmco2.predict(**REQUEST)
    assert posted["model"] == "mine"
    assert posted["energy_j"] == bundled["energy_j"] and posted["latency_s"] == bundled["latency_s"]


def test_predict_many_over_a_dataframe_equals_predict_row_by_row():
    frame = pd.DataFrame({"model": ["llama-3.1-8b", "qwen2-0.5b", "llama-3.1-8b"], "batch": [1, 8, 4],
                          "prompt": [1024, 128, 512], "gen": [128, 64, 256]})
    arrays = llmco2.predict_many(frame, gpu="h100-sxm", region="FRA", threads=2)
    assert len(arrays["energy_j"]) == 3
    for i, row in enumerate(frame.to_dict("records")):
        one = llmco2.predict(**row, gpu="h100-sxm", region="FRA")
        assert arrays["energy_j"][i] == one["energy_j"]["total"]
        assert arrays["latency_s"][i] == one["latency_s"]["total"]
        assert arrays["ttft_s"][i] == one["ttft_s"]
        assert arrays["co2_total_g"][i] == one["co2_g"]["total"]["total"]
    with pytest.raises(llmco2.Error, match="has 2 values, the others 3"):
        llmco2.predict_many({"batch": [1, 2, 3], "prompt": [1, 2]})
    with pytest.raises(llmco2.Error, match=r"^requests\[1\]: unknown GPU 'nope'"):
        llmco2.predict_many({"gpu": ["h100-sxm", "nope"]})


def test_compare_equals_the_cli(tmp_path):
    answer = llmco2.compare(**REQUEST, gpu_types=["h100-sxm", "a100-80gb-sxm"], counts=[1, 2], slo_ms=5000)
    expected = cli("compare", *FLAGS, "--gpu-types", "h100-sxm,a100-80gb-sxm", "--counts", "1,2", "--slo-ms", "5000",
                   "--plot", str(tmp_path / "plots"), "--format", "json")
    assert answer["setups"] == expected["setups"]
    assert [s["gpu"] for s in answer["setups"]] == ["h100-sxm", "h100-sxm", "a100-80gb-sxm", "a100-80gb-sxm"]


def test_score_trace_and_score_requests_equal_the_cli(tmp_path, azure_conv):
    log = tmp_path / "log.csv"
    with open(azure_conv) as src, open(log, "w") as dst:
        for i, line in enumerate(src):
            if i > 500:
                break
            dst.write(line)
    expected = cli("trace", str(log), "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--region", "FRA", "--quiet",
                   "--out", str(tmp_path / "report"), "--format", "json")
    answer = llmco2.score_trace(str(log), model="llama-3.1-8b", gpu="h100-sxm", region="FRA")
    assert answer == expected
    with open(log) as f:
        rows = list(csv.DictReader(f))
    columns = llmco2.score_requests([int(r["ContextTokens"]) for r in rows], [int(r["GeneratedTokens"]) for r in rows],
                                    model="llama-3.1-8b", gpu="h100-sxm", region="FRA")
    assert columns["requests"] == expected["requests"] == 500
    assert columns["energy_j"] == pytest.approx(expected["energy_j"], rel=1e-12)
    assert columns["co2_g"]["total"] == pytest.approx(expected["co2_g"]["total"], rel=1e-12)


def test_catalogs_list_the_bundled_files():
    with open(os.path.join(SOURCE, "data", "models", "index.csv")) as f:
        model_rows = [line for line in f if line.strip() and not line.startswith(("#", "id,"))]
    assert len(llmco2.models()) == len(model_rows)
    gpu_files = glob.glob(os.path.join(SOURCE, "data", "gpus", "*.json"))
    assert sorted(g["id"] for g in llmco2.gpus()) == sorted(os.path.basename(p)[:-5] for p in gpu_files)
    regions = llmco2.regions()
    fra = next(r for r in regions["regions"] if r["id"] == "FRA")
    assert 0 < fra["ci_g_per_kwh"] < 200  # France's grid is mostly nuclear and hydro
    assert set(llmco2.versions()) >= {"llmco2", "data", "predictors"}
