#!/usr/bin/env python3
"""A VLM's vision plans in the schedule views: pshard-inspect prints one line per
(budget, image-size tier) and the JSON twin carries them; pshard-diff pairs them, so a
change of the vision plans is seen by CI's schedule diffs (a faster or slower machine
profile changes every vision line), and refuses to pair a schedule with vision plans
against one without, or against other image-size tiers.

usage: vision_schedule_cli_test.py BUILD_DIR
"""
import json
import os
import re
import sys
import tempfile

from cli_util import Checks, run

build = sys.argv[1]
tool = lambda name: os.path.join(build, f"tools/{name}/{name}")
laptop = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
desktop = os.path.join(build, "profiles/desktop-rtx5090-32gb.pshprof")
BUDGETS = "0,2M,8M"
checks = Checks()


def compile_schedule(lm, out, *extra, profile=laptop):
    p = run(tool("pshard-compile"), "-m", lm, "--profile", profile, "--budgets", BUDGETS,
            "--tiers", "1,16", "-c", "256", "--kernel-workspace", "0", "-q", "-o", out, *extra)
    checks.check(f"pshard-compile {' '.join(extra)}", p.returncode == 0, p.stderr)
    return out


def diff(a, b):
    return run(tool("pshard-diff"), a, b)


def main(tmp):
    if not os.path.exists(desktop):
        checks.skip(f"{desktop} was not built")
        return checks.finish()
    lm, proj = os.path.join(tmp, "qwen2vl.gguf"), os.path.join(tmp, "mmproj.gguf")
    p = run(tool("pshard-mkmodel"), "-o", lm, "--arch", "qwen2vl", "--mmproj-out", proj,
            "--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2",
            "--n-ff", "96", "--v-n-embd", "32", "--v-n-head", "2", "--v-n-layer", "2",
            "--v-image-size", "448", "--v-window-size", "56")
    checks.check("pshard-mkmodel", p.returncode == 0, p.stderr)
    if p.returncode != 0:
        return checks.finish()
    sizes = ["--mmproj", proj, "--image-sizes", "480p,1080p"]
    with_vision = compile_schedule(lm, os.path.join(tmp, "v.pshard"), *sizes)
    faster = compile_schedule(lm, os.path.join(tmp, "v5090.pshard"), *sizes, profile=desktop)
    other_tiers = compile_schedule(lm, os.path.join(tmp, "v3.pshard"), "--mmproj", proj,
                                   "--image-sizes", "480p,720p,1080p")
    text_only = compile_schedule(lm, os.path.join(tmp, "t.pshard"))

    shown = run(tool("pshard-inspect"), with_vision)
    checks.check("pshard-inspect runs", shown.returncode == 0, shown.stderr)
    rows = re.findall(r"^ .*\b(480p|1080p) \(\d+\) ", shown.stdout, re.M)
    checks.check("pshard-inspect: one vision line per budget and image size",
                 len(rows) == 3 * 2, f"{len(rows)} lines:\n{shown.stdout[-1500:]}")
    checks.check("pshard-inspect names the projector", "vision phase: projector" in shown.stdout,
                 shown.stdout[-800:])
    plain = run(tool("pshard-inspect"), text_only)
    checks.check("a schedule without a vision phase prints none",
                 plain.returncode == 0 and "vision phase" not in plain.stdout, plain.stdout[-400:])

    as_json = run(tool("pshard-inspect"), with_vision, "--json")
    vision = json.loads(as_json.stdout).get("vision", {}) if as_json.returncode == 0 else {}
    checks.check("the JSON twin holds every vision plan", len(vision.get("plans", [])) == 6,
                 as_json.stderr or str(vision)[:300])

    same = diff(with_vision, with_vision)
    checks.check("an artifact against itself: no change", same.returncode == 0 and
                 len(re.findall(r"^vision ", same.stdout, re.M)) == 6 and
                 "0 regression(s)" in same.stdout, same.stdout[-800:] + same.stderr)
    moved = diff(with_vision, faster)
    changed = re.findall(r"^vision .*(REGRESSION|faster)$", moved.stdout, re.M)
    checks.check("another machine's profile changes the vision plans' predictions",
                 len(changed) >= 1, moved.stdout[-1500:])
    back = diff(faster, with_vision)
    checks.check("the slower profile's vision plans are regressions (exit 1)",
                 back.returncode == 1 and re.search(r"^vision .*REGRESSION$", back.stdout, re.M),
                 back.stdout[-1000:])
    for what, other, says in [("with against without a vision phase", text_only, "only the old"),
                              ("without against with", None, "only the new"),
                              ("other image-size tiers", other_tiers, "vision phases differ")]:
        d = diff(with_vision, other) if other else diff(text_only, with_vision)
        checks.check(f"pshard-diff {what}: incompatible", d.returncode != 0 and says in d.stdout,
                     d.stdout[-600:] + d.stderr)
    return checks.finish()


with tempfile.TemporaryDirectory() as tmp:
    sys.exit(main(tmp))
