"""What the CLI test scripts share: running a tool, counting checks, the exit status.

    from cli_util import Checks, run
    checks = Checks()
    p = run(tool, "-m", model)
    checks.check("runs", p.returncode == 0, p.stderr)
    sys.exit(checks.finish())
"""
import os
import struct
import subprocess
import zlib


def run(*args, stdin=None, env=None, text=True):
    """Runs a tool to completion (5 minutes at most), capturing its output (text unless
    text=False; a random-weight model's text need not be UTF-8, so bad bytes become U+FFFD);
    `env` adds to the environment."""
    return subprocess.run([str(a) for a in args], input=stdin, capture_output=True, text=text,
                          errors="replace" if text else None, timeout=300,
                          env=dict(os.environ, **env) if env else None)


class Checks:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def check(self, name, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}")

    def skip(self, reason):
        self.skipped += 1
        print(f"SKIP {reason}")

    def finish(self):
        """Prints the tally; the script's exit status (1 on any failure)."""
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        print(f"{self.passed} passed, {self.failed} failed{skipped}")
        return 1 if self.failed else 0


def write_png(path, width, height, rgb):
    """rgb: height * width * 3 bytes, row-major -> an 8-bit RGB PNG (filter 0 on every
    row): the signature, IHDR, one zlib IDAT, IEND, each chunk length + type + data + CRC."""
    stride = width * 3
    raw = b"".join(b"\x00" + bytes(rgb[y * stride:(y + 1) * stride]) for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) +
                chunk(b"IEND", b""))


def write_pattern_png(path, width, height, seed):
    """A width x height PNG whose pixels depend on the seed (the vision tests' images)."""
    rgb = bytearray()
    for y in range(height):
        for x in range(width):
            v = (x * 7 + y * 13 + seed * 29) % 256
            rgb += bytes([v, (v * 3 + seed) % 256, 255 - v])
    write_png(path, width, height, rgb)
