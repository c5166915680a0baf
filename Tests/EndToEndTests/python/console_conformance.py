"""Watches a conformance run on the bench console in headless Chromium (Selenium,
/usr/bin/chromedriver): prints `ready` once the page shows its Conformance section, waits until
the run is finished, then prints the counts the page shows and its rows as JSON and saves a
screenshot. Usage: console_conformance.py URL SCREENSHOT.png"""
import json
import sys
import time

from selenium.webdriver.common.by import By

from headless import chromium

url, shot = sys.argv[1], sys.argv[2]
driver = chromium()
try:
    driver.get(url)
    deadline = time.time() + 30
    while not driver.find_element(By.ID, "conformance").is_displayed():
        if time.time() > deadline:
            print("error the page never showed its Conformance section", flush=True)
            sys.exit(1)
        time.sleep(0.05)
    print("ready", flush=True)
    section = driver.find_element(By.ID, "conformance")
    deadline = time.time() + 240
    while not section.get_attribute("data-finished"):
        if time.time() > deadline:
            print("error the run never finished on the page: " + driver.find_element(By.ID, "conformance-progress").text, flush=True)
            sys.exit(1)
        time.sleep(0.1)
    rows = driver.find_elements(By.CSS_SELECTOR, "#conformance-results tr")
    shown = {key: int(section.get_attribute("data-" + "".join("-" + c.lower() if c.isupper() else c for c in key)) or -1)
             for key in ("passed", "failed", "advisoriesFailed", "notApplicable", "notRun")}
    shown["finished"] = section.get_attribute("data-finished")
    shown["total"] = int(section.get_attribute("data-total"))
    shown["rows"] = [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    shown["summary"] = driver.find_element(By.ID, "conformance-summary").text
    driver.save_screenshot(shot)
    print(json.dumps(shown), flush=True)
finally:
    driver.quit()
