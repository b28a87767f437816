"""llmco2.research answers as the CLI's research commands do: the same JSON, the same reports and files, the same
errors; a bad keyword is an llmco2.Error naming it; Ctrl-C stops a long call."""
import inspect
import json
import os
import pathlib

import pytest

import llmco2
from llmco2 import research
from conftest import SOURCE, check_defaults, check_stubs, cli, cli_text

FIXTURES = os.path.join(SOURCE, "tests", "testdata", "measured")
CAMPAIGN = os.path.join(SOURCE, "data", "measured", "gpu_campaign", "h100-2026-11-27")


def test_simulate_and_kernel_graph_equal_the_cli():
    flags = ["--model", "qwen2-0.5b", "--gpu", "a100-80gb-sxm", "--batch", "2", "--prompt", "300", "--gen", "40"]
    request = dict(model="qwen2-0.5b", gpu="a100-80gb-sxm", batch=2, prompt=300, gen=40)
    answer = research.simulate(**request)
    assert answer.pop("warnings") == []
    assert answer == cli("simulate", *flags, "--format", "json")
    assert (answer["prompt_tokens"], answer["gen_tokens"], answer["batch"]) == (300, 40, 2)  # the request's own
    energy = answer["energy_j"]
    assert energy["total"] == pytest.approx(energy["prefill"] + energy["decode"], rel=1e-12)
    # The simulator's GPU-board energy is predict's with predictor="sim" and scope="gpu" (research.h).
    predicted = llmco2.predict(**request, predictor="sim", scope="gpu")
    assert predicted["energy_j"]["total"] == pytest.approx(energy["total"], rel=1e-9)

    graph = research.kernel_graph(**request)
    assert graph.pop("warnings") == []
    assert graph == cli("graph", *flags, "--format", "json")
    for fmt in ("summary", "dot"):
        text = research.kernel_graph(**request, format=fmt, phase="decode")
        assert text == {"text": cli_text("graph", *flags, "--format", fmt, "--phase", "decode")[0], "warnings": []}


def test_sample_label_plan_and_check_outputs_write_what_the_cli_writes(tmp_path):
    cli_text("sample", "--count", "40", "--seed", "7", "--gpus", "l4,h100-sxm", "--models", "all",
             "--out", tmp_path / "cli-plan.csv")
    drawn = research.sample(tmp_path / "plan.csv", count=40, seed=7, gpus=["l4", "h100-sxm"], models="all")
    assert drawn == {"configurations": 40, "written": str(tmp_path / "plan.csv")}
    plan = (tmp_path / "plan.csv").read_text()
    assert plan == (tmp_path / "cli-plan.csv").read_text()
    assert len(plan.splitlines()) == 1 + 40  # a header and the 40 configurations asked for

    cli_text("simulate", "--plan", tmp_path / "plan.csv", "--out", tmp_path / "cli-rows.csv", "--repeats", "2",
             "--seed", "3")
    labelled = research.label_plan(tmp_path / "plan.csv", tmp_path / "rows.csv", repeats=2, seed=3)
    assert labelled == {"rows_written": 40, "rejects": [], "written": str(tmp_path / "rows.csv")}
    assert (tmp_path / "rows.csv").read_text() == (tmp_path / "cli-rows.csv").read_text()

    manifest = tmp_path / "rows.csv.manifest.json"
    assert research.check_outputs(manifest) == []
    with open(tmp_path / "rows.csv", "a") as f:
        f.write("a line of another run\n")
    stale = research.check_outputs(manifest)
    out, _ = cli_text("check-outputs", manifest, returncode=1)
    assert len(stale) == 1 and "rows.csv" in stale[0]
    assert out.splitlines() == ["not from this run: " + line for line in stale]


def test_import_source_writes_what_the_cli_writes(tmp_path):
    sources = research.measurement_sources()
    assert {"mlenergy-v3", "tokenpowerbench", "vidur"} <= {s["id"] for s in sources}
    assert next(s for s in sources if s["id"] == "vidur")["importable"] is False  # per-operator latencies only
    _, err = cli_text("import", "tokenpowerbench", "--from", FIXTURES, "--out-dir", tmp_path / "cli")
    summary = research.import_source("tokenpowerbench", from_=FIXTURES, out_dir=tmp_path / "py")
    written = tmp_path / "py" / "tokenpowerbench.csv"
    assert summary["written"] == str(written)
    assert written.read_text() == (tmp_path / "cli" / "tokenpowerbench.csv").read_text()
    assert len(written.read_text().splitlines()) == 1 + summary["rows"]
    assert sum(summary["reject_reasons"].values()) == summary["rejected"]
    assert err.splitlines()[0] == (f"tokenpowerbench: {summary['rows']} rows, {summary['rejected']} rejected -> "
                                   f"{tmp_path / 'cli' / 'tokenpowerbench.csv'}")
    assert research.import_source("vidur", from_=FIXTURES, out_dir=tmp_path / "py")["written"] == ""
    with pytest.raises(llmco2.Error) as e:
        research.import_source("tokenpowerbench", from_=tmp_path / "nowhere")
    assert str(e.value) == cli("import", "tokenpowerbench", "--from", tmp_path / "nowhere", expect_error=True)


def test_calibrate_fits_the_parameters_the_cli_fits(tmp_path):
    _, err = cli_text("calibrate", "--fit-only", "--max-evaluations", "12", "--params-out", tmp_path / "cli.json")
    summary = research.calibrate(fit_only=True, max_evaluations=12, params_out=tmp_path / "py.json")
    assert json.loads((tmp_path / "py.json").read_text()) == json.loads((tmp_path / "cli.json").read_text())
    assert summary["params_written"] == str(tmp_path / "py.json") and summary["report_written"] == ""
    assert f"calibrate: {summary['rows']} rows, {summary['simulatable']} simulatable, {summary['skipped']} skipped" \
        in err.splitlines()
    assert summary["rows"] == summary["simulatable"] + summary["skipped"]
    assert research.check_outputs(tmp_path / "py.json.manifest.json") == []


def test_fit_kernels_answers_as_the_cli(tmp_path):
    # A whole fit takes about 20 s: the binding is held to the CLI on a missing folder.
    with pytest.raises(llmco2.Error) as e:
        research.fit_kernels(vidur=tmp_path / "nowhere", kernels_out=tmp_path / "k.json")
    assert str(e.value) == cli("calibrate", "--kernels", "--vidur", tmp_path / "nowhere", "--kernels-out",
                               tmp_path / "k.json", expect_error=True)
    # And on a missing tables folder (the Vidur profiles read, then the tables refused before any fit).
    with pytest.raises(llmco2.Error) as e:
        research.fit_kernels(kernel_tables=tmp_path / "no-tables", kernels_out=tmp_path / "k.json")
    assert str(e.value) == cli("calibrate", "--kernels", "--kernel-tables", tmp_path / "no-tables", "--kernels-out",
                               tmp_path / "k.json", expect_error=True)


def test_serve_validate_equals_the_cli(tmp_path):
    data = tmp_path / "measured"
    data.mkdir()
    with open(os.path.join(SOURCE, "data", "measured", "mlenergy-v3.csv")) as f:
        (data / "mlenergy-v3.csv").write_text("".join(f.readlines()[:41]))  # a header and 40 load tests
    out, err = cli_text("serve-validate", "--data", data, "--held-out", "none", "--quiet", "--rows-out",
                        tmp_path / "cli-rows.csv")
    answer = research.serve_validate(data=data, held_out="none", rows_out=tmp_path / "rows.csv",
                                     markdown_out=tmp_path / "table.md")
    assert answer == {"text": out, "warnings": err.splitlines()}
    assert (tmp_path / "rows.csv").read_text() == (tmp_path / "cli-rows.csv").read_text()
    assert (tmp_path / "table.md").read_text() == out
    with pytest.raises(llmco2.Error) as e:
        research.serve_validate(data=data, source="nobody", held_out="none")
    assert str(e.value) == cli("serve-validate", "--data", data, "--source", "nobody", "--held-out", "none",
                               expect_error=True)


def test_score_campaign_equals_the_cli(tmp_path):
    out, _ = cli_text("score-campaign", CAMPAIGN)
    answer = research.score_campaign(pathlib.Path(CAMPAIGN), report=tmp_path / "campaign.md")
    assert answer["text"] == out == (tmp_path / "campaign.md").read_text()
    assert len(answer["runs"]) == 1 and answer["warnings"] == []
    with pytest.raises(llmco2.Error, match="no campaign folder given"):
        research.score_campaign()


def test_a_bad_keyword_is_an_llmco2_error_naming_it(tmp_path):
    with pytest.raises(llmco2.Error,
                       match=r"calibrate: unknown key 'max_evals' \(did you mean max_evaluations or threads\? "
                             r"the keys are data, "):
        research.calibrate(max_evals=10)
    with pytest.raises(llmco2.Error, match="sample: key 'count': expected an integer, got 2.5"):
        research.sample(tmp_path / "plan.csv", count=2.5)
    with pytest.raises(llmco2.Error, match="sample: key 'seed': expected an integer from 0 to"):
        research.sample(tmp_path / "plan.csv", seed=-1)
    with pytest.raises(llmco2.Error, match=r"sample: int8_share 1.5 \(expected 0 to 1\)"):
        research.sample(tmp_path / "plan.csv", int8_share=1.5)
    with pytest.raises(llmco2.Error, match="label_plan: key 'repeats': expected an integer, got \"two\""):
        research.label_plan(tmp_path / "plan.csv", tmp_path / "rows.csv", repeats="two")
    with pytest.raises(llmco2.Error, match="simulate: key 'region' is not taken: the reference simulator meters"):
        research.simulate(region="FRA")
    with pytest.raises(llmco2.Error, match="simulate: unknown key 'bacth' \\(did you mean batch"):
        research.simulate(bacth=2)
    with pytest.raises(llmco2.Error, match="graph: format 'xml' \\(expected json, dot or summary\\)"):
        research.kernel_graph(format="xml")
    with pytest.raises(llmco2.Error, match="serve_validate: key 'held_out': expected a string, got 3"):
        research.serve_validate(held_out=3)
    with pytest.raises(llmco2.Error, match="import_source: unknown key 'frm'"):
        research.import_source("tokenpowerbench", frm=FIXTURES)


def test_defaults_help_and_stubs_follow_the_options_structs():
    import pydoc
    defaults = llmco2._core._defaults()
    for name in ("sample", "label_plan", "import_source", "calibrate", "fit_kernels", "score_campaign",
                 "serve_validate"):
        check_defaults(getattr(research, name), defaults[name])
    for name in research.__all__:
        function = getattr(research, name)
        text = pydoc.render_doc(function, renderer=pydoc.plaintext)
        assert function.__doc__, name
        for parameter in inspect.signature(function).parameters:
            assert f"  {parameter}" in text or f"  *{parameter}" in text or f"  **{parameter}" in text, \
                (name, parameter)
    check_stubs(research, pathlib.Path(research.__file__).with_suffix(".pyi"))


def test_ctrl_c_stops_calibrate_in_its_held_out_fits(tmp_path):
    # The held-out fits run on worker threads; an interrupt stops each at its next evaluation, the first error is
    # carried out of its thread (it would have ended the process) and nothing is written.
    import signal
    import threading
    import time

    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        research.calibrate(params_out=tmp_path / "params.json", report=tmp_path / "calibration.md", threads=2)
    elapsed = time.monotonic() - started
    timer.cancel()
    assert elapsed < 3.0, elapsed
    assert not (tmp_path / "params.json").exists()
    assert research.simulate(gen=2)["gen_tokens"] == 2  # the next call answers: the interrupt request is cleared
