"""Opens a conformance report saved with --html in headless Chromium (Selenium,
/usr/bin/chromedriver) and prints the counts the page shows as JSON, with the number of check
rows; saves a screenshot. Usage: report_browser.py REPORT.html SCREENSHOT.png"""
import json
import pathlib
import sys

from selenium.webdriver.common.by import By

from headless import chromium

report, shot = sys.argv[1], sys.argv[2]
driver = chromium()
try:
    driver.get(pathlib.Path(report).resolve().as_uri())
    counts = {key: int(driver.find_element(By.ID, "count-" + key).text)
              for key in ("passed", "failed", "advisories-failed", "not-applicable", "not-run")}
    counts["rows"] = len(driver.find_elements(By.CSS_SELECTOR, "tbody tr"))
    counts["verdict"] = driver.find_element(By.ID, "verdict").text
    driver.save_screenshot(shot)
    print(json.dumps(counts), flush=True)
finally:
    driver.quit()
