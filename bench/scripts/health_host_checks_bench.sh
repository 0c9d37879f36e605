#!/usr/bin/env bash
# Whole-process wall time and peak RSS of one health_checks process per host-check group on the shared fixtures
# (sysfs snapshots, manifests, smartctl dumps; the real /proc for the process/processor/node checks), then of all of
# them in sequence, each as the median of RUNS runs, with ratios against two baselines measured in the same run:
# `/bin/true` (the cost of starting any process) and `health_checks --help`.
# Checks marked "(tool)" run fake external tools (/bin/sh scripts), whose start-up is part of their time.
# Usage: bench/scripts/health_host_checks_bench.sh [build/health_checks] [RUNS]
set -euo pipefail
HC_ARG=${1:-build/health_checks}
HC="$(cd "$(dirname "$HC_ARG")" && pwd)/$(basename "$HC_ARG")"  # not realpath: the name health_checks matters
RUNS=${2:-21}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX="$ROOT/../shared/fixtures/gcm/health_checks"
OURS="$ROOT/tests/fixtures/health_checks"
[ -d "$FIX" ] || { echo "shared fixtures not found: $FIX" >&2; exit 2; }
dir=$(mktemp -d /tmp/gcm-hc2-bench-XXXXXX)
trap 'rm -rf "$dir"' EXIT

python3 - "$HC" "$RUNS" "$dir" "$FIX" "$OURS" <<'PY'
import json, os, resource, statistics, subprocess, sys, time

hc, runs, d, fix, ours = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
sysfs, root, bin_ = f"{d}/sys", f"{d}/root", f"{d}/bin"
os.makedirs(bin_)

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

def tool(name, body):
    write(f"{bin_}/{name}", "#!/bin/sh\n" + body + "\n")
    os.chmod(f"{bin_}/{name}", 0o755)

for p, c in json.load(open(f"{fix}/learn_good.json")).items():
    write(sysfs + p[4:], c)
eth = json.load(open(f"{fix}/eth_learn_good.json"))
for ifname, cfg in eth["intf_ifcfg"].items():
    write(f"{root}/etc/sysconfig/network-scripts/ifcfg-{ifname}", "".join(f"{k}={v}\n" for k, v in cfg.items()))
for ifname, speed in eth["link_speed"].items():
    write(f"{sysfs}/class/net/{ifname}/speed", speed + "\n")
write(f"{d}/ip.json", json.dumps(eth["intf_status"]))
tool("ip", f"cat {d}/ip.json")
tool("ethtool", "case \"$2\" in " + " ".join(f"{k}) echo 'Permanent address: {v}';;" for k, v in eth["phys_macaddr"].items()) + " esac")
tool("smartctl", f"cat {fix}/smartctl_dumps/learn_good/$(basename \"$2\").json")
tool("ipmitool", f"cat {ours}/ipmitool_sel_ok.txt")
tool("ipmi-sensors", f"cat {ours}/ipmi_sensors_ok.txt")
tool("ibv_devinfo", f"cat {ours}/ibv_devinfo_l_8.txt")
tool("ibstat", f"cat {ours}/ibstat_all_up.txt")
tool("systemctl", "echo active")
for f in ("bulk-1", "bulk-2"):
    write(f"{root}/var/airstore/cred/{f}", "k")
write(f"{root}/etc/hosts", "127.0.0.1 localhost\n")

M = f"{fix}/DGX_A100.json"
common = ["c", "nagios", "--log-folder", f"{d}/logs"]
checks = [
    ("check-process check-zombie", ["check-process", "check-zombie"]),
    ("check-process check-running-process", ["check-process", "check-running-process", "-p", "init"]),
    ("check-storage disk-usage", ["check-storage", "disk-usage", "-v", "/"]),
    ("check-storage file-exists", ["check-storage", "file-exists", "-f", "/etc/hosts", "--path.rootfs", root]),
    ("check-processor check-buddyinfo", ["check-processor", "check-buddyinfo"]),
    ("check-processor processor-freq", ["check-processor", "processor-freq", "--proc_freq", "1"]),
    ("check-node uptime", ["check-node", "uptime", "--uptime-threshold", "1"]),
    ("check-pci", ["check-pci", "--manifest_file", M, "--path.sysfs", sysfs]),
    ("check-ib check-iblink", ["check-ib", "check-iblink", "--manifest_file", M, "--path.sysfs", sysfs]),
    ("check-airstore flash-array-credential-count", ["check-airstore", "flash-array-credential-count",
                                                     "--expected-count-ge", "2", "--path.rootfs", root]),
    ("check-ethlink (tool: ip, ethtool x2)", ["check-ethlink", "--manifest_file", M, "--path.sysfs", sysfs,
                                              "--path.rootfs", root]),
    ("check-blockdev (tool: smartctl x10)", ["check-blockdev", "--manifest_file", M]),
    ("check-ib check-ibstat (tool)", ["check-ib", "check-ibstat"]),
    ("check-hca (tool)", ["check-hca", "--expected-count", "8"]),
    ("check-ipmitool check-sel (tool)", ["check-ipmitool", "check-sel"]),
    ("check-sensors (tool)", ["check-sensors"]),
    ("check-service service-status (tool)", ["check-service", "service-status", "-s", "slurmd"]),
]
env = dict(os.environ, PATH=f"{bin_}:/usr/bin:/bin")

def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def once(argv):
    c0, t0 = cpu_children(), time.perf_counter()
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env).returncode
    return time.perf_counter() - t0, rc, cpu_children() - c0

def peak_rss_kib(argv):
    # GNU time reports the child's own peak RSS (a forked Python's pages would count in wait4's ru_maxrss).
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=env, text=True)
    return int(r.stderr.strip().splitlines()[-1])

def measure(argv):
    samples = [once(argv) for _ in range(runs)]
    return (statistics.median(s[0] for s in samples), peak_rss_kib(argv), samples[0][1],
            statistics.median(s[2] for s in samples))

true_t, true_rss, _, true_c = measure(["/bin/true"])
help_t, help_rss, _, help_c = measure([hc, "--help"])
print(f"runs per figure: {runs} (median wall, median CPU user+sys, peak RSS); load average {os.getloadavg()[0]:.1f}")
print(f"{'baseline /bin/true':52s} {true_t*1e3:8.2f} ms {true_c*1e3:7.2f} ms {true_rss/1024:7.1f} MiB")
print(f"{'baseline health_checks --help':52s} {help_t*1e3:8.2f} ms {help_c*1e3:7.2f} ms {help_rss/1024:7.1f} MiB")
print(f"{'check':52s} {'wall':>11s} {'CPU':>10s} {'peak RSS':>11s} {'x true':>7s} {'x help':>7s} exit")
total, peak_all = 0.0, 0
for name, args in checks:
    t, rss, rc, c = measure([hc] + args + common)
    total += t
    peak_all = max(peak_all, rss)
    print(f"{name:52s} {t*1e3:8.2f} ms {c*1e3:7.2f} ms {rss/1024:7.1f} MiB {t/true_t:7.1f} {t/help_t:7.1f} {rc}")

# All of them in sequence, as one prolog would run them one after another.
def sequence():
    t0 = time.perf_counter()
    for _, args in checks:
        subprocess.run([hc] + args + common, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0
seq = [sequence() for _ in range(max(3, runs // 4))]
st = statistics.median(seq)
print(f"{'all ' + str(len(checks)) + ' in sequence':52s} {st*1e3:8.2f} ms {'':10s} {peak_all/1024:7.1f} MiB "
      f"{st/true_t:7.1f} {st/help_t:7.1f}   (sum of medians {total*1e3:.2f} ms)")
PY
