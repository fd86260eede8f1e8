"""The HTML report in a real browser: headless Chromium opens ``report.html`` as a reader would.

`evalbars report` writes one self-contained file: Snakemake's report, a page its own JavaScript
builds, whose first screen is evalbars' landing page. Reading the file as text (the other
report tests) cannot tell whether that page runs, what the first screen shows or whether a model
name is markup. Here Debian's ``chromium`` opens it headless, driven through the DevTools
protocol over a pipe (``--remote-debugging-pipe``: JSON messages ending in NUL on file
descriptors 3 and 4; no port, no websocket library), and the tests check

- on the README's quickstart (with one claim, so that the claims figure is drawn): no JavaScript
  error or failed load in the console; the answer ``evalbars report`` printed and the claims
  figure on the first screen of 1280x900; a screenshot of it that is not blank (saved under
  ``$EVALBARS_ARTIFACTS`` when set, for CI);
- that every link of the report resolves (an embedded file equal to the one on disk, or a file
  beside the report), and that the tables the README sends a reader to are among them;
- on a table whose model names are HTML (``<img src=x onerror=...>``, ``"><script>...``): no
  payload runs, on the first screen or on any page of the report's menu, and the names show as
  text.

Skipped only when chromium is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import base64
import csv
import fcntl
import io
import json
import os
import random
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

import pytest
from PIL import Image

from ..conftest import REPO
from ..workflow_runs import snakemake_env

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
#: Every wait on the browser (a command's answer, a page's load) gives up after this long.
TIMEOUT = 60.0
WIDTH, HEIGHT = 1280, 900
#: The claim added to the README's quickstart (the README: "Add --claim "A > B" for each claim").
CLAIM = "evalbars/fake-strong > evalbars/fake-weak"
#: Model names that are HTML: each would run script if a page put it into markup unescaped.
IMG_NAME = "<img src=x onerror=alert(1)>"
SCRIPT_NAME = '"><script>window.__pwned=1</script>'


def chromium_executable() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


# --- A headless Chromium, driven over the DevTools pipe ------------------------------------------


def above_9(fd: int) -> int:
    """The same open file on a descriptor of 10 or more (closed on exec, as Python's are)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Chromium:
    """One headless Chromium process and its DevTools pipe.

    :meth:`command` sends a command and returns its result; every other message (the events)
    is kept in :attr:`events`. A JavaScript dialog (``alert``) is recorded and dismissed at
    once, so that a page that opens one cannot hang the test.
    """

    def __init__(self, executable: str, profile: Path):
        profile.mkdir(parents=True, exist_ok=True)
        # Chromium reads commands from descriptor 3 and writes to 4: the shell that starts it
        # moves the pipe's ends there (from 10 and up, clear of 3 and 4; bash, as dash's
        # redirections stop at 9).
        to_chromium, self._to_chromium = map(above_9, os.pipe())
        self._from_chromium, from_chromium = map(above_9, os.pipe())
        onto_3_and_4 = f'exec "$0" "$@" 3<&{to_chromium} 4>&{from_chromium}'
        onto_3_and_4 += f" {to_chromium}<&- {from_chromium}>&-"
        self.log_path = profile / "chromium.log"
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [
                    shutil.which("bash") or "/bin/bash",
                    "-c",
                    onto_3_and_4,
                    executable,
                    "--headless=new",
                    "--disable-gpu",
                    "--no-sandbox",
                    "--remote-debugging-pipe",
                    f"--user-data-dir={profile}",
                    "--no-first-run",
                    "--no-default-browser-check",
                    # no connection beyond the machine: this one has no network
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--disable-quic",
                    f"--window-size={WIDTH},{HEIGHT}",
                    "about:blank",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(to_chromium, from_chromium),
                start_new_session=True,  # its renderers with it, to end them all if need be
            )
        os.close(to_chromium)
        os.close(from_chromium)
        self._buffer = b""
        self._last_id = 0
        self.events: list[dict] = []
        self.dialogs: list[dict] = []

    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._last_id += 1
        message = {"id": self._last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chromium, json.dumps(message).encode() + b"\0")
        return self._last_id

    def _receive(self, deadline: float) -> dict | None:
        """The next message, or None at the deadline."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._from_chromium], [], [], left)
            if ready:
                chunk = os.read(self._from_chromium, 1 << 20)
                if not chunk:
                    raise AssertionError(f"chromium exited:\n{self.log_tail()}")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        if message.get("method") == "Page.javascriptDialogOpening":
            self.dialogs.append({**message["params"], "sessionId": message.get("sessionId")})
            self._send("Page.handleJavaScriptDialog", {"accept": False}, message.get("sessionId"))
        return message

    def command(self, method: str, params: dict | None = None, session: str | None = None):
        sent = self._send(method, params, session)
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._receive(deadline)
            if message is None:
                raise AssertionError(f"chromium did not answer {method} in {TIMEOUT:.0f} s")
            if message.get("id") == sent:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message["result"]
            if "method" in message:
                self.events.append(message)

    def wait_for_event(self, method: str, session: str, seen: int) -> dict:
        """The first event ``method`` of ``session`` after the first ``seen`` events."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for event in self.events[seen:]:
                if event["method"] == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            message = self._receive(deadline)
            if message is None:
                raise AssertionError(f"no {method} in {TIMEOUT:.0f} s")
            if "method" in message:
                self.events.append(message)

    def drain(self, seconds: float) -> None:
        """Keep the events of the next ``seconds`` (what a page does after the last command)."""
        deadline = time.monotonic() + seconds
        while (message := self._receive(deadline)) is not None:
            if "method" in message:
                self.events.append(message)

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        try:
            self._send("Browser.close")
            self.process.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)  # the group this test started
            self.process.wait(10)
        finally:
            os.close(self._to_chromium)
            os.close(self._from_chromium)


class Page:
    """One tab of :class:`Chromium`, its viewport the first screen, WIDTH x HEIGHT."""

    def __init__(self, browser: Chromium):
        self.browser = browser
        target = browser.command("Target.createTarget", {"url": "about:blank"})
        attached = browser.command(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.command(f"{domain}.enable")
        self.command(
            "Emulation.setDeviceMetricsOverride",
            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
        )

    def command(self, method: str, params: dict | None = None):
        return self.browser.command(method, params, self.session)

    def open(self, path: Path, ready: str) -> None:
        """Load ``path`` and wait until the JavaScript expression ``ready`` holds."""
        seen = len(self.browser.events)
        self.command("Page.navigate", {"url": path.resolve().as_uri()})
        self.browser.wait_for_event("Page.loadEventFired", self.session, seen)
        self.wait_until(ready)

    def wait_until(self, expression: str, seconds: float = TIMEOUT) -> None:
        deadline = time.monotonic() + seconds
        while not self.evaluate(f"Boolean({expression})"):
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {seconds:.0f} s: {expression}")
            self.browser.drain(0.1)

    def evaluate(self, expression: str, context: int | None = None):
        """The value of a JavaScript expression in the page (JSON-like values only), or in one
        of its :meth:`contexts`."""
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if context is not None:
            params["contextId"] = context
        answer = self.command("Runtime.evaluate", params)
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            raise AssertionError(
                f"{expression}: {details.get('exception', {}).get('description', details)}"
            )
        return answer["result"].get("value")

    def has_link(self, text: str) -> bool:
        return self.evaluate(
            "[...document.querySelectorAll('a')]"
            f".some(a => a.textContent.trim() === {json.dumps(text)})"
        )

    def to_menu(self) -> None:
        """Back to the report's menu (Workflow, Statistics, About, the categories of results):
        by the "Results" of the menu's path, or else its home button."""
        if not self.has_link("Workflow"):
            if self.has_link("Results"):
                self.click_link("Results")
            else:
                assert self.evaluate(f"Boolean(document.querySelector({json.dumps(HOME)}))")
                self.evaluate(f"document.querySelector({json.dumps(HOME)}).click()")
                self.browser.drain(0.3)
        assert self.has_link("Workflow"), "the report's menu is not shown"

    def click_link(self, text: str) -> None:
        """Click the page's first link whose text is ``text``, as a reader clicks it."""
        found = self.evaluate(
            "(() => { const link = [...document.querySelectorAll('a')]"
            f".find(a => a.textContent.trim() === {json.dumps(text)});"
            " if (link) link.click(); return Boolean(link); })()"
        )
        assert found, f"no link {text!r} on the page"
        self.browser.drain(0.3)

    def contexts(self) -> list[int]:
        """The page's live JavaScript contexts: its document's and each frame's (an HTML result
        the report shows in an iframe)."""
        live: list[int] = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            if event["method"] == "Runtime.executionContextsCleared":
                live = []
            elif event["method"] == "Runtime.executionContextCreated":
                live.append(event["params"]["context"]["id"])
            elif event["method"] == "Runtime.executionContextDestroyed":
                live.remove(event["params"]["executionContextId"])
        return live

    def dialogs(self) -> list[dict]:
        """The JavaScript dialogs (alert, confirm, prompt) this page opened."""
        return [d for d in self.browser.dialogs if d["sessionId"] == self.session]

    def screenshot(self) -> bytes:
        shot = self.command("Page.captureScreenshot", {"format": "png"})
        return base64.b64decode(shot["data"])

    def problems(self) -> list[str]:
        """What the console shows as errors: uncaught exceptions, console.error and console.assert,
        and the browser's own errors (a resource that failed to load, a blocked script)."""
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event["method"], event["params"]
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append(
                    f"uncaught: {details.get('exception', {}).get('description', details['text'])}"
                )
            elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                words = " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                found.append(f"console.{params['type']}: {words}")
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                found.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}".strip())
        return found


@pytest.fixture(scope="module")
def chromium():
    executable = chromium_executable()
    if executable is None:
        pytest.skip("chromium is not installed (Debian's package chromium; .ci/run installs it)")
    return executable


@pytest.fixture(scope="module")
def browser(chromium, tmp_path_factory):
    browser = Chromium(chromium, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield browser
    finally:
        browser.close()


# --- The reports --------------------------------------------------------------------------------

#: The Snakemake report has drawn its page and the landing page is in it.
LANDING_SHOWN = "document.querySelector('.evalbars-landing p.verdict')"
#: In Snakemake's report (its page, as Snakemake 9 draws it): the home button of the menu's path,
#: and a result's caption button.
HOME = 'a[class="hover:text-emerald-600"]'
CAPTION = 'a[iconname="information-circle"]'


def readme_quickstart() -> list[list[str]]:
    """The README's quickstart, its two commands as words, ``uv run evalbars`` dropped."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert [words[:4] for words in commands] == [
        ["uv", "run", "evalbars", "example"],
        ["uv", "run", "evalbars", "report"],
    ], block
    return [words[3:] for words in commands]


def run_report(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [*EVALBARS, *args], capture_output=True, text=True, cwd=cwd, env=snakemake_env()
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def quickstart(chromium, tmp_path_factory):
    """The README's quickstart, as typed, with one claim and ``--output``: the run directory and
    what ``evalbars report`` printed."""
    root = tmp_path_factory.mktemp("quickstart")
    example, report = readme_quickstart()
    run_report(example, root)
    output = root / "evalbars-report"
    result = run_report([*report, "--claim", CLAIM, "--output", str(output)], root)
    assert result.stdout.splitlines()[0] == f"report: {output / 'report.html'}"
    return output, result.stdout.splitlines()


@pytest.fixture(scope="module")
def quickstart_page(browser, quickstart):
    output, _ = quickstart
    page = Page(browser)
    page.open(output / "report.html", LANDING_SHOWN)
    browser.drain(1.0)  # what the page does once drawn
    return page


def hostile_table(path: Path) -> Path:
    """A long table, ``model,question_id,correct`` and a category, 40 questions of 3 models, two
    of them named with HTML."""
    rng = random.Random(20)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "question_id", "correct", "category"])
        for model, accuracy in ((IMG_NAME, 0.8), (SCRIPT_NAME, 0.5), ("plain-model", 0.3)):
            for question in range(40):
                correct = int(rng.random() < accuracy)
                writer.writerow([model, f"q{question:02d}", correct, f"c{question % 4}"])
    return path


@pytest.fixture(scope="module")
def hostile_report(chromium, tmp_path_factory):
    """`evalbars report` on :func:`hostile_table`, with a claim between the two HTML names (the
    one its first screen suggests), so that they reach the claims table and figure and the
    claims rules' job parameters, which Snakemake's report writes into its script blocks
    (evalbars.pipeline.report_guard). Four categories, so that the per-category tables name
    them too."""
    root = tmp_path_factory.mktemp("hostile")
    table = hostile_table(root / "hostile.csv")
    output = root / "hostile-report"
    run_report(
        [
            "report",
            str(table),
            "--input-format",
            "table",
            "--claim",
            f"{IMG_NAME} > {SCRIPT_NAME}",
            "--output",
            str(output),
        ],
        root,
    )
    return output


# --- What the page shows ------------------------------------------------------------------------


def rectangle(page: Page, selector: str) -> dict | None:
    return page.evaluate(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
        " const r = e.getBoundingClientRect();"
        " return {top: r.top, left: r.left, bottom: r.bottom, right: r.right,"
        " width: r.width, height: r.height}; })()"
    )


def shown_on_first_screen(box: dict | None) -> float:
    """The share of an element's box within the viewport of the page as it opens (0 when it
    has no box)."""
    if not box or box["width"] <= 0 or box["height"] <= 0:
        return 0.0
    wide = max(0.0, min(box["right"], WIDTH) - max(box["left"], 0.0))
    high = max(0.0, min(box["bottom"], HEIGHT) - max(box["top"], 0.0))
    return wide * high / (box["width"] * box["height"])


def test_the_report_runs_with_no_error_in_the_console(quickstart_page):
    assert quickstart_page.problems() == []
    assert quickstart_page.dialogs() == []


def test_the_first_screen_shows_the_answer(quickstart, quickstart_page):
    _, stdout = quickstart
    page = quickstart_page
    # the answer `evalbars report` printed is the report's headline, on the first screen
    headline = page.evaluate(f"{LANDING_SHOWN}.innerText")
    assert headline.strip() == stdout[1]
    assert shown_on_first_screen(rectangle(page, ".evalbars-landing p.verdict")) == 1.0
    assert "3 models read: evalbars/fake-strong" in page.evaluate("document.body.innerText")
    # the claims figure, drawn (decoded, not a broken image) and on the first screen
    figure = ".evalbars-landing img"
    source = page.evaluate(f"document.querySelector({json.dumps(figure)}).getAttribute('src')")
    assert source.startswith("data:image/png;base64,")
    assert page.evaluate(f"document.querySelector({json.dumps(figure)}).naturalWidth") > 100
    assert shown_on_first_screen(rectangle(page, figure)) > 0.9


def test_a_screenshot_of_the_first_screen_is_not_blank(quickstart_page, tmp_path):
    png = quickstart_page.screenshot()
    folder = Path(os.environ.get("EVALBARS_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report-first-screen.png").write_bytes(png)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    colours = image.getcolors(maxcolors=WIDTH * HEIGHT)
    assert len(colours) > 50  # text, a table and a figure, not a blank or one-colour page
    # no colour covers nearly all of it (a page that drew nothing but its background)
    assert max(count for count, _ in colours) < 0.9 * WIDTH * HEIGHT


# --- Its links ----------------------------------------------------------------------------------


def decode_data_url(url: str) -> tuple[dict, bytes]:
    """The parameters (``filename``, ...) and the bytes of a ``data:`` URL."""
    header, payload = url.removeprefix("data:").split(",", 1)
    parts = header.split(";")
    params = dict(part.split("=", 1) for part in parts[1:] if "=" in part)
    body = base64.b64decode(payload) if "base64" in parts else unquote(payload).encode()
    return params, body


def result_views(page: Page) -> list[tuple[str, str | None]]:
    """The views of the report's results its menu lists: each category (Snakemake's
    ``categories``) or, where it has them, each of its subcategories."""
    return [
        (category, subcategory)
        for category, subcategories in page.evaluate("categories").items()
        for subcategory in ([None] if list(subcategories) == ["Other"] else subcategories)
    ]


def go_to(page: Page, view: tuple[str, str | None]) -> str:
    """Click from the menu to a view of the results, as a reader does; its name."""
    category, subcategory = view
    page.to_menu()
    page.click_link(category)
    if subcategory is None:
        return category
    page.click_link(subcategory)
    return f"{category} / {subcategory}"


#: A result's "eye" button that shows it inside the page (an HTML result, in an iframe); that of a
#: table is a link to its embedded file.
VIEWER = 'a[iconname="eye"][href="#"]'


def click_each(page: Page, selector: str, step: str, then) -> None:
    """Click each element that ``selector`` finds, in turn, calling ``then`` after each with the
    step's name (``step`` and the element's index)."""
    count = page.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length")
    for index in range(count):
        page.evaluate(f"document.querySelectorAll({json.dumps(selector)})[{index}].click()")
        page.browser.drain(0.3)
        then(f"{step} {index}")


class Links:
    """What the report links to: on its first screen and on every view of its results, each
    result shown in the page opened."""

    def __init__(self, page: Page):
        #: ``{href: where}`` of every link and every image's and frame's source
        self.found: dict[str, set[str]] = {}
        #: images that did not load (broken), with where
        self.broken: list[tuple[str, str]] = []
        #: ``{data URL: path}`` of the files the report embeds (Snakemake's ``results``)
        self.results = {entry["data_uri"]: path for path, entry in page.evaluate("results").items()}
        self.collect(page, "first screen")
        for view in result_views(page):
            where = go_to(page, view)
            self.collect(page, where)
            click_each(page, VIEWER, f"{where}, shown", lambda step: self.collect(page, step))

    def collect(self, page: Page, where: str) -> None:
        links = page.evaluate(
            "[...document.querySelectorAll('a[href]')].map(a =>"
            " [a.getAttribute('href'), a.textContent.trim()])"
        )
        sources = page.evaluate(
            "[...document.querySelectorAll('img, iframe')].map(e => [e.getAttribute('src') ?? '',"
            " e.tagName === 'IMG' && e.complete && e.naturalWidth === 0])"
        )
        for href, text in links + [(src, "") for src, _ in sources]:
            self.found.setdefault(href, set()).add(f"{where}: {text}" if text else where)
        self.broken += [(src[:80], where) for src, broken in sources if broken]

    def embedded(self) -> dict[str, str]:
        """``{path: data URL}`` of the embedded files a reader can reach."""
        return {self.results[href]: href for href in self.found if href in self.results}


@pytest.fixture(scope="module")
def clicked_through(browser, quickstart):
    """The quickstart's report in a tab of its own (the first screen's stays as it opened), its
    every view clicked to, and the links found on the way."""
    output, _ = quickstart
    page = Page(browser)
    page.open(output / "report.html", LANDING_SHOWN)
    return page, Links(page)


def test_every_link_in_the_report_resolves(quickstart, clicked_through):
    output, _ = quickstart
    page, links = clicked_through
    assert links.broken == []
    for href, where in links.found.items():
        if href in ("#", "") or href.startswith("javascript:"):
            continue  # the report's own navigation
        if href.startswith("data:"):
            # embedded: a file the workflow wrote, byte for byte, or the report's own (its logo,
            # the first screen's figure), not empty
            params, body = decode_data_url(href)
            assert body, (params, where)
            if href in links.results:
                assert body == (output / links.results[href]).read_bytes(), (params, where)
            continue
        assert not href.startswith(("http:", "https:", "//")), (href, where)  # self-contained
        target = (output / unquote(href.split("#")[0].removeprefix("file://"))).resolve()
        assert target.is_file(), (href, where)
    # every file the report embeds is reachable from its menu
    assert set(links.embedded()) == set(links.results.values())
    assert len(links.embedded()) >= 4
    assert page.problems() == []  # clicking through raised nothing


def readme_tables() -> list[str]:
    """The tables of the README's "The five files to read first"."""
    text = (REPO / "README.md").read_text()
    section = text.split("## The five files to read first", 1)[1].split("\n## ", 1)[0]
    names = re.findall(r"`results/tables/([\w.-]+)`", section)
    assert len(names) >= 4, section
    return names


def test_the_tables_the_readme_lists_are_in_the_report(clicked_through):
    # `evalbars report` runs one job per stage; the stage rules once dropped their outputs'
    # report() flags, and the report held the data stage's tables only.
    # results/tables/NAME.csv, or its first rows, results/report/NAME.csv (tables of every pair)
    _, links = clicked_through
    reachable = {Path(path).name: path for path in links.embedded()}
    missing = [name for name in readme_tables() if name not in reachable]
    assert missing == [], sorted(reachable)
    for name in readme_tables():
        assert reachable[name] in (f"results/tables/{name}", f"results/report/{name}")


# --- Model names that are HTML ------------------------------------------------------------------


#: What a model name taken as markup leaves in a document: the script's global, an element made
#: of a name (an ``img`` with ``src="x"``, a ``script`` with the name's code).
MARKUP_SIGNS = """[
  typeof window.__pwned !== 'undefined' ? 'window.__pwned is set' : null,
  document.querySelectorAll('img[src="x"]').length ? 'an <img src="x"> element' : null,
  [...document.querySelectorAll('script')].some(s => !s.id && !s.src
     && s.textContent.includes('__pwned')) ? "a <script> element with the name's code" : null,
].filter(Boolean)"""


def payload_ran(page: Page) -> list[str]:
    """Signs that a model name was taken as markup: a dialog (the ``alert``), or
    :data:`MARKUP_SIGNS` in the page's document or any of its frames."""
    signs = [f"dialog: {dialog['type']} {dialog['message']!r}" for dialog in page.dialogs()]
    for context in page.contexts():
        try:
            found = page.evaluate(MARKUP_SIGNS, context)
        except AssertionError as error:
            if "Cannot find context" in str(error):
                continue  # a frame gone since: no document left to check
            raise
        signs += [f"context {context}: {sign}" for sign in found]
    return signs


def payload_ran_anywhere(page: Page) -> tuple[list[str], list[str]]:
    """Click through the whole report, checking :func:`payload_ran` at each step: the menu's
    Workflow, Statistics and About, every view of the results, each result shown in the page
    and each result's caption (its "i" button). The signs found, and the steps taken."""
    signs, steps = [], []

    def check(step: str):
        steps.append(step)
        signs.extend(f"{step}: {sign}" for sign in payload_ran(page))

    check("first screen")
    for general in ("Workflow", "Statistics", "About"):
        page.to_menu()
        page.click_link(general)
        check(general)
    for view in result_views(page):
        where = go_to(page, view)
        check(where)
        click_each(page, VIEWER, f"{where}, shown", check)
        captions = page.evaluate(f"document.querySelectorAll({json.dumps(CAPTION)}).length")
        for index in range(captions):  # a caption is a view of its own: back to the list each time
            go_to(page, view)
            page.evaluate(f"document.querySelectorAll({json.dumps(CAPTION)})[{index}].click()")
            page.browser.drain(0.3)
            check(f"{where}, caption {index}")
    return signs, steps


def test_html_model_names_do_not_run(browser, hostile_report):
    page = Page(browser)
    page.open(hostile_report / "report.html", LANDING_SHOWN)
    browser.drain(1.0)
    assert payload_ran(page) == []
    # the names are shown, as text
    text = page.evaluate("document.body.innerText")
    assert IMG_NAME in text and SCRIPT_NAME in text
    assert f"{IMG_NAME} > {SCRIPT_NAME}" in page.evaluate(
        "document.querySelector('.evalbars-landing table').innerText"
    )
    signs, steps = payload_ran_anywhere(page)
    assert signs == [], "\n".join(signs)
    assert len(steps) >= 10, steps  # the menu, both views of results, five captions
    assert page.problems() == []


def test_html_model_names_do_not_run_in_the_landing_page_alone(browser, hostile_report):
    # results/report/landing.html, the first screen as a file of its own (it is in the
    # report's menu, and a reader may open it)
    page = Page(browser)
    page.open(hostile_report / "results" / "report" / "landing.html", "document.body")
    browser.drain(0.5)
    assert payload_ran(page) == []
    assert IMG_NAME in page.evaluate("document.body.innerText")
