"""A synthetic data-parallel training job for the job-signal tests (docs/reference/job-signals.md).

Launched once, it starts --ranks rank processes (each its own exec, with the environment srun gives a task:
SLURM_JOB_ID, SLURM_PROCID, SLURM_LOCALID, CUDA_VISIBLE_DEVICES), which report through python/gcm_reporter.py.
Each rank's compute takes `--compute` seconds scaled by its GPU's SM clock as NVML reads it (max / current: a GPU
10 % slower stretches its rank's compute 10 %). The gradient collective then makes every rank wait for the slowest,
so every rank's step wall time is the slowest compute plus the collective, as in a synchronous job.

Scenarios: --stall-rank R --stall-from T --stall S adds S seconds to rank R's compute from T seconds of scenario time
(a data-loader stall: no hardware cause); --eval-every N --eval S pauses every rank for S seconds every N steps
(evaluation: the job's own phase); --jitter J is the relative noise of each compute. Each rank reports the model's
step and compute times (StepReporter.record); --measured reports what StepReporter.step() times around the sleeps.

Under srun (--collective-dir, one task per rank on several nodes, GCM_TRAINER_RANK set by the task's wrapper) a rank
reads only its own GPU (CUDA_VISIBLE_DEVICES at its local rank, mapped through Slurm's SLURM_STEP_GPUS as the agent
does), and the collective is an all-gather through files in that directory, shared by the nodes: each step every
rank publishes its compute and waits for the others' before it takes the slowest.
"""

import argparse
import ctypes
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from gcm_reporter import StepReporter  # noqa: E402

NVML_CLOCK_SM = 1


class Nvml:
    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError(f"nvmlInit_v2 failed in {library}")

    def sm_ratio(self, index):
        """Current SM clock over its maximum; 1.0 when the library cannot say."""
        h = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(h)) != 0:
            return 1.0
        cur, top = ctypes.c_uint(), ctypes.c_uint()
        if self.lib.nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM, ctypes.byref(cur)) != 0 or cur.value == 0:
            return 1.0
        if self.lib.nvmlDeviceGetMaxClockInfo(h, NVML_CLOCK_SM, ctypes.byref(top)) != 0 or top.value == 0:
            return 1.0
        return cur.value / top.value


def own_gpu():
    """The NVML index of this rank's GPU: CUDA_VISIBLE_DEVICES at the local rank (or its only entry), counted within
    Slurm's list of the step's physical GPUs when that list differs (cgroup-constrained devices are renumbered)."""
    visible = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v]
    physical = [v for v in os.environ.get("SLURM_STEP_GPUS", os.environ.get("SLURM_JOB_GPUS", "")).split(",") if v]
    local = int(os.environ.get("SLURM_LOCALID", "0"))
    if not visible:
        return local
    entry = int(visible[0] if len(visible) == 1 else visible[local])
    return int(physical[entry]) if physical != visible and entry < len(physical) else entry


class FileCollective:
    """An all-gather of one (compute time, stop) pair per rank and step through files in a directory every rank can
    reach. The stop votes travel with the values so that every rank ends after the same step: ranks started by srun
    a few milliseconds apart each see the time run out at a different step, and a rank that left on its own clock
    would leave the others waiting for its next step."""

    def __init__(self, directory, rank, ranks, timeout=20):
        self.dir, self.rank, self.ranks, self.timeout = directory, rank, ranks, timeout
        os.makedirs(directory, exist_ok=True)

    def gather(self, step, value, stop):
        mine = os.path.join(self.dir, f"{step}.{self.rank}")
        with open(mine + ".tmp", "w") as f:
            f.write(f"{value!r} {int(stop)}")
        os.rename(mine + ".tmp", mine)  # the others never read half a number
        old = os.path.join(self.dir, f"{step - 3}.{self.rank}")
        if os.path.exists(old):
            os.unlink(old)  # this rank read every step - 1: every rank has finished reading step - 2 and older
        values = []
        deadline = time.time() + self.timeout
        for r in range(self.ranks):
            path = os.path.join(self.dir, f"{step}.{r}")
            while True:
                try:
                    with open(path) as f:
                        v, vote = f.read().split()
                    values.append((float(v), vote == "1"))
                    break
                except FileNotFoundError:
                    if time.time() > deadline:
                        raise RuntimeError(f"rank {self.rank}: rank {r} never reached step {step} ({path})")
                    time.sleep(0.002)
        return values


def rank_main(a):
    rank = int(os.environ["SLURM_PROCID"])
    gpu = own_gpu()
    ranks = int(os.environ.get("SLURM_NTASKS", a.ranks)) if a.collective_dir else a.ranks
    collective = FileCollective(a.collective_dir, rank, ranks) if a.collective_dir else None
    nvml = Nvml(a.nvml)
    rng = random.Random(a.seed * 1000 + rank)
    reporter = StepReporter(endpoint=a.endpoint, flush_interval=a.flush, encoding=a.encoding)
    t0 = time.time()
    step = 0
    while True:
        step += 1
        now = time.time() - a.epoch
        time_up = time.time() - t0 >= a.seconds or (a.until is not None and now >= a.until)
        if time_up and not collective:
            break

        def compute_of(r, index):
            c = a.compute / max(nvml.sm_ratio(index), 0.05) * (1 + rng.gauss(0, a.jitter))
            return c + a.stall if r == a.stall_rank and now >= a.stall_from else c

        if collective:
            own = compute_of(rank, gpu)
            gathered = collective.gather(step, own, time_up)
            if any(stop for _, stop in gathered):
                break  # every rank read the same votes: all end here
            computes = [c for c, _ in gathered]
        else:
            # Every rank reads every GPU of the node: it knows how long the slowest rank's compute takes, which is
            # when the collective ends for all.
            computes = [compute_of(r, r) for r in range(a.ranks)]
            own = computes[rank]
        pause = a.eval if a.eval_every and step % a.eval_every == 0 else 0
        if a.measured:
            with reporter.step(tokens=a.tokens) as s:
                time.sleep(own)
                s.compute_done()
                time.sleep(max(computes) - own + a.collective + pause)
        else:
            # The model's times are reported, and the sleep only paces the job in real time: on a loaded test
            # machine a sleeping rank wakes milliseconds late, which on a 50 ms compute is a 5 % straggler made by
            # the host's scheduler, not by the GPU the scenario slowed.
            wall = max(computes) + a.collective + pause
            time.sleep(wall)
            reporter.record(wall, compute_duration=own, tokens=a.tokens)
    reporter.close()
    if reporter.failures:
        print(f"rank {rank} (GPU {gpu}): {reporter.failures} failed sends: {reporter.last_error}", file=sys.stderr)
        return 1
    return 0


def launch(a):
    procs = []
    for r in range(a.ranks):
        env = dict(os.environ)
        env.update(
            {
                "SLURM_JOB_ID": a.job,
                "SLURM_PROCID": str(r),
                "SLURM_LOCALID": str(r),
                "CUDA_VISIBLE_DEVICES": str(r),
                "GCM_TRAINER_RANK": "1",
            }
        )
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env=env))
    return max(p.wait() for p in procs)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--endpoint", required=True, help="unix:///path/job-signals.sock or http://127.0.0.1:PORT")
    p.add_argument("--nvml", required=True, help="the NVML library (the fake one in tests)")
    p.add_argument("--job", default="4242")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--compute", type=float, default=0.05, help="seconds of compute per step at full clock")
    p.add_argument("--collective", type=float, default=0.01)
    p.add_argument("--jitter", type=float, default=0.005)
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--stall-rank", type=int, default=-1)
    p.add_argument("--stall-from", type=float, default=0)
    p.add_argument("--stall", type=float, default=0)
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--eval", type=float, default=0)
    p.add_argument("--flush", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--measured",
        action="store_true",
        help="report the times StepReporter.step() measures around the sleeps instead of the model's",
    )
    p.add_argument("--encoding", default="protobuf", choices=["protobuf", "json"])
    p.add_argument(
        "--collective-dir",
        help="under srun: the directory (shared by the nodes) of the file all-gather; the ranks are SLURM_NTASKS",
    )
    p.add_argument("--until", type=float, help="stop at this second of scenario time (since --epoch) as well")
    p.add_argument("--epoch", type=float, default=float(os.environ.get("GCM_FAKE_NVML_EPOCH", time.time())))
    a = p.parse_args()
    return rank_main(a) if os.environ.get("GCM_TRAINER_RANK") else launch(a)


if __name__ == "__main__":
    sys.exit(main())
