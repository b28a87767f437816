"""llmco2's PEP 517 build backend: `pip install .` from the repository root, offline, with the system's tools.

The wheel holds the package python/llmco2 (its code, type stubs and py.typed), the extension llmco2._core built by
CMake (target llmco2_python, against the Python that runs pip) and the bundled catalogs (data/, read by the core at
run time; the package points LLMCO2_DATA_DIR at its copy unless the variable is set). It needs nothing from PyPI:
the backend is this file (pyproject.toml's backend-path), which uses only the standard library, and the compiler,
CMake, Ninja, pybind11 and the libraries come from Debian (scripts/setup.sh). Environment:
  LLMCO2_BUILD_DIR   the CMake build folder (default build/pip); a configured one is reused, so a rebuild is quick.
  LLMCO2_BUILD_JOBS  parallel compile jobs (default 2).
"""
import base64
import csv
import hashlib
import io
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAME = "llmco2"
PACKAGE_FILES = ("__init__.py", "__init__.pyi", "research.py", "research.pyi", "py.typed")


def _version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(llmco2 VERSION ([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no 'project(llmco2 VERSION x.y.z' line")
    return match.group(1)


def _tag():
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{python}-{platform}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: Energy, latency and CO2 of LLM inference requests, before they run\n"
            "Requires-Python: >=3.9\nLicense: see the repository\n")


def _wheel_file():
    return f"Wheel-Version: 1.0\nGenerator: llmco2_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _run(command):
    print("llmco2_build:", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, stdout=sys.stderr)


def _build_extension():
    build = pathlib.Path(os.environ.get("LLMCO2_BUILD_DIR", ROOT / "build" / "pip"))
    if not build.is_absolute():
        build = ROOT / build
    if not (build / "CMakeCache.txt").exists():
        _run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
              "-DLLMCO2_BUILD_TESTS=OFF", "-DLLMCO2_BUILD_BENCH=OFF", f"-DPython_EXECUTABLE={sys.executable}"])
    _run(["cmake", "--build", str(build), "--target", "llmco2_python", "-j", os.environ.get("LLMCO2_BUILD_JOBS", "2")])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = sorted((build / "python" / NAME).glob("_core*.so"))
    exact = [p for p in built if p.name == "_core" + suffix]
    if not (exact or built):
        raise RuntimeError(f"{build}/python/{NAME}: the extension _core{suffix} was not built")
    return (exact or built)[0]


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def _files(extension):
    """(name in the wheel, bytes) for every file the wheel holds but its RECORD."""
    yield f"{NAME}/{extension.name}", extension.read_bytes()
    for name in PACKAGE_FILES:
        yield f"{NAME}/{name}", (ROOT / "python" / NAME / name).read_bytes()
    data = ROOT / "data"
    for path in sorted(data.rglob("*")):
        if path.is_file():
            yield f"{NAME}/data/{path.relative_to(data).as_posix()}", path.read_bytes()
    info = f"{NAME}-{_version()}.dist-info"
    yield f"{info}/METADATA", _metadata().encode()
    yield f"{info}/WHEEL", _wheel_file().encode()
    yield f"{info}/top_level.txt", f"{NAME}\n".encode()


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = pathlib.Path(metadata_directory) / f"{NAME}-{_version()}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata())
    (info / "WHEEL").write_text(_wheel_file())
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    extension = _build_extension()
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    target = pathlib.Path(wheel_directory) / name
    partial = target.with_suffix(".whl.partial")
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for arcname, data in _files(extension):
            wheel.writestr(arcname, data)
            writer.writerow(_record_line(arcname, data))
        record_name = f"{NAME}-{_version()}.dist-info/RECORD"
        writer.writerow([record_name, "", ""])
        wheel.writestr(record_name, record.getvalue())
    os.replace(partial, target)  # a wheel is whole or absent
    return name
