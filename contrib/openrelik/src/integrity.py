"""The evidence-quality tasks: `log_integrity` (what the logs' structure and record
numbering say about tampering and damage, see docs/log-integrity.md) and `coverage`
(which kinds of events the rules read, see docs/coverage.md), each one CSV file."""

from . import runner
from .app import celery
from .scan import scan

INTEGRITY_CONFIG = [*runner.INTEGRITY_OPTIONS, runner.TIMEOUT_OPTION]
COVERAGE_CONFIG = [*runner.COMMON_OPTIONS, runner.TIMEOUT_OPTION]


@celery.task(
    bind=True,
    name="openrelik-worker-scanner.tasks.log_integrity",
    metadata={
        "display_name": "scanner log integrity",
        "description": "Windows event logs' structure and record numbering: checksums, "
        "record id gaps and repeats, clears, time going back, records in slack (CSV)",
        "task_config": INTEGRITY_CONFIG,
    },
)
def log_integrity(self, pipe_result=None, input_files=None, output_path=None, workflow_id=None, task_config=None):
    return scan(
        self,
        pipe_result=pipe_result,
        input_files=input_files,
        output_path=output_path,
        workflow_id=workflow_id,
        command=["log-integrity", "--ISO-8601"],
        output=("scanner_log_integrity.csv", "openrelik:scanner:log_integrity", "--output"),
        options=runner.integrity_options(task_config),
        timeout=runner.timeout(task_config),
    )


@celery.task(
    bind=True,
    name="openrelik-worker-scanner.tasks.coverage",
    metadata={
        "display_name": "scanner rule coverage",
        "description": "Which kinds of events (Channel, Provider, EventID) the evidence "
        "holds, how many, and which rules read them; rules with no event to read (CSV)",
        "task_config": COVERAGE_CONFIG,
    },
)
def coverage(self, pipe_result=None, input_files=None, output_path=None, workflow_id=None, task_config=None):
    return scan(
        self,
        pipe_result=pipe_result,
        input_files=input_files,
        output_path=output_path,
        workflow_id=workflow_id,
        command=["coverage", "--ISO-8601"],
        output=("scanner_coverage.csv", "openrelik:scanner:coverage", "--output"),
        options=runner.options(task_config),
        timeout=runner.timeout(task_config),
    )
