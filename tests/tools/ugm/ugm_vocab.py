"""SentencePiece Unigram vocabularies for testing pshard's "t5" tokenizer against the
SentencePiece library itself (Debian's python3-sentencepiece, with python3-protobuf to
read a model's normalizer): trains small models on a generated multilingual text and
writes each as a vocabulary-only GGUF the way llama.cpp's converter writes them.

  xlmr   NMT-NFKC normalization, a dummy prefix, extra whitespace removed, and
         XLM-RoBERTa's ids (<s> <pad> </s> <unk>, then SentencePiece's pieces one up,
         <mask> last), adding <s> and </s>: bge-m3's and multilingual-e5's layout.
  bytes  no normalization rules, byte fallback, no dummy prefix, whitespace kept, the
         library's own ids and T5's defaults (no add_* keys).

usage (a module): model, gguf_path, spm_ids = make_vocab(kind, out_dir)
  spm_ids(text) -> the ids pshard should give for `text` without special tokens.
"""
import os
import random
import struct

# Word pools per script, so the trained pieces cover several of them.
WORDS = {
    "en": "the quick brown fox jumps over lazy dog once upon a time there was little girl "
          "who lived in village near forest and she liked to walk with her grandmother every "
          "morning model weights stream while processor computes layer plan compiled ahead".split(),
    "de": "der schnelle braune Fuchs springt über den faulen Hund es war einmal ein kleines "
          "Mädchen das im Wald wohnte und gern mit Großmutter spazieren ging Straße".split(),
    "fr": "le renard brun rapide saute par-dessus chien paresseux il était une fois petite "
          "fille qui habitait près de forêt café naïve résumé élève garçon".split(),
    "ru": "быстрая коричневая лиса прыгает через ленивую собаку жила-была маленькая девочка "
          "которая жила в деревне около леса".split(),
    "el": "η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο μια φορά κι έναν καιρό".split(),
    "zh": list("敏捷的棕色狐狸跳过了懒狗从前有一个小女孩住在森林附近的村庄里"),
    "ja": "素早い 茶色の 狐が のろまな 犬を 飛び越える 昔々 小さな 女の子が いました".split(),
    "ko": "빠른 갈색 여우가 게으른 개를 뛰어넘는다 옛날 옛적에 작은 소녀가 있었다".split(),
    "ar": "الثعلب البني السريع يقفز فوق الكلب الكسول".split(),
    "hi": "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है".split(),
    "nfkc": "Ｆｕｌｌｗｉｄｔｈ ① ② ﬁne ﬂow ㍿ ½ ™ … ｶﾀｶﾅ Ⅻ ㎏".split(),
}


def corpus_lines(n=4000, seed=1):
    rng = random.Random(seed)
    langs = sorted(WORDS)
    for _ in range(n):
        words = WORDS[rng.choice(langs)]
        sep = "" if words is WORDS["zh"] else " "
        yield sep.join(rng.choice(words) for _ in range(rng.randint(3, 14)))


# GGUF (version 3) value types.
U8, I32, F32, BOOL, STRING, ARRAY, U32 = 0, 5, 6, 7, 8, 9, 4


def _string(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def _value(kind, v):
    if kind == STRING:
        return _string(v)
    if kind == BOOL:
        return struct.pack("<?", v)
    if kind == U32:
        return struct.pack("<I", v)
    raise ValueError(kind)


def _array(kind, items):
    out = struct.pack("<IQ", kind, len(items))
    if kind == STRING:
        return out + b"".join(_string(s) for s in items)
    if kind == U8:
        return out + bytes(items)
    fmt = {F32: "<f", I32: "<i"}[kind]
    return out + b"".join(struct.pack(fmt, x) for x in items)


def write_vocab_gguf(path, scalars, arrays):
    """scalars: [(key, type, value)]; arrays: [(key, element type, items)]. No tensors."""
    body = b""
    for key, kind, v in scalars:
        body += _string(key) + struct.pack("<I", kind) + _value(kind, v)
    for key, kind, items in arrays:
        body += _string(key) + struct.pack("<I", ARRAY) + _array(kind, items)
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, len(scalars) + len(arrays))
    data = head + body
    data += b"\0" * (-len(data) % 32)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _train(kind, out_dir):
    import sentencepiece as spm
    text = os.path.join(out_dir, "corpus.txt")
    if not os.path.exists(text):
        with open(text, "w", encoding="utf-8") as f:
            f.write("\n".join(corpus_lines()) + "\n")
    prefix = os.path.join(out_dir, kind)
    options = dict(input=text, model_prefix=prefix, vocab_size=1200, model_type="unigram",
                   character_coverage=0.9995, hard_vocab_limit=False, minloglevel=2,
                   num_threads=1, seed_sentencepiece_size=200000)
    if kind == "xlmr":
        options.update(normalization_rule_name="nmt_nfkc")
    else:
        options.update(normalization_rule_name="identity", byte_fallback=True,
                       add_dummy_prefix=False, remove_extra_whitespaces=False)
    spm.SentencePieceTrainer.train(**options)
    return spm.SentencePieceProcessor(model_file=prefix + ".model"), prefix + ".model"


def make_vocab(kind, out_dir):
    os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")
    from sentencepiece import sentencepiece_model_pb2 as pb
    sp, model_path = _train(kind, out_dir)
    proto = pb.ModelProto()
    with open(model_path, "rb") as f:
        proto.ParseFromString(f.read())
    norm = proto.normalizer_spec
    n = sp.vocab_size()
    tokens, scores, types = [], [], []
    for i in range(n):
        t = 1
        if sp.IsUnknown(i):
            t = 2
        elif sp.IsControl(i):
            t = 3
        elif sp.IsUnused(i):
            t = 5
        elif sp.IsByte(i):
            t = 6
        tokens.append(sp.IdToPiece(i))
        scores.append(sp.GetScore(i))
        types.append(t)
    scalars = [("general.architecture", STRING, "bert"), ("tokenizer.ggml.model", STRING, "t5"),
               ("tokenizer.ggml.pre", STRING, "default"),
               ("tokenizer.ggml.add_space_prefix", BOOL, norm.add_dummy_prefix),
               ("tokenizer.ggml.remove_extra_whitespaces", BOOL, norm.remove_extra_whitespaces)]
    if kind == "xlmr":
        # XLM-RoBERTa's fairseq ids: four specials first, the library's pieces from 3 on
        # one up, and <mask> after them.
        tokens = ["<s>", "<pad>", "</s>", "<unk>"] + tokens[3:] + ["<mask>"]
        scores = [0.0] * 4 + scores[3:] + [0.0]
        types = [3, 3, 3, 2] + types[3:] + [3]
        scalars += [("tokenizer.ggml.bos_token_id", U32, 0), ("tokenizer.ggml.eos_token_id", U32, 2),
                    ("tokenizer.ggml.unknown_token_id", U32, 3),
                    ("tokenizer.ggml.padding_token_id", U32, 1),
                    ("tokenizer.ggml.add_bos_token", BOOL, True),
                    ("tokenizer.ggml.add_eos_token", BOOL, True)]

        def to_ids(ids):
            return [{0: 3, 1: 0, 2: 2}.get(i, i + 1) if i < 3 else i + 1 for i in ids]
    else:
        def to_ids(ids):
            return list(ids)
    arrays = [("tokenizer.ggml.tokens", STRING, tokens), ("tokenizer.ggml.scores", F32, scores),
              ("tokenizer.ggml.token_type", I32, types)]
    if norm.precompiled_charsmap:
        arrays.append(("tokenizer.ggml.precompiled_charsmap", U8, list(norm.precompiled_charsmap)))
    path = os.path.join(out_dir, f"ugm-{kind}.gguf")
    write_vocab_gguf(path, scalars, arrays)

    def spm_ids(text):
        return to_ids(sp.encode(text))
    return sp, path, spm_ids
