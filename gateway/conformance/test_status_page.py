"""Gateway conformance (gateway/contract/status.md): /status.json validates against status.schema.json, and the page
at / shows it in a real headless Chromium: every source with its last values and units, each metric's sparkline
with one point per 5-minute bucket of the data fed, a source that went silent marked stale, its silence alert
firing, a board with a key refused for an unsigned frame shown with its rejects, and no console message. /healthz
answers 200 ok while Cassandra is reached and 503 naming it once the link is cut for longer than the threshold.
Every gateway under test runs side by side, fed by the board simulator on its own pseudo-terminal, each reaching
Cassandra through a proxy the test cuts. The screenshots (a phone's width) are left in the test's folder as
status-<gateway>.png."""

from __future__ import annotations

import http.client
import json
import re
import shlex
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser

import jsonschema
from telemetry_board_sim import encode_frame
from telemetry_chromium import dom_and_console, dom_console_and_screenshot
from telemetry_conformance import ROOT, Board, GatewayUnderTest, gateways_under_test, wait_for
from telemetry_conformance.cassandra_proxy import CutProxy
from telemetry_conformance.scenario_fixtures import gateways, keyspace  # noqa: F401 (fixtures)

EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side
SCHEMA = json.loads((ROOT / "gateway" / "contract" / "status.schema.json").read_text())
STALE_AFTER_S = 2
QUIET_RULE = '\n[[alerts]]\nname = "quiet"\nsilent_s = 1.0\n'
CELLAR = [("temp", "11.5"), ("vbat", "3.3")]  # sends once, then falls silent
GREENHOUSE = [("temp_in", "4.25"), ("humidity", "81.5")]  # keeps sending
SHED = [("temp", "9.0")]  # has a key but sends one unsigned frame: refused, listed for its key (status.md)
SHOWN = {"cellar": {"temp": "11.5 \u00b0C", "vbat": "3.3 V"},
         "greenhouse": {"temp_in": "4.25 \u00b0C", "humidity": "81.5 %RH"}, "shed": {}}
BUDGET_MS = 1000  # Chromium's virtual time for the page to fetch status.json and draw
DOWN_S = 1  # [metrics] healthz_cassandra_down_s here: the cut is named soon
BUCKET_MS = json.loads((ROOT / "gateway" / "contract" / "constants.json").read_text())["constants"][
    "status_bucket_ms"]["value"]  # a sparkline point's bucket


class Cards(HTMLParser):
    """The page's source cards as drawn: {source: {"stale": "true"|"false", "values": {metric: text},
    "alerts": {rule: text}, "sparks": {metric: [the svg's data-points, the line's x,y pairs]}, and "rejects": text
    when shown}}."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, dict] = {}
        self._into: tuple[dict, str] | None = None
        self._series = ""  # the metric of the sparkline being read

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-source" in a:
            self.cards[a["data-source"]] = {"stale": a.get("data-stale"), "values": {}, "alerts": {}, "sparks": {}}
        elif self.cards and "data-series" in a:
            self._series = a["data-series"]
        elif self.cards and tag == "svg" and "data-points" in a:
            list(self.cards.values())[-1]["sparks"][self._series] = [int(a["data-points"])]
        elif self.cards and tag == "polyline":  # the line through each bucket's last value: one x,y per point
            list(self.cards.values())[-1]["sparks"][self._series].append(len(a["points"].split()))
        elif self.cards and "data-metric" in a:
            self._into = (list(self.cards.values())[-1]["values"], a["data-metric"])
        elif self.cards and "data-rule" in a:
            self._into = (list(self.cards.values())[-1]["alerts"], a["data-rule"])
        elif self.cards and "data-rejects" in a:
            self._into = (list(self.cards.values())[-1], "rejects")

    def handle_data(self, data):
        if self._into is not None:
            into, key = self._into
            into[key] = into.get(key, "") + data

    def handle_endtag(self, tag):
        self._into = None


def by_source(doc: dict) -> dict[str, dict]:
    return {entry["source"]: entry for entry in doc["sources"]}


def healthz(gateway: GatewayUnderTest) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.metrics_port, timeout=5)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_the_status_page_shows_every_source_and_the_silent_one_stale(tmp_path, gateways, monkeypatch, keyspace,  # noqa: F811
                                                                     cassandra_node):
    browsers = ThreadPoolExecutor()  # Chromium runs beside the waits
    proxy = CutProxy(cassandra_node)
    probe = browsers.submit(dom_and_console, "data:text/html,<script>console.error('probe')</script>")
    rigs = {}
    keys = tmp_path / "keys"
    keys.write_text("shed " + bytes(range(16)).hex() + "\n")
    keys.chmod(0o600)
    for name, command in gateways_under_test().items():
        folder = tmp_path / name
        folder.mkdir()
        board = Board(folder / "ttyUSB0")
        # A trusted port (signing.md): the unkeyed boards' unsigned frames are heard although keys exist.
        gateway = GatewayUnderTest.configure(folder, [{"path": board.link, "trusted": True}], keyspace,
                                             "127.0.0.1", extra=f'{QUIET_RULE}\n[signing]\nkeys_file = "{keys}"\n')
        gateways.append(gateway)
        monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
        gateway.start(TELEMETRY_CASSANDRA_PORT=str(proxy.port), TELEMETRY_METRICS_STALE_AFTER_S=str(STALE_AFTER_S),
                      TELEMETRY_METRICS_HEALTHZ_CASSANDRA_DOWN_S=str(DOWN_S))
        rigs[name] = (board, gateway)
    first_ms = time.time_ns() // 1_000_000
    for board, _ in rigs.values():
        board.write(encode_frame("cellar", 0, CELLAR) + encode_frame("shed", 0, SHED))

    stop = threading.Event()

    def greenhouse_keeps_sending() -> None:
        seq = 0
        while not stop.is_set():
            for board, _ in rigs.values():
                board.write(encode_frame("greenhouse", seq, GREENHOUSE))
            seq += 1
            stop.wait(0.25)

    sender = threading.Thread(target=greenhouse_keeps_sending, daemon=True)
    sender.start()
    pages = {}
    try:
        for name, (_, gateway) in rigs.items():  # Cassandra reached, a board heard: healthy
            wait_for(lambda gateway=gateway: healthz(gateway) == (200, "ok\n"), 30, f"{name}: /healthz 200 ok")
        proxy.cut()
        for name, (_, gateway) in rigs.items():
            wait_for(lambda gateway=gateway: healthz(gateway)[0] == 503, 30, f"{name}: /healthz 503 after the cut")
            status, reason = healthz(gateway)
            assert re.fullmatch(r"cassandra unreachable for [0-9]+ s\n", reason), (name, status, reason)
        for name, (_, gateway) in rigs.items():
            def settled(gateway=gateway):
                doc = by_source(gateway.status())
                return (doc.keys() == {"cellar", "greenhouse", "shed"} and doc["cellar"]["stale"]
                        and not doc["greenhouse"]["stale"] and doc["cellar"]["alerts"][0]["state"] == "firing")
            wait_for(settled, 30, f"{name}: cellar stale and its silence alert firing, greenhouse live")
            doc = gateway.status()
            jsonschema.validate(doc, SCHEMA)
            assert doc["stale_after_s"] == STALE_AFTER_S, name
            assert doc["gateway"]["implementation"] == name or name not in ("python", "node"), name
            cellar, greenhouse = by_source(doc)["cellar"], by_source(doc)["greenhouse"]
            assert cellar["values"] == [{"metric": "temp", "value": 11.5, "unit": "\u00b0C"},
                                        {"metric": "vbat", "value": 3.3, "unit": "V"}], name
            assert cellar["age_s"] > STALE_AFTER_S and greenhouse["frames_per_minute"] > 0, name
            assert [a["rule"] + ":" + a["state"] for a in cellar["alerts"]] == ["quiet:firing"], name
            assert doc["cassandra"]["state"] == "down" and doc["spool"]["frames"] > 0, name
            assert {source: entry["rejects"] for source, entry in by_source(doc).items()} == {
                "cellar": {}, "greenhouse": {}, "shed": {"unsigned": 1}}, name
            pages[name] = (doc, browsers.submit(dom_console_and_screenshot, f"http://127.0.0.1:{gateway.metrics_port}/",
                                                tmp_path / f"status-{name}.png", width=412, height=915,
                                                budget_ms=BUDGET_MS))
        _, console = probe.result()
        assert len(console) == 1 and "probe" in console[0], "the console check must see a console message"
        for name, (doc, page) in pages.items():
            dom, console, pixels = page.result()
            last_ms = time.time_ns() // 1_000_000  # the page fetched its status.json before this
            assert console == [], f"{name}: console messages: {console}"
            cards = Cards()
            cards.feed(dom)
            assert {source: card["values"] for source, card in cards.cards.items()} == SHOWN, name
            assert {source: card["stale"] for source, card in cards.cards.items()} == {
                "cellar": "true", "greenhouse": "false", "shed": "true"}, name
            assert {source: card.get("rejects") for source, card in cards.cards.items()} == {
                "cellar": None, "greenhouse": None, "shed": "refused: 1 unsigned"}, name
            assert cards.cards["cellar"]["alerts"]["quiet"].startswith("quiet: firing"), name
            assert doc["gateway"]["implementation"] + " gateway" in dom and "Cassandra" in dom, name
            assert len(set(pixels)) > 20, f"{name}: the screenshot is blank"
            # One point per 5-minute bucket of receipt: cellar's one frame is one point; greenhouse has one per
            # bucket it sent in, exactly one unless the run crossed a bucket boundary. The shed has no reading.
            sparks = {source: card["sparks"] for source, card in cards.cards.items()}
            greenhouse = 1 if first_ms // BUCKET_MS == last_ms // BUCKET_MS else sparks["greenhouse"]["temp_in"][0]
            assert 1 <= greenhouse <= 1 + (last_ms // BUCKET_MS - first_ms // BUCKET_MS), name
            assert sparks == {"cellar": {"temp": [1, 1], "vbat": [1, 1]},
                              "greenhouse": {"humidity": [greenhouse] * 2, "temp_in": [greenhouse] * 2},
                              "shed": {}}, name
            cellar = by_source(doc)["cellar"]["series"]
            assert [(s["metric"], [p[1:] for p in s["points"]]) for s in cellar] == [
                ("temp", [[11.5, 11.5, 11.5]]), ("vbat", [[3.3, 3.3, 3.3]])], name
    finally:
        stop.set()
        sender.join()
        browsers.shutdown()
        proxy.close()
    for name, (_, gateway) in rigs.items():
        assert gateway.stop() == 0, name
