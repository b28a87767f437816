"""Shared helpers of the Python tests: the CLI binary and source tree given by CTest, and running the CLI."""
import json
import os
import subprocess

import pytest

BIN = os.environ.get("LLMCO2_BIN", "")
SOURCE = os.environ.get("LLMCO2_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(*args, expect_error=False):
    """Runs llmco2 with args; returns the parsed JSON of stdout, or the error line's message when expect_error."""
    result = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
    if expect_error:
        assert result.returncode == 2, result.stderr
        line = result.stderr.strip().splitlines()[-1]
        assert line.startswith("llmco2: error: "), line
        return line[len("llmco2: error: "):]
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="session")
def azure_conv():
    return os.path.join(SOURCE, "data", "azure", "AzureLLMInferenceTrace_conv.csv")
