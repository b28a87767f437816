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

Namespaces (with LAYERS_TXT): each folder but core declares in its own namespace, llmco2::<folder> (research and
research_training share llmco2::research; core is llmco2 itself), and its <folder>/module.h makes the names of
exactly the folders it links visible unqualified, one `using namespace llmco2::X;` per linked folder. So a name of a
folder that is not linked does not compile unqualified (using-directives are transitive, so module.h names only the
folders no other linked folder links, and includes their module.h), and one name in two folders is two entities, not an ODR
violation. A file may open another folder's namespace only to forward-declare a name of a folder it links.

Each include or namespace against the rule is listed, one line each, and the script exits 1. --self-test LAYERS_TXT
and --interfaces-self-test check that the checks catch one (serving including predictor, serving's module.h naming
predictor, a serving file declaring in llmco2; a CLI command including sim).
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


NAMESPACE = re.compile(r"^namespace (llmco2(?:::\w+)?) \{", re.MULTILINE)
USING = re.compile(r"^using namespace llmco2::(\w+);", re.MULTILINE)
SHARED = {"research_training": "research"}
NO_NAMESPACE = {"fmt", "xgboost", "core"}  # targets without a namespace of their own (core is llmco2 itself)


def namespace_of(folder):
    return "llmco2" if folder == "core" else f"llmco2::{SHARED.get(folder, folder)}"


def namespace_violations(layers, files):
    """files: {'module/file.cc': text} of src/llmco2. One message per namespace or module.h against the layers."""
    found = []
    for module in sorted(m for m in layers if m not in NO_NAMESPACE):
        own = namespace_of(module)
        linked = {d for d in layers[module] if d not in NO_NAMESPACE and namespace_of(d) != own}
        # the folders linked directly (no other linked folder links them): each names the rest, transitively
        linked = {namespace_of(d) for d in linked if not any(d in layers.get(o, ()) for o in linked - {d})}
        text = files.get(f"{module}/module.h")
        if text is None:
            if any(rel.startswith(module + "/") for rel in files):
                found.append(f"src/llmco2/{module}/module.h: missing (the namespace {own} and what it links)")
            continue
        used = {f"llmco2::{name}" for name in USING.findall(text)}
        for name in sorted(used - linked):
            found.append(f"src/llmco2/{module}/module.h: uses {name}, which llmco2_{module} does not link, or links "
                         f"through another folder it uses (it uses directly: {', '.join(sorted(linked))})")
        for name in sorted(linked - used):
            found.append(f"src/llmco2/{module}/module.h: lacks `using namespace {name};` (llmco2_{module} links it, "
                         f"and no other folder it links does)")
    for rel, text in sorted(files.items()):
        module = rel.split("/", 1)[0]
        if module not in layers or module == "core":
            continue
        allowed = {namespace_of(module)} | {namespace_of(d) for d in layers[module] if d not in NO_NAMESPACE}
        for match in NAMESPACE.finditer(text):
            if match.group(1) not in allowed:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"src/llmco2/{rel}:{line}: declares in {match.group(1)}; {module}/ declares in "
                             f"{namespace_of(module)} (and forward-declares only in namespaces it links)")
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
        failures = self_test(caught, "includes predictor/", "an upward include (serving -> predictor)")
        layers = read_layers(argv[2])
        serving_h = "namespace llmco2::serving {\nusing namespace llmco2::sim;\n"
        caught = namespace_violations(layers, {
            "serving/module.h": serving_h + "using namespace llmco2::predictor;\n}\n"})
        failures += self_test(caught, "uses llmco2::predictor", "a module.h naming a folder not linked")
        caught = namespace_violations(layers, {
            "serving/module.h": serving_h + "}\n", "serving/example.h": "namespace llmco2::sim {\nstruct X;\n}\n"
                                                                        "namespace llmco2 {\n}\n"})
        return failures + self_test(caught, "declares in llmco2;", "a serving file declaring in llmco2")
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
        found = layer_violations(layers, files) + namespace_violations(layers, files)
        summary = (f"layers: {len(files)} files, {len(layers)} folders, {len(found)} includes or namespaces against "
                   f"the layers")
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
