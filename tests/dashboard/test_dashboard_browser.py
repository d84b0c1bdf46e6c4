"""The live dashboard in headless Chromium: log in with the token, see the node rows and the charts, create a
pod with kubectl and see it appear; screenshots of every page go to benchmarks/results/screens/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_helpers import PODGROUP, QUOTA, node, pod, reservation
from serve_helpers import KUBECTL, Served, running

from browser_helpers import SCREENS, chromium, missing

pytestmark = [
    pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH"),
    pytest.mark.skipif(missing() is not None, reason=f"browser test skipped: {missing()}"),
]
WAIT = 20.0
CHARTS = [  # (title, series) of the overview's charts: the report's (drawSimulate's) time series
    ("Cluster", 3),  # cpu, memory, pods
    ("cpu per node group (shape)", 1),
    ("memory per node group (shape)", 1),
    ("pods per node group (shape)", 1),
    ("Pending pods", 1),
    ("Scheduling latency: creation to binding (s)", 2),  # mean, max
    ("Wait of pending pods (s)", 2),
    ("Scheduled pods (cumulative)", 1),  # the watch sees no attempts
    ("Preemption victims and evictions (cumulative)", 2),  # the watch sees victims, not attempts
    ("Reservation occupancy: cpu", 3),  # reserved, allocated, free
    ("Reservation occupancy: memory", 3),
    ("ElasticQuota default/team-a: cpu", 3),  # used, min, max
    ("ElasticQuota default/team-a: memory", 3),
    ("PodGroups short of minMember", 1),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("dashboard-browser"), "--kubelet", "none") as served:
        served.apply(*(node(f"n{i}") for i in range(1, 41)), QUOTA, PODGROUP, reservation("r1", "500m", "n1"))
        served.apply(pod("a", "1", node_name="n1"), pod("huge", "64", node_name="n2"))
        yield served


def wait_for(driver: Any, script: str, what: str) -> Any:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.1).until(lambda d: d.execute_script(script))
    except TimeoutException:
        raise AssertionError(f"never happened in the browser: {what}\n{driver.page_source[:2000]}") from None


def login(driver: Any, server: Served) -> None:
    """Log in through the form (it sets the token cookie)."""
    from selenium.webdriver.common.by import By

    for _ in range(
        3
    ):  # a first navigation of a fresh headless Chromium on a loaded machine may come back blank
        driver.get(f"{server.url}/ui")
        if "Berth dashboard" in driver.page_source:
            break
    assert "Berth dashboard" in driver.page_source  # the login form
    driver.find_element(By.NAME, "token").send_keys(server.token)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(driver, "return !!document.getElementById('conn')", "the dashboard after the login")


def test_dashboard_in_chromium(server: Served, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    SCREENS.mkdir(parents=True, exist_ok=True)
    with chromium(tmp_path / "profile") as driver:
        login(driver, server)
        wait_for(
            driver, "return document.getElementById('conn').textContent === 'live'", "the stream is live"
        )
        # charts: the HTML report's time-series chart set (berth-charts.js seriesCharts), drawn with a point or more
        wait_for(
            driver,
            f"const c = [...document.querySelectorAll('#charts svg.berth-chart')]; return c.length === {len(CHARTS)} && "
            "c.every(s => Number(s.dataset.points) >= 1 && s.getBoundingClientRect().width > 0)",
            "the charts render",
        )
        charts = driver.execute_script(
            "return [...document.querySelectorAll('#charts svg.berth-chart')]"
            ".map(s => [s.getAttribute('aria-label'), Number(s.dataset.series)])"
        )
        assert [tuple(c) for c in charts] == CHARTS
        wait_for(driver, "return document.body.innerText.includes('pending pods')", "the totals")
        wait_for(  # a second chart point, so that the charts show lines
            driver,
            "return Number(document.querySelector('#charts svg.berth-chart').dataset.points) >= 2",
            "two chart points",
        )
        driver.save_screenshot(str(SCREENS / "dashboard.png"))

        driver.get(f"{server.url}/ui#nodes")
        rows = wait_for(
            driver,
            "const r = document.querySelectorAll('.node-row'); return r.length ? r.length : 0",
            "the node rows",
        )
        assert 0 < rows < 40 + 1  # virtualised: only the rows in view (40 nodes, ~25 fit)
        assert driver.execute_script("return document.querySelector('.node-row').dataset.node") == "n1"
        driver.save_screenshot(str(SCREENS / "dashboard-nodes.png"))

        driver.get(f"{server.url}/ui#pending")
        wait_for(
            driver, "return !!document.querySelector('tr[data-pod=\"default/huge\"]')", "the pending pod"
        )
        done = server.kubectl(
            "run",
            "from-kubectl",
            "--image=x",
            "--restart=Never",
            "--overrides",
            '{"spec":{"nodeSelector":{"kubernetes.io/hostname":"nowhere"}}}',
        )
        assert done.returncode == 0, done.stderr
        wait_for(
            driver,
            "return !!document.querySelector('tr[data-pod=\"default/from-kubectl\"]')",
            "the pod created with kubectl appears",
        )
        driver.find_element(By.CSS_SELECTOR, 'tr[data-pod="default/huge"]').click()
        wait_for(  # the scheduler retries the pod and the attempt shows node by node, plugin by plugin
            driver,
            "return document.getElementById('explain').dataset.attempt",
            "the explain panel with a recorded attempt",
        )
        text = driver.find_element(By.ID, "explain").text
        assert "default/huge" in text and "Insufficient cpu" in text and "NodeResourcesFit" in text
        driver.save_screenshot(str(SCREENS / "dashboard-pending.png"))

        driver.get(f"{server.url}/ui#reservations")
        wait_for(
            driver, "return document.querySelector('#reservations tbody').innerText.includes('r1')", "r1"
        )
        driver.save_screenshot(str(SCREENS / "dashboard-reservations.png"))
        driver.get(f"{server.url}/ui#quotas")
        wait_for(
            driver, "return document.querySelector('#quotas tbody').innerText.includes('team-a')", "quota"
        )
        driver.save_screenshot(str(SCREENS / "dashboard-quotas.png"))
        errors = [
            e["message"]
            for e in driver.get_log("browser")
            if e.get("level") == "SEVERE" and "/ui - Failed to load resource" not in e["message"]
        ]  # (the login form itself is a 401)
        assert not errors, "\n".join(errors)
    assert (SCREENS / "dashboard.png").stat().st_size > 10_000


def test_5000_nodes_stay_smooth(served_5000: Served, tmp_path: Path) -> None:
    """5 000 nodes: the list keeps only the rows in view in the DOM while scrolling to the end."""
    with chromium(tmp_path / "profile") as driver:
        login(driver, served_5000)
        driver.get(f"{served_5000.url}/ui#nodes")
        wait_for(
            driver,
            "const e = document.getElementById('node-count'); return !!e && e.textContent === '5000 of 5000 nodes'",
            "5000 nodes listed",
        )
        rows = driver.execute_script("return document.querySelectorAll('.node-row').length")
        assert 0 < rows < 80
        most = driver.execute_script(
            """const vp = document.getElementById('node-viewport');
            let most = 0;
            for (let i = 0; i < 50; i++) {
              vp.scrollTop = (i + 1) * 100 * 28; vp.dispatchEvent(new Event('scroll'));
              most = Math.max(most, document.querySelectorAll('.node-row').length);
            }
            vp.scrollTop = vp.scrollHeight;
            vp.dispatchEvent(new Event('scroll'));
            return most;"""
        )
        assert most < 80
        wait_for(
            driver, "return !!document.querySelector('.node-row[data-node=\"node-04999\"]')", "the last row"
        )
        assert driver.execute_script("return document.querySelectorAll('.node-row').length") < 80
        driver.save_screenshot(str(SCREENS / "dashboard-5000-nodes.png"))
