#!/usr/bin/env python3
"""A conversation's second turn with an image, measured in pshard-server: the turn resends
the first turn's image, prompt and answer, as a chat client does. Each round sends a first
turn with a fresh image, then its second turn twice, alternating which goes first: with
that image (its encoded rows found again, its KV pages — image rows included — read from
the prefix cache) and with another fresh image of the same size in its place (encoded,
and its prompt decoded from the image on: what every later turn cost before pshard kept
images). Prints the median time to the first token of each, their ratio, and the prompt
tokens the cache served.

usage: bench-image-turns.py BUILD_DIR MODEL MMPROJ [REPS=3] [SIDE=448] [-- SERVER ARGS]
e.g. a Qwen2-VL-2B-shaped tower over a small language model:
  pshard-mkmodel --arch qwen2vl --n-embd 2048 --n-layer 8 --n-head 16 --n-head-kv 8 \\
      --n-ff 5632 --vocab 32000 --type q4_0 -o vl.gguf --mmproj-out mmproj.gguf \\
      --mmproj-type qwen2vl_merger --v-n-embd 1280 --v-n-ff 5120 --v-n-layer 32 \\
      --v-n-head 16 --v-image-size 448 --v-type f16
"""
import base64
import os
import random
import statistics
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import BenchServer  # noqa: E402


def png(side, seed):
    """A side x side PNG of random pixels (stored rows, each image its own)."""
    rng = random.Random(seed)
    raw = b"".join(b"\0" + rng.randbytes(3 * side) for _ in range(side))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


def user(image, text):
    url = "data:image/png;base64," + base64.b64encode(image).decode()
    return {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": text}]}


def chat(server, messages, max_tokens=16):
    """(seconds to the first token, the answer, cached prompt tokens), streamed, greedy."""
    body = {"messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "ignore_eos": True, "stream_options": {"include_usage": True}}
    first, text, cached = None, "", 0
    for seconds, ev in server.stream("/v1/chat/completions", body):
        if ev.get("usage"):
            cached = ev["usage"]["prompt_tokens_details"]["cached_tokens"]
        for ch in ev.get("choices", []):
            if first is None and ch.get("delta", {}).get("content"):
                first = seconds
            text += ch.get("delta", {}).get("content") or ""
    return first, text, cached


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    build, model, mmproj = argv[:3]
    reps, side = [int(a) for a in argv[3:]] + [3, 448][len(argv) - 3:]
    server = BenchServer(build, model, ["-np", "1", "--mmproj", mmproj, "--chat-template",
                                        "chatml", *extra])
    times = {"same image": [], "new image": []}
    cached = {"same image": [], "new image": []}
    try:
        for r in range(reps):
            image = png(side, 2 * r)
            first = [user(image, "What is in this picture?")]
            _, answer, _ = chat(server, first)
            follow = [{"role": "assistant", "content": answer},
                      {"role": "user", "content": "Describe its colours."}]
            ways = {"same image": first + follow,
                    "new image": [user(png(side, 2 * r + 1), first[0]["content"][1]["text"])] +
                    follow}
            for way in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
                t, _, c = chat(server, ways[way])
                times[way].append(t)
                cached[way].append(c)
                print(f"round {r}: {way}: first token after {t:.2f} s, {c} prompt tokens cached",
                      file=sys.stderr)
    finally:
        server.stop()
    print(f"| second turn ({side} x {side} image) | first token, median s | cached tokens |")
    print("| --- | ---: | ---: |")
    for way, ts in times.items():
        print(f"| {way} | {statistics.median(ts):.2f} | {statistics.median(cached[way])} |")
    print(f"ratio new / same: {statistics.median(times['new image']) / statistics.median(times['same image']):.1f}x")


if __name__ == "__main__":
    main()
