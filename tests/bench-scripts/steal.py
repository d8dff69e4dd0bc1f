#!/usr/bin/env python3
"""usage: steal.py SECONDS [MS] — samples /proc/stat every 50 ms for SECONDS and prints, with a
Unix timestamp, each sample in which the hypervisor stole at least MS (30) ms of CPU time (over
all CPUs), then the total. Run it beside a load to tell a stall of the load from one of the VM."""
import sys
import time

HZ = 100  # USER_HZ: /proc/stat counts in hundredths of a second


def steal():
    with open("/proc/stat") as f:
        return int(f.readline().split()[8])


seconds = float(sys.argv[1])
threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
start = previous = steal()
end = time.time() + seconds
while time.time() < end:
    time.sleep(0.05)
    now = steal()
    stolen_ms = (now - previous) * 1000 / HZ
    if stolen_ms >= threshold:
        print("%.2f stolen %.0f ms" % (time.time(), stolen_ms), flush=True)
    previous = now
print("total stolen %.0f ms in %.0f s" % ((previous - start) * 1000 / HZ, seconds))
