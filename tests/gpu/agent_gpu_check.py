# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks shared by agent_gpu.sh and agent_gpu_rocm.sh (their Python)."""


def reads_in_sweeps(samples, k):
    """GPU k's intervals against the samples' own clock, not the 0.5 s asked
    for (a loaded machine stretches a sweep): its read of each sweep lies
    after that sweep's stamp (the sample's end) and before the next
    sweep's; the baseline read in the sweep before the first sample. The
    energy over each interval is checked against it by the callers."""
    start0 = samples[0]["monotonic_start_ns"]
    ends = [s["monotonic_end_ns"] for s in samples]
    since = 0  # read i minus the baseline read
    for i, s in enumerate(samples):
        assert s["gpus"][k]["interval_ns"] > 0, s["gpus"][k]
        since += s["gpus"][k]["interval_ns"]
        assert since >= ends[i] - ends[0], (i, k, since, ends, start0)
        if i + 1 < len(samples):
            assert since <= ends[i + 1] - start0, (i, k, since, ends, start0)
