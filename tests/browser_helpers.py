"""Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by its chromium-driver through
Selenium; never a downloaded browser or driver. `browser_or_skip` gives the reason a test is skipped when any
of them is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCREENS = Path(__file__).parents[1] / "benchmarks" / "results" / "screens"


def missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium chromium-driver)"
    if not Path(CHROMEDRIVER).exists():
        return f"no chromedriver at {CHROMEDRIVER} (Debian: apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install -e '.[dev]')"
    return None


@contextmanager
def chromium(profile: Path, width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A headless Chromium (Selenium WebDriver) with a fresh profile in `profile`, quit afterwards. The
    servers under test have self-signed certificates, so certificate errors are ignored."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--ignore-certificate-errors",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
