"""Drives the bench console in headless Chromium (Selenium, /usr/bin/chromedriver) as a person
watching it: prints `ready` once the page shows the lock, then for each decision the test asks
for (`granted`, `denied`, in order; a kind may repeat) waits for its row, prints `row N KIND EPOCH
TEXT` with the moment it appeared and `panel N KIND {...}` (the lock panel then), and saves a
screenshot. Usage: console_browser.py URL SCREENSHOT_DIR KIND..."""
import json
import sys
import time

from selenium.webdriver.common.by import By

from headless import chromium

url, shots, kinds = sys.argv[1], sys.argv[2], sys.argv[3:]
driver = chromium()
try:
    driver.get(url)
    deadline = time.time() + 30
    while "certified" not in driver.find_element(By.ID, "lock-state").text:
        if time.time() > deadline:
            print("error the page never showed the lock", flush=True)
            sys.exit(1)
        time.sleep(0.02)
    # What a screen reader finds: the landmarks and the live table.
    landmarks = [e.tag_name for e in driver.find_elements(By.CSS_SELECTOR, "header, main, section[aria-labelledby]") if e.is_displayed()]
    print("landmarks " + json.dumps(landmarks), flush=True)
    print("lock " + json.dumps({k: driver.find_element(By.ID, "lock-" + k).text for k in ("certification", "bolt", "clock", "audit")}), flush=True)
    print("ready", flush=True)
    for index, kind in enumerate(kinds):
        deadline = time.time() + 30
        wanted = kinds[: index + 1].count(kind)
        while True:
            rows = driver.find_elements(By.CSS_SELECTOR, "#transactions tr." + kind)
            if len(rows) >= wanted:
                seen = time.time()
                break
            if time.time() > deadline:
                print("error no %s row within 30 s" % kind, flush=True)
                sys.exit(1)
            time.sleep(0.01)
        # The row's APDUs arrive just after its decision: open them as a person would.
        apdu_deadline = time.time() + 10
        while not rows[0].find_elements(By.CSS_SELECTOR, "td.apdus summary"):
            if time.time() > apdu_deadline:
                break
            time.sleep(0.01)
        for summary in rows[0].find_elements(By.CSS_SELECTOR, "td.apdus summary"):
            summary.click()
        text = " | ".join(td.text.replace("\n", " ; ") for td in rows[0].find_elements(By.TAG_NAME, "td"))
        driver.save_screenshot("%s/console-%d-%s.png" % (shots, index + 1, kind))
        print("panel %d %s %s" % (index + 1, kind, json.dumps({"audit": driver.find_element(By.ID, "lock-audit").text,
                                                 "bolt": driver.find_element(By.ID, "lock-bolt").text,
                                                 "radios": driver.find_element(By.ID, "radio-state").text,
                                                 "latency": driver.find_element(By.ID, "latency-text").text,
                                                 "plotted": str(sum(len((p.get_attribute("points") or "").split()) - 1
                                                                    for p in driver.find_elements(By.CSS_SELECTOR, "#latency polyline")))})), flush=True)
        print("row %d %s %.3f %s" % (index + 1, kind, seen, text), flush=True)
finally:
    driver.quit()
