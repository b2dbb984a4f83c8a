#!/usr/bin/env python3
"""Spawn -> first model request of the headless CLI, fresh HOME against warm HOME.

    bench/first_request.py [--json] [--runs N] [--no-strace] [--callgrind] [--cli PATH]

The CLI is the release gemini-desktop-cli of the cargo target directory unless --cli names
another; the fake server is the workspace's (bench/benchlib.py). Each run spawns
`CLI -p PROMPT -o json -m gemini-2.5-flash --skip-trust` in a small workspace against the fake
(scenario a_text: one text answer). "Fresh" runs get a new empty HOME (so the history database is
created), "warm" runs reuse one HOME that already has it. The two are interleaved (A B B A ...).

The time is the fake's record of the first request's arrival (`ts`, wall clock, seconds since the
epoch, taken when the request's body is in) minus the wall-clock time read just before the spawn:
the same clock on both sides.

With strace (default), one more fresh-HOME run under `strace -f -y` gives deterministic counts up to
the moment the HTTP request is written to its socket: fsync/fdatasync calls, bytes written to files,
and syscalls (futex and sched_yield left out: their number depends on thread scheduling). The
median of three traced runs is reported.

With --callgrind, one fresh-HOME run under `valgrind --tool=callgrind` gives the instructions of the
whole run (every thread) as `first_request.a_text_instructions` (bench/headless_counts.py measures
the budget's `headless.a_text_instructions` the same way).

With --https, the same interleaved runs go once more through a TLS front (a small Python proxy
with a private CA's certificate for 127.0.0.1) to the same fake: the CLI then loads the system's
root certificates as it would for Google (SSL_CERT_FILE = the system bundle plus the private CA,
SSL_CERT_DIR = /etc/ssl/certs, so the same few hundred files are read) and makes a TLS handshake.
Figures first_request.fresh_home_https_ms and first_request.warm_home_https_ms (the proxy's own
hop is in both before and after).

Figures: first_request.fresh_home_ms, first_request.warm_home_ms (medians),
first_request.fresh_home_fsyncs_before, first_request.fresh_home_bytes_written_before,
first_request.fresh_home_syscalls_before.

The last line of stdout is the JSON object `{"figures": {...}, "meta": {...}}`.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import FakeGemini, cargo_target, log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "tests/fixtures/peer-bench/scenarios/a_text.json")
PROMPT = "What is 2+2?"
EXPECTED = "Hello from the fake model. 2+2=4."


def reset(fake):
    fake.reset(SCENARIO)


def first_request_ts(fake):
    """Wall-clock time (epoch seconds) of the first request the fake saw since its reset."""
    requests = fake.requests()["requests"]
    return min(r["ts"] for r in requests) if requests else None


def make_workspace(base):
    ws = os.path.join(base, "workspace")
    os.makedirs(os.path.join(ws, "src"))
    with open(os.path.join(ws, "README.md"), "w") as f:
        f.write("# demo\n\nA tiny project.\n")
    with open(os.path.join(ws, "src", "main.rs"), "w") as f:
        f.write('fn main() {\n    println!("hi");\n}\n')
    with open(os.path.join(ws, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "demo"\nversion = "0.1.0"\n')
    return ws


def env_for(home, fake):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "GEMINI_API_KEY": "fake-key",
        "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        "LANG": "C.UTF-8",
    }
    env.update(getattr(fake, "extra_env", {}))
    return env


class Front:
    """Who the CLI talks to: the fake itself, or the fake behind a TLS proxy (`--https`)."""

    def __init__(self, fake, base_url, extra_env):
        self.fake = fake
        self.base_url = base_url
        self.extra_env = extra_env

    def reset(self, scenario):
        self.fake.reset(scenario)

    def requests(self):
        return self.fake.requests()


def openssl(workdir, *args):
    subprocess.run(["openssl", *args], cwd=workdir, check=True, capture_output=True)


def tls_front(fake, workdir):
    """The fake behind a TLS-terminating proxy on 127.0.0.1 (private CA, HTTP/1.1 by ALPN)."""
    import socket
    import ssl
    import threading

    openssl(workdir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=first-request bench CA")
    openssl(workdir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out",
            "leaf.csr", "-subj", "/CN=localhost")
    with open(os.path.join(workdir, "leaf.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl(workdir, "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext")
    bundle = os.path.join(workdir, "roots.pem")
    with open(bundle, "w") as out:
        out.write(open("/etc/ssl/certs/ca-certificates.crt").read())
        out.write(open(os.path.join(workdir, "ca.pem")).read())
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(workdir, "leaf.pem"), os.path.join(workdir, "leaf.key"))
    ctx.set_alpn_protocols(["http/1.1"])
    upstream_port = int(fake.base_url.rsplit(":", 1)[1])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve(conn):
        try:
            tls = ctx.wrap_socket(conn, server_side=True)
        except (OSError, ssl.SSLError):
            conn.close()
            return
        up = socket.create_connection(("127.0.0.1", upstream_port))
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        tls.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(up, tls), daemon=True).start()
        pump(tls, up)

    def accept():
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]
    return Front(fake, "https://127.0.0.1:%d" % port,
                 {"SSL_CERT_FILE": bundle, "SSL_CERT_DIR": "/etc/ssl/certs"})


def cli_args(cli):
    return [cli, "-p", PROMPT, "-o", "json", "-m", "gemini-2.5-flash", "--skip-trust"]


def check_output(stdout, rc, what):
    if rc != 0:
        raise SystemExit("%s: the CLI exited with %d" % (what, rc))
    answer = json.loads(stdout).get("response")
    if answer != EXPECTED:
        raise SystemExit("%s: unexpected answer %r" % (what, answer))


def timed_run(cli, fake, home, ws):
    """Milliseconds from spawn to the first request's arrival, and to the exit."""
    reset(fake)
    env = env_for(home, fake)
    t0 = time.time()
    proc = subprocess.Popen(cli_args(cli), cwd=ws, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=60)
    t_exit = time.time()
    if proc.returncode != 0:
        log(err.decode(errors="replace"))
    check_output(out, proc.returncode, "run")
    ts = first_request_ts(fake)
    if ts is None:
        raise SystemExit("the fake saw no request")
    return (ts - t0) * 1000.0, (t_exit - t0) * 1000.0


SYSCALL = re.compile(r"^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)\(")
WRITE = re.compile(r"^\d+\s+(write|pwrite64|writev|pwritev|pwritev2)\((\d+)<([^>]*)>")
RESULT = re.compile(r"=\s+(-?\d+)")


def strace_counts(cli, fake, base, ws):
    """fsyncs, bytes written to files and syscalls before the HTTP request is written."""
    home = tempfile.mkdtemp(prefix="fresh-", dir=base)
    trace = os.path.join(base, "strace.txt")
    reset(fake)
    proc = subprocess.run(["strace", "-f", "-y", "-s", "48", "-o", trace] + cli_args(cli),
                          cwd=ws, env=env_for(home, fake), capture_output=True, timeout=120)
    check_output(proc.stdout, proc.returncode, "strace run")
    fsyncs = syscalls = written = 0
    sent = False
    for line in open(trace, errors="replace"):
        if "resumed>" in line or line.split(None, 1)[-1].startswith(("+++", "---")):
            # The second half of an interrupted call, a signal or an exit: not a new call.
            continue
        m = SYSCALL.match(line)
        if not m:
            continue
        name = m.group(1)
        w = WRITE.match(line)
        if w and "socket:" in w.group(3) and "POST " in line:
            sent = True
            break
        if name not in ("futex", "sched_yield"):
            syscalls += 1
        if name in ("fsync", "fdatasync"):
            fsyncs += 1
        if w and w.group(3).startswith("/"):
            r = RESULT.search(line.rsplit(")", 1)[-1] if "unfinished" not in line else "")
            if r and int(r.group(1)) > 0:
                written += int(r.group(1))
    if not sent:
        raise SystemExit("strace: no HTTP request found in the trace")
    shutil.rmtree(home, ignore_errors=True)
    return fsyncs, written, syscalls


def callgrind_instructions(cli, fake, base, ws):
    home = tempfile.mkdtemp(prefix="fresh-", dir=base)
    out = os.path.join(base, "callgrind.out")
    reset(fake)
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
                          + cli_args(cli), cwd=ws, env=env_for(home, fake),
                          capture_output=True, timeout=600)
    check_output(proc.stdout, proc.returncode, "callgrind run")
    for line in open(out):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit("callgrind: no summary")


def interleaved(cli, front, base, ws, warm_home, runs):
    """`runs` fresh-HOME and `runs` warm-HOME runs, A B B A ...: their first-request and exit
    times (ms)."""
    # Untimed: page the binary in, create the warm HOME's database.
    timed_run(cli, front, warm_home, ws)
    timed_run(cli, front, tempfile.mkdtemp(prefix="fresh-", dir=base), ws)
    fresh, warm, fresh_exit, warm_exit = [], [], [], []
    for i in range(runs):
        order = ("fresh", "warm") if i % 2 == 0 else ("warm", "fresh")
        for kind in order:
            if kind == "fresh":
                home = tempfile.mkdtemp(prefix="fresh-", dir=base)
                first, end = timed_run(cli, front, home, ws)
                fresh.append(first)
                fresh_exit.append(end)
                shutil.rmtree(home, ignore_errors=True)
            else:
                first, end = timed_run(cli, front, warm_home, ws)
                warm.append(first)
                warm_exit.append(end)
    return fresh, warm, fresh_exit, warm_exit


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", type=Path, default=cargo_target() / "release" / "gemini-desktop-cli")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-strace", action="store_true")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--https", action="store_true")
    a = ap.parse_args()

    needed = ([] if a.no_strace else ["strace"]) + (["valgrind"] if a.callgrind else [])
    needed += ["openssl"] if a.https else []
    for tool in needed:
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing (apt-get install {tool})")
    if not a.cli.exists():
        raise SystemExit(f"{a.cli} is not built: cargo build --release -p gd-cli")
    a.cli = str(a.cli)
    base = tempfile.mkdtemp(prefix="first-request-")
    fake = FakeGemini(SCENARIO)
    try:
        ws = make_workspace(base)
        warm_home = os.path.join(base, "warm-home")
        os.makedirs(warm_home)
        fresh, warm, fresh_exit, warm_exit = interleaved(a.cli, fake, base, ws, warm_home, a.runs)
        figures = {
            "first_request.fresh_home_ms": round(statistics.median(fresh), 2),
            "first_request.warm_home_ms": round(statistics.median(warm), 2),
        }
        log("fresh HOME: median %.2f ms (min %.2f, max %.2f) over %d runs"
            % (statistics.median(fresh), min(fresh), max(fresh), len(fresh)))
        log("warm HOME:  median %.2f ms (min %.2f, max %.2f) over %d runs"
            % (statistics.median(warm), min(warm), max(warm), len(warm)))
        log("spawn -> exit (the answer printed): fresh HOME median %.2f ms, warm HOME %.2f ms"
            % (statistics.median(fresh_exit), statistics.median(warm_exit)))
        meta = {
            "runs": a.runs,
            "fresh_ms": [round(x, 2) for x in fresh],
            "warm_ms": [round(x, 2) for x in warm],
            "fresh_exit_median_ms": round(statistics.median(fresh_exit), 2),
            "warm_exit_median_ms": round(statistics.median(warm_exit), 2),
            "loadavg": open("/proc/loadavg").read().split()[:3],
            "cli": a.cli,
        }
        if not a.no_strace:
            counts = [strace_counts(a.cli, fake, base, ws) for _ in range(3)]
            fsyncs = statistics.median(c[0] for c in counts)
            written = statistics.median(c[1] for c in counts)
            syscalls = statistics.median(c[2] for c in counts)
            figures["first_request.fresh_home_fsyncs_before"] = fsyncs
            figures["first_request.fresh_home_syscalls_before"] = syscalls
            figures["first_request.fresh_home_bytes_written_before"] = written
            meta["strace_runs"] = [list(c) for c in counts]
            log("before the request (fresh HOME, strace): %d fsync/fdatasync, %d bytes written "
                "to files, %d syscalls (futex/sched_yield not counted)" % (fsyncs, written, syscalls))
        if a.https:
            front = tls_front(fake, base)
            hfresh, hwarm, _, _ = interleaved(a.cli, front, base, ws, warm_home, a.runs)
            figures["first_request.fresh_home_https_ms"] = round(statistics.median(hfresh), 2)
            figures["first_request.warm_home_https_ms"] = round(statistics.median(hwarm), 2)
            meta["https_fresh_ms"] = [round(x, 2) for x in hfresh]
            meta["https_warm_ms"] = [round(x, 2) for x in hwarm]
            log("over TLS (system roots + a private CA): fresh HOME median %.2f ms, warm HOME %.2f ms"
                % (statistics.median(hfresh), statistics.median(hwarm)))
        if a.callgrind:
            n = callgrind_instructions(a.cli, fake, base, ws)
            figures["first_request.a_text_instructions"] = n
            log("whole a_text run under callgrind (fresh HOME): %d instructions" % n)
    finally:
        fake.__exit__(None, None, None)
        shutil.rmtree(base, ignore_errors=True)
    if a.json:
        print(json.dumps({"figures": figures, "meta": meta}))


if __name__ == "__main__":
    main()
