"""The HTML report task: scanner's summary of the detections, as one HTML file."""

from . import runner
from .app import celery
from .scan import scan


@celery.task(
    bind=True,
    name="openrelik-worker-scanner.tasks.html_report",
    metadata={
        "display_name": "scanner HTML report",
        "description": "Sigma and Hayabusa rules over Windows event logs: the detections' "
        "summary, chart and tables as an HTML report",
        "task_config": [*runner.COMMON_OPTIONS, runner.TIMEOUT_OPTION],
    },
)
def html_report(self, pipe_result=None, input_files=None, output_path=None, workflow_id=None, task_config=None):
    return scan(
        self,
        pipe_result=pipe_result,
        input_files=input_files,
        output_path=output_path,
        workflow_id=workflow_id,
        command=["csv-timeline", "--ISO-8601"],
        output=("scanner_report.html", "openrelik:scanner:html_report", "--HTML-report"),
        options=runner.options(task_config),
        timeout=runner.timeout(task_config),
    )
