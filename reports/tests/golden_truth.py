#!/usr/bin/python3
"""The golden Markdown report (golden/dump-ring-depth9.md) was written by qaudit; this holds its
figures to sources that are not qaudit: what fixture_queue_ring depth9 does by the queue's own
rules (DESIGN.md: the previous ring allocates an 8-slot array at its first push and doubles it
when full; growth allocates before it frees), the sizes the compiler gave its structs (gdb reads
them from the fixture), and the usable sizes glibc's malloc_usable_size gives those requests.
Nine pushes then nine pops: a calloc of the connection, the 8-slot array at depth 1, the 16-slot
array at depth 9 (all three live at once), three frees.
usage: golden_truth.py GOLDEN_MD FIXTURE_QUEUE_RING   (prints ok:/FAIL: lines, exits 1 on one)"""
import ctypes
import re
import subprocess
import sys

golden, fixture = sys.argv[1], sys.argv[2]
text = open(golden).read()
failures = 0


def check(what, pattern):
    global failures
    found = re.search(pattern, text, re.MULTILINE) is not None
    failures += not found
    print(f"{'ok' if found else 'FAIL'}: {what} (/{pattern}/)")


def gdb_sizeof(name):
    out = subprocess.run(["gdb", "-batch", "-nx", "-ex", f"print sizeof({name})", fixture],
                         capture_output=True, text=True, timeout=60).stdout
    return int(re.search(r"= (\d+)", out).group(1))


libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc_usable_size.argtypes = [ctypes.c_void_p]


def usable(size):
    """The allocator's size class for a request: the least usable size of 32 blocks held at once.
    One block is not enough: glibc may hand out a free chunk up to 31 bytes larger than the class
    when splitting it would leave less than its minimum chunk (the CI once saw 96 B give 120)."""
    blocks = [libc.malloc(size) for _ in range(32)]
    n = min(libc.malloc_usable_size(ctypes.c_void_p(p)) for p in blocks)
    for p in blocks:
        libc.free(ctypes.c_void_p(p))
    return n


def bucket(size):
    """The requested-size bucket of the dump format: 16-byte steps up to 512."""
    low = (size - 1) // 16 * 16 + 1
    return f"{low}-{low + 15}"


slot = gdb_sizeof("struct rx_desc")
requests = [gdb_sizeof("struct connection"), 8 * slot, 16 * slot]  # calloc, grow at 1, grow at 9
usables = [usable(n) for n in requests]
queue_bytes = requests[1] + requests[2]
print(f"sizes: connection {requests[0]} B, slot {slot} B; requests {requests}, usable {usables}")

check("3 allocations", r"^\| allocations \| 3 \|$")
check("3 frees", r"^\| frees \| 3 \|$")
check("bytes requested", rf"^\| bytes requested \| {sum(requests)} B \|$")
check("bytes usable", rf"^\| bytes usable [^|]*\| {sum(usables)} B \|$")
check("peak live: all three blocks at once", rf"^\| peak live bytes \| {sum(usables)} B \|$")
check("nothing live at exit", r"^\| live at the dump \| 0 B in 0 blocks \|$")
check("calls", r"^Calls: malloc 2, calloc 1, free 3\.$")
check("pushes and pops", r"^9 pushes, 9 pops, 0 discarded")
check("two grows, no shrink", r"^Storage: 2 grows, 0 shrinks")
for depth in range(1, 10):
    check(f"one push left depth {depth}", rf"^\| {depth} \| 1 \|$")
check("one connection peaked at 9 with both arrays",
      rf"^\| 9 \| 1 \| 2 \| {queue_bytes} \| 2\.00 \| {queue_bytes}\.0 \|$")
check("an allocation at depth 1 and one at depth 9", r"^\| 1 \| 1 \|\n\| 9 \| 1 \|$")
check("the depth-one check fails on the 8-slot array",
      rf"^\| depth_one_no_alloc \| FAIL \| .*depth 1, {requests[1]} bytes \|$")
check("the queue's pushes and pops balance", r"^\| conservation \| PASS \| pushes 9 = pops 9 ")
for n in requests:
    check(f"the {n} B request in its bucket", rf"^\| {bucket(n)} \| 1 \|")
check("three requested sizes, no other", r"(?s)Each requested-size bucket.*?\n\n((?:\|.*\n){2})"
      r"(?:\| \d+-\d+ \| 1 \|.*\n){3}\n")
for n in usables:
    check(f"a block of {n} usable bytes", rf"^\| {n} \| 1 \|$")
sys.exit(1 if failures else 0)
