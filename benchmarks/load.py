"""N annotators at once against gunicorn on PostgreSQL, DEBUG off: TofuEval task 1 from login
to submit, with autosaves and think time.

For each N it makes a project with N annotators, each with their own task 1 assignments (a
dialogue of --words words, --summaries summaries of --sentences sentences), starts gunicorn on
a free port of 127.0.0.1 with production settings (DEBUG off, a random SECRET_KEY, collected
static files, Redis cache), and runs N client threads for --duration seconds. Each annotator:

    login form (GET), login (POST, allauth, CSRF) -> loop until the time is up:
    next (GET /p/<slug>/campaigns/<pk>/next/, 302) -> page (GET the assignment) ->
    --saves autosaves (POST JSON {version, draft, active_seconds_delta} with X-CSRFToken),
    each after a think time of --think seconds (uniform +-50%), each adding a share of the fields ->
    submit (form POST with every field, client_token and draft_version; 302)

The client speaks as the TLS-terminating proxy would (X-Forwarded-Proto: https, Origin), so
the production security settings stay on. Afterwards gunicorn is stopped and the database is
asked how many assignments are submitted and how many judgments exist: both must equal what
the clients' successful submits imply.

    .venv/bin/python benchmarks/load.py --database-url postgres://postgres@127.0.0.1:5432/bench_perf
    .venv/bin/python benchmarks/load.py --database-url ... --annotators 10 50 100 --duration 180
    .venv/bin/python benchmarks/load.py --database-url ... --quick        # N=10 for 30 s, shorter thinks

The client runs on the same machine as the server and the database: its threads take CPU too.
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("DEBUG", "1")  # this process only builds the data; gunicorn runs with DEBUG off
PASSWORD = "x-load-password-correct-horse"  # noqa: S105 (a throwaway benchmark database)
TIMEOUT = 60.0


# ----------------------------------------------------------------------------- the data


def build(n: int, per_annotator: int, args) -> dict:
    """A project with n annotators, each with `per_annotator` task 1 items of their own."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from annotation.corpus.models import Document, Summary, SummarySentence, Topic
    from annotation.projects.models import Membership, Project, Role
    from annotation.protocols.models import Assignment, Campaign, Item, Protocol

    stamp = int(time.time())
    project = Project.objects.create(slug=f"load-{n}-{stamp}", name=f"Load {n}")
    campaign = Campaign.objects.create(
        project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1, status=Campaign.Status.ACTIVE
    )
    password = make_password(PASSWORD)  # hashed once: the same hash for every annotator
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{project.slug}-a{i}", email=f"{project.slug}-a{i}@example.org", password=password)
        for i in range(n)
    )
    Membership.objects.bulk_create(
        Membership(project=project, user=u, role=Role.ANNOTATOR, pseudonym=f"A{i + 1}") for i, u in enumerate(users)
    )
    turns = [
        {"speaker": f"Speaker {t % 3}", "text": " ".join(f"word{(t * 7 + w) % 97}" for w in range(20)) + "."}
        for t in range(max(1, args.words // 20))
    ]
    text = "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)
    keys = [f"{u.pk}-{k}" for u in users for k in range(per_annotator)]
    docs = Document.objects.bulk_create(
        Document(project=project, external_id=key, kind="dialogue", turns=turns, text=text) for key in keys
    )
    topics = Topic.objects.bulk_create(Topic(document=d, name="Budget") for d in docs)
    parts = [f"Sentence {s + 1} says the budget grows by {s + 2} percent next year." for s in range(args.sentences)]
    summaries = Summary.objects.bulk_create(
        Summary(
            project=project,
            document=d,
            topic=t,
            external_id=f"{d.external_id}-s{s}",
            system=f"m{s}",
            text=" ".join(parts),
        )
        for d, t in zip(docs, topics, strict=True)
        for s in range(args.summaries)
    )
    sentences = []
    for summary in summaries:
        start = 0
        for index, part in enumerate(parts):
            sentences.append(
                SummarySentence(summary=summary, index=index, start=start, end=start + len(part), text=part)
            )
            start += len(part) + 1
    SummarySentence.objects.bulk_create(sentences, batch_size=2000)
    items = Item.objects.bulk_create(
        Item(campaign=campaign, key=d.external_id, document=d, topic=t) for d, t in zip(docs, topics, strict=True)
    )
    through = Item.summaries.through
    rng = random.Random(n)
    links, assignments = [], []
    for i, item in enumerate(items):
        ids = [s.pk for s in summaries[i * args.summaries : (i + 1) * args.summaries]]
        links += [through(item_id=item.pk, summary_id=pk) for pk in ids]
        order = sorted(ids)
        rng.shuffle(order)
        assignments.append(Assignment(item=item, annotator=users[i // per_annotator], summary_order=order))
    through.objects.bulk_create(links, batch_size=2000)
    Assignment.objects.bulk_create(assignments, batch_size=2000)
    return {
        "slug": project.slug,
        "campaign": campaign.pk,
        "users": [u.username for u in users],
        "judgments_per_submit": 1
        + args.summaries * (args.sentences + 2),  # topic; per summary: sentences, flag, rating
    }


def stored(campaign_id: int) -> tuple[int, int]:
    from annotation.protocols.models import Assignment, Judgment

    submitted = Assignment.objects.filter(item__campaign_id=campaign_id, status=Assignment.Status.SUBMITTED).count()
    return submitted, Judgment.objects.filter(assignment__item__campaign_id=campaign_id).count()


# ----------------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(database_url: str, var_dir: Path, port: int, redis_url: str, login_rate: str) -> dict:
    env = dict(os.environ)
    settings = "annotation.settings"
    if login_rate:
        # allauth allows 30 logins a minute per IP by default; every simulated annotator has the same IP.
        (var_dir / "load_settings.py").write_text(
            "from annotation.settings import *  # noqa: F403\n"
            f"ACCOUNT_RATE_LIMITS = {{**ACCOUNT_RATE_LIMITS, 'login': {login_rate!r}}}  # noqa: F405\n"
        )
        settings = "load_settings"
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(var_dir), env.get("PYTHONPATH", "")]))
    env.update(
        DJANGO_SETTINGS_MODULE=settings,
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        ATTEST_VAR_DIR=str(var_dir),
        STATIC_ROOT=str(var_dir / "static"),
        LOG_LEVEL="WARNING",
    )
    return env


def start_server(env: dict, port: int, args) -> subprocess.Popen:
    python, code = sys.executable, Path(args.code).resolve()
    subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=code, env=env, check=True)
    command = [
        str(Path(python).with_name("gunicorn")),
        "annotation.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(args.workers),
        "--worker-class",
        args.worker_class,
        "--threads",
        str(args.threads),
        "--timeout",
        "60",
        "--backlog",
        "2048",
        "--no-control-socket",  # another gunicorn on the machine may hold the default one
    ]
    log = open(Path(env["ATTEST_VAR_DIR"]) / "gunicorn.log", "w")  # noqa: SIM115 (lives as long as the server)
    server = subprocess.Popen(command, cwd=code, env=env, stdout=log, stderr=subprocess.STDOUT)
    give_up = time.monotonic() + 120
    while time.monotonic() < give_up:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited: see {log.name}")
        if warm(port, args.workers):
            return server
        time.sleep(0.5)
    server.terminate()
    server.wait(timeout=30)
    raise SystemExit(f"gunicorn did not answer 200 within 120 s: see {log.name}")


def warm(port: int, workers: int) -> bool:
    """True once every worker has booted and answered: 3 requests per worker at once, all 200.
    (The master listens before its workers have imported Django; those first seconds are not measured.)"""
    answers = []

    def get():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            connection.request(
                "GET", "/accounts/login/", headers={"Host": f"127.0.0.1:{port}", "X-Forwarded-Proto": "https"}
            )
            answers.append(connection.getresponse().status)
        except OSError:
            answers.append(0)
        finally:
            connection.close()

    threads = [threading.Thread(target=get) for _ in range(3 * workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers == [200] * len(threads)


# ----------------------------------------------------------------------------- the client


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency = defaultdict(list)
        self.status = defaultdict(lambda: defaultdict(int))
        self.errors = defaultdict(int)  # kind -> status >= 500 or connection error
        self.examples = []
        self.submits_sent = self.submits_ok = self.conflicts = 0
        self.cpu = (float("nan"),) * 3  # seconds: gunicorn (master + workers), this client, PostgreSQL

    def add(self, kind: str, seconds: float, status: int) -> None:
        with self.lock:
            self.latency[kind].append(seconds)
            self.status[kind][status] += 1
            if status >= 500 or status == 0:
                self.errors[kind] += 1


class Annotator:
    """One person in a browser: cookies, CSRF token, one connection at a time."""

    def __init__(self, port: int, username: str, world: dict, stats: Stats, args, deadline: float, rng):
        self.port, self.username, self.world, self.stats = port, username, world, stats
        self.args, self.deadline, self.rng = args, deadline, rng
        self.cookies: dict[str, str] = {}
        self.connection = None

    def request(self, kind: str, method: str, path: str, body: bytes | None = None, headers=None):
        """One request; returns (status, headers, body) or None on a connection error."""
        host = f"127.0.0.1:{self.port}"
        sent = {"Host": host, "X-Forwarded-Proto": "https", "User-Agent": "attest-load"}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if method == "POST":
            sent["Origin"] = f"https://{host}"
        sent.update(headers or {})
        start = time.perf_counter()
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
            self.connection.request(method, path, body=body, headers=sent)
            response = self.connection.getresponse()
            content = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.stats.add(kind, time.perf_counter() - start, 0)
            with self.stats.lock:
                if len(self.stats.examples) < 5:
                    self.stats.examples.append(f"{kind}: {error!r}")
            self.close()
            return None
        self.stats.add(kind, time.perf_counter() - start, response.status)
        if response.status >= 500:
            with self.stats.lock:
                if len(self.stats.examples) < 5:
                    self.stats.examples.append(f"{kind}: HTTP {response.status} {path}")
        for line in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = line.partition("=")
            value = rest.split(";", 1)[0]
            if "max-age=0" in line.lower() or not value or value == '""':
                self.cookies.pop(name.strip(), None)
            else:
                self.cookies[name.strip()] = value
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, response.headers, content

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def form_post(self, kind: str, path: str, fields: dict):
        body = urlencode(fields).encode()
        return self.request(kind, "POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})

    def login(self) -> bool:
        """The login form, then the login; refused (429, rate limit), a person tries again 10 s later."""
        for _ in range(6):
            got = self.request("login form", "GET", "/accounts/login/")
            if not got or got[0] != 200:
                return False
            token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', got[2]).group(1).decode()
            fields = {"csrfmiddlewaretoken": token, "login": self.username, "password": PASSWORD}
            got = self.form_post("login", "/accounts/login/", fields)
            if not got or got[0] != 429 or time.monotonic() > self.deadline:
                return bool(got) and got[0] == 302
            time.sleep(10)
        return False

    def think(self) -> None:
        pause = self.args.think * self.rng.uniform(0.5, 1.5)
        time.sleep(max(0.0, min(pause, self.deadline - time.monotonic())))

    def run(self) -> None:
        if not self.login():
            return
        next_path = f"/p/{self.world['slug']}/campaigns/{self.world['campaign']}/next/"
        while time.monotonic() < self.deadline:
            got = self.request("next", "GET", next_path)
            if not got or got[0] != 302:
                return
            location = urlsplit(got[1]["Location"]).path
            if "/assignments/" not in location:
                return  # nothing left in the queue
            if not self.annotate(location):
                self.think()

    def annotate(self, path: str) -> bool:
        got = self.request("page", "GET", path)
        if not got or got[0] != 200:
            return False
        html = got[2].decode()
        version = int(re.search(r'name="draft_version" value="(\d+)"', html).group(1))
        client_token = re.search(r'name="client_token" value="([^"]+)"', html).group(1)
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
        draft = {"topic_category": "main"}
        for n, sentence in enumerate(dict.fromkeys(re.findall(r'name="s-(\d+)"', html))):
            draft[f"s-{sentence}"] = "inconsistent" if n % 5 == 4 else "consistent"
            if n % 5 == 4:
                draft[f"e-{sentence}"] = "The dialogue says otherwise."
        for summary in dict.fromkeys(re.findall(r'name="r-(\d+)"', html)):
            draft[f"r-{summary}"] = str(self.rng.randint(1, 5))
        keys = list(draft)
        saves = max(1, self.args.saves)
        for s in range(saves):
            self.think()
            if time.monotonic() >= self.deadline:
                return True  # left in progress, like a person who closes the tab
            partial = {k: draft[k] for k in keys[: math.ceil(len(keys) * (s + 1) / saves)]}
            body = json.dumps({"version": version, "draft": partial, "active_seconds_delta": self.args.think})
            headers = {"Content-Type": "application/json", "X-CSRFToken": csrf, "HX-Request": "true"}
            got = self.request("autosave", "POST", path + "draft/", body.encode(), headers)
            if not got:
                return False
            if got[0] in (200, 409):
                version = json.loads(got[2])["version"]
                if got[0] == 409:
                    with self.stats.lock:
                        self.stats.conflicts += 1
        fields = {**draft, "csrfmiddlewaretoken": csrf, "client_token": client_token}
        fields |= {"draft_version": str(version), "active_seconds": "0"}
        with self.stats.lock:
            self.stats.submits_sent += 1
        got = self.form_post("submit", path + "submit/", fields)
        if got and got[0] == 302:
            with self.stats.lock:
                self.stats.submits_ok += 1
            return True
        return False


# ----------------------------------------------------------------------------- the run


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def cpu_seconds(pids) -> float:
    """CPU seconds (user + system) of these processes so far, from /proc."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def server_cpu(master: int) -> float:
    """gunicorn's master and workers."""
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        return float("nan")
    return cpu_seconds([str(master), *children])


def database_cpu(database: str) -> float:
    """PostgreSQL backends connected to the benchmark's database (this process has closed its own)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith("postgres: ") and f" {database} " in title:
            pids.append(entry.name)
    return cpu_seconds(pids)


class LoadMonitor(threading.Thread):
    """Samples the 1-minute load average every 5 s while the clients run."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples, self.stop = [], threading.Event()

    def run(self) -> None:
        while not self.stop.wait(5):
            self.samples.append(os.getloadavg()[0])


def run_one(n: int, args) -> None:
    per_annotator = args.items or max(2, math.ceil(args.duration / max(0.1, args.think * args.saves)) + 2)
    start = time.perf_counter()
    world = build(n, per_annotator, args)
    print(
        f"\n## N = {n} annotators, {args.duration:.0f} s; {per_annotator} assignments each "
        f"(built in {time.perf_counter() - start:.1f} s); load average before {os.getloadavg()}",
        flush=True,
    )
    var_dir = Path(tempfile.mkdtemp(prefix="attest-load-"))
    port = free_port()
    env = server_env(args.database_url, var_dir, port, args.redis_url, args.login_rate)
    server = start_server(env, port, args)
    stats, monitor = Stats(), LoadMonitor()
    monitor.start()
    from django.db import connections

    connections.close_all()  # so that the database's backends are the server's alone
    database = urlsplit(args.database_url).path.lstrip("/")
    try:
        cpu_server, cpu_client, cpu_db = server_cpu(server.pid), time.process_time(), database_cpu(database)
        began = time.monotonic()
        deadline = began + args.ramp + args.duration
        threads = []
        for i, username in enumerate(world["users"]):
            annotator = Annotator(port, username, world, stats, args, deadline, random.Random(i))
            delay = args.ramp * i / n  # logins spread over the ramp: each hashes a password

            def go(a=annotator, d=delay):
                time.sleep(d)
                a.run()
                a.close()

            threads.append(threading.Thread(target=go, daemon=True))
            threads[-1].start()
        for thread in threads:
            thread.join(timeout=args.ramp + args.duration + TIMEOUT * 3)
        wall = time.monotonic() - began
        stats.cpu = (
            server_cpu(server.pid) - cpu_server,
            time.process_time() - cpu_client,
            database_cpu(database) - cpu_db,
        )
    finally:
        monitor.stop.set()
        server.terminate()
        server.wait(timeout=30)
    submitted, judgments = stored(world["campaign"])
    report(n, stats, monitor, wall, submitted, judgments, world, var_dir)


def report(n, stats, monitor, wall, submitted, judgments, world, var_dir) -> None:
    loads = monitor.samples or [os.getloadavg()[0]]
    print(
        f"wall {wall:.0f} s; load average (1 min) during the run: mean {sum(loads) / len(loads):.1f}, max {max(loads):.1f}"
    )
    print("| request | count | p50 ms | p95 ms | p99 ms | max ms | errors | statuses |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in ("login form", "login", "next", "page", "autosave", "submit"):
        times = stats.latency.get(kind)
        if not times:
            continue
        statuses = ", ".join(f"{s or 'conn'}: {c}" for s, c in sorted(stats.status[kind].items()))
        ms = [percentile(times, p) * 1000 for p in (50, 95, 99)] + [max(times) * 1000]
        print(
            f"| {kind} | {len(times)} | "
            + " | ".join(f"{v:.0f}" for v in ms)
            + f" | {stats.errors[kind]} | {statuses} |"
        )
    total = sum(len(v) for v in stats.latency.values())
    print(
        f"requests {total} ({total / wall:.1f}/s); errors (>= 500 or connection) {sum(stats.errors.values())}; "
        f"autosave conflicts (409) {stats.conflicts}"
    )
    server, client, database = stats.cpu
    print(
        f"CPU: gunicorn {server:.0f} s ({server / wall:.2f} cores, {server / max(1, total) * 1000:.0f} ms per request), "
        f"PostgreSQL backends {database:.0f} s ({database / wall:.2f} cores), this client {client:.0f} s "
        f"({client / wall:.2f} cores)"
    )
    expected = stats.submits_ok * world["judgments_per_submit"]
    print(
        f"submits sent {stats.submits_sent}, answered 302: {stats.submits_ok}; in the database: {submitted} submitted "
        f"assignments, {judgments} judgments (expected {expected}) -> "
        + ("OK" if submitted == stats.submits_ok and judgments == expected else "MISMATCH")
    )
    for example in stats.examples:
        print("  e.g.", example)
    print(f"server log: {var_dir / 'gunicorn.log'}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""), help="PostgreSQL (required)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12", help="the server's cache")
    parser.add_argument("--annotators", type=int, nargs="+", default=[10, 50, 100], help="N, one run each")
    parser.add_argument("--duration", type=float, default=180, help="seconds of work per N after the ramp")
    parser.add_argument("--ramp", type=float, default=30, help="seconds over which the N logins are spread")
    parser.add_argument("--think", type=float, default=4, help="mean seconds before each autosave")
    parser.add_argument("--saves", type=int, default=5, help="autosaves per assignment before the submit")
    parser.add_argument("--items", type=int, default=0, help="assignments per annotator (default: enough)")
    parser.add_argument("--words", type=int, default=1200, help="words in each dialogue")
    parser.add_argument("--summaries", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=4, help="sentences per summary")
    parser.add_argument(
        "--login-rate",
        default="300/m/ip",
        help="allauth's login rate limit for the server (its default, 30/m/ip, would turn most of the "
        "simultaneous logins from this one IP away); '' keeps the project's settings",
    )
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn workers")
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class (sync, gthread)")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (gthread)")
    parser.add_argument(
        "--code",
        default=str(ROOT),
        help="project tree that gunicorn serves (default this checkout; e.g. a `git archive HEAD` snapshot, "
        "so that others' unfinished edits cannot break the server mid-run)",
    )
    parser.add_argument("--quick", action="store_true", help="N=10 for 30 s, think 1.5 s, 3 autosaves")
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        parser.error("--database-url (or DATABASE_URL) must name a PostgreSQL database of your own")
    if args.quick:
        args.annotators, args.duration, args.ramp, args.think, args.saves = [10], 30, 5, 1.5, 3
    os.environ["DATABASE_URL"] = args.database_url
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    print(
        f"gunicorn: {args.workers} {args.worker_class} workers x {args.threads} threads; login rate limit "
        f"{args.login_rate or 'as configured'}; think {args.think} s, "
        f"{args.saves} autosaves per assignment; {args.summaries} summaries x {args.sentences} sentences, "
        f"{args.words}-word dialogue; {os.cpu_count()} cores"
    )
    for n in args.annotators:
        run_one(n, args)


if __name__ == "__main__":
    main()
