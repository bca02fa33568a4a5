#!/usr/bin/python3
"""Writes tests/runtime/tokenizer/data/kimi_k2_pieces.jsonl: how Moonshot's own
pre-tokenizer expression (tokenization_kimi.py's pat_str, used verbatim below) cuts a
corpus of texts, one JSON object {"text", "pieces"} a line.

It runs the expression with the `regex` module (Debian's python3-regex), which, like
the Rust regex crate under tiktoken, has character-class intersection (`&&`) and
Unicode properties, so the pattern needs no rewriting; pshard's PCRE2 form of it
(runtime/tokenizer/pre_tokenizer_patterns.cpp) is checked against this file by
tokenizer_test (PreTokenizer.KimiK2CutsAsMoonshotsExpression).

  /usr/bin/python3 tests/tools/kimi_k2_pieces.py ../shared/vocab > \
      tests/runtime/tokenizer/data/kimi_k2_pieces.jsonl
"""
import glob
import json
import os
import random
import sys

import regex

# tokenization_kimi.py (moonshotai/Kimi-K2-Instruct, Moonlight-16B-A3B-Instruct).
PAT_STR = "|".join([
    r"""[\p{Han}]+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

# What the expression is about, beyond llama.cpp's general tokenizer texts: Han runs
# against kana, Hangul and Latin; words split where lower case turns upper (llama.cpp's
# hand-written splitter keeps "getUserName" whole, Moonshot's expression does not);
# contractions of any case; digits in threes; Han that is not a letter (radicals, 〇);
# CJK punctuation, which is Han only by Script_Extensions; the CJK Extension H ideographs
# (Unicode 15, later than Debian's PCRE2 tables) and marks.
OWN = [
    "getUserName iPhone helloWorld XMLHttpRequest HTTPServer",
    "中文abc", "⺀一x", "々y", "日本語テスト", "日本語のテストです。",
    "我爱北京天安门！今天天气很好，我们去公园吧。",
    "混合English和中文mixed文本123个",
    "漢字かなカナ한국어",
    "〇一二三 〡〢〩 ㆐㆟ ㇀ 、。〃 ・ ｡",
    "⼀⼁⼂ ⺀⺁ 豈更車",
    "\U00031350\U00031351 \U0002B739\U0002B738 \U0002EBF0",
    "I'M ok, don't WE'LL they'Ve you'd SHE'S it'ſ",
    "1234567 3.14159 12,345,678 ٣٤٥٦ ①②③",
    "café naïve résumé Ångström ǅemal",
    "e\u0301 a\u0308\u0323 x\u20dd",
    "Привет мир ΚΑΛΗΜΕΡΑ καλημέρα",
    "مرحبا بالعالم שלום עולם",
    "👋🌍 emoji✨test 🚀launch",
    "  leading and trailing spaces   ",
    "line one\nline two\r\n\r\nline four\n\n\n",
    "\t\ttabs\tand  spaces \u3000ideographic\u3000space",
    "def foo(bar):\n    return bar + 1  # comment\n",
    "path/to/file.txt https://example.com/a?b=c&d=e",
    "<|im_user|>user<|im_middle|>hi<|im_end|>",
    "a\x1cb\x85c\u00a0d\u200be",
    "ABCdef GHi jKL MnOp",
]


# Random strings over characters from each class the expression tells apart, with a fixed
# seed: the file stays the same from run to run.
ALPHABET = ("aZkQ\u00e9\u00c9\u01c5\u02b0\u0301\u0e01\u05d0\u4e00\u9fa5\u3005\u3007\u2e80"
            "\u3001\u30fb\u3042\u30a2\uac00\U00031350\U0002b739\u00bd\u0663\u2460"
            "19 \t\n\r\u3000\u00a0'sStT/.,!-_#\U0001f600")


def random_texts(count):
    rng = random.Random(20261206)
    for _ in range(count):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 24)))


def inputs(vocab_dir):
    seen = set()
    for path in sorted(glob.glob(os.path.join(vocab_dir, "*.inp"))):
        with open(path, encoding="utf-8") as f:
            for text in f.read().split("\n__ggml_vocab_test__\n"):
                if text not in seen:
                    seen.add(text)
                    yield text
    for text in OWN + list(random_texts(300)):
        if text not in seen:
            seen.add(text)
            yield text


def main():
    pattern = regex.compile(PAT_STR, flags=regex.V1)
    for text in inputs(sys.argv[1]):
        pieces = pattern.findall(text)
        assert "".join(pieces) == text, text
        sys.stdout.write(json.dumps({"text": text, "pieces": pieces}, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
