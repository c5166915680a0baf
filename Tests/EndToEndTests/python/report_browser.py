"""Opens a conformance report saved with --html in headless Chromium (Selenium,
/usr/bin/chromedriver) and prints the counts the page shows as JSON, with the number of check
rows; saves a screenshot. Usage: report_browser.py REPORT.html SCREENSHOT.png"""
import json
import pathlib
import sys

from selenium import webdriver
from selenium.webdriver.common.by import By

report, shot = sys.argv[1], sys.argv[2]
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"):
    options.add_argument(flag)
driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"), options=options)
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
