#!/usr/bin/env python3
"""Check the built book: no external URL outside an allow-list, and every page clean in headless Chromium.

Usage: python scripts/check_site.py [_build/html] [--screenshots DIR]

1. Static scan of every built page (``*.html`` outside ``_static``): a URL to a non-local host in anything
   the page loads (``src``, ``<link href>``, ``srcset``, ...) fails; a URL in a link the reader clicks or
   in an inline script must match ``ALLOWED`` below, so a new external URL fails until it is listed.
2. Browser check: serve the folder on 127.0.0.1 and load every page in headless Chromium (Debian's
   ``chromium``), driven over the DevTools protocol through a pipe (standard library only). A page fails on
   a console error or uncaught exception, a failed request (network error or HTTP status >= 400), any
   request to a non-local host, an image that did not load, or math left untypeset (MathJax missing,
   a ``.math`` element without an ``mjx-container``, a MathJax error, or raw ``$``/``\\(``/``\\[`` math
   left in the text).
3. Markup scan: MyST markup left unrendered in a page's text (a role such as ``{glue:text}`` or ``{cite}``, or a
   directive fence) fails, wherever it is, code spans included.

Without Chromium, step 2 is skipped and says so plainly. Exit status 0 when everything passes.
"""

from __future__ import annotations

import fnmatch
import functools
import html.parser
import http.server
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

# External URLs that may appear in the built HTML, each with why it is there. Only clicked links and
# scripts fetched on a click may be listed: anything loaded with the page fails whatever this list says.
# (page glob, URL regex, reason)
ALLOWED = [
    ("*", r"https://github\.com/lloydlib/transformers-that-cluster/?", "repository button (a link)"),
    (
        "book/*.html",
        r"https://colab\.research\.google\.com/github/lloydlib/transformers-that-cluster/blob/main/"
        r"book/[0-9A-Za-z_]+\.ipynb",
        "Colab launch button of a chapter (a link)",
    ),
    (
        "*",
        r"https://unpkg\.com/thebe@0\.8\.2/lib/index\.js",
        "thebe: sphinx-thebe.js fetches it only when a reader clicks a live-code button (off in this book)",
    ),
    ("book/references.html", r"https://doi\.org/10\.[0-9]{4,9}/\S+", "DOI links of bibliography entries (links)"),
    (
        "book/references.html",
        r"https://arxiv\.org/abs/[0-9]{4}\.[0-9]{4,5}(v[0-9]+)?",
        "arXiv links of bibliography entries (links)",
    ),
]

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
# Attributes whose URL the browser fetches as part of the page.
LOADED_ATTRS = {"src", "srcset", "poster", "data", "background", "formaction"}
URL_IN_TEXT = re.compile(r"""(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?::\d+)?[^\s"'<>`\\]*""")
PAGE_TIMEOUT_S = 90.0
SETTLE_S = 0.5


# ------------------------------------------------------------------------------------------ static scan
class _UrlCollector(html.parser.HTMLParser):
    """Collect (kind, url) pairs: kind is 'loaded' (fetched with the page), 'link' or 'script'."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[tuple[str, str, str]] = []
        self._in = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        rel = (attrs.get("rel") or "").lower()
        for name, value in attrs.items():
            if not value or name.startswith("xmlns"):
                continue
            values = [v.strip().split(" ")[0] for v in value.split(",")] if name == "srcset" else [value]
            for v in values:
                if "//" not in v:
                    continue
                if name in LOADED_ATTRS or (tag == "link" and name == "href" and rel not in ("canonical",)):
                    kind = "loaded"
                elif tag == "meta" and name == "content":
                    kind = "loaded" if (attrs.get("http-equiv") or "").lower() == "refresh" else "link"
                else:
                    kind = "link"
                for url in URL_IN_TEXT.findall(v) if kind != "loaded" else [v.split("url=")[-1].strip()]:
                    self.urls.append((kind, f"<{tag} {name}>", url))
        if tag in ("script", "style"):
            self._in = tag

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in:
            for url in URL_IN_TEXT.findall(data):
                self.urls.append(("script", f"<{self._in}> text", url))


#: MyST markup a page shows as text when it was not rendered: a role (``{glue:text}`name```, ``{cite}`key```) or a
#: directive fence (```` ```{figure} ````), e.g. a glue role nested inside backticks, which renders as code
UNRENDERED = re.compile(
    r"\{(?:glue(?::[a-z]+)?|cite(?::[a-z]+)?|ref|numref|doc|eq|term|download|math|prf:[a-z]+)\}`|```\{"
)


class _TextCollector(html.parser.HTMLParser):
    """The text a reader sees (``<script>`` and ``<style>`` left out), code spans included."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def unrendered_markup(root: Path, page_list: list[str]) -> list[str]:
    """Problems: each page whose visible text holds MyST markup left unrendered (:data:`UNRENDERED`), quoted."""
    problems = []
    for page in page_list:
        collector = _TextCollector()
        collector.feed((root / page).read_text(encoding="utf-8"))
        text = "".join(collector.parts)
        for m in UNRENDERED.finditer(text):
            around = " ".join(text[max(0, m.start() - 40) : m.end() + 40].split())
            problems.append(f"{page}: MyST markup left unrendered in the text: ...{around}...")
    print(f"markup scan: {len(page_list)} pages, {len(problems)} place(s) with markup left unrendered")
    return problems


def _is_external(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url if "://" in url else "http:" + url if url.startswith("//") else url)
    if parsed.scheme in ("", "data", "blob", "about", "javascript", "mailto", "file"):
        return False
    return (parsed.hostname or "") not in LOCAL_HOSTS


def _allowed(page: str, url: str) -> bool:
    return any(fnmatch.fnmatch(page, glob) and re.fullmatch(rx, url) for glob, rx, _ in ALLOWED)


def pages(root: Path) -> list[str]:
    """Every built page, relative to ``root``."""
    out = []
    for p in sorted(root.rglob("*.html")):
        rel = p.relative_to(root).as_posix()
        if rel.split("/")[0] in ("_static", "_sources", "_images", "reports", "jupyter_execute"):
            continue
        out.append(rel)
    return out


def static_scan(root: Path, page_list: list[str]) -> list[str]:
    """Problems with external URLs in the built HTML (empty list: all fine)."""
    problems = []
    seen = {}
    for page in page_list:
        collector = _UrlCollector()
        collector.feed((root / page).read_text(encoding="utf-8"))
        for kind, where, url in collector.urls:
            if not _is_external(url):
                continue
            seen[url] = seen.get(url, 0) + 1
            if kind == "loaded":
                problems.append(f"{page}: loads an external resource {url} ({where})")
            elif not _allowed(page, url):
                problems.append(f"{page}: external URL not in the allow-list of scripts/check_site.py: {url} ({where})")
    print(
        f"static scan: {len(page_list)} pages, {len(seen)} distinct external URLs, all "
        f"{'allowed' if not problems else 'checked'}"
    )
    for url, n in sorted(seen.items()):
        print(f"  {n:3d} x {url}")
    return problems


# -------------------------------------------------------------------------------------- local server
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


# ----------------------------------------------------------------------- Chromium over the CDP pipe
def find_chromium() -> str | None:
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Chromium:
    """Headless Chromium driven through ``--remote-debugging-pipe`` (JSON messages separated by NUL)."""

    FLAGS = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        "--mute-audio",
        "--hide-scrollbars",
        "--no-default-browser-check",
        "--window-size=1280,900",
        # any non-local host fails to resolve at once (the request is still seen and reported)
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost",
        "--remote-debugging-pipe",
    ]

    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="lloydlib-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # move the child's ends above 4 so dup2 onto 3 and 4 cannot clobber them
        hi_r = os.dup2(to_child_r, 100, inheritable=False) if to_child_r < 100 else to_child_r
        hi_w = os.dup2(from_child_w, 101, inheritable=False) if from_child_w < 100 else from_child_w

        def child_fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [binary, *self.FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(3, 4),
            preexec_fn=child_fds,
        )
        for fd in {to_child_r, from_child_w, hi_r, hi_w}:
            os.close(fd)
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self._events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.stderr_tail: list[str] = []

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + [line.decode(errors="replace").rstrip()])[-20:]

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                self._events.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg and msg["id"] in self._replies:
                    self._replies[msg["id"]].put(msg)
                else:
                    self._events.put(msg)

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 60.0) -> dict:
        with self._lock:
            self._next_id += 1
            mid = self._next_id
            self._replies[mid] = queue.Queue()
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        try:
            reply = self._replies[mid].get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} within {timeout:.0f} s") from None
        finally:
            self._replies.pop(mid, None)
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        return reply.get("result", {})

    def events(self, timeout: float):
        """Yield events until ``timeout`` seconds pass without one (or the browser exits)."""
        while True:
            try:
                ev = self._events.get(timeout=timeout)
            except queue.Empty:
                return
            if ev is None:
                raise RuntimeError("Chromium exited: " + " | ".join(self.stderr_tail[-5:]))
            yield ev

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        shutil.rmtree(self.profile, ignore_errors=True)


# Runs in the page once it has loaded: waits for MathJax, then reports what a reader would see.
PAGE_PROBE = r"""
(async () => {
  const needsMath = document.querySelectorAll('.math').length > 0
      || /\\\(|\\\[/.test([...document.querySelectorAll('.mathjax_process')].map(e => e.textContent).join(' '));
  let mathjax = 'absent';
  if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
    await window.MathJax.startup.promise;
    if (MathJax.typesetPromise) { await MathJax.typesetPromise(); }
    mathjax = 'ready';
  } else if (window.MathJax) {
    mathjax = 'config only';
  }
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
  const untypesetEls = [...document.querySelectorAll('.math')]
      .filter(e => !e.querySelector('mjx-container') && e.tagName.toLowerCase() !== 'mjx-container')
      .map(e => e.textContent.trim().slice(0, 80));
  const skip = new Set(['SCRIPT', 'STYLE', 'CODE', 'PRE', 'TEXTAREA', 'KBD', 'SAMP']);
  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const rawMath = /\$[^$\s][^$]*\$|\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{/;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    let p = node.parentElement, skipped = false;
    while (p) {
      if (skip.has(p.tagName) || p.tagName.toLowerCase().startsWith('mjx-') || p.classList.contains('highlight')
          || p.getAttribute('aria-hidden') === 'true' && p.closest('mjx-container')) { skipped = true; break; }
      p = p.parentElement;
    }
    if (!skipped && rawMath.test(node.textContent)) { raw.push(node.textContent.trim().slice(0, 100)); }
  }
  return {
    url: location.href,
    needsMath,
    mathjax,
    typeset: document.querySelectorAll('mjx-container').length,
    mathEls: document.querySelectorAll('.math').length,
    merrors: [...document.querySelectorAll('mjx-merror')].map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 100)),
    untypeset: untypesetEls,
    raw: raw.slice(0, 10),
    images: document.images.length,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
  };
})()
"""


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or ""


def check_page(
    browser: Chromium, base: str, root: Path, page: str, shots: Path | None = None
) -> tuple[list[str], dict]:
    """Load one page in a fresh tab; return its problems and the probe's report (and save a screenshot)."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    problems: list[str] = []
    pending: dict[str, str] = {}
    loads = 0
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Network.setCacheDisabled", {"cacheDisabled": True}, session=session)
        is_redirect = 'http-equiv="refresh"' in (root / page).read_text(encoding="utf-8")[:4000].lower()
        browser.send("Page.navigate", {"url": f"{base}/{page}"}, session=session)
        want_loads = 2 if is_redirect else 1
        deadline = time.monotonic() + PAGE_TIMEOUT_S

        def handle(ev):
            nonlocal loads
            if ev.get("sessionId") != session:
                return
            method, p = ev.get("method"), ev.get("params", {})
            if method == "Page.loadEventFired":
                loads += 1
            elif method == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("data:", "blob:", "about:")):
                    # the browser's own favicon fetch may never report completion when a redirect
                    # replaces the page; it is still checked for its host and status
                    if urllib.parse.urlsplit(url).path != "/favicon.ico":
                        pending[p["requestId"]] = url
                    if _host(url) not in LOCAL_HOSTS:
                        problems.append(f"request to a non-local host: {url}")
            elif method == "Network.responseReceived":
                status = p["response"]["status"]
                if status >= 400:
                    problems.append(f"HTTP {status} for {p['response']['url']}")
            elif method == "Network.loadingFinished":
                pending.pop(p["requestId"], None)
            elif method == "Network.loadingFailed":
                url = pending.pop(p["requestId"], "?")
                if not p.get("canceled"):
                    problems.append(f"failed request {url}: {p.get('errorText')}")
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                problems.append(f"console {p['type']}: {text[:300]}")
            elif method == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                problems.append(f"uncaught exception: {d.get('exception', {}).get('description', d.get('text'))}"[:400])
            elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
                e = p["entry"]
                problems.append(f"console error ({e.get('source')}): {e.get('text', '')[:300]} {e.get('url', '')}")

        while loads < want_loads:
            if time.monotonic() > deadline:
                problems.append(f"page did not finish loading within {PAGE_TIMEOUT_S:.0f} s")
                return problems, {}
            for ev in browser.events(timeout=1.0):
                handle(ev)
                if loads >= want_loads:
                    break
        # the load event may be an earlier document's (about:blank, or a redirect's source): wait until
        # the page we want (or the redirect's target) is the complete current document
        url = f"{base}/{page}"
        while True:
            try:
                state = browser.send(
                    "Runtime.evaluate",
                    {"expression": "[document.readyState, location.href, !!document.body]", "returnByValue": True},
                    session=session,
                )["result"].get("value") or ["", "", False]
            except RuntimeError:  # the execution context went away mid-navigation
                state = ["", "", False]
            there = state[1] != url if is_redirect else state[1] == url
            if state[0] == "complete" and state[2] and there and not state[1].startswith("about:"):
                break
            if time.monotonic() > deadline:
                problems.append(f"page did not settle within {PAGE_TIMEOUT_S:.0f} s (state {state})")
                return problems, {}
            for ev in browser.events(timeout=0.1):
                handle(ev)
        result = browser.send(
            "Runtime.evaluate",
            {"expression": PAGE_PROBE, "awaitPromise": True, "returnByValue": True},
            session=session,
            timeout=PAGE_TIMEOUT_S,
        )
        if "exceptionDetails" in result:
            problems.append(f"page probe failed: {result['exceptionDetails'].get('text')}")
            report = {}
        else:
            report = result["result"]["value"]
        # let late requests (MathJax fonts, lazy images) finish, and collect their events
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < SETTLE_S or pending:
            if time.monotonic() > deadline:
                problems.append(f"requests still pending after {PAGE_TIMEOUT_S:.0f} s: {sorted(pending.values())}")
                break
            got = False
            for ev in browser.events(timeout=0.2):
                handle(ev)
                got = True
                break
            if got:
                quiet_since = time.monotonic()
        if shots is not None:
            import base64

            png = browser.send(
                "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session
            )["data"]
            out = shots / (page.replace("/", "__").removesuffix(".html") + ".png")
            out.write_bytes(base64.b64decode(png))
        if report:
            if report["needsMath"] and report["mathjax"] != "ready":
                problems.append(f"page has math but MathJax is {report['mathjax']}")
            if report["untypeset"]:
                problems.append(f"math left untypeset: {report['untypeset'][:5]}")
            if report["merrors"]:
                problems.append(f"MathJax errors: {report['merrors'][:5]}")
            if report["raw"]:
                problems.append(f"raw math delimiters left in the text: {report['raw'][:5]}")
            if report["mathEls"] and report["typeset"] < report["mathEls"]:
                problems.append(f"only {report['typeset']} of {report['mathEls']} math elements typeset")
            if report["brokenImages"]:
                problems.append(f"images that did not load: {report['brokenImages'][:5]}")
        return problems, report
    finally:
        try:
            browser.send("Target.closeTarget", {"targetId": target}, timeout=10)
        except Exception:
            pass


def browser_check(root: Path, page_list: list[str], shots: Path | None = None) -> list[str] | None:
    """Problems found in headless Chromium; None when no Chromium is installed."""
    binary = find_chromium()
    if binary is None:
        return None
    server, port = serve(root)
    base = f"http://127.0.0.1:{port}"
    browser = Chromium(binary)
    problems = []
    try:
        version = browser.send("Browser.getVersion")["product"]
        print(f"browser check: {version} (headless) on {base}, {len(page_list)} pages")
        for page in page_list:
            t0 = time.monotonic()
            page_problems, report = check_page(browser, base, root, page, shots)
            took = time.monotonic() - t0
            status = "FAIL" if page_problems else "ok  "
            detail = (
                (
                    f"math {report.get('typeset', 0)} typeset / {report.get('mathEls', 0)} elements, "
                    f"images {report.get('images', 0)}"
                )
                if report
                else ""
            )
            print(f"  {status} {page:<40} {detail} ({took:.1f} s)")
            problems += [f"{page}: {p}" for p in page_problems]
    finally:
        browser.close()
        server.shutdown()
    return problems


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default="_build/html", help="the built HTML (default _build/html)")
    parser.add_argument("--screenshots", type=Path, help="save a full-page PNG of every page in this folder")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    root = Path(args.root).resolve()
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    if not (root / "index.html").exists():
        print(f"check_site: no built book at {root} (run the book build first)", file=sys.stderr)
        return 2
    page_list = pages(root)
    problems = static_scan(root, page_list) + unrendered_markup(root, page_list)
    found = browser_check(root, page_list, args.screenshots)
    if found is None:
        print(
            "SKIPPED the browser check: no Chromium found (install Debian's chromium: "
            "apt-get install -y chromium, or set CHROMIUM=/path/to/chromium). Only the static URL scan ran."
        )
    else:
        problems += found
    if problems:
        print(f"\ncheck_site: {len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    print("check_site: all pages passed" + ("" if found is None else " in the browser"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
