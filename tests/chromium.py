"""A real headless Chromium, driven over the DevTools protocol on a pipe.

Input: the path of Debian's ``chromium`` (``$CHROMIUM``, default /usr/bin/chromium).
Output: ``Browser`` (one process, many pages) and ``Page`` (load a URL, read the
rendered DOM, list the network requests it made, take a screenshot).

Standard library only: ``--remote-debugging-pipe`` speaks the protocol as
NUL-terminated JSON on file descriptors 3 (to the browser) and 4 (from it), so no
websocket client is needed. Nothing is downloaded: a missing browser is an error.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from typing import Any

__all__ = ["CHROMIUM", "Browser", "BrowserError", "Page", "figures_in"]

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    pass


class Browser:
    """One Chromium process; ``call`` sends a command and waits for its answer."""

    def __init__(self, executable: str = CHROMIUM, timeout: float = 30.0) -> None:
        if shutil.which(executable) is None:
            raise BrowserError(f"no Chromium at {executable} (apt-get install -y chromium)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="explain-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.version = self.call("Browser.getVersion")["product"]

    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError(f"the browser exited: {self._stderr()}")
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def _stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read().decode(errors="replace")[-2000:]

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        number = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == number:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, session: str, since: int) -> dict[str, Any]:
        """The first event ``method`` of ``session`` at or after index ``since``."""
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events[since:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            since = len(self.events)
            message = self._receive(deadline)
            if "method" in message:
                self.events.append(message)

    def page(self, width: int = 1280, height: int = 900, *, scripts: bool = True) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, target, session)
        page.call("Page.enable")
        page.call("Network.enable")
        page.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        if not scripts:
            page.call("Emulation.setScriptExecutionDisabled", {"value": True})
        return page

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                self._send("Browser.close", None, None)
                self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            for fd in (self._to_browser, self._from_browser):
                with contextlib.suppress(OSError):
                    os.close(fd)
            if self.process.stderr is not None:
                self.process.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser: Browser, target: str, session: str) -> None:
        self.browser = browser
        self.target = target
        self.session = session
        self.mark = len(browser.events)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.call(method, params, self.session)

    def load(self, url: str) -> None:
        self.mark = len(self.browser.events)
        answer = self.call("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise BrowserError(f"{url}: {answer['errorText']}")
        self.browser.wait_for("Page.loadEventFired", self.session, self.mark)

    def requests(self) -> list[str]:
        """Every URL the page asked the network stack for since the last ``load``."""
        return [
            event["params"]["request"]["url"]
            for event in self.browser.events[self.mark :]
            if event.get("sessionId") == self.session
            and event.get("method") == "Network.requestWillBeSent"
        ]

    def dom(self) -> str:
        """The serialised live DOM (what the browser built, not the file it read)."""
        root = self.call("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
        html: str = self.call("DOM.getOuterHTML", {"nodeId": root})["outerHTML"]
        return html

    def rendered(self, selector: str) -> list[dict[str, float]]:
        """The layout box (x, y, width, height) of every element matching ``selector``;
        an element the browser did not lay out (display:none) has none and is left out."""
        root = self.call("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        nodes = self.call("DOM.querySelectorAll", {"nodeId": root, "selector": selector})
        boxes = []
        for node in nodes["nodeIds"]:
            try:
                model = self.call("DOM.getBoxModel", {"nodeId": node})["model"]
            except BrowserError:
                continue
            quad = model["border"]
            boxes.append(
                {"x": quad[0], "y": quad[1], "width": model["width"], "height": model["height"]}
            )
        return boxes

    def screenshot(self, *, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["captureBeyondViewport"] = True
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": metrics["width"],
                "height": metrics["height"],
                "scale": 1,
            }
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def close(self) -> None:
        self.browser.call("Target.closeTarget", {"targetId": self.target})


_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    ]
)


class _Figures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _VOID:
            self._open.append(dict(attrs).get("data-figure"))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for name in self._open:
            if name is not None:
                self.found[name] = self.found.get(name, "") + data


def figures_in(dom: str) -> dict[str, str]:
    """``data-figure`` name -> its text, read from a serialised DOM."""
    parser = _Figures()
    parser.feed(dom)
    return {name: text.strip() for name, text in parser.found.items()}
