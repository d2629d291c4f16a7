"""The RM's web UI in headless Chromium against `fairloom up` (Fair Scheduler, queues a and b,
b with maxRunningApps 1): two DistributedShell apps run (one per queue) and a third waits in b.
Each page is loaded by the browser (its JavaScript runs) and its DOM is checked against the
REST API: queue names, bar widths, the waiting app's reason, filters, nodes. Screenshots are
saved for people to look at. Bounded: every wait has a deadline; everything is stopped."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from html.parser import HTMLParser

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from rm_site import FAIR, write_site  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
OUT = os.path.abspath(sys.argv[2])
ALLOCATIONS = """<allocations>
  <queue name="a"><weight>1</weight></queue>
  <queue name="b"><weight>3</weight><maxRunningApps>1</maxRunningApps></queue>
</allocations>"""


def write_conf(d):
    extra = {"yarn.scheduler.fair.user-as-default-queue": "false"}
    return write_site(d, FAIR, {"fair-scheduler.xml": ALLOCATIONS}, extra)


def wait(what, f, within=60):
    deadline = time.time() + within
    while time.time() < deadline:
        try:
            v = f()
        except OSError:  # not listening yet
            v = None
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def rest(base, path):
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return json.load(r)


class Dom(HTMLParser):
    """Elements with their attributes and text, enough for the checks."""

    def __init__(self, html):
        super().__init__()
        self.elements = []
        self.stack = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": "", "parents": list(self.stack)}
        self.elements.append(el)
        if tag not in ("br", "img", "input", "meta", "link", "hr"):
            self.stack.append(el)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for el in self.stack:
            el["text"] += data

    def find(self, **attrs):
        return [e for e in self.elements if all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def by_id(self, ident):
        found = self.find(id=ident)
        assert found, f"no element #{ident}"
        return found[0]


def inside(el, ancestor):
    return any(p is ancestor for p in el["parents"])


def chromium(*args):
    profile = tempfile.mkdtemp(prefix="fairloom-chromium-")
    try:
        return subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=60, check=True).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def load(url):
    return Dom(chromium("--dump-dom", "--virtual-time-budget=1000", url))


def screenshot(url, name, height=1000):
    path = os.path.join(OUT, name)
    chromium(f"--screenshot={path}", f"--window-size=1280,{height}", "--hide-scrollbars", url)
    assert os.path.getsize(path) > 10_000, f"{path} looks empty"
    print(f"  screenshot {path}")


def width(el):
    m = re.search(r"width:([0-9.]+)%", el["attrs"].get("style", ""))
    assert m, f"no width in {el}"
    return float(m.group(1))


def pct(part, whole):
    return 0.0 if whole <= 0 else max(0.0, min(100.0, part * 100.0 / whole))


def check_scheduler_page(base):
    # The page and the REST answer must describe the same moment: retry until they agree
    # with a REST read on both sides of the page load.
    for _ in range(10):
        before = rest(base, "/ws/v1/cluster/scheduler")
        dom = load(base + "/cluster/scheduler")
        after = rest(base, "/ws/v1/cluster/scheduler")
        if before == after:
            break
    else:
        raise AssertionError("the scheduler never held still for a page load")
    info = before["scheduler"]["schedulerInfo"]["rootQueue"]
    cluster = info["clusterResources"]["memory"]
    queues = {}

    def walk(q):
        queues[q["queueName"]] = q
        for c in (q.get("childQueues") or {}).get("queue", []):
            walk(c)

    walk(info)
    shown = [e["attrs"]["data-queue"] for e in dom.elements if "data-queue" in e["attrs"]]
    # Every queue the REST API knows (root.default only once an application was placed there).
    for name in ("root", "root.a", "root.b", *queues):
        assert name in shown, f"{name} not on the page: {shown}"
    for name, q in queues.items():
        li = dom.find(data_queue=name)[0]
        bars = {e["attrs"]["data-bar"]: width(e) for e in dom.elements if inside(e, li) and "data-bar" in e["attrs"]}
        mx = min(q["maxResources"]["memory"], cluster)
        used, fair = q["usedResources"]["memory"], q["fairResources"]["memory"]
        want = {
            "max": pct(mx, cluster),
            "steady": pct(q["steadyFairResources"]["memory"], mx),
            "fair": pct(fair, mx),
            "used": pct(min(used, fair), mx),
            "over": min(pct(max(used - fair, 0), mx), 100.0 - pct(min(used, fair), mx)),
        }
        for bar, w in want.items():
            assert abs(bars[bar] - w) < 0.02, f"{name} {bar}: page {bars[bar]} REST {w}"
        assert f"'{name}' Queue Status" in li["text"], li["text"][:200]
    # Queue b runs an app: its used bar shows.
    b = dom.find(data_queue="root.b")[0]
    assert any(width(e) > 0 for e in dom.elements if inside(e, b) and e["attrs"].get("data-bar") == "used")
    print(f"  /cluster/scheduler: {len(queues)} queues, bars match the REST numbers")


def main():
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fairloom-web-ui-")
    conf = os.path.join(work, "conf")
    base = write_conf(conf)
    up = subprocess.Popen([BIN, "up", "--conf", conf, "--dir", os.path.join(work, "state"), "--nodes", "2",
                           "--resource", "4096 mb, 4 vcores"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                          start_new_session=True)
    shells = []
    try:
        wait("two nodes", lambda: rest(base, "/ws/v1/cluster/metrics")["clusterMetrics"]["activeNodes"] == 2)

        def shell(queue, n, name):
            p = subprocess.Popen([BIN, "shell", "--rm", base, "--user", "alice", "--queue", queue, "--name", name,
                                  "--num-containers", str(n), "--timeout", "120", "--", "sleep 60"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
            shells.append(p)
            line = p.stdout.readline()
            assert "Submitted application" in line, line
            return line.split()[-1]

        a1 = shell("a", 2, "etl-a")
        b1 = shell("b", 1, "report-b")
        b2 = shell("b", 1, "waits-b")

        def containers_running():
            apps = {x["id"]: x for x in (rest(base, "/ws/v1/cluster/apps")["apps"] or {}).get("app", [])}
            return apps.get(a1, {}).get("runningContainers") == 3 and apps.get(b1, {}).get("runningContainers") == 2

        wait("the apps of a and b to run", containers_running)
        app = rest(base, f"/ws/v1/cluster/apps/{b2}")["app"]
        assert app["state"] == "ACCEPTED", app
        assert "maxRunningApps" in app["diagnostics"], app["diagnostics"]

        check_scheduler_page(base)

        dom = load(f"{base}/cluster/app/{b2}")
        w = dom.by_id("wait")
        assert w["attrs"]["data-kind"] == "QueueMaxRunningApps", w
        reason = dom.by_id("wait-reason")["text"].strip()
        assert app["diagnostics"] == "[fairloom] " + reason, (app["diagnostics"], reason)
        assert "root.b" in w["text"] and "maxRunningApps" in w["text"], w["text"]
        print(f"  /cluster/app/{b2}: waits for {reason!r}")
        dom = load(f"{base}/cluster/app/{a1}")
        assert not dom.find(id="wait"), "a running app with nothing outstanding does not wait"
        table = dom.by_id("containers")
        rows = [e for e in dom.elements if e["tag"] == "tr" and inside(e, table)]
        assert len(rows) == 1 + 3, f"header and three containers: {len(rows)}"
        assert "<time" not in dom.by_id("app-overview")["text"]

        dom = load(f"{base}/cluster/apps?queue=root.b")
        rows = [e for e in dom.elements if "data-app" in e["attrs"]]
        assert sorted(r["attrs"]["data-app"] for r in rows) == sorted([b1, b2]), rows
        dom = load(f"{base}/cluster/apps?state=ACCEPTED")
        rows = [e for e in dom.elements if "data-app" in e["attrs"]]
        assert [r["attrs"]["data-app"] for r in rows] == [b2], [r["attrs"]["data-app"] for r in rows]
        kinds = [e["text"] for e in dom.elements if e["attrs"].get("class") == "waitkind"]
        assert kinds == ["QueueMaxRunningApps"], kinds
        dom = load(f"{base}/cluster/apps/RUNNING")
        rows = [e for e in dom.elements if "data-app" in e["attrs"]]
        assert sorted(r["attrs"]["data-app"] for r in rows) == sorted([a1, b1])
        print("  /cluster/apps: queue and state filters")
        # A long name cannot push the table off the screen: user, name, type and queue cells
        # are cut to a width (CSS ellipsis) and carry the whole text in their title.
        dom = load(f"{base}/cluster/apps")
        cut = [e for e in dom.elements if e["tag"] == "td" and e["attrs"].get("class") == "cut"]
        assert len(cut) == 4 * 3, len(cut)
        assert all(e["attrs"].get("title") == e["text"] for e in cut), [(e["attrs"], e["text"]) for e in cut]
        assert {"etl-a", "report-b", "waits-b"} <= {e["attrs"]["title"] for e in cut}
        assert dom.find(**{"class": "scroll"}), "the table scrolls in its own box"

        nodes = rest(base, "/ws/v1/cluster/nodes")["nodes"]["node"]
        dom = load(f"{base}/cluster/nodes")
        shown = sorted(e["attrs"]["data-node"] for e in dom.elements if "data-node" in e["attrs"])
        assert shown == sorted(n["id"] for n in nodes), (shown, nodes)
        print(f"  /cluster/nodes: {len(shown)} nodes")

        dom = load(f"{base}/cluster")
        m = rest(base, "/ws/v1/cluster/metrics")["clusterMetrics"]
        table = dom.by_id("cluster-metrics")
        cells = [e["text"].strip() for e in dom.elements if e["tag"] == "td" and inside(e, table)]
        assert cells[0] == str(m["appsSubmitted"]) and cells[2] == str(m["appsRunning"]), (cells, m)
        times = [e["text"] for e in dom.elements if e["tag"] == "time"]
        # Started then finished per row: a start is a date, a running app's finish is N/A.
        assert times and all(times) and re.search(r"\d", times[0]) and times[1] == "N/A", times[:2]
        print("  /cluster: metrics tables match /ws/v1/cluster/metrics; the page's script ran")

        explain = subprocess.run([BIN, "explain", "app", b2, "--rm", base], capture_output=True, text=True, timeout=30)
        assert explain.returncode == 0, explain.stderr
        assert "QueueMaxRunningApps" in explain.stdout and "maxRunningApps: 1" in explain.stdout, explain.stdout
        assert "queue root.b:" in explain.stdout, explain.stdout
        print("  fairloom explain app: " + explain.stdout.splitlines()[1])

        screenshot(f"{base}/cluster/scheduler?queue=root.b", "scheduler.png", 1150)
        screenshot(f"{base}/cluster/app/{b2}", "app-waiting.png", 900)
        screenshot(f"{base}/cluster/apps", "apps.png", 800)
        screenshot(f"{base}/cluster/nodes", "nodes.png", 700)
        print("web UI: all checks passed")
    finally:
        for p in shells:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        os.killpg(up.pid, signal.SIGINT)
        try:
            up.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


main()
