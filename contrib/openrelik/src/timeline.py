"""The timeline tasks: Timesketch's CSV (`csv_timeline`) and JSON Lines (`jsonl_timeline`)."""

from . import runner
from .app import celery
from .scan import scan

TASK_CONFIG = [runner.PROFILE_OPTION, *runner.COMMON_OPTIONS, runner.TIMEOUT_OPTION]


@celery.task(
    bind=True,
    name="openrelik-worker-scanner.tasks.csv_timeline",
    metadata={
        "display_name": "scanner CSV timeline",
        "description": "Sigma and Hayabusa rules over Windows event logs: a CSV timeline "
        "(timesketch-verbose profile unless set), ISO-8601 UTC times",
        "task_config": TASK_CONFIG,
    },
)
def csv_timeline(self, pipe_result=None, input_files=None, output_path=None, workflow_id=None, task_config=None):
    return scan(
        self,
        pipe_result=pipe_result,
        input_files=input_files,
        output_path=output_path,
        workflow_id=workflow_id,
        command=["csv-timeline", "--ISO-8601"],
        output=("scanner_timeline.csv", "openrelik:scanner:csv_timeline", "--output"),
        options=runner.options(task_config, "timesketch-verbose"),
        timeout=runner.timeout(task_config),
    )


@celery.task(
    bind=True,
    name="openrelik-worker-scanner.tasks.jsonl_timeline",
    metadata={
        "display_name": "scanner JSONL timeline",
        "description": "Sigma and Hayabusa rules over Windows event logs: a JSON Lines "
        "timeline (timesketch-verbose profile unless set), ISO-8601 UTC times",
        "task_config": TASK_CONFIG,
    },
)
def jsonl_timeline(self, pipe_result=None, input_files=None, output_path=None, workflow_id=None, task_config=None):
    return scan(
        self,
        pipe_result=pipe_result,
        input_files=input_files,
        output_path=output_path,
        workflow_id=workflow_id,
        command=["json-timeline", "--JSONL-output", "--ISO-8601"],
        output=("scanner_timeline.jsonl", "openrelik:scanner:jsonl_timeline", "--output"),
        options=runner.options(task_config, "timesketch-verbose"),
        timeout=runner.timeout(task_config),
    )
