"""Write an explorable page of a small MLP's graph through its four beats, and optionally a
screenshot of it (beat 2, a released node clicked) with Debian's headless chromium.

    python examples/explore_graph.py graph.html                   # open graph.html in a browser
    python examples/explore_graph.py graph.html --screenshot docs/images/explore.png
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import retrograd as torch
from retrograd import nn
from retrograd.viz import explore


def write_page(path: str) -> str:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x, target = torch.randn(5, 3), torch.randn(5, 2)

    def forward() -> torch.Tensor:  # one training step's forward: called for beat 1, again for beat 4
        return ((model(x) - target) ** 2).mean()

    return explore(forward, path, params=dict(model.named_parameters()), title="a small MLP, step by step")


def screenshot(page: str, png: str, width: int = 1280, height: int = 860) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"):
        options.add_argument(arg)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(Path(page).resolve().as_uri())
        driver.find_element(By.CSS_SELECTOR, '#beat-buttons button[data-beat="2"]').click()
        nodes = driver.find_elements(By.CSS_SELECTOR, '.drawing:not([hidden]) g[data-kind="node"]')
        released = [n for n in nodes if "released" in (n.get_attribute("class") or "")]
        released[len(released) // 2].click()
        time.sleep(0.5)  # let the fade transitions finish
        driver.save_screenshot(png)
    finally:
        driver.quit()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("page", help="the HTML file to write")
    parser.add_argument("--screenshot", metavar="PNG", help="also save a screenshot (needs chromium and selenium)")
    args = parser.parse_args(argv)
    page = write_page(args.page)
    print(f"wrote {page}")
    if args.screenshot:
        screenshot(page, args.screenshot)
        print(f"wrote {args.screenshot}")


if __name__ == "__main__":
    main(sys.argv[1:])
