"""Memory stays bounded: a frontier of 1,000,000 queued URLs in under 500 MB RSS.

Measured in a fresh subprocess (VmHWM: the peak, interpreter included), so nothing the
test session loaded counts. Not ru_maxrss: Linux keeps it across execve, so the child of a
pytest process (an xdist worker that already ran the real-web tests, 550 MB) reports its
parent's peak; VmHWM belongs to the child's own memory map.
"""

import subprocess
import sys

SCRIPT = r"""
import sys
from dustless.frontier import Frontier, Politeness, QueuedURL, Ready
from dustless.kinds import LinkKind

f = Frontier(Politeness(min_delay=0.0, factor=0.0))
hosts = [sys.intern(f"site{h}.example.com") for h in range(2000)]
for i in range(1_000_000):
    host = hosts[i % 2000]
    url = f"http://{host}/section/{i // 2000}/article-{i}.html?ref=front"
    f.push(QueuedURL(url, host, i % 6, 0, i % 2000, LinkKind.ANCHOR, i + 1))
assert len(f) == 1_000_000
r = f.pop(0.0)
assert isinstance(r, Ready)
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) * 1024)
"""


def test_a_million_queued_urls_fit_in_500_mb():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    rss = int(proc.stdout.strip())
    print(f"peak RSS with 1,000,000 queued URLs: {rss / 2**20:.0f} MiB")
    assert rss < 500 * 10**6
