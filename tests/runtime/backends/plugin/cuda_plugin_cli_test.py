#!/usr/bin/env python3
"""The CUDA plugin as a user meets it: pshard-run in the build tree and in an install.

usage: cuda_plugin_cli_test.py BUILD_DIR SHARED_DIR CMAKE PLUGIN|none plain|sanitized

- no binary but the plugin needs NVIDIA's libraries (readelf NEEDED), and the plugin
  exports nothing but its entry point;
- pshard-run --backend cpu peaks under 20 MiB resident on stories260K, and cpu/emu never
  open the plugin or libcublasLt (LD_DEBUG=files);
- an install (cmake --install) finds its plugin with no environment; a copy of it without
  the plugin, with LD_LIBRARY_PATH pointing nowhere or PSHARD_CUDA_PLUGIN at a missing
  file, runs cpu/emu normally and names the missing piece for --backend cuda;
- with libcublasLt hidden (a private mount namespace, where permitted) --backend cuda
  names libcublasLt and says to install the NVIDIA CUDA runtime / driver.
Prints 'N passed, N failed, N skipped' and exits non-zero on any failure.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

build, shared, cmake, plugin, flavour = sys.argv[1:6]
plugin = None if plugin == "none" else plugin
stories = os.path.join(shared, "models/stories260K.gguf")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
libpshard = os.path.join(build, "runtime/capi/libpshard.so")
profile_bin = os.path.join(build, "tools/pshard-profile/pshard-profile")
passed = failed = skipped = 0
NVIDIA = re.compile(r"libcu(blas|dart|da)\b|libcublasLt|libnvidia")
RSS_LIMIT = 20 << 20


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def skip(name, why):
    global skipped
    skipped += 1
    print(f"SKIP {name}: {why}")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PSHARD_CUDA_PLUGIN")}
    env.update(extra)
    return env


def pshard_run(binary, backend, env, *more):
    return subprocess.run([binary, "-m", stories, "-p", "Once upon a time", "-n", "8", "--temp", "0",
                           "-t", "1", "--backend", backend, "--json", *more],
                          capture_output=True, text=True, timeout=120, env=env)


def needed(path):
    out = subprocess.run(["readelf", "-dW", path], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", out)


def elf_dependencies():
    if shutil.which("readelf") is None:
        skip("NEEDED entries", "readelf (binutils) is not installed")
        return
    for b in (run_bin, libpshard, profile_bin):
        libs = needed(b)
        check(f"{os.path.basename(b)} has NEEDED entries", "libc.so.6" in libs, libs)
        check(f"{os.path.basename(b)} needs no NVIDIA library",
              not any(NVIDIA.search(l) for l in libs), libs)
    if plugin is None:
        return
    libs = needed(plugin)
    check("the plugin needs libcublasLt", any(l.startswith("libcublasLt") for l in libs), libs)
    out = subprocess.run(["readelf", "--dyn-syms", "-W", plugin], capture_output=True, text=True).stdout
    exported = sorted({f[7] for f in (l.split() for l in out.splitlines())
                       if len(f) >= 8 and f[6] != "UND" and f[4] in ("GLOBAL", "WEAK")})
    check("the plugin exports only its entry point", exported == ["pshard_cuda_plugin_v1"], exported)


def small_and_untouched_on_cpu_and_emu():
    p = pshard_run(run_bin, "cpu", clean_env())
    check("cpu run", p.returncode == 0, p.stderr)
    if p.returncode == 0:
        out = json.loads(p.stdout)
        rss = out["memory"]["peak_resident_bytes"]
        if flavour == "sanitized":  # AddressSanitizer's shadow memory alone is more
            skip("cpu run under 20 MiB", f"a sanitized build ({rss / 2**20:.1f} MiB)")
        else:
            check("cpu run peaks under 20 MiB resident", 0 < rss < RSS_LIMIT, f"{rss / 2**20:.1f} MiB")
        check("cpu run generates", len(out["generated_tokens"]) == 8, out["generated_tokens"])
    for backend in ("cpu", "emu"):
        p = pshard_run(run_bin, backend, clean_env(LD_DEBUG="files"))
        check(f"{backend} run under LD_DEBUG", p.returncode == 0, p.stderr[-2000:])
        opened = [l for l in p.stderr.splitlines() if "file=" in l and
                  ("libpshard_cuda" in l or NVIDIA.search(l))]
        check(f"{backend} opens neither the plugin nor NVIDIA's libraries", not opened, opened[:3])


def cuda_error(binary, env):
    p = pshard_run(binary, "cuda", env)
    return p.returncode, p.stderr


def plugin_hidden(binary, env, label, names_it):
    """cpu and emu run normally under env; cuda fails and names_it(stderr) holds."""
    for backend in ("cpu", "emu"):
        p = pshard_run(binary, backend, env)
        check(f"{backend} {label}", p.returncode == 0, p.stderr)
    rc, err = cuda_error(binary, env)
    if plugin is None:
        check(f"cuda {label}: no CUDA in this build, said so", rc != 0 and "no CUDA backend" in err, err)
    else:
        check(f"cuda {label}: names what is missing", rc != 0 and names_it(err), err)


def hidden_plugin_in_build_tree():
    missing = "/nonexistent/libpshard_cuda.so"
    plugin_hidden(run_bin, clean_env(PSHARD_CUDA_PLUGIN=missing), "with PSHARD_CUDA_PLUGIN missing",
                  lambda err: f"$PSHARD_CUDA_PLUGIN={missing} does not exist" in err)


def installed(prefix):
    p = subprocess.run([cmake, "--install", build, "--prefix", prefix, "--component", "runtime"],
                       capture_output=True, text=True, timeout=120)
    check("cmake --install --component runtime", p.returncode == 0, p.stdout + p.stderr)
    for f in ("bin/pshard-run", "lib/libpshard.so", "include/pshard/pshard.h") + \
            (("lib/libpshard_cuda.so",) if plugin else ()):
        check(f"install has {f}", os.path.exists(os.path.join(prefix, f)), os.listdir(prefix))
    return os.path.join(prefix, "bin/pshard-run")


def install_finds_its_plugin(prefix):
    binary = installed(prefix)
    p = pshard_run(binary, "cpu", clean_env())
    check("installed cpu run", p.returncode == 0, p.stderr)
    if plugin is None:
        return
    rc, err = cuda_error(binary, clean_env())
    # On a machine without a GPU the plugin loads and reports the driver's reason.
    check("installed cuda finds the plugin", rc == 0 or ("no CUDA device" in err and "plugin" not in err), err)


def install_without_plugin(prefix):
    copy = prefix + "-no-plugin"
    shutil.copytree(prefix, copy, symlinks=True)
    if os.path.exists(os.path.join(copy, "lib/libpshard_cuda.so")):
        os.remove(os.path.join(copy, "lib/libpshard_cuda.so"))
    lib = os.path.join(copy, "lib")
    plugin_hidden(os.path.join(copy, "bin/pshard-run"), clean_env(LD_LIBRARY_PATH="/nonexistent"),
                  "in an install without the plugin",
                  lambda err: "libpshard_cuda.so" in err and lib in err and "CUDA toolkit" in err)


def hidden_cublas(prefix):
    if plugin is None:
        return
    ldd = subprocess.run(["ldd", plugin], capture_output=True, text=True).stdout
    m = re.search(r"libcublasLt\.so\S*\s*=>\s*(\S+)", ldd)
    if not m or m.group(1) == "not":
        skip("libcublasLt hidden", "libcublasLt is not found here at all: " + ldd)
        return
    lib_dir = os.path.dirname(os.path.realpath(m.group(1)))
    binary = os.path.join(prefix, "bin/pshard-run")
    empty = tempfile.mkdtemp()
    hide = f"mount --bind {empty} {lib_dir}"
    probe = shutil.which("unshare") and subprocess.run(["unshare", "-m", "sh", "-c", hide],
                                                       capture_output=True, text=True)
    if not probe or probe.returncode != 0:
        skip("libcublasLt hidden", "no private mount namespace here: " +
             (probe.stderr.strip() if probe else "unshare is not installed"))
        return
    script = (f"{hide} && \"$0\" -m {stories} -p Once -n 4 -t 1 --backend cpu >/dev/null && "
              f"\"$0\" -m {stories} -p Once -n 4 -t 1 --backend cuda")
    p = subprocess.run(["unshare", "-m", "sh", "-c", script, binary], capture_output=True,
                       text=True, timeout=120, env=clean_env())
    check("cpu runs with libcublasLt hidden; cuda names libcublasLt and what to install",
          p.returncode != 0 and "needs libcublasLt.so" in p.stderr and
          "install the NVIDIA CUDA runtime / driver" in p.stderr, p.stderr)


def main():
    if not os.path.exists(stories):
        print(f"skipped: {stories} is not present")
        sys.exit(77)
    elf_dependencies()
    small_and_untouched_on_cpu_and_emu()
    hidden_plugin_in_build_tree()
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "pshard")
        install_finds_its_plugin(prefix)
        install_without_plugin(prefix)
        hidden_cublas(prefix)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)


main()
