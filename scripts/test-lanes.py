#!/usr/bin/env python3
"""Runs the workspace's test binaries side by side in LANES lanes (scripts/run-tests.sh).

Input (stdin): one job per line, tab-separated: KEY (package/target, as in
scripts/test-weights.tsv), LABEL, DIRECTORY, EXECUTABLE, then any NAME=VALUE environment
entries. Each job runs EXECUTABLE --test-threads=THREADS in DIRECTORY
(as `cargo test` runs it: the package's root), its output kept and printed whole once it
ends, so the log reads binary by binary as cargo's would.

Order: the longest first (seconds from scripts/test-weights.tsv by KEY; a binary not listed
counts as a short one). Jobs whose weight line names a group (python:
the official client and schemathesis, CPU-bound Python beside their own manager) never run
two of one group at once, so a lane of waiting tests pairs with one that computes.

Ends with each binary's time (the slowest first) and exits 1 if any binary failed.
"""

import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def weights():
    table = {}
    path = os.path.join(HERE, "test-weights.tsv")
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            group = parts[2] if len(parts) > 2 else None
            table[parts[0]] = (float(parts[1]), group)
    return table


def main():
    lanes = int(os.environ.get("TEST_LANES", "2"))
    threads = os.environ.get("TEST_THREADS", "2")
    table = weights()
    jobs = []
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        key, label, directory, exe, *env = line.split("\t")
        weight, group = table.get(key, (5.0, None))
        jobs.append(
            {
                "label": label,
                "dir": directory,
                "exe": exe,
                "env": dict(e.split("=", 1) for e in env),
                "weight": weight,
                "group": group,
            }
        )
    # Longest first; equal weights keep cargo's order.
    pending = sorted(jobs, key=lambda j: -j["weight"])
    lock = threading.Condition()
    busy_groups = set()
    running = 0
    failed = []
    times = []

    def pick():
        for j in pending:
            if j["group"] is None or j["group"] not in busy_groups:
                pending.remove(j)
                return j
        return None

    def run(job):
        nonlocal running
        env = dict(os.environ)
        env.update(job["env"])
        started = time.monotonic()
        proc = subprocess.run(
            [job["exe"], f"--test-threads={threads}"],
            cwd=job["dir"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        took = time.monotonic() - started
        text = proc.stdout.decode("utf-8", "replace")
        with lock:
            sys.stdout.write(f"     Running {job['label']} ({job['exe']})\n{text}\n")
            sys.stdout.flush()
            times.append((took, job["label"]))
            if proc.returncode != 0:
                failed.append(job["label"])
            if job["group"] is not None:
                busy_groups.discard(job["group"])
            running -= 1
            lock.notify_all()

    workers = []
    began = time.monotonic()
    with lock:
        while pending or running:
            job = pick() if running < lanes else None
            if job is None:
                lock.wait()
                continue
            if job["group"] is not None:
                busy_groups.add(job["group"])
            running += 1
            t = threading.Thread(target=run, args=(job,))
            t.start()
            workers.append(t)
    for t in workers:
        t.join()
    print(f"==> test binaries by time ({lanes} lanes):")
    for took, label in sorted(times, reverse=True)[:15]:
        print(f"     {took:7.1f}s  {label}")
    print(
        f"     {sum(t for t, _ in times):7.1f}s  all {len(times)} binaries together; "
        f"{time.monotonic() - began:.1f}s from the first start to the last end"
    )
    if failed:
        print("==> failed binaries: " + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
