"""``benchmarks.harness.stop_process_group`` stops what a script left running in its group."""

from __future__ import annotations

import os
import subprocess

import pytest

from benchmarks.harness import stop_process_group


def test_a_script_s_background_children_are_stopped_after_the_script_has_ended():
    script = subprocess.Popen(["bash", "-c", "sleep 300 & exit 0"], start_new_session=True)
    script.wait(timeout=30)
    os.killpg(script.pid, 0)  # the sleep outlives the script in its group

    stop_process_group(script, timeout=10)

    with pytest.raises(ProcessLookupError):
        os.killpg(script.pid, 0)
