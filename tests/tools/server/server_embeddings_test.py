#!/usr/bin/env python3
"""POST /v1/embeddings: every input's vector equals pshard-run --embedding's for the same
text (bit for bit: the batch gives each sequence its rows alone), as floats and as base64,
cut by `dimensions`, from strings and from token ids, many inputs at once beside a running
completion; the model's pooling_type is used, --pooling overrides it; every bad request
is a 400 (or 404) naming the field. A BERT encoder serves its texts one pass each.

usage: server_embeddings_test.py BUILD_DIR SHARED_DIR   (exit 77: the shared model missing)
"""
import base64
import json
import math
import os
import struct
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_util import Checks, Server, f32, run, run_embedding, script_args, tool  # noqa: E402

build, shared, stories = script_args()
c = Checks()
TEXTS = ["Once upon a time", "The little dog ran to the park.", "Tom", "Lily and Ben"]


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def main(tmp):
    # An embedding model (pooling_type mean) with the stories vocabulary, so text reads alike.
    embed_model = os.path.join(tmp, "embed-mean.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", embed_model, "--arch", "qwen3", "--n-embd", "64",
            "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96",
            "--pooling-type", "1", "--tokenizer-from", stories)
    c.check("mkmodel", p.returncode == 0, p.stderr)
    with Server(build, embed_model, "-np", "2", "-c", "256") as s:
        status, body = s.json("POST", "/v1/embeddings", {"input": TEXTS, "model": "embed-mean"})
        c.check("list answered", status == 200, body)
        data = body.get("data", [])
        c.check("one vector per input, in order",
                [d.get("index") for d in data] == list(range(len(TEXTS))) and
                all(d.get("object") == "embedding" for d in data), body)
        total = 0
        for text, d in zip(TEXTS, data):
            want = run_embedding(build, embed_model, text)
            c.check(f"'{text}' == pshard-run --embedding (the model's mean pooling)",
                    f32(d["embedding"]) == f32(want["embedding"]) and want["pooling"] == "mean",
                    f"{d['embedding'][:3]} vs {want['embedding'][:3]}")
            c.check(f"'{text}' unit length", abs(norm(d["embedding"]) - 1) < 1e-5)
            total += want["n_tokens"]
        c.check("usage counts the prompt tokens", body.get("usage") ==
                {"prompt_tokens": total, "total_tokens": total}, body.get("usage"))
        c.check("the model's id", body.get("model") == "embed-mean" and body.get("object") == "list")

        # base64: the same float32 values, little-endian.
        status, b64 = s.json("POST", "/v1/embeddings",
                             {"input": TEXTS[0], "encoding_format": "base64"})
        raw = base64.b64decode(b64["data"][0]["embedding"]) if status == 200 else b""
        floats = list(struct.unpack(f"<{len(raw) // 4}f", raw))
        c.check("base64 decodes to the float answer", floats == data[0]["embedding"],
                f"{status} {floats[:3]}")
        # dimensions: the first N values, normalized again.
        status, cut = s.json("POST", "/v1/embeddings", {"input": TEXTS[1], "dimensions": 8})
        v = cut["data"][0]["embedding"] if status == 200 else []
        want = run_embedding(build, embed_model, TEXTS[1], "--dimensions", "8")["embedding"]
        c.check("dimensions 8 == pshard-run --dimensions 8", f32(v) == f32(want) and len(v) == 8,
                f"{status} {v}")
        # Token ids: the same as the text they spell.
        status, tok = s.json("POST", "/tokenize", {"content": TEXTS[2], "add_special": True})
        ids = tok.get("tokens", [])
        status, by_ids = s.json("POST", "/v1/embeddings", {"input": [ids, ids]})
        c.check("token ids == their text", status == 200 and
                by_ids["data"][0]["embedding"] == data[2]["embedding"] and
                by_ids["data"][1]["embedding"] == data[2]["embedding"], by_ids)
        status, one = s.json("POST", "/v1/embeddings", {"input": ids})
        c.check("one list of ids is one input", status == 200 and len(one["data"]) == 1 and
                one["data"][0]["embedding"] == data[2]["embedding"], one)

        # Many inputs at once, beside a completion, with two sequences: all answered alike.
        many = [TEXTS[i % len(TEXTS)] for i in range(24)]
        results = {}

        def complete():
            results["completion"] = s.json("POST", "/v1/completions",
                                           {"prompt": "Once upon a time", "max_tokens": 40})

        t = threading.Thread(target=complete)
        t.start()
        status, lots = s.json("POST", "/v1/embeddings", {"input": many})
        t.join()
        c.check("24 inputs answered", status == 200 and len(lots["data"]) == 24, status)
        c.check("each as alone", status == 200 and all(
            lots["data"][i]["embedding"] == data[i % len(TEXTS)]["embedding"] for i in range(24)))
        c.check("the completion beside them finished", results["completion"][0] == 200,
                results["completion"])

        # Bad requests: 400 naming the field (404 for another model).
        for name, req, want_status, param in [
            ("no input", {}, 400, "input"),
            ("empty string", {"input": ""}, 400, "input"),
            ("empty list", {"input": []}, 400, "input"),
            ("a number", {"input": 5}, 400, "input"),
            ("mixed list", {"input": ["a", 3]}, 400, "input"),
            ("token out of range", {"input": [1, 99999]}, 400, "input"),
            ("too long", {"input": "word " * 400}, 400, "input"),
            ("dimensions 0", {"input": "a", "dimensions": 0}, 400, "dimensions"),
            ("dimensions past n_embd", {"input": "a", "dimensions": 65}, 400, "dimensions"),
            ("encoding hex", {"input": "a", "encoding_format": "hex"}, 400, "encoding_format"),
            ("another model", {"input": "a", "model": "gpt-4"}, 404, "model"),
        ]:
            status, err = s.json("POST", "/v1/embeddings", req)
            e = err.get("error", {})
            c.check(f"{name}: {want_status}", status == want_status and e.get("param") == param,
                    f"{status} {err}")
        status, err = s.json("POST", "/v1/embeddings", "{not json")
        c.check("malformed JSON: 400", status == 400, err)

        status, err = s.json("POST", "/v1/rerank", {"query": "a", "documents": ["b"]})
        c.check("an embedding model does not rerank: 400 not_a_reranker", status == 400 and
                err.get("error", {}).get("code") == "not_a_reranker", err)

    rerank(tmp)
    encoder_rerank(tmp)

    # A chat model names no pooling: requests say how to choose one; --pooling does.
    with Server(build, stories, "-np", "2") as s:
        status, err = s.json("POST", "/v1/embeddings", {"input": "Tom"})
        c.check("no pooling: 400 no_pooling naming --pooling", status == 400 and
                err.get("error", {}).get("code") == "no_pooling" and
                "--pooling" in err["error"]["message"], err)
    with Server(build, stories, "-np", "2", "--pooling", "last") as s:
        status, body = s.json("POST", "/v1/embeddings", {"input": "Tom"})
        want = run_embedding(build, stories, "Tom", "--pooling", "last")["embedding"]
        c.check("--pooling last == pshard-run --pooling last",
                status == 200 and f32(body["data"][0]["embedding"]) == f32(want), body)
    p = run(tool(build, "pshard-server"), "-m", stories, "--pooling", "none", "--port", "0")
    c.check("--pooling none refused at start", p.returncode != 0 and "none" in p.stderr, p.stderr)


def rerank(tmp):
    """POST /v1/rerank on a reranker as llama.cpp converts Qwen3-Reranker (pshard-mkmodel
    --rerank): each document's score is pshard-run --embedding's for "QUERY<TAB>DOCUMENT"
    (the same prompt, the head's "yes"), the results sorted by it, cut by top_n, with or
    without their texts; a document scores the same among others as alone."""
    model = os.path.join(tmp, "rerank.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--arch", "qwen3", "--n-embd", "64",
            "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96", "--rerank",
            "--tokenizer-from", stories)
    c.check("mkmodel --rerank", p.returncode == 0, p.stderr)
    query = "Who went to the park?"
    with Server(build, model, "-np", "2", "-c", "1024") as s:
        status, body = s.json("POST", "/v1/rerank", {"query": query, "documents": TEXTS,
                                                     "model": "rerank"})
        results = body.get("results", []) if status == 200 else []
        scores = [r["relevance_score"] for r in results]
        c.check("rerank: every document, sorted by score", status == 200 and
                sorted(r["index"] for r in results) == list(range(len(TEXTS))) and
                scores == sorted(scores, reverse=True) and all(0 < x < 1 for x in scores), body)
        total = 0
        for r in results:
            want = run_embedding(build, model, query + "\t" + TEXTS[r["index"]])
            total += want["n_tokens"]
            c.check(f"rerank: '{TEXTS[r['index']]}' == pshard-run's \"yes\"",
                    f32([r["relevance_score"]]) == want["embedding"][:1] and
                    want["pooling"] == "rank" and r["document"]["text"] == TEXTS[r["index"]],
                    (r, want["embedding"]))
        c.check("rerank: usage counts every prompt", body.get("usage") ==
                {"prompt_tokens": total, "total_tokens": total}, body.get("usage"))
        status, top = s.json("POST", "/rerank", {"query": query, "documents": TEXTS, "top_n": 2,
                                                 "return_documents": False})
        c.check("rerank: top_n 2, no texts", status == 200 and
                [r["index"] for r in top["results"]] == [r["index"] for r in results[:2]] and
                all("document" not in r for r in top["results"]), top)
        status, alone = s.json("POST", "/v1/reranking",
                               {"query": query, "documents": [{"text": TEXTS[1]}]})
        c.check("rerank: alone as among others", status == 200 and
                alone["results"][0]["relevance_score"] ==
                next(r["relevance_score"] for r in results if r["index"] == 1), alone)
        status, err = s.json("POST", "/v1/embeddings", {"input": "Tom"})
        c.check("a reranker's embeddings: 400 naming /v1/rerank", status == 400 and
                err["error"]["code"] == "reranker_model" and
                "/v1/rerank" in err["error"]["message"], err)
        for name, req, param in [
            ("no query", {"documents": ["a"]}, "query"),
            ("query a number", {"query": 3, "documents": ["a"]}, "query"),
            ("no documents", {"query": "a"}, "documents"),
            ("documents empty", {"query": "a", "documents": []}, "documents"),
            ("documents a string", {"query": "a", "documents": "b"}, "documents"),
            ("a document a number", {"query": "a", "documents": ["b", 5]}, "documents[1]"),
            ("top_n 0", {"query": "a", "documents": ["b"], "top_n": 0}, "top_n"),
            ("too long", {"query": "a", "documents": ["word " * 1200]}, "documents"),
        ]:
            status, err = s.json("POST", "/v1/rerank", req)
            c.check(f"rerank {name}: 400", status == 400 and
                    err.get("error", {}).get("param") == param, f"{status} {err}")


def encoder_rerank(tmp):
    """POST /v1/rerank on an encoder reranker as llama.cpp converts bge-reranker (pshard-
    mkmodel --arch bert --rerank --token-types 1: a tanh pooler and one raw score, no
    prompt): each query and document is framed "[CLS] query [SEP] document [SEP]", each
    text tokenized alone (its "[SEP]" text stays text), and scored as pshard-run scores
    "QUERY<TAB>DOCUMENT"; a BERT cross-encoder of two token types likewise."""
    vocab = os.path.join(shared, "vocab", "ggml-vocab-bert-bge.gguf")
    model = os.path.join(tmp, "bert-rerank.gguf")
    shape = ["--arch", "bert", "--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-ff",
             "128", "--ctx", "128", "--type", "f32", "--rerank", "--tokenizer-from", vocab]
    p = run(tool(build, "pshard-mkmodel"), "-o", model, *shape, "--token-types", "1")
    c.check("mkmodel --arch bert --rerank", p.returncode == 0, p.stderr)
    query = "Who went to the [SEP] park?"
    docs = TEXTS + ["[CLS] Tom and Lily went to the park"]

    def ids(text):
        out = run(tool(build, "pshard-tokenize"), "-m", model, "-p", text, "--ids", "--no-bos",
                  "--no-parse-special")
        return json.loads(out.stdout)
    with Server(build, model, "-np", "3") as s:
        status, body = s.json("POST", "/v1/rerank", {"query": query, "documents": docs})
        results = body.get("results", []) if status == 200 else []
        scores = [r["relevance_score"] for r in results]
        c.check("encoder rerank: every document, sorted by its raw score", status == 200 and
                sorted(r["index"] for r in results) == list(range(len(docs))) and
                scores == sorted(scores, reverse=True) and len(set(scores)) == len(docs), body)
        total = 0
        for r in results:
            doc = docs[r["index"]]
            want = run_embedding(build, model, query + "\t" + doc)
            framed = 3 + len(ids(query)) + len(ids(doc))
            total += want["n_tokens"]
            c.check(f"encoder rerank: '{doc}' == pshard-run's, [CLS] q [SEP] d [SEP]",
                    f32([r["relevance_score"]]) == want["embedding"] and
                    want["n_tokens"] == framed and want["pooling"] == "rank",
                    (r, want, framed))
        c.check("encoder rerank: usage counts every pair", body.get("usage") ==
                {"prompt_tokens": total, "total_tokens": total}, body.get("usage"))
    # A BERT cross-encoder of two token types (ms-marco-MiniLM's layout) reads the document
    # as type 1: its server scores are pshard-run's too.
    two_types = os.path.join(tmp, "bert-rerank-2.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", two_types, *shape)
    with Server(build, two_types, "-np", "2") as s:
        status, body = s.json("POST", "/v1/rerank", {"query": query, "documents": docs[:2]})
        ok = status == 200 and all(
            f32([r["relevance_score"]]) ==
            run_embedding(build, two_types, query + "\t" + docs[r["index"]])["embedding"]
            for r in body["results"])
        c.check("a two-type BERT cross-encoder: the server's scores are pshard-run's", ok, body)


def bert(tmp):
    """A BERT encoder with bge's WordPiece vocabulary: each text is one pass ([CLS] ... [SEP],
    attention both ways), its vector pshard-run's among others as alone; generating and a
    text longer than the context are refused by name."""
    vocab = os.path.join(shared, "vocab", "ggml-vocab-bert-bge.gguf")
    if not os.path.exists(vocab):
        c.check("bert: the shared bge vocabulary", False, vocab + " is missing")
        return
    model = os.path.join(tmp, "bert.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--arch", "bert", "--n-embd", "64",
            "--n-layer", "2", "--n-head", "4", "--n-ff", "128", "--ctx", "128", "--type", "f32",
            "--tokenizer-from", vocab)
    c.check("mkmodel --arch bert", p.returncode == 0, p.stderr)
    ids = run(tool(build, "pshard-tokenize"), "-m", model, "-p", TEXTS[0], "--ids")
    c.check("bert: [CLS] first, [SEP] last", ids.stdout.startswith("[101,") and
            ids.stdout.strip().endswith(", 102]"), ids.stdout)
    with Server(build, model, "-np", "4", "-b", "32") as s:
        status, body = s.json("POST", "/v1/embeddings", {"input": TEXTS * 2})
        c.check("bert: 8 inputs answered", status == 200 and len(body.get("data", [])) == 8, body)
        for i, d in enumerate(body.get("data", [])):
            want = run_embedding(build, model, TEXTS[i % len(TEXTS)])
            c.check(f"bert: '{TEXTS[i % len(TEXTS)]}' == pshard-run --embedding",
                    f32(d["embedding"]) == want["embedding"] and want["pooling"] == "mean",
                    f"{d['embedding'][:3]} vs {want['embedding'][:3]}")
        status, err = s.json("POST", "/v1/completions", {"prompt": "Tom", "max_tokens": 2})
        c.check("bert: completions refused, naming the embeddings endpoint", status == 400 and
                "embeddings endpoint" in err.get("error", {}).get("message", ""), err)
        text = "word " * 40  # 42 tokens: more than -b 32, but a pass holds the context
        status, body = s.json("POST", "/v1/embeddings", {"input": text})
        c.check("bert: a text longer than -b is still one pass", status == 200 and
                f32(body["data"][0]["embedding"]) == run_embedding(build, model, text)["embedding"],
                body)
        status, err = s.json("POST", "/v1/embeddings", {"input": "word " * 200})
        c.check("bert: a text longer than the position table: 400", status == 400 and
                err.get("error", {}).get("code") == "context_length_exceeded", err)


with tempfile.TemporaryDirectory() as d:
    main(d)
    bert(d)
sys.exit(c.finish())
