"""Shared helpers of the Python tests: the CLI binary and source tree given by CTest, and running the CLI."""
import json
import os
import subprocess

import pytest

BIN = os.environ.get("LLMCO2_BIN", "")
SOURCE = os.environ.get("LLMCO2_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(*args, expect_error=False):
    """Runs llmco2 with args; returns the parsed JSON of stdout, or the error line's message when expect_error."""
    result = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120)
    if expect_error:
        assert result.returncode == 2, result.stderr
        line = result.stderr.strip().splitlines()[-1]
        assert line.startswith("llmco2: error: "), line
        return line[len("llmco2: error: "):]
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def cli_text(*args, returncode=0):
    """Runs llmco2 with args, which must exit with `returncode`; returns what it printed: (stdout, stderr)."""
    result = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert result.returncode == returncode, result.stderr
    return result.stdout, result.stderr


def check_stubs(module, stub_file):
    """`stub_file` (a .pyi beside `module`) declares every name of module.__all__ with the parameters, kinds and
    defaults of the module's own function (a class: Error, a ValueError)."""
    import ast
    import inspect
    tree = ast.parse(stub_file.read_text())
    declared = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    stub_all = next(node.value for node in tree.body
                    if isinstance(node, ast.Assign) and node.targets[0].id == "__all__")
    assert ast.literal_eval(stub_all) == module.__all__
    for name in module.__all__:
        if name == "Error":
            assert isinstance(declared["Error"], ast.ClassDef) and declared["Error"].bases[0].id == "ValueError"
            continue
        stub = declared.get(name)
        assert isinstance(stub, ast.FunctionDef), f"{stub_file.name} does not declare {name}"
        assert stub.returns is not None, name
        a = stub.args
        positional = a.posonlyargs + a.args
        stub_parameters = [(p.arg, "POSITIONAL_OR_KEYWORD") for p in positional] + \
                          ([(a.vararg.arg, "VAR_POSITIONAL")] if a.vararg else []) + \
                          [(p.arg, "KEYWORD_ONLY") for p in a.kwonlyargs] + \
                          ([(a.kwarg.arg, "VAR_KEYWORD")] if a.kwarg else [])
        stub_defaults = dict(zip([p.arg for p in positional][len(positional) - len(a.defaults):],
                                 map(ast.literal_eval, a.defaults)))
        stub_defaults.update({p.arg: ast.literal_eval(d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d})
        try:
            signature = inspect.signature(getattr(module, name))
        except ValueError:  # a function of the extension: the stub says it takes nothing
            assert stub_parameters == [], name
            continue
        assert stub_parameters == [(p.name, p.kind.name) for p in signature.parameters.values()], name
        assert stub_defaults == {p.name: p.default for p in signature.parameters.values()
                                 if p.default is not inspect.Parameter.empty}, name


def check_defaults(function, defaults):
    """`function`'s keyword defaults are the C++ options' (`defaults`: a dict of llmco2._core._defaults(), lists as
    the signature's tuples), for every parameter with a default."""
    import inspect
    parameters = inspect.signature(function).parameters
    for key, value in defaults.items():
        if parameters[key].default is inspect.Parameter.empty:  # a required argument (a file to write)
            continue
        expected = tuple(value) if isinstance(value, list) else value
        assert parameters[key].default == expected, (function.__name__, key, parameters[key].default, expected)


@pytest.fixture(scope="session")
def azure_conv():
    return os.path.join(SOURCE, "data", "azure", "AzureLLMInferenceTrace_conv.csv")
