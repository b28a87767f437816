#!/usr/bin/env python3
"""Checks that the #includes follow the layers (docs/architecture.md, "Layers, checked").

Inside the library: layers.txt (written at configure time by src/llmco2/CMakeLists.txt) holds one line per folder:
"serving: core dataset engine ...", the llmco2 libraries in that folder's link closure. A file of folder M may
include headers of M and of those folders only; anything else is an include against the flow.

Above it (--interfaces SRC_DIR): every quoted #include of src/cli, src/train_cli, src/server and src/python names a
public header (include/llmco2/...) or a file of the interfaces themselves, nothing of src/llmco2, so the CLI, the
server and Python cannot compute an answer the library does not give the others. Two files of process plumbing are
the exceptions, each for its reason: cli/main.cc asks core/dynamic_loading.h whether this program may dlopen (a
static binary may not; it hands over to llmco2-dynamic), and cli/run_app.cc maps errors to exit codes, records the
command line for output manifests and suggests the nearest option (core/).

Each include against the rule is listed, one line each, and the script exits 1. --self-test LAYERS_TXT and
--interfaces-self-test check that the checks catch one (serving including predictor; a CLI command including sim).
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
INTERFACES = ("cli", "train_cli", "server", "python")
OWN = ("llmco2/", "cli/", "train_cli/", "server/")
PLUMBING = {
    "cli/main.cc": ("core/dynamic_loading.h",),
    "cli/run_app.cc": ("core/error.h", "core/names.h", "core/output_manifest.h"),
}


def read_layers(path):
    layers = {}
    for number, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        module, sep, reach = line.partition(":")
        if not sep:
            sys.exit(f"{path}:{number}: expected 'module: dependencies', got {line!r}")
        layers[module.strip()] = set(reach.split())
    return layers


def quoted_includes(files):
    """files: {relative path: text}. Yields (path, line number, included header) for every quoted #include."""
    for rel, text in sorted(files.items()):
        for match in INCLUDE.finditer(text):
            yield rel, text.count("\n", 0, match.start()) + 1, match.group(1)


def sources(root, folders=None):
    """{path relative to root: text} of the .h and .cc files under root (or under its `folders`)."""
    dirs = [root / f for f in folders] if folders else [root]
    return {str(p.relative_to(root)): p.read_text(errors="replace")
            for d in dirs for p in d.rglob("*") if p.suffix in (".h", ".cc")}


def layer_violations(layers, files):
    """files: {'module/file.cc': text} of src/llmco2. One message per include against the layers."""
    found = []
    for rel, line, header in quoted_includes(files):
        module, target = rel.split("/", 1)[0], header.split("/", 1)[0]
        if module in layers and "/" in header and target in layers and target not in layers[module] | {module}:
            found.append(f"src/llmco2/{rel}:{line}: includes {target}/, which llmco2_{module} does not link "
                         f"(it links {', '.join(sorted(layers[module])) or 'nothing of llmco2'})")
    return found


def interface_violations(files):
    """files: {'cli/file.cc': text} of src/. One message per include of the library's internals."""
    return [f"src/{rel}:{line}: includes {header}, an internal header of the library; an interface calls only "
            f"include/llmco2/ (api.h, research.h, training.h, error.h)"
            for rel, line, header in quoted_includes(files)
            if not header.startswith(OWN) and header not in PLUMBING.get(rel, ())]


def self_test(caught, expected, what):
    if len(caught) != 1 or expected not in caught[0]:
        print(f"the check missed {what} (or flagged an allowed include): {caught}")
        return 1
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        caught = layer_violations(read_layers(argv[2]), {
            "serving/example.cc": '#include "sim/simulator.h"\n#include "predictor/predictor.h"\n'})
        return self_test(caught, "includes predictor/", "an upward include (serving -> predictor)")
    if len(argv) == 2 and argv[1] == "--interfaces-self-test":
        caught = interface_violations({"cli/cmd_example.cc": '#include "llmco2/api.h"\n#include "sim/label.h"\n',
                                       "cli/main.cc": '#include "core/dynamic_loading.h"\n'})
        return self_test(caught, "sim/label.h", "an internal include in a CLI command")
    if len(argv) == 3 and argv[1] == "--interfaces":
        files = sources(pathlib.Path(argv[2]), INTERFACES)
        found = interface_violations(files)
        summary = f"interfaces: {len(files)} files, {len(found)} includes of the library's internals"
    elif len(argv) == 3:
        layers = read_layers(argv[1])
        files = sources(pathlib.Path(argv[2]))
        found = layer_violations(layers, files)
        summary = f"layers: {len(files)} files, {len(layers)} folders, {len(found)} includes against the layers"
    else:
        print("usage: check_layers.py LAYERS_TXT SRC_LLMCO2_DIR | --interfaces SRC_DIR | --self-test LAYERS_TXT | "
              "--interfaces-self-test", file=sys.stderr)
        return 2
    for message in found:
        print(message)
    print(summary)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
