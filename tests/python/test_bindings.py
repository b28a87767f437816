"""The Python bindings answer as the CLI does: the same JSON, the same error messages, many rows as one by one."""
import csv
import glob
import os

import pandas as pd
import pytest

import llmco2
from conftest import SOURCE, check_defaults, check_stubs, cli

REQUEST = dict(model="llama-3.1-8b", gpu="h100-sxm", batch=4, prompt=512, gen=256, region="FRA")
FLAGS = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "4", "--prompt", "512", "--gen", "256",
         "--region", "FRA"]


def test_predict_equals_the_cli():
    answer = llmco2.predict(**REQUEST)
    assert answer.pop("warnings") == []
    assert answer == cli("predict", *FLAGS, "--format", "json")


def test_every_request_key_is_accepted_as_a_keyword():
    keys = llmco2.request_keys()
    assert keys[:8] == ["model", "model_config", "gpu", "gpus", "pp", "batch", "prompt", "gen"]
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
    # A trace option of the wrong type names its key (it was nlohmann's "type must be number, but is string").
    with pytest.raises(llmco2.Error, match="score_requests: key 'grid': expected a finite number, got \"x\""):
        llmco2.score_requests([512], [64], grid="x")


def test_a_posted_config_answers_as_the_bundled_model():
    import json
    with open(os.path.join(SOURCE, "data", "models", "meta-llama-Llama-3.1-8B.json")) as f:
        config = json.load(f)
    posted = llmco2.predict(**{**REQUEST, "model": "mine", "model_config": config})
    bundled = llmco2.predict(**REQUEST)
    assert posted["model"] == "mine"
    assert posted["energy_j"] == bundled["energy_j"] and posted["latency_s"] == bundled["latency_s"]


def test_a_site_profile_answers_as_the_cli_and_a_bad_one_is_an_error(tmp_path):
    import json
    site = tmp_path / "site-x.json"
    # The H100's matrix kernels at 0.8 of the global efficiencies: a prefill-heavy request runs longer.
    site.write_text(json.dumps({"site": "x", "corrections": [
        {"target": "h100-sxm", "parameter": "compute_scale", "value": 0.8}]}))
    request = dict(REQUEST, prompt=4096, gen=8)
    flags = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "4", "--prompt", "4096", "--gen", "8",
             "--region", "FRA"]
    answer = llmco2.predict(**request, site=str(site))
    answer.pop("warnings")
    assert answer == cli("predict", *flags, "--site", str(site), "--format", "json")
    assert answer["latency_s"]["prefill"] > 1.1 * llmco2.predict(**request)["latency_s"]["prefill"]
    bad = tmp_path / "site-bad.json"
    bad.write_text(json.dumps({"site": "x", "corrections": [
        {"target": "h100-sxm", "parameter": "compute_scale", "value": 2}]}))
    with pytest.raises(llmco2.Error, match="corrections\\[0\\]: value = 2 is outside \\[0.7, 1.3\\]"):
        llmco2.predict(**request, site=str(bad))


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


def test_compare_rows_equal_predict_on_every_kind_of_gpu():
    # One request, one answer through Python: compare's row is predict's answer for that GPU type and count.
    for gpu, gpus in [("h100-sxm", 1), ("v100-sxm2-32gb", 1), ("t4", 2), ("gaudi3", 1), ("mi300x", 1)]:
        request = {**REQUEST, "gpu": gpu, "gpus": gpus}
        predicted = llmco2.predict(**request)
        row = llmco2.compare(**request, gpu_types=[gpu], counts=[gpus])["setups"][0]
        for key in ("energy_j", "latency_s", "co2_g", "dtype", "energy_scope", "node"):
            assert row[key] == predicted[key], (gpu, key)


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
    assert columns["energy_j"]["total"] == pytest.approx(expected["energy_j"]["total"], rel=1e-12)
    assert columns["co2_g"]["total"]["total"] == pytest.approx(expected["co2_g"]["total"]["total"], rel=1e-12)


def write_log(path, rows):
    """The first `rows` requests of the bundled Azure conversation log, in its format."""
    with open(os.path.join(SOURCE, "data", "azure", "AzureLLMInferenceTrace_conv.csv")) as src, open(path, "w") as dst:
        for i, line in enumerate(src):
            if i > rows:
                break
            dst.write(line)
    return path


def test_serve_sim_equals_the_cli(tmp_path):
    log = write_log(tmp_path / "log.csv", 20)
    expected = cli("serve-sim", log, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--region", "FRA",
                   "--replicas", "2", "--router", "least-loaded", "--max-num-seqs", "8", "--slo-ttft-ms", "500",
                   "--requests-out", tmp_path / "cli.csv", "--quiet", "--format", "json")
    answer = llmco2.serve_sim(log, model="llama-3.1-8b", gpu="h100-sxm", region="FRA", replicas=2,
                              router="least-loaded", max_num_seqs=8, slo_ttft_ms=500,
                              requests_csv=tmp_path / "py.csv")
    assert answer.pop("warnings") == []
    assert answer == expected
    # By hand: the log's 20 requests all complete, on the 2 replicas asked for, one CSV row each.
    assert answer["requests"]["completed"] == 20 and answer["deployment"]["replicas"] == 2
    assert (tmp_path / "py.csv").read_text() == (tmp_path / "cli.csv").read_text()
    assert len((tmp_path / "py.csv").read_text().splitlines()) == 1 + 20
    # The defaults, and a replay cut short: duration_s=5 keeps the requests that arrive in the log's first 5 s.
    assert llmco2.serve_sim(log)["energy_j"] == cli("serve-sim", log, "--quiet", "--format", "json")["energy_j"]
    shared = llmco2.serve_sim(log, prefix_share=0.5)["prefix_cache"]  # the prefix cache: the CLI's answer
    assert shared == cli("serve-sim", log, "--prefix-share", "0.5", "--quiet", "--format", "json")["prefix_cache"]
    assert llmco2.serve_sim(log, prefix_caching=False)["prefix_cache"]["hit_tokens"] == 0
    short = llmco2.serve_sim(str(log), duration_s=5)
    assert short == {**cli("serve-sim", log, "--duration", "5", "--quiet", "--format", "json"), "warnings": []}
    assert short["requests"]["completed"] < 20


def test_serve_sim_closed_loop_over_the_random_dataset_equals_the_cli():
    answer = llmco2.serve_sim(num_prompts=24, input_len=300, output_len=30, range_ratio=0.25, seed=3, concurrency=4)
    expected = cli("serve-sim", "--num-prompts", "24", "--random-input-len", "300", "--random-output-len", "30",
                   "--random-range-ratio", "0.25", "--seed", "3", "--max-concurrency", "4", "--quiet", "--format", "json")
    answer.pop("warnings")
    assert answer == expected
    assert answer["load"] == {"source": "random", "loop": "closed", "concurrency": 4, "num_prompts": 24,
                              "input_len": 300, "output_len": 30, "range_ratio": 0.25, "seed": 3,
                              "request_rate": 0.0}
    assert answer["requests"]["completed"] == 24
    assert answer["peaks"]["running"] <= 4
    with pytest.raises(llmco2.Error, match="a request log file, or --num-prompts"):
        llmco2.serve_sim()


def test_a_misspelt_option_keyword_gets_its_nearest_name():
    with pytest.raises(llmco2.Error, match=r"serve_sim: unknown key 'replica' \(did you mean replicas"):
        llmco2.serve_sim(num_prompts=2, replica=2)
    with pytest.raises(llmco2.Error, match=r"score_requests: unknown key 'gird' \(did you mean grid"):
        llmco2.score_requests([100], [10], gird=1.2)
    with pytest.raises(llmco2.Error, match=r"compare: unknown key 'count' \(did you mean counts"):
        llmco2.compare(count=[1, 2])
    with pytest.raises(llmco2.Error, match=r"predict: unknown key 'gpu_type' \(did you mean gpu"):
        llmco2.predict(gpu_type="h100")


def test_serve_sim_refuses_what_the_cli_has_no_flag_for():
    log = os.path.join(SOURCE, "data", "azure", "AzureLLMInferenceTrace_conv.csv")
    with pytest.raises(llmco2.Error, match="serve_sim: key 'prompt' is not taken: each request's tokens come from"):
        llmco2.serve_sim(log, prompt=512)
    with pytest.raises(llmco2.Error, match="serve_sim: key 'replicas': expected an integer, got \"two\""):
        llmco2.serve_sim(log, replicas="two")
    with pytest.raises(llmco2.Error, match="serve_sim: key 'rate_scale': expected a finite number, got true"):
        llmco2.serve_sim(log, rate_scale=True)
    with pytest.raises(llmco2.Error, match="serve_sim: unknown key 'replica'"):
        llmco2.serve_sim(log, replica=2)
    # The CLI's flag checks refuse it before the call; the call refuses it too, in the flag's words.
    with pytest.raises(llmco2.Error, match="--replicas must be 1 to 1024"):
        llmco2.serve_sim(log, replicas=0)


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


# The request keywords each public function takes: every request key, but a log's tokens come from the log.
KEYWORD_FUNCTIONS = {"predict": set(), "predict_many": set(), "compare": set(), "score_trace": {"prompt", "gen"},
                     "score_requests": {"prompt", "gen"}, "serve_sim": {"prompt", "gen", "predictor"}}
UNITS = {"power_cap": "W", "clock_mhz": "MHz", "ci": "gCO2e/kWh", "lifetime": "years", "embodied_kg": "kgCO2e", "prompt": "tokens",
         "gen": "tokens"}


def help_text(function):
    import pydoc
    return pydoc.render_doc(function, renderer=pydoc.plaintext)  # what help(function) prints


def test_help_names_every_keyword_with_its_unit_and_default():
    import inspect
    import re
    keys = llmco2.request_keys()
    defaults = llmco2._core._defaults()
    assert set(defaults["request"]) == set(keys)
    for name, not_taken in KEYWORD_FUNCTIONS.items():
        function = getattr(llmco2, name)
        text = help_text(function)
        parameters = inspect.signature(function).parameters
        for key in keys:
            if key in not_taken:
                continue
            assert key in parameters and parameters[key].kind is inspect.Parameter.KEYWORD_ONLY, (name, key)
            line = re.search(rf"^ *{key}( = [^:]+)?: (.+)$", text, re.M)
            assert line, f"help(llmco2.{name}) does not describe {key}:\n{text}"
            if key in UNITS:
                assert UNITS[key] in line.group(2), (name, key, line.group(0))
            if name != "predict_many":  # predict_many's None: the column is absent, predict's default
                assert parameters[key].default == defaults["request"][key], (name, key)
                assert line.group(1) == f" = {parameters[key].default!r}", (name, key, line.group(0))
        assert parameters["rest"].kind is inspect.Parameter.VAR_KEYWORD  # unknown keys reach the core's message
    compare = inspect.signature(llmco2.compare).parameters
    assert {k: compare[k].default for k in defaults["compare"]} == \
        {**defaults["compare"], "counts": tuple(defaults["compare"]["counts"])}
    for name in ("score_trace", "score_requests"):
        parameters = inspect.signature(getattr(llmco2, name)).parameters
        assert {k: parameters[k].default for k in defaults["trace"]} == defaults["trace"], name
    check_defaults(llmco2.serve_sim, defaults["serve_sim"])
    for name in llmco2.__all__:
        assert getattr(llmco2, name).__doc__, name
    with pytest.raises(llmco2.Error, match=r"unknown key 'bacth' \(did you mean batch"):
        llmco2.compare(bacth=4)


def test_type_stubs_declare_every_public_function_as_the_package_defines_it():
    import pathlib
    package = pathlib.Path(llmco2.__file__).parent
    assert (package / "py.typed").is_file()
    check_stubs(llmco2, package / "__init__.pyi")


def test_keyword_defaults_answer_as_the_cli_defaults():
    # Every default spelt out in the signature: the same answer as the CLI with no flags at all.
    answer = llmco2.predict()
    assert answer.pop("warnings") == []
    assert answer == cli("predict", "--format", "json")


def test_a_lone_surrogate_is_an_llmco2_error_naming_the_key():
    # Issue 41: '\ud800' has no UTF-8 form; it was a RuntimeError from the string conversion.
    with pytest.raises(llmco2.Error, match="key 'model'.*not valid Unicode"):
        llmco2.predict(model="\ud800")
    with pytest.raises(llmco2.Error, match="not valid Unicode"):
        llmco2.predict_many({"model": ["\ud800"]})


def test_a_keyword_that_is_also_a_column_of_the_frame_is_refused():
    # Issue 41: batch=8 replaced the frame's only column, and the three rows became one answer.
    frame = pd.DataFrame({"batch": [1, 2, 3]})
    with pytest.raises(llmco2.Error, match="'batch' given both as a column of the frame and as a keyword"):
        llmco2.predict_many(frame, batch=8)
    # A keyword that is not a column applies to every row of the frame: three answers.
    assert len(llmco2.predict_many(frame, gpu="a100")["energy_j"]) == 3


def test_ctrl_c_stops_a_long_call_at_once():
    # Issue 41: Ctrl-C during predict_many took effect only when the call ended (31 s later). 100,000 rows on one
    # thread take about 7 s here; a SIGINT after 1 s must raise KeyboardInterrupt within about a second of it, and the
    # next call must answer as usual (the interrupt request is cleared).
    import os
    import signal
    import threading
    import time

    columns = {"batch": [1 + i % 64 for i in range(100000)], "gpu": "h100-sxm"}
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        llmco2.predict_many(columns, threads=1)
    elapsed = time.monotonic() - started
    timer.cancel()
    assert elapsed < 3.0, elapsed
    assert llmco2.predict(gpu="h100-sxm")["energy_j"]["total"] > 0
    assert len(llmco2.predict_many({"batch": [1, 2]})["energy_j"]) == 2


def test_serve_sim_disaggregated_at_a_request_rate_equals_the_cli():
    answer = llmco2.serve_sim(num_prompts=20, input_len=512, output_len=16, request_rate=4, seed=1,
                              disaggregate="1:2")
    expected = cli("serve-sim", "--num-prompts", "20", "--random-input-len", "512", "--random-output-len", "16",
                   "--request-rate", "4", "--seed", "1", "--disaggregate", "1:2", "--quiet", "--format", "json")
    answer.pop("warnings")
    assert answer == expected
    pools = answer["deployment"]["disaggregation"]
    assert pools["prefill_replicas"] == 1 and pools["decode"]["replicas"] == 2
    # By hand: each request moves its prompt's KV cache once, 512 tokens x 131,072 bytes of Llama-3.1-8B (32 layers x
    # 8 KV heads x 128 dims x K and V x 2 bytes); 3 H100s fit one NVLink domain.
    assert pools["kv_transfers"]["count"] == 20
    assert pools["kv_transfers"]["mean_bytes"] == 512 * 131072
    assert pools["kv_link"]["kind"] == "nvlink4" and not pools["kv_link"]["spans_nodes"]
    assert answer["requests"]["completed"] == 20
    # No measured energy of a disaggregated deployment: extrapolated, with that label's (wider) interval.
    assert answer["evidence"]["label"] == "extrapolated"
    assert "labelled extrapolated" in answer["evidence"]["interval_basis"]
    colocated = llmco2.serve_sim(num_prompts=20, input_len=512, output_len=16, request_rate=4, seed=1)
    assert colocated["deployment"]["disaggregation"] is None
    assert colocated["evidence"]["label"] != "extrapolated"
    with pytest.raises(llmco2.Error, match="expected P:D"):
        llmco2.serve_sim(num_prompts=2, disaggregate="2")
