"""Headless Chromium for the browser tests: Debian's chromium driven through /usr/bin/chromedriver
by Selenium, at the console's target size; nothing is downloaded."""
from selenium import webdriver


def chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(flag)
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"), options=options)
