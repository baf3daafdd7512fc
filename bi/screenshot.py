"""A screenshot of the dashboard, logged in, once its charts are drawn (run by Superset's own Python, which has
selenium; Chromium and chromedriver from the system). Prints one JSON line: how many charts the page holds, how
many tables and canvases (ECharts) they drew, and the PNG's path.

    .venv/superset/bin/python bi/screenshot.py URL PASSWORD OUT.png [CHARTS]
"""

import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.common.by import By


def main(url: str, password: str, out: str, expected: int) -> int:
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1600,1400"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))
    try:
        base = url.split("/superset/")[0]
        driver.get(f"{base}/login/")
        driver.find_element(By.ID, "username").send_keys("admin")
        driver.find_element(By.ID, "password").send_keys(password + "\n")
        time.sleep(2)
        driver.get(url)
        deadline, drawn = time.time() + 90, {}
        while time.time() < deadline:
            drawn = {"tables": len(driver.find_elements(By.CSS_SELECTOR, "[data-test='chart-grid-component'] table")),
                     "canvases": len(driver.find_elements(By.CSS_SELECTOR, "[data-test='chart-grid-component'] canvas"))}
            if drawn["tables"] + min(drawn["canvases"], 1) >= expected:
                break
            time.sleep(1)
        time.sleep(2)  # animations settle
        driver.save_screenshot(out)
        charts = len(driver.find_elements(By.CSS_SELECTOR, "[data-test='chart-grid-component']"))
        print(json.dumps({"charts": charts, **drawn, "png": out, "title": driver.title}))
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1))
