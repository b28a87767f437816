#!/usr/bin/env python3
"""tests/kill/kill_outputs.py - kills llmco2's output-writing commands (trace, compare, simulate --plan, measure,
calibrate, with its report) with SIGKILL at random points, many times, and checks what is left: every file present is whole (CSVs
parse with one field count, JSON parses, PNGs end with their IEND chunk), temporary files have unique names, the
outputs a manifest lists with matching checksums are one run's and agree with each other and with the manifest's own
command line (totals repeated across outputs are equal), and a normal run lists all its outputs and leaves no
temporary file. eval is checked for the last property only (one run takes too long for the kill loop).

Rounds per command: 40 by default (ctest, about half a minute), LLMCO2_KILL_ROUNDS=N for more."""
import argparse
import csv
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

TEMPORARY = re.compile(r"\.tmp-[0-9]+-[0-9a-f]+$")
PNG_END = b"IEND\xaeB`\x82"


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def fnv1a64(data):
    h = 14695981039346656037
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def files_under(root):
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.join(folder, n) for n in names]
    return sorted(found)


def temporaries(root):
    return {f for f in files_under(root) if ".tmp" in os.path.basename(f)}


def read_json(path):
    try:
        return json.loads(open(path, "rb").read())
    except json.JSONDecodeError as e:
        raise Failure(f"{path}: not whole JSON: {e}")


def csv_rows(path):
    text = open(path, newline="").read()
    expect(text.endswith("\n"), f"{path}: last line incomplete")
    rows = list(csv.reader(io.StringIO(text)))
    expect(rows, f"{path}: empty")
    for n, row in enumerate(rows[1:], 2):
        expect(len(row) == len(rows[0]), f"{path}:{n}: {len(row)} fields, header has {len(rows[0])}")
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def check_whole(path):
    """Every file present must be complete, whatever run wrote it."""
    name = os.path.basename(path)
    data = open(path, "rb").read()
    if name.endswith(".csv"):
        csv_rows(path)
    elif name.endswith(".json"):
        read_json(path)
    elif name.endswith(".png"):
        expect(data.startswith(b"\x89PNG") and data.endswith(PNG_END), f"{path}: truncated PNG")
    elif name.endswith(".svg"):
        expect(data.rstrip().endswith(b"</svg>"), f"{path}: truncated SVG")
    elif name.endswith(".dat"):
        for line in data.decode().splitlines():
            [float(v) for v in line.split()]
        expect(data.endswith(b"\n"), f"{path}: last line incomplete")
    elif name.endswith(".md"):
        expect(data.endswith(b"\n"), f"{path}: truncated")


def check_folder(root):
    """Whole files and unique temporary names; returns the temporary files."""
    temps = set()
    for path in files_under(root):
        name = os.path.basename(path)
        if ".tmp" in name:
            expect(TEMPORARY.search(name), f"{path}: a temporary file without a unique name")
            temps.add(path)
        elif not name.endswith(".log") and not name.endswith(".state") and not name.endswith(".runs"):
            check_whole(path)
    return temps


def from_manifest(manifest_path):
    """The manifest, and the paths of its outputs whose size and checksum match (one finished run's outputs)."""
    if not os.path.exists(manifest_path):
        return None, {}
    manifest = read_json(manifest_path)
    expect(manifest["schema"] == "llmco2-run-manifest/1", f"{manifest_path}: schema")
    matching = {}
    for output in manifest["outputs"]:
        path = os.path.normpath(os.path.join(os.path.dirname(manifest_path), output["name"]))
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        if len(data) == output["size_bytes"] and fnv1a64(data) == output["fnv1a64"]:
            matching[os.path.basename(path)] = path
    return manifest, matching


def flag(command, name):
    return command[command.index(name) + 1]


def close(a, b, rel=2e-4):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


class Command:
    """One command under test: its inputs, two variants of arguments, where its manifest goes, and what its outputs
    must agree on."""

    def __init__(self, args, work):
        self.args, self.work = args, work
        self.root = os.path.join(work, self.name)
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.setup()

    env = None
    concurrent = True  # two runs may write one folder at once

    def run(self, variant, kill_after_s=None):
        process = subprocess.Popen(self.argv(variant), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   env=self.env, cwd=self.root)
        if kill_after_s is None:
            _, err = process.communicate()
            return process.returncode, err.decode()
        time.sleep(kill_after_s)
        process.send_signal(signal.SIGKILL)
        _, err = process.communicate()
        return process.returncode, err.decode()

    def check(self):
        temps = check_folder(self.root)
        manifest, matching = from_manifest(self.manifest)
        if manifest:
            self.consistent(manifest["command"], matching)
        return temps, manifest, matching


def summed(rows, key):
    return sum(float(r[key]) for r in rows if r[key])


class Trace(Command):
    name = "trace"
    outputs = {"report.md", "summary.json", "histogram.dat", "histogram.png", "timeline.dat", "timeline.png",
               "requests.csv"}

    def setup(self):
        lines = open(os.path.join(self.args.data, "azure", "AzureLLMInferenceTrace_conv.csv")).read().splitlines()
        self.logs = []
        for count in (150, 190):  # the two variants differ in request count: a mixed set cannot agree
            path = os.path.join(self.root, f"log{count}.csv")
            open(path, "w").write("\n".join(lines[: count + 1]) + "\n")
            self.logs.append(path)
        self.manifest = os.path.join(self.root, "report", "manifest.json")

    def argv(self, variant):
        return [self.args.bin, "trace", self.logs[variant], "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--out",
                "report", "--by-request", "requests.csv", "--quiet", "--format", "json"]

    def consistent(self, command, files):
        requests = int(os.path.basename(command[2])[3:-4])
        if "summary.json" in files:
            summary = read_json(files["summary.json"])
            expect(summary["requests"] == requests, f"summary.json: {summary['requests']} requests, log has {requests}")
            if "requests.csv" in files:
                rows = csv_rows(files["requests.csv"])
                expect(len(rows) == requests, "requests.csv and summary.json disagree on the request count")
                expect(close(summed(rows, "energy_j"), summary["energy_j"]["total"]), "requests.csv and summary.json energy")
                expect(close(summed(rows, "co2_total_g"), summary["co2_g"]["total"]["total"]), "requests.csv and summary CO2")
        if "report.md" in files:
            expect(f"\n| {requests} | " in open(files["report.md"]).read(), "report.md totals: request count")
        for dat, column in (("histogram.dat", 2), ("timeline.dat", 2)):
            if dat in files:
                counts = [float(line.split()[column]) for line in open(files[dat])]
                expect(sum(counts) == requests, f"{dat}: {sum(counts)} requests, log has {requests}")


class Compare(Command):
    name = "compare"
    outputs = {"sweep.csv", "co2-per-gpu.png", "co2-total.png", "setups.csv", "setups.png"}

    def setup(self):
        self.manifest = os.path.join(self.root, "plots", "manifest.json")

    def argv(self, variant):
        return [self.args.bin, "compare", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--prompt",
                "512", "--gen", "64", "--gpu-types", "h100-sxm,a100-80gb-sxm", "--plot", "plots", "--format", "json",
                "--sweep-batches", ["1,4", "1,4,16"][variant]]

    def consistent(self, command, files):
        if "sweep.csv" in files:
            # Llama-3.1-8B fits one H100 at every batch here: batches x 2 prompts x 4 GPU counts
            batches = len(flag(command, "--sweep-batches").split(","))
            rows = csv_rows(files["sweep.csv"])
            expect(len(rows) == batches * 2 * 4, f"sweep.csv: {len(rows)} rows for {batches} batches")


class SimulatePlan(Command):
    name = "simulate"
    outputs = {"data.csv"}

    def setup(self):
        self.plans = []
        for count in (6, 9):
            path = os.path.join(self.root, f"plan{count}.csv")
            rows = ["model,gpu,gpus,batch,prompt,gen"] + [f"llama-3.1-8b,h100-sxm,1,{b + 1},{128 * (b + 1)},32"
                                                          for b in range(count)]
            open(path, "w").write("\n".join(rows) + "\n")
            self.plans.append(path)
        self.manifest = os.path.join(self.root, "data.csv.manifest.json")

    def argv(self, variant):
        return [self.args.bin, "simulate", "--plan", self.plans[variant], "--out", "data.csv", "--repeats", "3"]

    def consistent(self, command, files):
        if "data.csv" in files:
            planned = int(os.path.basename(flag(command, "--plan"))[4:-4])
            rows = csv_rows(files["data.csv"])
            expect(len(rows) == planned, f"data.csv: {len(rows)} rows for a plan of {planned}")


class Measure(Command):
    name = "measure"
    outputs = {"data.csv", "data.csv.campaign.json"}
    planned = 5
    concurrent = False  # one campaign per --out at a time (each would measure the missing rows)

    def setup(self):
        self.fake = os.path.join(self.work, "measure-fake")
        os.makedirs(self.fake, exist_ok=True)
        self.plan = os.path.join(self.fake, "plan.csv")
        rows = ["model,gpu,gpus,batch,prompt,gen"] + [f"llama-3.1-8b,h100-sxm,1,1,{64 * (b + 1)},8"
                                                      for b in range(self.planned)]
        open(self.plan, "w").write("\n".join(rows) + "\n")
        state = os.path.join(self.fake, "nvml.state")
        open(state, "w").write("1000000 60000\n")
        self.env = dict(os.environ, FAKE_NVML_STATE=state, FAKE_NVML_DEVICES="1", FAKE_RUNNER_POWER_W="400")
        self.manifest = os.path.join(self.root, "data.csv.manifest.json")

    def argv(self, variant):
        return [self.args.bin, "measure", "--plan", self.plan, "--out", "data.csv", "--runner", self.args.fake_runner,
                "--nvml", self.args.fake_nvml, "--idle-s", "0.05", "--quiet", "--repeats", "2"]

    def consistent(self, command, files):
        if "data.csv" in files:
            rows = csv_rows(files["data.csv"])
            keys = [(r["model"], r["prompt_tokens"]) for r in rows]
            expect(len(keys) == len(set(keys)), "data.csv: a configuration measured twice")
            expect(len(rows) <= self.planned, "data.csv: more rows than planned")

    def finished(self):
        """After a normal run: every planned row once; the next campaign starts afresh."""
        rows = csv_rows(os.path.join(self.root, "data.csv"))
        expect(len(rows) == self.planned, f"measure: {len(rows)} rows after a full campaign of {self.planned}")
        for name in os.listdir(self.root):
            if not TEMPORARY.search(name):
                os.remove(os.path.join(self.root, name))


class Calibrate(Command):
    name = "calibrate"
    outputs = {"params.json", "rows.csv", "calibration.md", "energy.svg", "latency.svg"}

    def setup(self):
        data = os.path.join(self.work, "calibrate-data")
        os.makedirs(data, exist_ok=True)
        open(os.path.join(data, "mini.csv"), "w").write(
            "source,model,gpu,gpus,engine,batch,prompt_tokens,gen_tokens,measures,energy_total_j,latency_total_s\n"
            "mini,llama-3.1-8b,h100-sxm,1,vllm,1,512,128,isolated,400,1.2\n"
            "mini,llama-3.1-8b,a100-80gb-sxm,1,vllm,4,256,64,fixed_batch,600,1.5\n")
        self.data = data
        self.manifest = os.path.join(self.root, "calibration", "manifest.json")

    def argv(self, variant):
        return [self.args.bin, "calibrate", "--max-evaluations", ["10", "30"][variant], "--data", self.data,
                "--params-out", "params.json", "--rows-out", "rows.csv", "--report", "calibration.md", "--threads", "1"]

    def consistent(self, command, files):
        if "rows.csv" in files:
            expect(len(csv_rows(files["rows.csv"])) == 2, "rows.csv: one row per measured row (2)")
        if "params.json" in files and "calibration.md" in files:
            params = open(files["params.json"]).read().strip()
            expect(params in open(files["calibration.md"]).read(), "calibration.md shows other parameters than "
                                                                   "params.json")


def normal_run(command, variant=0):
    before = temporaries(command.root)
    start = time.monotonic()
    code, err = command.run(variant)
    seconds = time.monotonic() - start
    expect(code == 0, f"{command.name}: exit code {code}: {err.strip()}")
    temps, manifest, matching = command.check()
    expect(manifest is not None, f"{command.name}: no manifest after a normal run")
    expect(set(matching) == command.outputs, f"{command.name}: manifest lists {sorted(matching)} as this run's, "
                                             f"expected {sorted(command.outputs)}")
    expect(len(manifest["outputs"]) == len(command.outputs), f"{command.name}: outputs not matching the manifest")
    expect(temps <= before, f"{command.name}: a normal run left {sorted(temps - before)}")
    checked = subprocess.run([command.args.bin, "check-outputs", command.manifest], capture_output=True)
    expect(checked.returncode == 0, f"{command.name}: check-outputs: {checked.stdout.decode()}{checked.stderr.decode()}")
    return seconds


def concurrent_runs(command):
    """Both variants at once into one folder: both finish, neither trips on the other's temporary files, and the
    newest manifest's outputs are one run's (the consistency check)."""
    before = temporaries(command.root)
    processes = [subprocess.Popen(command.argv(v), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=command.env, cwd=command.root) for v in (0, 1)]
    for process in processes:
        _, err = process.communicate()
        expect(process.returncode == 0, f"{command.name}: concurrent run: exit code {process.returncode}: {err.decode()}")
    temps, manifest, _ = command.check()
    expect(manifest is not None, f"{command.name}: no manifest after two concurrent runs")
    expect(temps <= before, f"{command.name}: concurrent runs left {sorted(temps - before)}")


def kill_loop(command, rounds, rng):
    seconds = max(normal_run(command, 0), normal_run(command, 1))
    mid_run = 0
    for _ in range(rounds):
        code, _ = command.run(rng.randrange(2), kill_after_s=rng.uniform(0, 1.2 * seconds))
        mid_run += code == -signal.SIGKILL
        command.check()
        if code == 0 and hasattr(command, "finished"):
            command.finished()
    if command.concurrent:
        concurrent_runs(command)
    normal_run(command, rng.randrange(2))
    left = len(temporaries(command.root))  # those of dead runs go when the next run writes the same output
    if hasattr(command, "finished"):
        command.finished()
    return mid_run, seconds, left


def eval_leaves_nothing(args):
    """One short eval: its report, plots and error bands listed in its manifest, no temporary file beside them, and
    its scratch model file (in the temporary folder, named after its process) removed."""
    root = os.path.join(args.work, "eval")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    argv = [args.train_bin, "eval", "--train-count", "100", "--test-count", "10", "--predictors", "llmcarbon,sim",
            "--max-evaluations", "10", "--report", "accuracy.md", "--plots", "plots", "--error-bands", "bands.json",
            "--quiet", "--threads", "1"]
    process = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = process.communicate()
    expect(process.returncode == 0, f"eval: exit code {process.returncode}: {err.decode().strip()[-400:]}")
    temps = check_folder(root)
    expect(not temps, f"eval left {sorted(temps)}")
    manifest, matching = from_manifest(os.path.join(root, "plots", "manifest.json"))
    expect(manifest is not None and set(matching) == {"accuracy.md", "bands.json", "test-a.png", "test-b.png"},
           f"eval: manifest lists {sorted(matching)}")
    scratch = os.environ.get("TMPDIR", "/tmp")
    left = [n for n in os.listdir(scratch) if n.startswith(f"llmco2-eval.model.tmp-{process.pid}-")]
    expect(not left, f"eval left {left} in {scratch}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("--bin", "--train-bin", "--fake-nvml", "--fake-runner", "--data", "--work"):
        parser.add_argument(name, required=True)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    for name in ("bin", "train_bin", "fake_nvml", "fake_runner", "data", "work"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    rounds = int(os.environ.get("LLMCO2_KILL_ROUNDS", "40"))
    rng = random.Random(args.seed)
    print(f"kill test: seed {args.seed}, {rounds} kills per command", flush=True)
    failed = False
    for kind in (Trace, Compare, SimulatePlan, Measure, Calibrate):
        try:
            command = kind(args, args.work)
            mid_run, seconds, left = kill_loop(command, rounds, rng)
            print(f"  {command.name:<10} {rounds} SIGKILLs, {mid_run} mid-run (one run {seconds:.2f} s): consistent; "
                  f"{left} temporary files left at the end", flush=True)
        except (Failure, ValueError, KeyError) as e:
            print(f"  {kind.name:<10} FAILED: {e}")
            failed = True
    try:
        eval_leaves_nothing(args)
        print("  eval       normal run: manifest complete, no temporary file left")
    except Failure as e:
        print(f"  eval       FAILED: {e}")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
