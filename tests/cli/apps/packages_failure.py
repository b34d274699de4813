"""hit-packages with one emulated device failing mid-run: the run succeeds with the serial answer,
every package is computed exactly once, and the JSON names what the failed device abandoned and
which ranks computed it instead.

With --only-taker, the failing device is the only one of the first round: the others, ten times
slower, would not finish one package before it finished all four, so placement leaves them out;
what it held and what was left in its queue must both reach them in a second round.

Usage: packages_failure.py MPIEXEC NP HIT_PACKAGES [--only-taker]"""

import json
import subprocess
import sys


def only_taker(mpiexec, np, program):
    failing = np - 1
    # Every device CPU-clocked: on a loaded machine a wall-clocked failing device can look slower
    # than the others and placement then never lets it in.
    devices = f"emu:0(slowdown=10,clock=cpu)*{failing},emu:1(fail=2,clock=cpu)"
    cmd = [mpiexec, "-n", str(np), program, "--workload", "gemm", "--n", "256", "--check",
           "--json", "--reps", "1", "--warmup", "0", "--schedule", "workPackages:size=64,depth=2",
           "--devices", devices]
    # On a loaded machine the probe can time the fast device while it shares its core, and placement
    # then lets a slower device into the first round: a correct run that does not exercise the
    # case. Such a run is retried, up to five times.
    for attempt in range(5):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, check=False)
        if out.returncode != 0:
            sys.exit(f"exit {out.returncode}: {' '.join(cmd)}\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        devices = result["per_device"]
        let_in = sum(d["packages"] for r, d in enumerate(devices) if r != failing) - len(
            result["rerouted"])
        if let_in <= 0 or not result["check"]["passed"]:
            break
        print(f"attempt {attempt + 1}: placement let a slower device take {let_in} packages in "
              "the first round; again")
    errors = []
    if not result["check"]["passed"]:
        errors.append(f"check failed: {result['check']}")
    if result["packages"] != 4 or sum(d["packages"] for d in devices) != 4:
        errors.append("expected 4 packages, each computed once")
    if not devices[failing]["failed"] or devices[failing]["packages"] > 1:
        errors.append(f"rank {failing}'s device should fail at its first or second package")
    abandoned = devices[failing]["abandoned"]
    if abandoned + devices[failing]["packages"] != 4:
        errors.append(f"it abandoned {abandoned}: everything it did not compute should go")
    if len(result["rerouted"]) != abandoned or result["rounds"] != 2:
        errors.append(f"{len(result['rerouted'])} rerouted in {result['rounds']} rounds")
    if errors:
        sys.exit("\n".join(errors) + "\n" + json.dumps(result))
    print(f"the only device of the first round failed; {abandoned} packages went to the others")


def main():
    mpiexec, np, program = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if sys.argv[4:] == ["--only-taker"]:
        only_taker(mpiexec, np, program)
        return
    # The last rank's device fails at its third kernel execution (the first times the device
    # for placement, and so does the second if it is the quickest device, which times the package
    # again alone; then its first or second package): early, so that the others cannot have taken
    # every package it holds first.
    failing = np - 1
    devices = ",".join(["cpu"] * failing + ["emu:0(fail=2)"])
    cmd = [mpiexec, "-n", str(np), program, "--n", "120", "--iters", "64", "--check", "--json",
           "--reps", "1", "--warmup", "0", "--schedule", "workPackages:size=2,depth=2",
           "--devices", devices]
    # On a loaded machine the last rank may start after the others have taken every package it
    # would have held, or placement may leave the emulated device (slower than the host cores
    # under load) without one: its device then never fails, and the run (still correct) does
    # not exercise the failure. Or the emulated device was the quickest and failed when it timed
    # the package again alone, before it held any package. Such a run is retried, up to five
    # times.
    for attempt in range(5):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, check=False)
        if out.returncode != 0:
            sys.exit(f"exit {out.returncode}: {' '.join(cmd)}\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        last = result["per_device"][failing]
        if last["failed"] and last["abandoned"] > 0:
            break
        if not result["check"]["passed"] or sum(d["rows"] for d in result["per_device"]) != 120:
            sys.exit(f"a run without the failure went wrong: {json.dumps(result)}")
        if last["failed"] and (last["packages"] != 0 or result["rerouted"]):
            sys.exit(f"the device failed before holding a package, yet: {json.dumps(result)}")
        what = "failed before holding a package" if last["failed"] else "never failed"
        print(f"attempt {attempt + 1}: rank {failing}'s device computed {last['packages']} "
              f"packages and {what}; again")
    errors = []
    if not result["check"]["passed"]:
        errors.append(f"check failed: {result['check']}")
    devices = result["per_device"]
    if [d["failed"] for d in devices] != [r == failing for r in range(np)]:
        errors.append(f"failed flags {[d['failed'] for d in devices]}, expected rank {failing}")
    if devices[failing]["packages"] > 1:
        errors.append(f"the failing device computed {devices[failing]['packages']}, expected at "
                      "most 1 (it fails at its first or second package)")
    total = sum(d["packages"] for d in devices)
    if total != result["packages"]:
        errors.append(f"{total} packages computed, of {result['packages']}")
    rows = sum(d["rows"] for d in devices)
    if rows != 120:
        errors.append(f"{rows} rows computed, of 120")
    rerouted = result["rerouted"]
    if not rerouted:
        errors.append("nothing was rerouted")
    if len(rerouted) != devices[failing]["abandoned"]:
        errors.append(f"{len(rerouted)} rerouted, {devices[failing]['abandoned']} abandoned")
    for r in rerouted:
        if r["from_rank"] != failing or r["to_rank"] == failing:
            errors.append(f"rerouted {r}: expected from rank {failing} to another")
    if len({r["package"] for r in rerouted}) != len(rerouted):
        errors.append(f"a package rerouted twice: {rerouted}")
    if result["rounds"] != 2:
        errors.append(f"{result['rounds']} rounds, expected 2")
    if sum(d["rerouted_in"] for d in devices) != len(rerouted):
        errors.append("rerouted_in does not add up to the rerouted packages")
    if errors:
        sys.exit("\n".join(errors) + "\n" + json.dumps(result))
    print(f"rerouted {len(rerouted)} packages from rank {failing}: ok")


if __name__ == "__main__":
    main()
