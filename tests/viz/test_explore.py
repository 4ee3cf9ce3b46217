"""viz.explore: the self-contained graph page. The page's data is checked against the graph and
hand-derived gradients; the page itself is loaded in a real headless browser (Debian's chromium
and chromedriver through selenium), skipped when they are absent unless
RETROGRAD_REQUIRE_BROWSER=1 (CI sets it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import retrograd as rg

pytest.importorskip("graphviz")
if shutil.which("dot") is None:  # pragma: no cover - depends on the environment
    pytest.skip("the Graphviz 'dot' binary is not installed", allow_module_level=True)

from retrograd.autograd.graph import FREED_MESSAGE  # noqa: E402
from retrograd.viz import explore  # noqa: E402

REQUIRE_BROWSER = os.environ.get("RETROGRAD_REQUIRE_BROWSER") == "1"


def walk(root: Any) -> list[Any]:
    """Every backward node reachable from ``root`` (the oracle for the page's node count)."""
    seen: dict[int, Any] = {}
    stack = [root]
    while stack:
        fn = stack.pop()
        if id(fn) not in seen:
            seen[id(fn)] = fn
            stack.extend(nxt for nxt, _ in fn.next_functions if nxt is not None)
    return list(seen.values())


def page_data(path: str | Path) -> dict[str, Any]:
    text = Path(path).read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', text, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


class Model:
    """loss = tanh(x * w + b).sum(): x and w are leaves that require grad, b does not."""

    def __init__(self) -> None:
        self.x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
        self.w = rg.tensor([0.5, -1.0, 0.25], requires_grad=True)
        self.b = rg.tensor([0.1, 0.2, 0.3])

    def __call__(self) -> Any:
        return (self.x * self.w + self.b).tanh().sum()

    def params(self) -> dict[str, Any]:
        return {"x": self.x, "w": self.w}

    def dtanh(self) -> Any:
        """d loss / d (x*w + b), by hand: 1 - tanh^2."""
        u = self.x.detach().numpy() * self.w.detach().numpy() + self.b.numpy()
        return 1 - np.tanh(u) ** 2


# -- the file and its data --------------------------------------------------------------------


def test_file_is_self_contained(tmp_path: Path) -> None:
    m = Model()
    text = Path(explore(m, tmp_path / "g.html", params=m.params())).read_text(encoding="utf-8")
    assert not re.search(r"https?://", text)
    assert not re.search(r"<(link|img|iframe)\b|<script[^>]*\ssrc=|@import|url\((?!#)", text)
    assert text.count('class="drawing"') == 1  # the new forward built the same graph: one shared drawing
    assert "<?xml" not in text and "<!DOCTYPE svg" not in text


def floats(preview: str) -> Any:
    return np.array(json.loads(preview.replace(", …", "")), dtype=np.float64)


def test_beats_data_against_the_graph_and_hand_derived_gradients(tmp_path: Path) -> None:
    m = Model()
    beats = page_data(explore(m, tmp_path / "g.html", params=m.params()))["beats"]
    assert [b["n"] for b in beats] == [1, 2, 3, 4]
    one, two, three, four = beats
    nodes1 = [r for r in one["nodes"].values() if r["kind"] == "node"]
    assert sorted(r["op"] for r in nodes1) == sorted(
        ["SumBackward0", "TanhBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad"])
    assert len(nodes1) == len(walk(m().grad_fn))
    mul = next(r for r in nodes1 if r["op"] == "MulBackward0")
    # mul saved both float32 (3,) inputs: 12 bytes each, with their values as the preview
    assert {s["name"]: (s["bytes"], s["shape"], s["dtype"], s["freed"]) for s in mul["saved"]} == {
        "self": (12, [3], "float32", False), "other": (12, [3], "float32", False)}
    assert [s["preview"] for s in mul["saved"]] == ["[1, 2, 3]", "[0.5, -1, 0.25]"]
    assert [(i["op"], i["shape"], i["dtype"], i["leaf"]) for i in mul["inputs"]] == [
        ("AccumulateGrad", [3], "float32", "x"), ("AccumulateGrad", [3], "float32", "w")]
    assert (mul["shape"], mul["dtype"]) == ([3], "float32")
    add = next(r for r in nodes1 if r["op"] == "AddBackward0")
    assert add["inputs"][1] == {"op": None}  # b does not require grad: no edge
    assert not any(r["released"] for r in nodes1) and all(r["grads"] is None for r in nodes1)
    assert set(one["edges"]) == {"fwd"}
    assert (one["held"], one["freed"]) == (36, 0)  # x, w and tanh's result: 3 float32 (3,) arrays

    # beat 2: the gradient into mul's output is 1 - tanh(u)^2, and mul sent w * that to x;
    # mul and tanh (which saved tensors) are released, their bytes still reported
    mul2 = next(r for r in two["nodes"].values() if r.get("op") == "MulBackward0")
    np.testing.assert_allclose(floats(mul2["grads"][0]["preview"]), m.dtanh(), rtol=1e-3)
    np.testing.assert_allclose(floats(mul2["inputs"][0]["grad"]["preview"]), m.dtanh() * m.w.detach().numpy(),
                               rtol=1e-3)
    released = sorted(r["op"] for r in two["nodes"].values() if r.get("released"))
    assert released == ["MulBackward0", "TanhBackward0"]
    assert [(s["bytes"], s["freed"]) for s in mul2["saved"]] == [(12, True), (12, True)]
    assert (two["held"], two["freed"]) == (0, 36)
    # every drawn edge carried a gradient back (b's input has no edge)
    assert set(two["edges"]) == {"grad"}
    leaf_x = next(r for r in two["nodes"].values() if r["kind"] == "leaf" and r["name"] == "x")
    np.testing.assert_allclose(floats(leaf_x["grad"]["preview"]), m.dtanh() * m.w.detach().numpy(), rtol=1e-3)

    # beat 3: the second backward raises PyTorch's error at a released node (the first one
    # backward reaches: tanh), having crossed only the edges above it
    assert three["error"].startswith("RuntimeError: " + FREED_MESSAGE)  # then where the first backward ran
    assert [r["op"] for r in three["nodes"].values() if r.get("raised")] == ["TanhBackward0"]
    assert 0 < three["edges"].count("grad") < len(three["edges"])

    # beat 4: a fresh graph, nothing released, the leaves keep the first backward's .grad
    assert not any(r.get("released") for r in four["nodes"].values())
    x4 = next(r for r in four["nodes"].values() if r["kind"] == "leaf" and r["name"] == "x")
    assert x4["grad"]["preview"] == leaf_x["grad"]["preview"]
    np.testing.assert_allclose(floats(x4["grad_accumulated"]["preview"]), 2 * floats(x4["grad"]["preview"]), rtol=1e-3)
    # the leaves hold the sum of the two backward passes that ran
    np.testing.assert_allclose(m.x.grad.numpy(), 2 * m.dtanh() * m.w.detach().numpy(), rtol=1e-6)


def test_retain_graph_lets_the_second_backward_run(tmp_path: Path) -> None:
    m = Model()
    beats = page_data(explore(m, tmp_path / "g.html", params=m.params(), retain_graph=True))["beats"]
    assert beats[2]["error"] is None
    assert not any(r.get("released") for b in beats for r in b["nodes"].values())
    # beats 2, 3 and the fresh graph's backward accumulated into .grad: three times the gradient
    np.testing.assert_allclose(m.x.grad.numpy(), 3 * m.dtanh() * m.w.detach().numpy(), rtol=1e-6)


def test_a_tensor_gives_one_beat_and_runs_nothing(tmp_path: Path) -> None:
    m = Model()
    loss = m()
    beats = page_data(explore(loss, tmp_path / "g.html", params=m.params()))["beats"]
    assert len(beats) == 1 and beats[0]["title"] == "after forward"
    assert beats[0]["held"] == 36
    assert m.x.grad is None
    loss.backward()
    beats = page_data(explore(loss, tmp_path / "g.html"))["beats"]
    assert beats[0]["title"] == "after backward"
    assert sorted(r["op"] for r in beats[0]["nodes"].values() if r.get("released")) == ["MulBackward0", "TanhBackward0"]
    mul = next(r for r in beats[0]["nodes"].values() if r.get("op") == "MulBackward0")
    assert mul["line"] == "freed" and all(s["freed"] and s["bytes"] is None for s in mul["saved"])


class Twice(rg.autograd.Function):
    @staticmethod
    def forward(ctx: Any, t: Any) -> Any:
        ctx.save_for_backward(t)
        return t * 2

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g * 2


def test_shared_subgraphs_multi_output_nodes_and_functions(tmp_path: Path) -> None:
    x = rg.tensor([[1.0, -2.0], [3.0, 4.0], [0.5, 6.0]], requires_grad=True)

    def forward() -> Any:
        a, b = x.unbind(1)  # one node, two outputs
        top, _ = x.max(dim=1)
        shared = a * b  # used twice
        return (shared + shared.exp()).sum() + top.sum() + Twice.apply(x).sum()

    beats = page_data(explore(forward, tmp_path / "g.html", params={"x": x}))["beats"]
    one = beats[0]["nodes"]
    # the same nodes as the graph has, each once, every input edge with the shape it carries
    assert len([r for r in one.values() if r["kind"] == "node"]) == len(walk(forward().grad_fn))
    mul = next(r for r in one.values() if r.get("op") == "MulBackward0")
    assert [(i["op"], i["shape"]) for i in mul["inputs"]] == [("UnbindBackward0", [3]), ("UnbindBackward0", [3])]
    twice = next(r for r in one.values() if r.get("op") == "TwiceBackward")
    assert [(s["name"], s["bytes"], s["freed"]) for s in twice["saved"]] == [("saved[0]", 24, False)]
    twice2 = next(r for r in beats[1]["nodes"].values() if r.get("op") == "TwiceBackward")
    assert twice2["released"] and [(s["bytes"], s["freed"]) for s in twice2["saved"]] == [(24, True)]
    unbind = next(r for r in beats[1]["nodes"].values() if r.get("op") == "UnbindBackward0")
    assert len(unbind["grads"]) == 2  # one gradient per output
    np.testing.assert_allclose(x.grad.numpy(), 2 * torch_free_grad(x.detach().numpy()), rtol=1e-5)


def torch_free_grad(x: Any) -> Any:
    """The gradient of the forward above, by hand."""
    a, b = x[:, 0], x[:, 1]
    d = 1 + np.exp(a * b)
    g = np.zeros_like(x)
    g[:, 0] = d * b
    g[:, 1] = d * a
    g[np.arange(3), x.argmax(1)] += 1
    return g + 2


def test_a_forward_that_builds_another_graph_gets_its_own_drawing(tmp_path: Path) -> None:
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    calls = []

    def forward() -> Any:
        calls.append(1)
        return (x * x).sum() if len(calls) == 1 else x.exp().mean()

    path = explore(forward, tmp_path / "g.html")
    beats = page_data(path)["beats"]
    assert [b["graph"] for b in beats] == [0, 0, 0, 1]
    assert Path(path).read_text(encoding="utf-8").count('class="drawing"') == 2
    assert sorted(r["op"] for r in beats[3]["nodes"].values() if r["kind"] == "node") == [
        "AccumulateGrad", "ExpBackward0", "MeanBackward0"]


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="grad_fn"):
        explore(rg.ones(2), tmp_path / "g.html")
    with pytest.raises(TypeError, match="forward"):
        explore(lambda: rg.ones(2), tmp_path / "g.html")
    x = rg.ones(2, requires_grad=True)
    y = x
    for _ in range(5000):  # the walk stops at max_nodes: no deep recursion, no long layout
        y = y * 1.0
    with pytest.raises(ValueError, match="max_nodes=100"):
        explore(y.sum(), tmp_path / "g.html", max_nodes=100)
    assert not (tmp_path / "g.html").exists()


# -- the page in a real browser ---------------------------------------------------------------


def _find(name: str, debian_path: str) -> str | None:
    return debian_path if os.path.exists(debian_path) else shutil.which(name)


@pytest.fixture(scope="module")
def driver() -> Any:
    problems = []
    chromium = _find("chromium", "/usr/bin/chromium")
    chromedriver = _find("chromedriver", "/usr/bin/chromedriver")
    if chromium is None:
        problems.append("chromium is not installed (Debian package 'chromium')")
    if chromedriver is None:
        problems.append("chromedriver is not installed (Debian package 'chromium-driver')")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        problems.append("selenium is not installed")
    if problems:
        if REQUIRE_BROWSER:
            pytest.fail("RETROGRAD_REQUIRE_BROWSER=1 but " + "; ".join(problems))
        pytest.skip("; ".join(problems))
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(arg)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with pytest.MonkeyPatch.context() as mp:  # nothing may be downloaded: Selenium Manager must not run
        mp.setattr("selenium.webdriver.common.selenium_manager.SeleniumManager.binary_paths",
                   lambda *a, **k: pytest.fail("Selenium Manager ran"))
        drv = webdriver.Chrome(service=Service(chromedriver), options=options)
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def page(tmp_path_factory: Any) -> tuple[str, Model, list[Any]]:
    m = Model()
    path = explore(m, tmp_path_factory.mktemp("explore") / "graph.html", params=m.params(), title="test graph")
    return path, m, walk(m().grad_fn)


def test_in_browser(driver: Any, page: tuple[str, Model, list[Any]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    path, m, graph = page
    start = time.perf_counter()
    driver.get(Path(path).as_uri())
    js = driver.execute_script

    # loads with no console message of any kind (errors, warnings, failed fetches)
    assert driver.get_log("browser") == []

    # one element per backward node, per leaf, and the output
    visible = ".drawing:not([hidden]) "
    node_els = driver.find_elements(By.CSS_SELECTOR, visible + 'g[data-kind="node"]')
    assert len(node_els) == len(graph) == 6
    assert len(driver.find_elements(By.CSS_SELECTOR, visible + 'g[data-kind="leaf"]')) == 2
    assert len(driver.find_elements(By.CSS_SELECTOR, visible + 'g[data-kind="output"]')) == 1
    ids = [e.get_attribute("data-node") for e in node_els]
    assert len(set(ids)) == len(ids)

    def element(op: str) -> Any:
        (el,) = [e for e in driver.find_elements(By.CSS_SELECTOR, visible + 'g[data-kind="node"]')
                 if e.find_element(By.TAG_NAME, "text").text == op]
        return el

    def faded() -> set[str]:
        return {e.find_element(By.TAG_NAME, "text").text
                for e in driver.find_elements(By.CSS_SELECTOR, visible + "g.node.released")}

    # a click on MulBackward0 shows its panel: the op name and its two saved tensors' bytes
    element("MulBackward0").click()
    panel = driver.find_element(By.ID, "panel-body")
    assert panel.find_element(By.TAG_NAME, "h2").text == "MulBackward0"
    rows = [r.text for r in panel.find_elements(By.CSS_SELECTOR, "table")[1].find_elements(By.TAG_NAME, "tr")[1:]]
    assert rows == ["self (3,) float32 12 B", "other (3,) float32 12 B"]
    assert "held: 24 B" in panel.text
    assert "x" in panel.text and "AccumulateGrad" in panel.text  # its inputs
    assert "selected" in element("MulBackward0").get_attribute("class")

    # the beats: nothing faded after forward; after backward (the next button) the nodes that
    # released their saved tensors; the error at beat 3 (right arrow); a fresh graph at beat 4
    assert faded() == set()
    assert not driver.find_element(By.ID, "error").is_displayed()
    driver.find_element(By.ID, "next").click()
    assert faded() == {"MulBackward0", "TanhBackward0"}
    assert "freed" in panel.text and "gradient that flowed in" in panel.text.lower()
    assert len(driver.find_elements(By.CSS_SELECTOR, visible + "g.edge.grad")) > 0
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    assert js("return document.body.dataset.beat") == "3"
    error = driver.find_element(By.ID, "error")
    assert error.is_displayed() and "backward through the graph a second time" in error.text
    assert faded() == {"MulBackward0", "TanhBackward0"}
    driver.find_element(By.CSS_SELECTOR, '#beat-buttons button[data-beat="4"]').click()
    assert faded() == set() and not error.is_displayed()
    assert len(driver.find_elements(By.CSS_SELECTOR, visible + 'g[data-kind="node"]')) == 6
    (leaf_x,) = [e for e in driver.find_elements(By.CSS_SELECTOR, visible + 'g[data-kind="leaf"]')
                 if e.find_element(By.TAG_NAME, "text").text == "x"]
    leaf_x.click()
    # it kept the first backward's .grad, and shows what this graph's backward accumulates on it
    value, kept, accumulated = (floats(p.text) for p in panel.find_elements(By.CSS_SELECTOR, ".preview"))
    np.testing.assert_allclose(value, m.x.detach().numpy(), rtol=1e-3)
    np.testing.assert_allclose(kept, m.dtanh() * m.w.detach().numpy(), rtol=1e-3)
    np.testing.assert_allclose(accumulated, 2 * kept, rtol=1e-3)
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
    assert js("return document.body.dataset.beat") == "3"
    # keyboard only: focus a node and press Enter
    js("arguments[0].focus()", element("TanhBackward0"))
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    assert panel.find_element(By.TAG_NAME, "h2").text == "TanhBackward0"
    assert "raised here" in panel.text
    assert driver.get_log("browser") == []
    assert time.perf_counter() - start < 20


def test_the_example_writes_its_page(tmp_path: Path) -> None:
    import runpy

    example = runpy.run_path(str(Path(__file__).parents[2] / "examples" / "explore_graph.py"))
    beats = page_data(example["write_page"](str(tmp_path / "mlp.html")))["beats"]
    assert [b["label"] for b in beats] == ["after forward", "after backward", "backward again", "new forward"]
    assert sorted(r["op"] for r in beats[1]["nodes"].values() if r.get("released")) == [
        "AddmmBackward0", "AddmmBackward0", "PowBackward0", "ReluBackward0"]
    # ReLU's output (5 x 4 float32 = 80 B) is saved by ReluBackward0 and by the next addmm: the
    # per-node figures count it twice, the beat's total once
    per_node = sum(s["bytes"] for r in beats[0]["nodes"].values() for s in r.get("saved", ()))
    assert per_node - beats[0]["held"] == 80
