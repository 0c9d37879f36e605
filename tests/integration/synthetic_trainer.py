"""A synthetic data-parallel training job for the job-signal tests (docs/reference/job-signals.md).

Launched once, it starts --ranks rank processes (each its own exec, with the environment srun gives a task:
SLURM_JOB_ID, SLURM_PROCID, SLURM_LOCALID, CUDA_VISIBLE_DEVICES), which report through python/gcm_reporter.py.
Each rank's compute takes `--compute` seconds scaled by its GPU's SM clock as NVML reads it (max / current: a GPU
10 % slower stretches its rank's compute 10 %). The gradient collective then makes every rank wait for the slowest,
so every rank's step wall time is the slowest compute plus the collective, as in a synchronous job.

Scenarios: --stall-rank R --stall-from T --stall S adds S seconds to rank R's compute from T seconds of scenario time
(a data-loader stall: no hardware cause); --eval-every N --eval S pauses every rank for S seconds every N steps
(evaluation: the job's own phase); --jitter J is the relative noise of each compute.
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


def rank_main(a):
    rank = int(os.environ["SLURM_PROCID"])
    gpu = int(os.environ["CUDA_VISIBLE_DEVICES"])
    nvml = Nvml(a.nvml)
    rng = random.Random(a.seed * 1000 + rank)
    reporter = StepReporter(endpoint=a.endpoint, flush_interval=a.flush, encoding=a.encoding)
    t0 = time.time()
    step = 0
    while time.time() - t0 < a.seconds:
        step += 1
        now = time.time() - a.epoch
        # Every rank reads every GPU: it knows how long the slowest rank's compute takes, which is when the
        # collective ends for all.
        computes = []
        for r in range(a.ranks):
            c = a.compute / max(nvml.sm_ratio(r), 0.05) * (1 + rng.gauss(0, a.jitter))
            if r == a.stall_rank and now >= a.stall_from:
                c += a.stall
            computes.append(c)
        own = computes[rank]
        with reporter.step(tokens=a.tokens) as s:
            time.sleep(own)
            s.compute_done()
            time.sleep(max(computes) - own + a.collective)
            if a.eval_every and step % a.eval_every == 0:
                time.sleep(a.eval)
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
    p.add_argument("--encoding", default="protobuf", choices=["protobuf", "json"])
    p.add_argument("--epoch", type=float, default=float(os.environ.get("GCM_FAKE_NVML_EPOCH", time.time())))
    a = p.parse_args()
    return rank_main(a) if os.environ.get("GCM_TRAINER_RANK") else launch(a)


if __name__ == "__main__":
    sys.exit(main())
