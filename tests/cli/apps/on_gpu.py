"""Runs a program's command line when this machine has a CUDA GPU; says it skips otherwise.

    on_gpu.py HIT_INFO COMMAND...

The GPU tests of the programs' own CUDA bodies run under it: `hit-info --json` says whether the
node has GPUs (and why not); without one this prints "no CUDA GPU here: <why>" (the test's skip
expression) and exits 0; with one it runs COMMAND and exits with its status.
"""
import json
import subprocess
import sys


def main():
    info, command = sys.argv[1], sys.argv[2:]
    nodes = json.loads(subprocess.run([info, "--json"], check=True, capture_output=True,
                                      text=True).stdout)["nodes"]
    if not any(node.get("gpus") for node in nodes):
        why = "; ".join(n.get("gpu_note", "") for n in nodes if n.get("gpu_note")) or "none found"
        print(f"no CUDA GPU here: {why}")
        return 0
    return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
