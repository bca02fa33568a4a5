"""What the CLI test scripts share: running a tool, counting checks, the exit status.

    from cli_util import Checks, run
    checks = Checks()
    p = run(tool, "-m", model)
    checks.check("runs", p.returncode == 0, p.stderr)
    sys.exit(checks.finish())
"""
import subprocess


def run(*args, stdin=None):
    """Runs a tool to completion (5 minutes at most), capturing its text output."""
    return subprocess.run(list(args), input=stdin, capture_output=True, text=True, timeout=300)


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}")

    def finish(self):
        """Prints the tally; the script's exit status (1 on any failure)."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
