"""contrib/openrelik's worker run for real: a Redis server on loopback, two Celery workers
as separate processes, tasks sent as OpenRelik's server sends them.

    python openrelik_test.py SCANNER WORK [CORPUS [RULES]]

SCANNER is the Linux binary; WORK an empty scratch folder; CORPUS and RULES (optional) a
folder of EVTX files and a large rule set, which make the stopped task's run long enough
to stop (without them the testdata files are repeated). Checks:
- the workers register the tasks with OpenRelik's names, metadata and task_config, read
  as OpenRelik's server reads them (inspect().registered("metadata"));
- csv_timeline, jsonl_timeline, html_report, log_integrity and coverage outputs are
  byte for byte a direct run's over the same files, with and without task_config
  options;
- two hosts' Security.evtx (same display name) are both scanned, apart;
- a damaged EVTX is reported in the task result (meta.input_errors, the task report);
- both workers serve tasks;
- a task stopped as OpenRelik stops one (revoke, terminate) leaves no output file, no
  temporary file and no scanner process;
- a task past its timeout (task_config's, 1 s, on the same large input) fails with
  the timeout in its error, its scanner gone and nothing left in its folder.
"""

import ast
import base64
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
import uuid
from pathlib import Path

from celery import Celery, signature

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "contrib" / "openrelik"
QUEUE = "openrelik-worker-scanner"
TASKS = ["csv_timeline", "jsonl_timeline", "html_report", "log_integrity", "coverage"]
# The task_config options each task offers (OpenRelik builds the task's form from them).
RULE_OPTIONS = {"min_level", "rules", "timeline_start", "timeline_end", "timeout"}
CONFIG = {
    "csv_timeline": RULE_OPTIONS | {"profile"},
    "jsonl_timeline": RULE_OPTIONS | {"profile"},
    "html_report": RULE_OPTIONS,
    "coverage": RULE_OPTIONS,
    "log_integrity": {"time_tolerance", "recover_records", "timeout"},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, seconds=90):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    sys.exit(f"FAIL: {what} within {seconds} s")


class Storage:
    """Files as OpenRelik's server keeps them: <data>/<folder uuid>/<file uuid><ext>,
    described by the dicts its run_workflow() builds."""

    def __init__(self, root):
        self.root = Path(root)

    def folder(self):
        p = self.root / uuid.uuid4().hex
        p.mkdir(parents=True)
        return p

    def upload(self, folder, src, display_name, mime="application/x-ms-evtx", file_id=[0]):
        file_id[0] += 1
        u = uuid.uuid4().hex
        ext = os.path.splitext(display_name)[1]
        path = folder / f"{u}{ext}"
        shutil.copyfile(src, path)
        return {
            "id": file_id[0],
            "uuid": u,
            "display_name": display_name,
            "extension": ext.lstrip("."),
            "data_type": None,
            "mime_type": mime,
            "path": str(path),
        }


def send(app, task, files, output_path, task_config=None):
    """As OpenRelik's get_task_signature(): kwargs input_files, output_path, workflow_id,
    task_config; the queue from the task name; the task id a uuid."""
    name = f"{QUEUE}.tasks.{task}"
    return signature(
        name,
        kwargs={
            "input_files": files,
            "output_path": str(output_path),
            "workflow_id": 1,
            "task_config": task_config or {},
        },
        queue=name.split(".")[0],
        task_id=uuid.uuid4().hex,
        app=app,
    ).apply_async()


def decode(result):
    return json.loads(base64.b64decode(result).decode())


def direct(scanner, files, args, out):
    """The direct run: the same files laid out alike (<uuid>/<display name>), scanned
    from that folder with the same flags."""
    d = Path(out).parent / ("direct-" + uuid.uuid4().hex)
    for f in files:
        (d / f["uuid"]).mkdir(parents=True)
        os.link(f["path"], d / f["uuid"] / f["display_name"])
    # Its input errors are checked in the task result; not printed here.
    rc = subprocess.run([scanner, *args, "--quiet", f"--output={out}", "-d", "."], cwd=d,
                        stderr=subprocess.DEVNULL).returncode
    shutil.rmtree(d)
    return rc


def only_output(res):
    outs = res["output_files"]
    assert len(outs) == 1, outs
    return Path(outs[0]["path"])


def main():
    scanner, work = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    corpus = Path(sys.argv[3]).resolve() if len(sys.argv) > 3 else None
    rules = Path(sys.argv[4]).resolve() if len(sys.argv) > 4 else None
    started = time.monotonic()
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    redis = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=open(work / "redis.log", "wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"redis://127.0.0.1:{port}/0"
    workers = []
    failed = False
    try:
        wait_for("redis answering", lambda: _redis_up(port), 30)
        env = dict(os.environ, REDIS_URL=url, SCANNER_BIN=scanner)
        for n in (1, 2):
            log = open(work / f"worker{n}.log", "wb")
            workers.append(
                subprocess.Popen(
                    [sys.executable, "-m", "celery", "--app=src.app", "worker", "--task-events",
                     "-Q", QUEUE, "--concurrency=1", f"--hostname=scanner{n}@%h", "--loglevel=INFO"],
                    cwd=WORKER, env=env, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        app = Celery(broker=url, backend=url)
        wait_for("both workers answering a ping", lambda: len(app.control.ping(timeout=1)) == 2)
        check_registration(app)
        served = run_tasks(app, scanner, work, corpus, rules)
        check_both_served(work, served)
        print(f"openrelik: {len(served)} tasks on two workers passed in {time.monotonic() - started:.0f} s")
    except BaseException:
        traceback.print_exc()
        failed = True
    finally:
        for w in workers:
            try:
                os.killpg(w.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for w in workers:
            try:
                w.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(w.pid, signal.SIGKILL)
        redis.terminate()
        redis.wait()
    # Without the results' clean-up, which would look for the Redis server just stopped.
    sys.stdout.flush()
    os._exit(1 if failed else 0)


def _redis_up(port):
    try:
        with socket.create_connection(("127.0.0.1", port), 1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def check_registration(app):
    """As OpenRelik's get_registered_tasks(): the name before the first space, the
    metadata dict after it, the queue the name's first part."""
    registered = app.control.inspect(timeout=5).registered("metadata") or {}
    assert len(registered) == 2, registered.keys()
    for worker, tasks in registered.items():
        found = {}
        for t in tasks:
            m = re.search("({.+})", t)
            if m:
                found[t.split()[0]] = ast.literal_eval(m.group(0))
        for task in TASKS:
            meta = found.get(f"{QUEUE}.tasks.{task}")
            assert meta, f"{worker}: {task} not registered with metadata: {tasks}"
            assert meta["display_name"] and meta["description"], meta
            names = {o["name"] for o in meta["task_config"]}
            assert names == CONFIG[task], (task, names)
    print(f"openrelik: {len(TASKS)} tasks registered with metadata on both workers")


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def run_tasks(app, scanner, work, corpus, rules):
    store = Storage(work / "data")
    testdata = ROOT / "testdata" / "evtx"
    hosts = store.folder()
    host_a = store.upload(hosts, testdata / "security.evtx", "Security.evtx")
    host_b = store.upload(hosts, second_host_log(scanner, corpus, testdata), "Security.evtx")
    notes = store.upload(hosts, ROOT / "README.md", "README.md", mime="text/plain")
    pair = [host_a, host_b, notes]
    served = []
    # A damaged EVTX: an input error for the timeline, findings for log_integrity.
    damaged_src = work / "damaged.evtx"
    data = bytearray((testdata / "security.evtx").read_bytes())
    data[4096 + 600: 4096 + 2600] = b"\xff" * 2000
    damaged_src.write_bytes(bytes(data))
    damaged = store.upload(hosts, damaged_src, "Damaged.evtx")
    rules_cfg = {"min_level": ["medium"], "rules": str(ROOT / "rules"),
                 "timeline_start": "2000-01-01 00:00:00 +00:00", "timeline_end": "2100-01-01 00:00:00"}
    rules_args = ["--min-level=medium", f"--rules={ROOT / 'rules'}",
                  "--timeline-start=2000-01-01 00:00:00 +00:00", "--timeline-end=2100-01-01 00:00:00"]

    # The timelines and the report, as OpenRelik sends them, against direct runs.
    # (task, task_config, the direct run's flags, extension, inputs, scanner's exit code)
    cases = [
        ("csv_timeline", {}, ["csv-timeline", "--ISO-8601", "--profile=timesketch-verbose"], ".csv", pair, 0),
        ("jsonl_timeline", {}, ["json-timeline", "--JSONL-output", "--ISO-8601", "--profile=timesketch-verbose"],
         ".jsonl", pair, 0),
        ("csv_timeline", {"profile": "verbose", **rules_cfg},
         ["csv-timeline", "--ISO-8601", "--profile=verbose", *rules_args], ".csv", pair, 0),
        ("log_integrity", {}, ["log-integrity", "--ISO-8601"], ".csv", pair, 0),
        ("log_integrity", {"time_tolerance": "0", "recover_records": True, "timeout": "600"},
         ["log-integrity", "--ISO-8601", "--time-tolerance=0", "--recover-records"], ".csv",
         [host_a, host_b, damaged, notes], 3),
        ("coverage", {}, ["coverage", "--ISO-8601"], ".csv", pair, 0),
        ("coverage", rules_cfg, ["coverage", "--ISO-8601", *rules_args], ".csv", pair, 0),
    ]
    pending = [(send(app, task, files, store.folder(), cfg), task, args, ext, files, code)
               for task, cfg, args, ext, files, code in cases]
    report_out = store.folder()
    report = send(app, "html_report", pair, report_out)
    for r, task, args, ext, files, code in pending:
        res = decode(r.get(timeout=300))
        served.append(r.id)
        out = only_output(res)
        ref = work / f"direct-{r.id}{ext}"
        evtx = [f for f in files if f is not notes]
        rc = direct(scanner, evtx, args, ref)
        assert rc == code, f"direct run exit {rc}"
        assert out.read_bytes() == ref.read_bytes(), f"{task}: {out} differs from the direct run {ref}"
        assert res["meta"]["skipped_inputs"] == ["README.md"], res["meta"]
        assert res["meta"]["scanner_exit_code"] == code, res["meta"]
        body = out.read_text(encoding="utf-8").splitlines()
        assert len(body) > 1, f"{task}: no row in {out}"
        if task == "log_integrity" and damaged in files:
            # Its records unreadable (exit 3, in the result), its checksums a finding.
            assert any("Damaged.evtx" in l and "checksum" in l for l in body), body
            assert any("Damaged.evtx" in e for e in res["meta"]["input_errors"]), res["meta"]
        print(f"openrelik: {task} {args[1:]}: {len(body) - 1} rows, byte for byte the direct run's")
        if task == "csv_timeline" and "--profile=timesketch-verbose" in args:
            files = {row["EvtxFile"] for row in rows(out)}
            want = {f"{h['uuid']}/Security.evtx" for h in (host_a, host_b)}
            seen = {w for w in want if any(f.endswith(w) for f in files)}
            assert seen == want, f"two hosts' Security.evtx: rows from {files}, want {want}"
            print(f"openrelik: two hosts' Security.evtx kept apart: {sorted(files)}")
    res = decode(report.get(timeout=300))
    served.append(report.id)
    html = only_output(res).read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html"), html[:100]
    assert "Security.evtx" in html or "detections" in html.lower(), "an HTML report without its content"
    assert sorted(os.listdir(report_out)) == [only_output(res).name], os.listdir(report_out)
    print(f"openrelik: html_report: {len(html)} characters of HTML, nothing else left in the folder")

    # The damaged EVTX in a timeline: reported in the result, the rest scanned.
    r = send(app, "csv_timeline", [host_a, damaged], store.folder())
    res = decode(r.get(timeout=300))
    served.append(r.id)
    meta = res["meta"]
    assert meta["scanner_exit_code"] == 3, meta
    errors = meta["input_errors"]
    assert errors and any("Damaged.evtx" in e for e in errors), errors
    assert res["task_report"]["priority"] >= 40 and "Damaged.evtx" in res["task_report"]["content"], res["task_report"]
    assert only_output(res).stat().st_size > 0
    print(f"openrelik: damaged EVTX reported in the task result: {errors[0][:160]}")

    # A task stopped while scanner runs: nothing left behind.
    stopped_out = store.folder()
    big = store.folder()
    sources = sorted(corpus.rglob("*.evtx")) if corpus and corpus.is_dir() else []
    sources = sources or [testdata / "security.evtx", testdata / "generated.evtx"]
    # Long enough to be stopped mid-run: every file ten times over, a large rule set.
    many = [store.upload(big, sources[i % len(sources)], "Security.evtx") for i in range(10 * max(len(sources), 60))]
    cfg = {"rules": str(rules)} if rules else {}
    r = send(app, "csv_timeline", many, stopped_out, cfg)
    needle = f"--output={stopped_out}/".encode()
    wait_for("scanner running for the task to stop", lambda: _scanner_pids(needle), 120)
    app.control.revoke(r.id, terminate=True, signal="SIGTERM")
    wait_for("the stopped task's scanner gone", lambda: not _scanner_pids(needle), 60)
    try:
        r.get(timeout=60)
        sys.exit("FAIL: the stopped task succeeded")
    except Exception as e:  # noqa: BLE001 - the task's failure is what is expected
        print(f"openrelik: stopped task failed as it should: {type(e).__name__}")
    # The task removes its scratch folder as it unwinds; nothing else ever appears.
    def emptied():
        left = os.listdir(stopped_out)
        assert all(n.startswith(".scanner-") for n in left), f"the stopped task wrote {left}"
        return not left

    wait_for("the stopped task's scratch folder removed", emptied, 60)
    print(f"openrelik: a task stopped while scanner ran ({len(many)} inputs) left nothing in its folder")

    # A 1 s timeout on a log no scanner reads in a second (a generated million records:
    # about five seconds' scan on an idle 2-core machine, more under load): the task
    # fails, saying so, and its scanner and scratch folder are gone by the time its
    # result is stored.
    big_log = work / "generated-1m.evtx"
    subprocess.run([scanner, "evtx", "generate", "--records", "1000000", "--seed", "5",
                    "-o", str(big_log), "-C"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    big_in = store.folder()
    generated = [store.upload(big_in, big_log, "Generated.evtx")]
    big_log.unlink()
    timed_out = store.folder()
    r = send(app, "csv_timeline", generated, timed_out, {**cfg, "timeout": "1"})
    try:
        r.get(timeout=120)
        sys.exit("FAIL: the task past its timeout succeeded")
    except Exception as e:  # noqa: BLE001 - the task's failure is what is expected
        message = str(e)
    assert r.state == "FAILURE" and "1 s timeout" in message and "no output written" in message, (r.state, message)
    left = _scanner_pids(f"--output={timed_out}/".encode())
    assert not left, f"scanner still running after the timeout: {left}"
    assert os.listdir(timed_out) == [], f"the timed-out task left {os.listdir(timed_out)}"
    print(f"openrelik: a task past its 1 s timeout failed ({message}); no scanner, nothing in its folder")
    shutil.rmtree(big_in)
    return served


def second_host_log(scanner, corpus, testdata):
    """Another host's log, with detections under the built-in rules and other content
    than testdata's security.evtx: the corpus's first such file (by name)."""
    for f in sorted(corpus.rglob("*.evtx")) if corpus and corpus.is_dir() else []:
        out = subprocess.run(
            [scanner, "csv-timeline", "-f", str(f), "-q", "-o", "/dev/stdout"],
            capture_output=True,
        ).stdout
        if out.count(b"\n") > 1:
            return f
    # Without a corpus: the same log again (the two names are still kept apart).
    return testdata / "security.evtx"


def _scanner_pids(needle):
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if needle in (p / "cmdline").read_bytes():
                    pids.append(p.name)
            except OSError:
                pass
    return pids


def check_both_served(work, served):
    by = {}
    for n in (1, 2):
        log = (work / f"worker{n}.log").read_text(errors="replace")
        by[n] = {t for t in served if re.search(rf"\[{t}\] succeeded", log)}
    assert by[1] and by[2], f"tasks per worker: {by}"
    print(f"openrelik: tasks served by worker 1: {len(by[1])}, worker 2: {len(by[2])}")


if __name__ == "__main__":
    main()
