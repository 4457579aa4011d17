# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by agent_gpu.sh and agent_gpu_rocm.sh (sourced; $dir their work
# directory). Their Python finds agent_gpu_check.py through PYTHONPATH.
export PYTHONPATH=$(dirname "${BASH_SOURCE[0]}")${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1 # nothing written beside the sources

# The GPUs are lost (the stand-in's fail_when file) once the agent (pid $1,
# dumping to d.out, a line flushed at a time) has sent a sample with them,
# rather than at a time that a slow start on a loaded machine could miss.
lose_after_first_gpu_sample() {
  local i
  for ((i = 0; i < 600; i++)); do
    grep -q '"gpus"' "$dir/d.out" 2>/dev/null && break
    sleep 0.05
  done
  touch "$dir/lost"
  wait "$1"
}
