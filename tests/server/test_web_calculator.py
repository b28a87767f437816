"""tests/server/test_web_calculator.py - the web calculator in headless Chromium (Selenium): the figures it shows
(energy, latency, TTFT, TPOT, tokens/s, energy per 1,000 output tokens, CO2, each with its unit, and the energy
scope) equal `llmco2 predict --format json` to the displayed precision, they follow the inputs and name the model
computed (a pasted config.json's own name), the URL keeps and restores the inputs, the chart has one bar per compared
setup that runs with its value, axis ticks with units, axis labels and a legend, the page fits 400 px without
horizontal scrolling, API errors show inline in the form's words and clear the previous figures; writes screenshots
at desktop width and at 400 px.
Exits 77 (CTest: skipped) when Chromium, chromedriver or selenium is missing.
Run: LLMCO2_BIN=build/release/src/cli/llmco2 /usr/bin/python3 tests/server/test_web_calculator.py"""
import json
import os
import pathlib
import re
import shutil
import sys
import urllib.parse

SKIP = 77
# LLMCO2_CHROMIUM / LLMCO2_CHROMEDRIVER name other programs (a missing one shows the skip).
CHROMIUM = os.environ.get("LLMCO2_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("LLMCO2_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"

try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    print("SKIP: python3-selenium is not installed (apt-get install python3-selenium)")
    sys.exit(SKIP)
for program in (CHROMIUM, CHROMEDRIVER):
    if not os.access(program, os.X_OK):
        print(f"SKIP: {program} is missing (apt-get install chromium chromium-driver)")
        sys.exit(SKIP)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server_process import Server, cli_error, cli_json, request_flags  # noqa: E402

REQUEST = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "batch": 4, "prompt": 512, "gen": 256, "region": "FRA"}
SHOWN = {  # element id -> the CLI JSON's value it shows, and the unit written after it
    "energy-j": (lambda p: p["energy_j"]["total"], "J"),
    "energy-wh": (lambda p: p["energy_wh"]["total"], "Wh"),
    "energy-per-1k-j": (lambda p: p["energy_per_1k_output_tokens_j"], "J"),
    "energy-per-1k-wh": (lambda p: p["energy_per_1k_output_tokens_wh"], "Wh"),
    "latency-s": (lambda p: p["latency_s"]["total"], "s"),
    "ttft-ms": (lambda p: p["ttft_s"] * 1000, "ms"),
    "tpot-ms": (lambda p: p["tpot_s"] * 1000, "ms"),
    "tokens-per-s": (lambda p: p["output_tokens_per_s"], "tokens/s"),
    "co2-operational": (lambda p: p["co2_g"]["operational"]["total"], "g"),
    "co2-embodied": (lambda p: p["co2_g"]["embodied"]["total"], "g"),
    "co2-total": (lambda p: p["co2_g"]["total"]["total"], "g"),
}
# The form's label of each flag the API's messages name.
LABELS = {"--gpus": "GPUs", "--prompt": "Prompt tokens", "--batch": "Batch", "--gen": "Generated tokens"}


def equal_as_shown(text, value):
    """True when `text` is `value` rounded to the digits `text` shows."""
    try:
        shown = float(text)
    except ValueError:
        return False
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(shown - value) <= 0.5 * 10 ** -decimals * (1 + 1e-9)


def shown_texts(driver):
    """Each figure's text and its cell's (value and unit), the model and the energy scope, in one round trip."""
    return driver.execute_script("""
        const out = {};
        for (const id of arguments[0]) {
          const e = document.getElementById(id);
          out[id] = [e.innerText.trim(), e.parentElement.innerText.trim()];
        }
        return out;""", [*SHOWN, "shown-model", "energy-scope", "evidence"])


def mismatches(driver, expected):
    """Each figure that differs from the CLI's, a unit missing after it, the model, the energy scope or the evidence
    label not the CLI's."""
    texts, out = shown_texts(driver), {}
    for key, (value, unit) in SHOWN.items():
        text, cell = texts[key]
        if not equal_as_shown(text, value(expected)) or not re.search(re.escape(text) + " " + re.escape(unit) + r"\b",
                                                                      cell):
            out[key] = (cell, value(expected), unit)
    evidence = expected["evidence"]
    shown_evidence = f"{evidence['label']}: {evidence['reason']}" if evidence["label"] else evidence["reason"]
    for key, value in (("shown-model", expected["model"]), ("energy-scope", expected["energy_scope_label"]),
                       ("evidence", shown_evidence)):
        if texts[key][0] != value:
            out[key] = (texts[key][0], value)
    return out


def wait_for_figures(driver, expected, timeout_s=20):
    try:
        WebDriverWait(driver, timeout_s, poll_frequency=0.1).until(lambda d: not mismatches(d, expected))
    except Exception:
        raise AssertionError(f"shown vs CLI: {mismatches(driver, expected)}; "
                             f"error: {driver.find_element(By.ID, 'error').text!r}")


def paste_config(driver, text):
    textarea = driver.find_element(By.ID, "model_config")
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', "
                          "{bubbles: true}));", textarea, text)


def in_form_words(message):
    for flag, label in LABELS.items():
        message = re.sub(re.escape(flag) + r"\b", label, message)
    return message


def check_chart(driver, running):
    """The bars are the setups that run, each with its value; the value axis has ticks with units and a label, the
    setup axis a label; the legend names the colours."""
    bars = driver.find_elements(By.CSS_SELECTOR, "#chart rect.bar")
    assert [(b.get_attribute("data-gpu"), int(b.get_attribute("data-gpus"))) for b in bars] == \
        [(s["gpu"], s["gpus"]) for s in running]
    for bar, setup in zip(bars, running):
        co2 = setup["co2_g"]["total"]["total"]
        assert abs(float(bar.get_attribute("data-co2-g")) - co2) <= 1e-9 * co2
    values = [t.get_attribute("textContent") for t in driver.find_elements(By.CSS_SELECTOR, "#chart text.bar-value")]
    assert len(values) == len(running), values
    for text, setup in zip(values, running):
        assert text.endswith(" g") and equal_as_shown(text[:-2], setup["co2_g"]["total"]["total"]), (text, setup["co2_g"])
    ticks = [t.get_attribute("textContent") for t in driver.find_elements(By.CSS_SELECTOR, "#chart text.tick")]
    assert len(ticks) >= 2 and all(re.fullmatch(r"\d+(\.\d+)? g", t) for t in ticks), ticks
    numbers = [float(t[:-2]) for t in ticks]
    assert numbers == sorted(numbers) and numbers[0] == 0, ticks
    assert numbers[-1] >= max(s["co2_g"]["total"]["total"] for s in running), (ticks, running)
    labels = {t.get_attribute("class"): t.get_attribute("textContent")
              for t in driver.find_elements(By.CSS_SELECTOR, "#chart .axis-label")}
    assert "CO₂" in labels["axis-label x"] and "(g)" in labels["axis-label x"], labels
    assert "GPU" in labels["axis-label y"], labels
    legend = driver.find_element(By.ID, "chart-legend")
    assert legend.is_displayed() and "lowest-carbon" in legend.text and "chosen" in legend.text, legend.text
    assert "node" in driver.find_element(By.ID, "chart-scope").text


def overflow(driver):
    """What sticks out of a narrow viewport: the page's horizontal scroll, any input off-screen."""
    return driver.execute_script("""
        const width = document.documentElement.clientWidth, out = [];
        if (document.documentElement.scrollWidth > width) out.push(`page ${document.documentElement.scrollWidth}px`);
        for (const e of document.querySelectorAll("input, select, textarea, svg, table")) {
          const r = e.getBoundingClientRect();
          if (r.left < 0 || r.right > width + 0.5) out.push(`${e.id || e.tagName}: ${r.left}-${r.right}px`);
        }
        return out;""")


def set_viewport(driver, width, height):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def set_input(driver, element_id, value):
    element = driver.find_element(By.ID, element_id)
    if element.tag_name == "select":
        Select(element).select_by_value(str(value))
    else:
        element.clear()
        element.send_keys(str(value))


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1500"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def main():
    artifacts = pathlib.Path(os.environ.get("LLMCO2_ARTIFACTS", "build/release/test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    server = Server()
    driver = browser()
    try:
        driver.get(server.url + "/")
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-generation"))
        for key, value in REQUEST.items():
            set_input(driver, key, value)
        wait_for_figures(driver, cli_json("predict", *request_flags(REQUEST)))
        print("figures, units, model and energy scope equal the CLI's for", REQUEST)

        changed = REQUEST | {"gen": 512}
        before = driver.find_element(By.ID, "energy-j").text
        set_input(driver, "gen", 512)
        expected = cli_json("predict", *request_flags(changed))
        wait_for_figures(driver, expected)
        assert driver.find_element(By.ID, "energy-j").text != before
        print("figures follow a change of gen to 512")

        query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).query))
        assert {k: query.get(k) for k in changed} == {k: str(v) for k, v in changed.items()}, query
        shared = driver.current_url
        driver.get("about:blank")
        driver.get(shared)
        wait_for_figures(driver, expected)
        for key, value in changed.items():
            assert driver.find_element(By.ID, key).get_attribute("value") == str(value), key
        print("the URL keeps the inputs and restores them:", shared)

        chart = driver.find_element(By.ID, "chart")
        gpu_types, counts = chart.get_attribute("data-gpu-types"), chart.get_attribute("data-counts")
        setups = cli_json("compare", *request_flags(changed), "--gpu-types", gpu_types, "--counts", counts,
                          "--plot", str(artifacts / "web-calculator-compare"), "--quiet")["setups"]
        running = [s for s in setups if "unavailable" not in s]
        WebDriverWait(driver, 20).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chart rect.bar")) == len(running))
        check_chart(driver, running)
        print(f"the chart has {len(running)} bars, one per setup that runs ({gpu_types} x {counts}), with values, "
              "ticks, axis labels and a legend")
        set_viewport(driver, 1280, driver.execute_script("return document.documentElement.scrollHeight"))
        driver.save_screenshot(str(artifacts / "web-calculator.png"))

        set_viewport(driver, 400, 900)
        WebDriverWait(driver, 5, poll_frequency=0.1).until(lambda d: not overflow(d))
        WebDriverWait(driver, 5, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: check_chart(d, running) or True)  # redrawn at the narrow width, all of it still there
        set_viewport(driver, 400, driver.execute_script("return document.documentElement.scrollHeight"))
        driver.save_screenshot(str(artifacts / "web-calculator-400px.png"))
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        print("at 400 px every input is on screen and nothing scrolls sideways")

        # A pasted config.json is what runs, and the figures say so: its name, not the model chosen above.
        set_input(driver, "model", "qwen2-0.5b")
        config = json.loads((pathlib.Path(os.environ.get("LLMCO2_DATA", "data")) / "models" /
                             "meta-llama-Llama-3.1-8B.json").read_text())
        driver.find_element(By.CSS_SELECTOR, "#config-box summary").click()
        paste_config(driver, json.dumps(config | {"_name_or_path": "example-org/pasted-llama"}))
        wait_for_figures(driver, expected | {"model": "example-org/pasted-llama"})  # the same config, the same figures
        paste_config(driver, json.dumps(config))  # no name in it: its model_type
        wait_for_figures(driver, expected | {"model": config["model_type"]})
        paste_config(driver, "{not json")
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        assert driver.find_element(By.ID, "error").text.startswith("config.json: ")
        texts = shown_texts(driver)
        assert all(texts[k][0] == "–" for k in SHOWN), f"figures left beside the error: {texts}"
        paste_config(driver, "")
        WebDriverWait(driver, 20).until(lambda d: not d.find_element(By.ID, "error").is_displayed())
        qwen = changed | {"model": "qwen2-0.5b"}
        wait_for_figures(driver, cli_json("predict", *request_flags(qwen)))
        print("a pasted config.json predicts as the bundled model under its own name; a malformed one shows inline")

        # An error in the form's words, and no figure of the previous inputs left beside it.
        set_input(driver, "gpus", 1000)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        message = driver.find_element(By.ID, "error").text
        assert message == in_form_words(cli_error("predict", *request_flags(qwen | {"gpus": 1000}))), message
        assert message.startswith("GPUs ") and "--" not in message, message
        assert driver.find_element(By.ID, "gpus").get_attribute("aria-invalid") == "true"
        left = {k: text for k, (text, _) in shown_texts(driver).items()}
        assert all(v in ("–", "") for v in left.values()), f"figures left beside the error: {left}"
        assert not driver.find_elements(By.CSS_SELECTOR, "#chart rect.bar"), "bars left beside the error"
        assert "--" not in driver.find_element(By.ID, "compare-error").text
        print("an API error shows inline in the form's words and clears the figures:", message)

        set_input(driver, "gpus", 1)
        set_input(driver, "batch", 0)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "error").text.startswith("Batch: "))
        message = driver.find_element(By.ID, "error").text
        assert "key 'batch'" not in message and "request:" not in message, message
        print("a refused key shows as its field:", message)
    finally:
        driver.quit()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
