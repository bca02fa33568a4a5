"""What the CLI test scripts share: running a tool, counting checks, the summary line and
exit status ctest reads (1 on any failure)."""
import os
import subprocess
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}


def run(*args, env=None, stdin=None, text=True, timeout=300):
    """Runs a tool and captures its output; `env` adds to the environment."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=text, input=stdin,
                          timeout=timeout, env=dict(os.environ, **env) if env else None)


def check(name, cond, detail=""):
    if cond:
        counts["passed"] += 1
    else:
        counts["failed"] += 1
        print(f"FAIL {name}: {detail}")


def skip(reason):
    counts["skipped"] += 1
    print(f"SKIP {reason}")


def finish():
    """Prints 'N passed, N failed, N skipped' and exits 1 on any failure."""
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    sys.exit(1 if counts["failed"] else 0)
