#!/usr/bin/env python3
"""pshard's SentencePiece Unigram ("t5") tokenizer against the SentencePiece library: two
small models trained here (ugm_vocab.py: XLM-RoBERTa's layout with NMT-NFKC rules, and
one with byte fallback and whitespace kept), written as llama.cpp writes them, then
pshard-tokenize's ids compared with the library's on fixed hard cases and on random
texts mixing scripts, whitespace, NFKC-folded characters, characters no piece covers,
"▁" itself and malformed UTF-8. Also the special tokens each layout adds, and that the
byte-fallback model's ids decode back to the text. Then end to end, as bge-m3 is used: a
BERT-family model with the XLM-RoBERTa vocabulary (pshard-mkmodel --tokenizer-from)
embeds a multilingual text through pshard-run, and the float64 reference
(reference/forward.py) embeds the library's ids for it: the two vectors agree.

usage: ugm_tokenizer_test.py BUILD_DIR [N_RANDOM=200]
Exits 77 (skipped) when python3-sentencepiece or python3-protobuf is missing.
"""
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_util  # noqa: E402
from cli_util import Checks  # noqa: E402

try:
    import sentencepiece  # noqa: F401
    os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
    from sentencepiece import sentencepiece_model_pb2  # noqa: F401
except ImportError as e:
    print(f"SKIP: the SentencePiece library is missing ({e}); install python3-sentencepiece "
          "and python3-protobuf (tools/install-deps.sh does)")
    sys.exit(77)
import ugm_vocab  # noqa: E402

checks = Checks()
check = checks.check
build = sys.argv[1]
n_random = int(sys.argv[2]) if len(sys.argv) > 2 else 200
tok_bin = os.path.join(build, "tools/pshard-tokenize/pshard-tokenize")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")

FIXED = [
    "", " ", "   ", "a", " a", "a ", "  hello   world  ", "Hello, World!", "the quick brown fox",
    "Mädchen über Straße", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "ﬁne ﬂow", "①②③ ½ ™ … ㍿ ㎏ Ⅻ",
    "ｶﾀｶﾅ", "e\u0301 cafe\u0301", "tab\tnew\nline\r\nend", "\u3000ideographic\u3000space",
    "no\u00a0break", "zero\u200bwidth\u200djoiner\ufeff", "\u2581", "a\u2581", "\u2581\u2581b",
    "emoji 😀😀 and 🦙", "敏捷的棕色狐狸", "素早い 茶色の 狐", "빠른 갈색", "الثعلب البني",
    "तेज़ भूरी", "¨ ´ ˘ ¸", "control\x01\x7f chars", "nul\x00byte", "<s> not special </s>",
    "x" * 300, "ab" * 97 + " " + "語" * 31,
]
# Malformed UTF-8 (bytes): SentencePiece reads each bad byte as U+FFFD.
FIXED_BYTES = [b"\xff", b"ab\xc3", b"\xe4\xb8 x", b"ok \xed\xa0\x80 surrogate", b"\xc0\xaf"]

POOL = (sum((w for w in ugm_vocab.WORDS.values()), []) +
        [" ", " ", " ", "  ", "\t", "\n", "\u3000", "\u00a0", "\u2581", "ﬁ", "Ｈ", "①", "¨",
         "\u0301", "\u200b", "😀", "🦙", "\x01", "Ǆ", "ǅ", "ß", "İ", "ﾟ", "ｶ", "…", "Å", "Ω",
         "\ufffd", "〜", "・", "«", "»", "—", "£", "€"])


def random_texts(seed=7):
    rng = random.Random(seed)
    for _ in range(n_random):
        yield "".join(rng.choice(POOL) + rng.choice(["", "", " "])
                      for _ in range(rng.randint(1, 24)))


def pshard_ids(tmp, vocab, text, *flags):
    path = os.path.join(tmp, "input.txt")
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode("utf-8"))
    p = cli_util.run(tok_bin, "-m", vocab, "-f", path, "--ids", *flags, text=False)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace"))
    return json.loads(p.stdout.decode())


def compare(tmp, kind, vocab, spm_ids):
    texts = FIXED + FIXED_BYTES + list(random_texts())
    bad = 0
    for i, text in enumerate(texts):
        want = spm_ids(text)
        got = pshard_ids(tmp, vocab, text, "--no-bos", "--no-parse-special")
        if got != want:
            bad += 1
            if bad <= 5:
                print(f"  {kind} text {i} {text!r}:\n    pshard {got}\n    library {want}")
    check(f"{kind}: {len(texts)} texts tokenize as the SentencePiece library does",
          bad == 0, f"{bad} differ")
    return texts


def embeds_as_the_reference(tmp, vocab, spm_ids):
    try:
        import numpy as np
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        "reference"))
        from forward import Reference
        from gguf_reader import GgufModel
    except ImportError as e:
        checks.skip(f"the embedding check: no numpy here ({e})")
        return
    model = os.path.join(tmp, "xlmr-bert.gguf")
    p = cli_util.run(mk_bin, "-o", model, "--arch", "bert", "--n-embd", "64", "--n-layer", "2",
                     "--n-head", "4", "--n-ff", "96", "--ctx", "256", "--type", "f32",
                     "--pooling-type", "2", "--seed", "5", "--tokenizer-from", vocab)
    check("pshard-mkmodel a BERT with the XLM-RoBERTa vocabulary", p.returncode == 0, p.stderr)
    # "ﷺ" is 3 bytes that NFKC spells as 18 characters: the text has more tokens than
    # bytes, which the tools must take (a second try with the count the API asks for).
    text = "Der schnelle braune Fuchs ＦＵＬＬ 😀 敏捷的棕色狐狸 the quick brown fox " + "ﷺ" * 10
    p = cli_util.run(run_bin, "-m", model, "-p", text, "--embedding", "--json", "-t", "2",
                     "-ctk", "f32", "-ctv", "f32")
    if p.returncode != 0:
        check("pshard-run --embedding", False, p.stderr)
        return
    got = json.loads(p.stdout)
    ids = [0] + spm_ids(text) + [2]
    ref = np.array(Reference(GgufModel(model)).final_states(ids))[0]  # CLS pooling
    ref = ref / np.linalg.norm(ref)
    worst = float(np.max(np.abs(np.array(got["embedding"]) - ref)))
    check("xlmr BERT: pshard's text embedding equals the reference's on the library's ids",
          got["n_tokens"] == len(ids) > len(text.encode()) + 8 and worst < 1e-5,
          f"{got['n_tokens']} tokens against {len(ids)}, differs by {worst:.1e}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("xlmr", "bytes"):
            sp, vocab, spm_ids = ugm_vocab.make_vocab(kind, tmp)
            texts = compare(tmp, kind, vocab, spm_ids)
            body = spm_ids("the quick brown fox")
            with_specials = pshard_ids(tmp, vocab, "the quick brown fox")
            if kind == "xlmr":  # <s> ... </s>, as bge-m3 embeds a text
                check("xlmr adds <s> and </s>", with_specials == [0] + body + [2], with_specials)
                parsed = pshard_ids(tmp, vocab, "<s>a</s>", "--no-bos")
                check("xlmr parses control tokens", parsed[0] == 0 and parsed[-1] == 2, parsed)
                embeds_as_the_reference(tmp, vocab, spm_ids)
            else:  # T5's defaults: no BOS, </s> at the end
                check("t5 defaults add only </s>", with_specials == body + [2], with_specials)
                # No normalization, whitespace kept, bytes for what no piece covers: the
                # ids give the text back.
                lossless = [t for t in texts if isinstance(t, str) and t and "\u2581" not in t][:60]
                back = 0
                for text in lossless:
                    ids = pshard_ids(tmp, vocab, text, "--no-bos", "--no-parse-special")
                    p = cli_util.run(tok_bin, "-m", vocab, "--decode",
                                     ",".join(str(i) for i in ids), text=False)
                    back += p.returncode == 0 and p.stdout == text.encode() + b"\n"
                check("byte-fallback ids decode to the text", back == len(lossless),
                      f"{back} of {len(lossless)}")
    sys.exit(checks.finish())


main()
