"""tests/server/test_web_calculator.py - the web calculator in headless Chromium (Selenium): the figures it shows
equal `llmco2 predict --format json` to the displayed precision, they follow the inputs, the URL keeps and restores
the inputs, the chart has one bar per compared setup that runs, API errors show inline; writes a screenshot.
Exits 77 (CTest: skipped) when Chromium, chromedriver or selenium is missing.
Run: LLMCO2_BIN=build/release/src/cli/llmco2 /usr/bin/python3 tests/server/test_web_calculator.py"""
import os
import pathlib
import shutil
import sys
import urllib.parse

SKIP = 77
# LLMCO2_CHROMIUM / LLMCO2_CHROMEDRIVER name other programs (a missing one shows the skip).
CHROMIUM = os.environ.get("LLMCO2_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("LLMCO2_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"

try:
    from selenium import webdriver
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
from server_process import Server, cli_json, request_flags  # noqa: E402

REQUEST = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "batch": 4, "prompt": 512, "gen": 256, "region": "FRA"}
SHOWN = {  # element id -> the CLI JSON's value it shows
    "energy-j": lambda p: p["energy_j"]["total"],
    "energy-wh": lambda p: p["energy_wh"]["total"],
    "latency-s": lambda p: p["latency_s"]["total"],
    "ttft-ms": lambda p: p["ttft_s"] * 1000,
    "co2-operational": lambda p: p["co2_g"]["operational"]["total"],
    "co2-embodied": lambda p: p["co2_g"]["embodied"]["total"],
    "co2-total": lambda p: p["co2_g"]["total"]["total"],
}


def equal_as_shown(text, value):
    """True when `text` is `value` rounded to the digits `text` shows."""
    try:
        shown = float(text)
    except ValueError:
        return False
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(shown - value) <= 0.5 * 10 ** -decimals * (1 + 1e-9)


def mismatches(driver, expected):
    return {k: (driver.find_element(By.ID, k).text, f(expected)) for k, f in SHOWN.items()
            if not equal_as_shown(driver.find_element(By.ID, k).text, f(expected))}


def wait_for_figures(driver, expected, timeout_s=20):
    try:
        WebDriverWait(driver, timeout_s, poll_frequency=0.1).until(lambda d: not mismatches(d, expected))
    except Exception:
        raise AssertionError(f"shown vs CLI: {mismatches(driver, expected)}; "
                             f"error: {driver.find_element(By.ID, 'error').text!r}")


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
        print("figures equal the CLI's for", REQUEST)

        changed = REQUEST | {"gen": 512}
        before = driver.find_element(By.ID, "energy-j").text
        set_input(driver, "gen", 512)
        wait_for_figures(driver, cli_json("predict", *request_flags(changed)))
        assert driver.find_element(By.ID, "energy-j").text != before
        print("figures follow a change of gen to 512")

        query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).query))
        assert {k: query.get(k) for k in changed} == {k: str(v) for k, v in changed.items()}, query
        shared = driver.current_url
        driver.get("about:blank")
        driver.get(shared)
        wait_for_figures(driver, cli_json("predict", *request_flags(changed)))
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
        bars = driver.find_elements(By.CSS_SELECTOR, "#chart rect.bar")
        assert [(b.get_attribute("data-gpu"), int(b.get_attribute("data-gpus"))) for b in bars] == \
            [(s["gpu"], s["gpus"]) for s in running]
        for bar, setup in zip(bars, running):
            assert abs(float(bar.get_attribute("data-co2-g")) - setup["co2_g"]["total"]) <= 1e-9 * setup["co2_g"]["total"]
        print(f"the chart has {len(bars)} bars, one per setup that runs ({gpu_types} x {counts})")
        driver.save_screenshot(str(artifacts / "web-calculator.png"))

        config = (pathlib.Path(os.environ.get("LLMCO2_DATA", "data")) / "models" / "meta-llama-Llama-3.1-8B.json")
        driver.find_element(By.CSS_SELECTOR, "#config-box summary").click()
        textarea = driver.find_element(By.ID, "model_config")
        driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', "
                              "{bubbles: true}));", textarea, config.read_text())
        wait_for_figures(driver, cli_json("predict", *request_flags(changed)))  # the same config, the same figures
        driver.execute_script("arguments[0].value = '{not json'; arguments[0].dispatchEvent(new Event('input', "
                              "{bubbles: true}));", textarea)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        assert driver.find_element(By.ID, "error").text.startswith("config.json: ")
        driver.execute_script("arguments[0].value = ''; arguments[0].dispatchEvent(new Event('input', "
                              "{bubbles: true}));", textarea)
        WebDriverWait(driver, 20).until(lambda d: not d.find_element(By.ID, "error").is_displayed())
        print("a pasted config.json predicts as the bundled model; a malformed one shows inline")

        set_input(driver, "batch", 0)
        WebDriverWait(driver, 20).until(lambda d: "'batch'" in d.find_element(By.ID, "error").text)
        message = driver.find_element(By.ID, "error").text
        assert "'batch'" in message, message
        print("an API error shows inline:", message)
    finally:
        driver.quit()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
