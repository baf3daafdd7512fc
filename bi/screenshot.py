"""A screenshot of the dashboard, logged in, once every chart is drawn. Run by Superset's own Python, which has
selenium (requirements-bi.txt); Chromium and chromedriver come from the system (.ci/run installs them).

    .venv/superset/bin/python bi/screenshot.py URL USER PASSWORD OUT.png

Prints one JSON line: per chart (in the page's order) its title, the table rows, canvases and SVG shapes it drew,
whether it shows an error, and its box on the PNG (in the PNG's pixels); then the page title.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from typing import Any

from selenium import webdriver
from selenium.webdriver.common.by import By

CHARTS = """
return [...document.querySelectorAll("[data-test='chart-grid-component']")].map(chart => {
  const box = chart.getBoundingClientRect(), scale = window.devicePixelRatio;
  const title = chart.querySelector("[data-test='slice-header'] .header-title, .header-title");
  return {
    title: (title ? title.innerText : chart.innerText.split("\\n")[0]).trim(),
    rows: chart.querySelectorAll("table tbody tr").length,
    canvases: [...chart.querySelectorAll("canvas")].filter(c => c.width > 0 && c.height > 0).length,
    shapes: chart.querySelectorAll("svg path, svg rect, svg circle").length,
    error: chart.querySelector(".ant-alert-error, [data-test='error-message'], .alert-danger") !== null,
    loading: chart.querySelector(".loading, [data-test='loading-indicator']") !== null,
    box: [box.left, box.top, box.right, box.bottom].map(v => Math.round(v * scale)),
  };
});
"""


def drawn(chart: dict[str, Any]) -> bool:
    return not chart["loading"] and (chart["error"] or chart["rows"] > 0 or chart["canvases"] > 0)


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1600,2800", "--force-device-scale-factor=1"):  # fmt: skip
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(driver_path))


def main(url: str, user: str, password: str, out: str) -> int:
    driver = browser()
    try:
        driver.get(url.split("/superset/")[0] + "/login/")
        driver.find_element(By.ID, "username").send_keys(user)
        driver.find_element(By.ID, "password").send_keys(password + "\n")
        deadline = time.monotonic() + 30
        while "/login" in driver.current_url and time.monotonic() < deadline:
            time.sleep(0.5)
        driver.get(url)
        charts: list[dict[str, Any]] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            charts = driver.execute_script(CHARTS)
            if charts and all(drawn(chart) for chart in charts):
                break
            time.sleep(1)
        time.sleep(3)  # the charts' animations settle
        charts = driver.execute_script(CHARTS)
        driver.save_screenshot(out)
        print(json.dumps({"charts": charts, "title": driver.title}))
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
