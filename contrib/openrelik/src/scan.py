"""One scanner run as an OpenRelik task: the shape every task of this worker shares."""

from openrelik_worker_common.file_utils import create_output_file
from openrelik_worker_common.task_utils import create_task_result

from . import runner


def scan(task, *, pipe_result, input_files, output_path, workflow_id, command, output, options, timeout=None):
    """Runs scanner's `command` (its arguments before the output flag) over the task's
    inputs, writing `output` (display name, data type, the flag that names the file),
    stopped after `timeout` seconds (default: the worker's); returns the task result."""
    files, skipped = runner.inputs(pipe_result, input_files)
    if not files:
        return create_task_result(
            output_files=[],
            workflow_id=workflow_id,
            command="",
            meta={"skipped_inputs": skipped, "input_errors": []},
        )
    display_name, data_type, flag = output
    out = create_output_file(output_path, display_name=display_name, data_type=data_type)
    with runner.stoppable(), runner.work_folder(files, output_path) as work:
        args = [*command, *options, "--quiet", f"{flag}={out.path}"]
        if flag != "--output":
            # The HTML report comes with a timeline, which this task does not keep.
            args.append("--output=" + runner.os.devnull)
        code, messages = runner.run(task, args, work, timeout or runner.TIMEOUT)
        return runner.result(work, [out.to_dict()], workflow_id, code, messages, skipped)
