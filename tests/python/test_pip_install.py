"""`pip install .` into a fresh virtual environment, offline (--no-index): the wheel's package imports from the
environment, reads its own copy of the catalogs and answers as the CLI does (pyproject.toml, python/build_backend).

Run by ctest as `python3 test_pip_install.py SOURCE BUILD_DIR LLMCO2_BIN WORK`: BUILD_DIR is reused as the backend's
CMake folder (LLMCO2_BUILD_DIR), so the extension is not compiled twice.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys


def main(source, build_dir, llmco2_bin, work):
    work = pathlib.Path(work)
    shutil.rmtree(work, ignore_errors=True)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, LLMCO2_BUILD_DIR=build_dir)
    env.pop("LLMCO2_DATA_DIR", None)
    env.pop("PYTHONPATH", None)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--quiet", source], check=True, env=env,
                   cwd=work)
    probe = ("import json, os, pathlib, llmco2\n"
             "from llmco2 import research\n"
             "r = llmco2.predict(model='llama-3.1-8b', gpu='l4', prompt=512, gen=64, scope='gpu')\n"
             "s = research.simulate(model='llama-3.1-8b', gpu='l4', prompt=512, gen=64)\n"
             "stubs = sorted(p.name for p in pathlib.Path(llmco2.__file__).parent.glob('*.pyi'))\n"
             "print(json.dumps({'file': llmco2.__file__, 'data': os.environ['LLMCO2_DATA_DIR'],\n"
             "                  'energy_j': r['energy_j']['total'], 'versions': llmco2.versions(),\n"
             "                  'research': research.__file__, 'simulated_j': s['energy_j']['total'],\n"
             "                  'stubs': stubs}))\n")
    out = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", probe], check=True, env=env, cwd=work,
                                    capture_output=True, text=True).stdout)
    site = str(venv)
    assert out["file"].startswith(site), f"imported from {out['file']}, not from the environment {site}"
    assert out["data"].startswith(site), f"catalogs read from {out['data']}, not the package's copy"
    cli = json.loads(subprocess.run([llmco2_bin, "predict", "--model", "llama-3.1-8b", "--gpu", "l4", "--prompt",
                                     "512", "--gen", "64", "--scope", "gpu", "--format", "json"], check=True,
                                    capture_output=True, text=True).stdout)
    assert out["energy_j"] == cli["energy_j"]["total"], (out["energy_j"], cli["energy_j"]["total"])
    assert out["research"].startswith(site), out["research"]  # llmco2.research and its stubs are in the wheel
    assert out["stubs"] == ["__init__.pyi", "research.pyi"], out["stubs"]
    simulated = json.loads(subprocess.run([llmco2_bin, "simulate", "--model", "llama-3.1-8b", "--gpu", "l4",
                                           "--prompt", "512", "--gen", "64", "--format", "json"], check=True,
                                          capture_output=True, text=True).stdout)
    assert out["simulated_j"] == simulated["energy_j"]["total"], (out["simulated_j"], simulated["energy_j"])
    version_line = subprocess.run([llmco2_bin, "--version"], check=True, capture_output=True, text=True).stdout
    assert f"llmco2 {out['versions']['llmco2']}\n" in version_line, version_line
    assert f"data {out['versions']['data']} " in version_line, (out["versions"], version_line)  # the same catalogs
    print(f"pip install . -> {out['file']}: predict {out['energy_j']:.6g} J = the CLI's")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
