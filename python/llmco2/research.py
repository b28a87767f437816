"""llmco2.research: the research side of llmco2 as Python calls (include/llmco2/research.h), the same calls the CLI's
commands of these names make: the kernel graph and the reference simulator on one request, focused sampling, labelling
a plan, importing public measurements, calibrating the simulator, scoring GPU kernel campaigns, replaying measured
load tests, checking a run's outputs.

Keywords are the commands' flags with dashes as underscores (``--max-evaluations`` is ``max_evaluations``, ``--from``
is ``from_``); None stands for the CLI's default. Answers are dicts: the CLI's ``--format json`` where the command has
one (graph, simulate), else the fields of the call's summary with the paths written. Files are written as the CLI
writes them (atomically, with a manifest ``check_outputs`` reads back); relative paths are from the working folder.
Bad input raises llmco2.Error with the CLI's message. The long calls (sample, label_plan, import_source, calibrate,
fit_kernels, score_campaign, serve_validate) run on a thread of their own with the GIL released; Ctrl-C stops them at
their next step (import_source, fit_kernels and score_campaign when they end) and raises KeyboardInterrupt.

    >>> from llmco2 import research
    >>> research.simulate(model="llama-3.1-8b", gpu="h100-sxm", prompt=512, gen=64)["energy_j"]["total"]
"""

from __future__ import annotations

import os as _os

from . import _core, _documented, _given

__all__ = ["kernel_graph", "simulate", "sample", "label_plan", "measurement_sources", "import_source", "calibrate",
           "fit_kernels", "score_campaign", "serve_validate", "check_outputs"]

# What the research keywords mean (the request keywords' meanings are the package's, help(llmco2.predict)).
_MEANING = {
    "format": "\"json\" (the graph as a dict), \"dot\" (Graphviz of `phase`) or \"summary\" (a table); the latter two "
              "come back as the answer's \"text\"",
    "phase": "the phase --format dot draws: \"prefill\" or \"decode\"",
    "params": "the simulator's parameters (a params.json); None: data/sim/params.json",
    "out": "the CSV to write",
    "count": "configurations to draw",
    "seed": "random seed",
    "models": "\"paper\" (its 17 LLMs), \"all\" (the bundled catalog) or model ids",
    "max_gpus": "largest GPU count (counts run from the fewest that fit)",
    "batch_weights": "P(batch = 1, 2, ...)",
    "int8_share": "share of configurations with int8 weights and activations",
    "plan": "the plan CSV (model,gpu,gpus,batch,prompt,gen[,dtype,engine]), as sample writes it",
    "repeats": "noisy repeats per configuration (mean and spread in the row)",
    "progress": "progress lines on stderr while the call runs",
    "source": "a source id of measurement_sources()",
    "from_": "the folder holding the sources' folders (the CLI's --from)",
    "out_dir": "where <source>.csv and <source>.rejects.csv go; None: data/measured",
    "data": "the folder of dataset CSVs; None: data/measured",
    "params_out": "the fitted parameters to write; None: data/sim/params.json",
    "report": "the Markdown report to write; its plots go into a folder beside it",
    "rows_out": "a CSV of every row with measured and predicted figures; None: none",
    "max_evaluations": "objective evaluations per fit",
    "fit_only": "fit on all sources only: no held-out fits, no report (quick)",
    "threads": "parallel held-out fits; 0: every core",
    "vidur": "the folder of Vidur's operator profiles; None: data/measured/vidur",
    "kernel_tables": "the folder of NVIDIA's AIConfigurator kernel tables; None: data/measured/aiconfigurator",
    "kernels_out": "the kernel-time parameters to write; None: data/sim/kernels.json",
    "kernels_report": "the Markdown report to write; its plot goes to <its folder>/kernel-fit/held_out.png",
    "dirs": "campaign folders, e.g. data/measured/gpu_campaign/h100-2026-11-27",
    "engines": "engine profiles the closed loop is scored against",
    "held_out": "\"source\" (fit without the validated source), \"gpu\" (without each GPU type in turn) or \"none\" "
                "(params as given)",
    "markdown_out": "the table as a Markdown file; None: none",
    "manifest": "a run's manifest: manifest.json or <file>.manifest.json",
}
_SAMPLE = {**_MEANING, "gpus": "GPU ids to draw from"}
_SCORE_CAMPAIGN = {**_MEANING, "model": "the model the campaign's closed-loop run ran",
                   "report": "also write the Markdown report to this file (e.g. docs/gpu-campaign.md); None: none"}
_SERVE_VALIDATE = {**_MEANING, "source": "the dataset source whose rows are replayed"}


@_documented(meaning=_MEANING)
def kernel_graph(*, model="llama-3.1-8b", model_config=None, gpu="h100-sxm", gpus=1, pp=1,
                 batch=1, prompt=1024, gen=128,
                 dtype=None, flash=True, engine="vllm", expert_parallel=False, power_cap=0.0, clock_mhz=0.0,
                 format="json", phase="prefill", **rest):
    """The kernel graph of one layer of the request, with its prefill and decode features -> dict equal to
    ``llmco2 graph --format json``, plus "warnings" (the notes on the request); with format "dot" or "summary",
    {"text": what the CLI prints, "warnings": [...]}. The request keywords are predict's, less the carbon ones.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    return _core.research.kernel_graph(**_given(arguments, rest))


@_documented(meaning=_MEANING)
def simulate(*, model="llama-3.1-8b", model_config=None, gpu="h100-sxm", gpus=1, pp=1, batch=1, prompt=1024, gen=128,
             dtype=None, flash=True, engine="vllm", expert_parallel=False, power_cap=0.0, clock_mhz=0.0, params=None,
             **rest):
    """What an NVML measurement of the request would read, by the reference simulator -> dict equal to
    ``llmco2 simulate --format json``, plus "warnings": energy_j and latency_s per phase (the GPU boards' energy),
    mean_power_w_per_gpu. The request keywords are predict's, less the carbon ones (no scope, region, ...).
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    return _core.research.simulate(**_given(arguments, rest))


@_documented(meaning=_SAMPLE)
def sample(out, *, count=1000, seed=1, models=("paper",), gpus=("l4", "a100-80gb-sxm", "h100-sxm"), max_gpus=4,
           batch_weights=(0.4, 0.3, 0.15, 0.15), int8_share=0.0, **rest):
    """A plan of configurations drawn by focused sampling from the bundled Azure traces (``llmco2 sample``), written
    to `out` -> {"configurations": how many were written, "written": out}.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    arguments["out"] = _os.fspath(out)
    return _core.research.sample(**_given(arguments, rest))


@_documented(meaning=_MEANING)
def label_plan(plan, out, *, repeats=1, seed=1, params=None, progress=False, **rest):
    """A plan labelled by the reference simulator (``llmco2 simulate --plan PLAN --out OUT``): a dataset CSV of what
    NVML would have read -> {"rows_written": N, "rejects": one line per plan row that could not be labelled,
    "written": out}.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    arguments["plan"], arguments["out"] = _os.fspath(plan), _os.fspath(out)
    return _core.research.label_plan(**_given(arguments, rest))


def measurement_sources():
    """The public measurement sources import_source knows -> list of {"id", "folder", "summary", "importable"}
    (summary says what it measured, or why it cannot be imported)."""
    return _core.research.measurement_sources()


@_documented(meaning=_MEANING)
def import_source(source, *, from_="../shared/data/measured", out_dir=None, **rest):
    """One public source converted into the dataset format (``llmco2 import SOURCE``) -> {"id", "written" (the CSV;
    "" for a source that cannot be imported), "rows", "rejected", "reject_reasons" ({reason class: rows}, most
    frequent first)}.
    """
    arguments = dict(locals())
    rest, source = arguments.pop("rest"), arguments.pop("source")
    return _core.research.import_source(source, **_given(arguments, rest))


@_documented(meaning=_MEANING)
def calibrate(*, data=None, params_out=None, report="docs/calibration.md", rows_out=None, max_evaluations=2500,
              fit_only=False, threads=0, **rest):
    """The simulator's parameters fitted on the measurements (``llmco2 calibrate``), with leave-one-source-out and
    leave-one-GPU-out fits for the report (progress lines on stderr) -> {"params_written", "report_written" ("" with
    fit_only), "rows", "simulatable", "skipped", "seconds", "warnings" (plots that could not be drawn)}.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    return _core.research.calibrate(**_given(arguments, rest))


@_documented(meaning=_MEANING)
def fit_kernels(*, vidur=None, kernel_tables=None, kernels_out=None, kernels_report="docs/kernel-fit.md", data=None,
                **rest):
    """The kernel-time parameters fitted on Vidur's per-operator latencies and NVIDIA's AIConfigurator kernel tables,
    and AMD CDNA 3's on the MLPerf AMD runs of ``data`` (``llmco2 calibrate --kernels``, about 4 minutes) -> {"kernels_written", "report_written", "compute_samples",
    "network_samples", "table_samples", "seconds", "warnings"}.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    return _core.research.fit_kernels(**_given(arguments, rest))


@_documented(meaning=_SCORE_CAMPAIGN)
def score_campaign(*dirs, model="llama-3.1-8b", engines=("vllm", "trt-llm", "sglang"), params=None, report=None,
                   **rest):
    """GPU kernel campaigns (scripts/gpu_campaign/kernel_campaign.py) scored against the simulator as it stands
    (``llmco2 score-campaign DIR...``) -> {"runs": the figures, one dict per folder, "text": the Markdown report the
    CLI prints, "warnings": []}.
    """
    arguments = dict(locals())
    rest, dirs = arguments.pop("rest"), arguments.pop("dirs")
    return _core.research.score_campaign([_os.fspath(d) for d in dirs], **_given(arguments, rest))


@_documented(meaning=_SERVE_VALIDATE)
def serve_validate(*, data=None, source="mlenergy-v3", params=None, held_out="source", rows_out=None,
                   markdown_out=None, progress=False, **rest):
    """A source's measured steady-state load tests replayed through the serving simulation as their harness ran them
    (``llmco2 serve-validate``) -> {"text": the Markdown table of simulated against measured the CLI prints,
    "warnings": the skipped rows, one line per reason}.
    """
    arguments = dict(locals())
    rest = arguments.pop("rest")
    return _core.research.serve_validate(**_given(arguments, rest))


@_documented(meaning=_MEANING)
def check_outputs(manifest):
    """The outputs a run's manifest (manifest.json or <file>.manifest.json) lists that are no longer as that run
    finished them (missing, or size or checksum changed), one line each (``llmco2 check-outputs``) -> list of str,
    empty when every output is as the run wrote it."""
    return _core.research.check_outputs(_os.fspath(manifest))
