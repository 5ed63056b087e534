"""Running scanner for a task: the task's options, its inputs laid out, the run watched.

What every task of the worker shares:
- `options()` and `integrity_options()` turn OpenRelik's `task_config` (profile,
  minimum level, rules folder, time range; log-integrity's time tolerance and slack
  records) into scanner's flags, refusing values scanner would misread; `timeout()`
  is the task's time limit (its `timeout` option, never above the worker's);
- `lay_out()` hard-links the inputs into a folder of the task, each under its own
  OpenRelik file (its uuid), then its original path (or display name): two hosts'
  `Security.evtx` stay apart, and the timeline's EvtxFile names the OpenRelik file;
- `run()` runs scanner there, sends OpenRelik's `task-progress` events while it runs,
  stops it at the time limit or when the task is stopped (scanner then removes its
  unfinished output: nothing half-written carries the output's name), and returns what
  scanner reported about its inputs;
- `result()` builds the task result, with scanner's input errors in `meta` and in the
  task report.
"""

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from openrelik_worker_common.reporting import Priority, Report
from openrelik_worker_common.task_utils import create_task_result, get_input_files

# The scanner binary (default: `scanner` on PATH) and the rules used when a task does not
# name a folder (default: the rules built into the binary).
SCANNER = os.getenv("SCANNER_BIN", "scanner")
DEFAULT_RULES = os.getenv("SCANNER_RULES", "")
# A run longer than this (seconds) is stopped and the task fails.
TIMEOUT = float(os.getenv("SCANNER_TASK_TIMEOUT", str(6 * 3600)))
PROGRESS_SECONDS = 2.0

# What scanner reads: EVTX, and the JSON, JSON Lines and XML exports of event logs.
COMPATIBLE_INPUTS = {
    "data_types": [],
    "mime_types": ["application/x-ms-evtx"],
    "filenames": ["*.evtx", "*.json", "*.jsonl", "*.xml"],
}

PROFILES = [
    "minimal",
    "standard",
    "verbose",
    "all-field-info",
    "all-field-info-verbose",
    "super-verbose",
    "timesketch-minimal",
    "timesketch-verbose",
]
LEVELS = ["informational", "low", "medium", "high", "critical"]

PROFILE_OPTION = {
    "name": "profile",
    "label": "Output profile",
    "description": "scanner's -p (default: timesketch-verbose, the columns Timesketch imports).",
    "type": "autocomplete",
    "items": PROFILES,
    "required": False,
}
COMMON_OPTIONS = [
    {
        "name": "min_level",
        "label": "Minimum rule level",
        "description": "scanner's -m: rules below this level are not loaded (default: informational).",
        "type": "autocomplete",
        "items": LEVELS,
        "required": False,
    },
    {
        "name": "rules",
        "label": "Rules folder on the worker",
        "description": "scanner's -r: a rule folder present on the worker (default: the worker's).",
        "type": "text",
        "required": False,
    },
    {
        "name": "timeline_start",
        "label": "Timeline start",
        "description": "scanner's --timeline-start, e.g. 2024-03-01 00:00:00 +00:00 (no offset: UTC).",
        "type": "text",
        "required": False,
    },
    {
        "name": "timeline_end",
        "label": "Timeline end",
        "description": "scanner's --timeline-end, in the same form.",
        "type": "text",
        "required": False,
    },
]

# A task's own limit (`timeout` in its task_config) can only be lower than the worker's.
TIMEOUT_OPTION = {
    "name": "timeout",
    "label": "Timeout (seconds)",
    "description": "Stop scanner and fail the task after this many seconds "
    "(default and most: the worker's SCANNER_TASK_TIMEOUT).",
    "type": "text",
    "required": False,
}
INTEGRITY_OPTIONS = [
    {
        "name": "time_tolerance",
        "label": "Time tolerance (seconds)",
        "description": "scanner's --time-tolerance: how far a record's time may go back "
        "from the one before it before it is a finding (default: 60).",
        "type": "text",
        "required": False,
    },
    {
        "name": "recover_records",
        "label": "Records in slack space",
        "description": "scanner's -x: records carved from chunk slack are findings too.",
        "type": "checkbox",
        "required": False,
    },
]

# A time as scanner's --timeline-start/-end take it (digits, separators, an offset).
_TIME = re.compile(r"^[0-9][0-9 :.TZ+\-]{3,40}$")


class TaskError(RuntimeError):
    """The task cannot be done; its message is shown in OpenRelik."""


def options(task_config, profile_default=None):
    """scanner's flags for `task_config` (OpenRelik's {name: value} of the task's form)."""
    cfg = {k: v for k, v in (task_config or {}).items() if v not in (None, "", [])}
    args = []
    if profile_default is not None:
        profile = _one(cfg.get("profile", profile_default))
        if profile not in PROFILES:
            raise TaskError(f"profile: unknown profile {profile!r} (one of {', '.join(PROFILES)})")
        args.append(f"--profile={profile}")
    if "min_level" in cfg:
        level = _one(cfg["min_level"])
        if level not in LEVELS:
            raise TaskError(f"min_level: unknown level {level!r} (one of {', '.join(LEVELS)})")
        args.append(f"--min-level={level}")
    rules = str(cfg.get("rules", DEFAULT_RULES))
    if rules:
        if not os.path.isabs(rules) or not os.path.isdir(rules):
            raise TaskError(f"rules: {rules!r} is not a folder on the worker (an absolute path)")
        args.append(f"--rules={rules}")
    for key in ("timeline_start", "timeline_end"):
        if key in cfg:
            value = str(cfg[key]).strip()
            if not _TIME.match(value):
                raise TaskError(f"{key}: {value!r} is not a time (e.g. 2024-03-01 00:00:00 +00:00)")
            args.append(f"--{key.replace('_', '-')}={value}")
    return args


def integrity_options(task_config):
    """log-integrity's flags for `task_config`."""
    cfg = {k: v for k, v in (task_config or {}).items() if v not in (None, "", [])}
    args = []
    if "time_tolerance" in cfg:
        args.append(f"--time-tolerance={_seconds('time_tolerance', cfg['time_tolerance'], 0)}")
    if cfg.get("recover_records") in (True, "true", "True", "on", "1", 1):
        args.append("--recover-records")
    return args


def timeout(task_config):
    """The task's limit in seconds: its `timeout` option if set (at least 1, at most
    the worker's), else the worker's."""
    value = (task_config or {}).get("timeout")
    if value in (None, "", []):
        return TIMEOUT
    return min(float(_seconds("timeout", value, 1)), TIMEOUT)


def _seconds(key, value, least):
    """A whole number of seconds from 0 to 2^32 - 1 (least: its smallest)."""
    text = str(_one(value)).strip()
    if not re.fullmatch(r"[0-9]{1,10}", text) or not least <= int(text) < 2**32:
        raise TaskError(f"{key}: {text!r} is not a number of seconds (at least {least})")
    return int(text)


def _one(value):
    """A select's value: OpenRelik gives a string, or a list for an autocomplete."""
    if isinstance(value, list):
        if len(value) != 1:
            raise TaskError(f"one value expected, got {value!r}")
        value = value[0]
    return str(value)


def inputs(pipe_result, input_files):
    """The task's compatible inputs, and the names of those scanner does not read."""
    every = get_input_files(pipe_result, input_files or [])
    compatible = get_input_files(None, every, filter=COMPATIBLE_INPUTS)
    kept = {id(f) for f in compatible}
    skipped = [_name(f) for f in every if id(f) not in kept]
    return compatible, skipped


def _name(f):
    return f.get("display_name") or os.path.basename(f.get("path") or "") or "?"


def _parts(path):
    """The parts of a path from any system, without its root, drive colon, `.` or `..`."""
    out = []
    for p in re.split(r"[\\/]+", path):
        p = p.rstrip(":") if re.fullmatch(r"[A-Za-z]:", p) else p
        if p and p not in (".", ".."):
            out.append(p)
    return out


def lay_out(files, folder):
    """Hard-links each input as `folder/<uuid>/<original path or display name>` (a copy
    where a link cannot be made); returns those relative paths, in input order."""
    laid = []
    for n, f in enumerate(files):
        key = re.sub(r"[^0-9A-Za-z_-]", "", str(f.get("uuid") or f.get("id") or "")) or f"input-{n}"
        rel = _parts(f.get("original_path") or "") or _parts(_name(f)) or ["input"]
        dest = Path(folder, key, *rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            raise TaskError(f"input {_name(f)} given twice (file {key})")
        try:
            os.link(f["path"], dest)
        except OSError:
            shutil.copyfile(f["path"], dest)
        laid.append(str(dest.relative_to(folder)))
    return laid


def _die_with_parent():
    """In the child before exec: SIGTERM when the worker's process dies (Linux), so a
    killed worker does not leave scanner running and installing its output later."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _Stopped(BaseException):
    """The task's process was told to stop (SIGTERM, as Celery's revoke sends)."""


@contextlib.contextmanager
def stoppable():
    """While the task runs, SIGTERM (Celery's revoke with terminate) unwinds it: scanner
    is stopped and the scratch folder removed, instead of the pool's handler ending the
    process on the spot. Only where the task runs on the main thread (the prefork and
    solo pools)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(_sig, _frame):
        raise _Stopped()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except _Stopped:
        raise TaskError("the task was stopped: scanner stopped, no output written") from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(task, args, work, limit=TIMEOUT):
    """Runs `scanner ARGS -d .` over the inputs laid out in `work` (a `work_folder`),
    stopped past `limit` seconds; returns (exit code, scanner's standard-error lines)."""
    err_path = os.path.join(work.folder, "stderr.txt")
    command = [SCANNER, *args, "-d", "."]
    work.command = command
    with open(err_path, "wb") as err:
        process = subprocess.Popen(
            command,
            cwd=work.inputs,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=_die_with_parent,
        )
    started = time.monotonic()
    try:
        while process.poll() is None:
            elapsed = time.monotonic() - started
            if elapsed >= limit:
                _stop(process)
                raise TaskError(
                    f"scanner ran past the task's {limit:g} s timeout: stopped, no output written"
                )
            task.send_event("task-progress", data={"seconds": round(elapsed)})
            try:
                process.wait(min(PROGRESS_SECONDS, limit - elapsed))
            except subprocess.TimeoutExpired:
                pass
    except _Stopped:
        _stop(process)
        raise
    with open(err_path, encoding="utf-8", errors="replace") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    if process.returncode not in (0, 3):
        tail = "\n".join(lines[-20:])
        raise TaskError(f"scanner failed (exit {process.returncode}):\n{tail}")
    return process.returncode, lines


def _stop(process):
    """SIGTERM (scanner removes its temporary files and exits), SIGKILL if it lingers."""
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class work_folder:
    """The task's scratch folder in `output_path` (hard links need the same file
    system), with the inputs laid out in `in/`; removed at the end, whatever happens."""

    def __init__(self, files, output_path):
        self.files, self.output_path = files, output_path
        self.command = []

    def __enter__(self):
        self.folder = tempfile.mkdtemp(prefix=".scanner-", dir=self.output_path)
        try:
            self.inputs = os.path.join(self.folder, "in")
            os.mkdir(self.inputs)
            self.laid = lay_out(self.files, self.inputs)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.folder, ignore_errors=True)
        return False


def result(work, output_files, workflow_id, code, messages, skipped):
    """The task result OpenRelik stores: outputs, command, and what scanner said about
    its inputs (`meta.input_errors`, and the task report, high priority when any)."""
    report = Report("scanner")
    section = report.add_section()
    laid = work.laid
    section.add_paragraph(f"{len(laid)} input file(s) scanned, as:")
    section.add_code_block("\n".join(laid) or "(none)")
    if skipped:
        section.add_paragraph(f"{len(skipped)} input file(s) not read (not EVTX, JSON or XML):")
        section.add_code_block(_fence_safe("\n".join(skipped)))
    if code == 3:
        report.priority = Priority.HIGH
        report.summary = f"{len(messages)} input error(s): some input was not read whole"
        section.add_paragraph("scanner's input errors (exit 3):")
        section.add_code_block(_fence_safe("\n".join(messages[:500])))
    else:
        report.summary = f"{len(laid)} input file(s) scanned"
    meta = {
        "scanner_exit_code": code,
        "input_errors": messages if code == 3 else [],
        "inputs": laid,
        "skipped_inputs": skipped,
    }
    command = " ".join(work.command)
    return create_task_result(
        output_files=output_files,
        workflow_id=workflow_id,
        command=command,
        meta=meta,
        task_report=report.to_dict(),
    )


def _fence_safe(text):
    return text.replace("```", "'''")
