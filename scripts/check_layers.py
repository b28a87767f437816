#!/usr/bin/env python3
"""Checks that every #include in src/llmco2 follows the layers the build links (docs/architecture.md).

layers.txt (written at configure time by src/llmco2/CMakeLists.txt) holds one line per folder: "serving: core
dataset engine ...", the llmco2 libraries in that folder's link closure. A file of folder M may include headers of M
and of those folders only; anything else is an include against the flow and is listed, one line each, and the
script exits 1. --self-test checks that the check catches an upward include (serving including predictor).
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/', re.MULTILINE)


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


def violations(layers, files):
    """files: {relative path 'module/file.cc': text}. Returns one message per include against the layers."""
    found = []
    for rel, text in sorted(files.items()):
        module = rel.split("/", 1)[0]
        if module not in layers:
            continue
        allowed = layers[module] | {module}
        for match in INCLUDE.finditer(text):
            target = match.group(1)
            if target in layers and target not in allowed:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"src/llmco2/{rel}:{line}: includes {target}/, which llmco2_{module} does not link "
                             f"(it links {', '.join(sorted(layers[module])) or 'nothing of llmco2'})")
    return found


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        layers = read_layers(argv[2])
        caught = violations(layers, {"serving/example.cc": '#include "sim/simulator.h"\n#include "predictor/predictor.h"\n'})
        if len(caught) != 1 or "includes predictor/" not in caught[0]:
            print(f"the layer check missed an upward include (serving -> predictor): {caught}")
            return 1
        return 0
    if len(argv) != 3:
        print("usage: check_layers.py LAYERS_TXT SRC_LLMCO2_DIR | --self-test LAYERS_TXT", file=sys.stderr)
        return 2
    layers = read_layers(argv[1])
    root = pathlib.Path(argv[2])
    files = {str(p.relative_to(root)): p.read_text(errors="replace")
             for p in root.rglob("*") if p.suffix in (".h", ".cc")}
    found = violations(layers, files)
    for message in found:
        print(message)
    print(f"layers: {len(files)} files, {len(layers)} folders, {len(found)} includes against the layers")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
