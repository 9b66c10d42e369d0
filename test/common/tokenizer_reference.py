"""Tokenizers trained on the KJV bible with Hugging Face `tokenizers`, in the
styles of published models, and a comparison of tfm's tokenizer
(tfm-tokenize --batch) with them on a varied corpus.

Usage (from lit, with the reference venv's python):
  python -m tokenizer_reference STYLE WORKDIR
builds STYLE, saves WORKDIR/STYLE/tokenizer.json, runs tfm-tokenize on the
corpus and prints "STYLE: N texts, M ids, all equal" or the differences (exit
status 1).
  python -m tokenizer_reference gguf-STYLE WORKDIR
the same with STYLE's vocabulary in a GGUF file (compare_gguf).
"""
import json
import os
import random
import subprocess
import sys

from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                        normalizers, pre_tokenizers, processors, trainers)

GPT2_REGEX = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
              r"|\s+(?!\S)|\s+")
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+"
                r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)"
                r"|\s+")
QWEN2_REGEX = LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}")


def training_text():
    """Genesis to Ruth of the KJV (Debian's bible-kjv), plus a few lines of
    other scripts so that the vocabulary has some non-Latin merges."""
    text = subprocess.run(["bible", "Gen1:1-Ruth4:22"], check=True,
                          capture_output=True, text=True).stdout
    extra = ("天地玄黄 宇宙洪荒 日月盈昃 辰宿列张 " * 20 +
             "Ἐν ἀρχῇ ἦν ὁ λόγος " * 20 + "בְּרֵאשִׁית בָּרָא אֱלֹהִים " * 20 +
             "café naïve résumé déjà vu " * 20 + "1234567890 " * 20)
    return [text, extra]


CORPUS = [
    "",
    " ",
    "In the beginning God created the heaven and the earth.",
    "And God said, Let there be light: and there was light.",
    "café naïve résumé déjà-vu Ærøskøbing Zürich",
    "e\u0301 a\u0300 n\u0303 combining: o\u0308\u0304 Z\u0351\u0352",
    "天地玄黄 日本語のテキスト 한국어 텍스트 中文，標點。",
    "שלום עולם مرحبا بالعالم «RTL» \u200f\u200e",
    "emoji 👍🏽 🎉👨\u200d👩\u200d👧 ❤️ 🇫🇷 done",
    "a    b\t\tc\n\n\nd  \n  e   ",
    "line one\r\nline two\r\n\r\n  indented\n\tTabbed\n",
    "   leading spaces", "trailing spaces   ", "\n\nnewlines first",
    "1234567 12 3.14159 2024-11-30 1000000 ١٢٣٤٥ ⅣⅫ x²³ ½",
    "I'm don't WE'LL they've 'S 'ſ 'RE I'D you'll",
    "LORD's LORD LORDS xLORD LORD. the LORD, said",
    "<|endoftext|>Hello<|endoftext|> world <|endoftext|>",
    "<s>Hello</s> world <s> </s>",
    "<|begin_of_text|>Hi<|eot_id|>   <|eot_id|>there",
    "before  <sep>  after<sep>x <sep>",
    "ǅemal ǈ Ǌ ﬁ ﬀ ß ẞ İı",
    "\u0085\u00a0\u3000\u2028\u1680 spaces \u200b\ufeff",
    "!!! ?? ... --- *** ### @@@ ((( ))) ",
    "tab\tafter\ttabs \t \t",
    "mixed123abc456 abc123 123abc",
    "x",
    "▁already▁metaspace ▁",
    "<0x41> <unk> [UNK]",
    "NFC: e\u0301\u0323 q\u0307\u0323 \u1100\u1161\u11a8 A\u030a \u212b "
    "\u1e08 C\u0327\u0301 \u0f73 \u0344 \u0915\u093f \uac00\u11a8 "
    "\u0b47\u0b3e \u00c5\u0300 a\u0308\u0304\u0301",
    "\U00011f04 \U0001e290 \U00031350 unassigned \u0378",
    "Ext-B \U00020000\U00020001 \U0002a6a5 and \U0002f800 \U00020000x",
]


def random_corpus(count=300, seed=11):
    """Random strings over characters of every class the scanners tell
    apart, to catch what the hand-picked corpus misses."""
    pool = (list("aZ'sStTrReEvVmMlLdD019 \t\r\n.,!?-_<>|/") +
            ["é", "ß", "ſ", "Ǆ", "ǅ", "中", "日", "한", "ש", "م", "٣", "²",
             "Ⅳ", "½", "\u0301", "\u0308", "\u00a0", "\u3000", "\u0085",
             "\u2028", "\u200b", "\u200d", "👍", "🏽", "🎉", "❤", "\ufe0f",
             "\U00011f04", "\U0001e290", "\u0378", "\x1c", "\x00", "▁",
             "\u0323", "\u0327", "\u1100", "\u1161", "\u11a8", "\uac00",
             "\u212b", "\u0b47", "\u0b3e", "\u0344", "Å",
             "<s>", "</s>", "<|endoftext|>", "<|eot_id|>", "<sep>", "LORD",
             "the", " the", "  ", "'s", "'ll", "123", "4567"])
    rng = random.Random(seed)
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 24)))
            for _ in range(count)]


# CJK Extension B and beyond, in the "-ascii" styles' vocabulary:
# escaped as surrogate pairs whose high half has bit 16, which LLVM's JSON
# parser joined wrongly (tfm/Runtime/Json.h).
EXTENSION_B = "\U00020000\U00020001 \U0002a6a5 \U0002f800 " * 20


def train(tok, trainer, style=""):
    text = training_text()
    if style.endswith("-ascii"):
        text.append(EXTENSION_B)
    tok.train_from_iterator(text, trainer=trainer)


def byte_level(style):
    tok = Tokenizer(models.BPE())
    if style == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        regex = LLAMA3_REGEX if style == "llama3" else QWEN2_REGEX
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(regex), behavior="isolated",
                                 invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    specials = {"gpt2": ["<|endoftext|>"],
                "llama3": ["<|begin_of_text|>", "<|end_of_text|>",
                           "<|eot_id|>"],
                "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]}[style]
    train(tok, trainers.BpeTrainer(
        vocab_size=1200, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if style == "qwen2":
        # As Qwen2's tokenizer.json.
        tok.normalizer = normalizers.NFC()
    if style == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="<|begin_of_text|> $A",
                special_tokens=[("<|begin_of_text|>", bos)])])
        tok.add_special_tokens([AddedToken("<|eot_id|>", lstrip=True,
                                           rstrip=True, normalized=False)])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    # Added tokens: a single-word one, and one the text may hold.
    tok.add_tokens([AddedToken("LORD", single_word=True),
                    AddedToken("<sep>", lstrip=True, rstrip=False)])
    return tok


def converted_gpt2(style):
    """GPT-2's published layout: the trained vocabulary and merges written
    as GPT-2's vocab.json and merges.txt, and converted to a tokenizer.json
    by `transformers` (GPT2TokenizerFast from the slow GPT2Tokenizer), as
    the files on the Hub were made."""
    import tempfile
    from transformers import GPT2Tokenizer, GPT2TokenizerFast
    spec = json.loads(byte_level("gpt2").to_str())
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "vocab.json"), "w") as f:
            json.dump(spec["model"]["vocab"], f, ensure_ascii=False)
        with open(os.path.join(d, "merges.txt"), "w") as f:
            f.write("#version: 0.2\n")
            f.writelines(" ".join(m) + "\n" for m in spec["model"]["merges"])
        slow = GPT2Tokenizer(os.path.join(d, "vocab.json"),
                             os.path.join(d, "merges.txt"),
                             unk_token="<|endoftext|>",
                             bos_token="<|endoftext|>",
                             eos_token="<|endoftext|>")
        fast = GPT2TokenizerFast.from_pretrained(d, from_slow=True)
        del slow
        return fast.backend_tokenizer


def sentencepiece(style):
    """Llama-2 style: Prepend + Replace normalizer, no pre-tokenizer, byte
    fallback, the bytes <0x00>..<0xFF> after the three specials."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁",
                                                 prepend_scheme="first")
    # The "-ascii" style's Extension B characters are named in the initial
    # alphabet: limit_alphabet keeps the most frequent characters and breaks
    # ties in no fixed order, so trained text alone kept them only sometimes.
    initial = (sorted(set(EXTENSION_B) - {" "})
               if style.endswith("-ascii") else [])
    train(tok, trainers.BpeTrainer(
        vocab_size=1200, special_tokens=["<unk>", "<s>", "</s>"],
        limit_alphabet=120, initial_alphabet=initial, show_progress=False),
        style)
    spec = json.loads(tok.to_str())
    model = spec["model"]
    specials = ["<unk>", "<s>", "</s>"]
    byte_fallback = style != "sp-unk"
    ordered = specials + ([f"<0x{b:02X}>" for b in range(256)]
                          if byte_fallback else [])
    ordered += [t for t, _ in sorted(model["vocab"].items(),
                                     key=lambda kv: kv[1])
                if t not in specials]
    model["vocab"] = {t: i for i, t in enumerate(ordered)}
    model["byte_fallback"] = byte_fallback
    for added in spec["added_tokens"]:
        added["id"] = model["vocab"][added["content"]]
    replace_decoders = [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}]
    if style in ("llama2", "llama2-ascii", "sp-unk"):
        spec["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
        spec["pre_tokenizer"] = None
        spec["decoder"] = {"type": "Sequence", "decoders": replace_decoders + [
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    elif style == "gemma":
        spec["normalizer"] = {"type": "Replace", "pattern": {"String": " "},
                              "content": "▁"}
        spec["pre_tokenizer"] = None
        spec["decoder"] = {"type": "Sequence", "decoders": replace_decoders}
    elif style == "metaspace":
        # Mistral as converted with legacy=False: Metaspace "first".
        spec["normalizer"] = None
        spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁",
                                 "prepend_scheme": "first", "split": False}
        spec["decoder"] = {"type": "Metaspace", "replacement": "▁",
                           "prepend_scheme": "first", "split": False}
    elif style == "metaspace-legacy":
        spec["normalizer"] = None  # the Metaspace form: rewritten in build()
    else:
        sys.exit(f"unknown style {style}")
    tok = Tokenizer.from_str(json.dumps(spec))
    bos = tok.token_to_id("<s>")
    eos = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A" if style != "gemma" else "<s> $A </s>",
        special_tokens=[("<s>", bos), ("</s>", eos)])
    tok.add_tokens([AddedToken("LORD", single_word=True, normalized=True),
                    AddedToken("<sep>", lstrip=True, rstrip=True,
                               normalized=False),
                    AddedToken("thee", normalized=True)])
    return tok


STYLES = {
    "gpt2": byte_level, "llama3": byte_level, "qwen2": byte_level,
    "gpt2-converted": converted_gpt2,
    "llama2": sentencepiece, "sp-unk": sentencepiece, "gemma": sentencepiece,
    "metaspace": sentencepiece, "metaspace-legacy": sentencepiece,
    "llama2-ascii": sentencepiece,
}


def build(style, directory):
    tok = STYLES[style](style)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "tokenizer.json")
    tok.save(path)
    # Forms `tokenizers` reads but no longer writes, and fields its Python
    # API does not set, edited into the saved file.
    with open(path) as f:
        spec = json.load(f)
    if style == "llama3":
        # Llama-3 sets ignore_merges: whole words in the vocabulary are
        # taken as they are.
        spec["model"]["ignore_merges"] = True
    if style in ("llama2", "llama2-ascii", "sp-unk"):
        # Merges as "a b" strings, as in Llama-2's file.
        spec["model"]["merges"] = [" ".join(m) for m in spec["model"]["merges"]]
    if style == "metaspace-legacy":
        # Metaspace with add_prefix_space, as older files hold it.
        legacy = {"type": "Metaspace", "replacement": "▁",
                  "add_prefix_space": True, "str_rep": "▁"}
        spec["pre_tokenizer"] = legacy
        spec["decoder"] = legacy
    with open(path, "w") as f:
        # "-ascii": as Python's json.dump writes by default, every character
        # beyond ASCII escaped (above U+FFFF as a surrogate pair).
        json.dump(spec, f, ensure_ascii=style.endswith("-ascii"))
    return path


def compare(style, workdir, path=None, tool_path=None):
    """tfm-tokenize on `tool_path` (default: the tokenizer.json) against
    `tokenizers` on `path` (default: STYLE built into WORKDIR)."""
    path = path or build(style, os.path.join(workdir, style))
    tool_path = tool_path or path
    tok = Tokenizer.from_file(path)
    texts = CORPUS + random_corpus()
    texts_path = os.path.join(workdir, style + "-texts.json")
    with open(texts_path, "w") as f:
        json.dump(texts, f)
    tool = os.path.join(os.environ["TFM_TOOLS_DIR"], "tfm-tokenize")
    out = subprocess.run([tool, "--tokenizer", tool_path, "--batch",
                          texts_path],
                         check=True, capture_output=True, text=True).stdout
    results = json.loads(out)
    failures, ids_seen = [], 0
    for text, got in zip(texts, results):
        ids = tok.encode(text).ids
        want = {
            "ids": ids,
            "ids_plain": tok.encode(text, add_special_tokens=False).ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip": tok.decode(ids, skip_special_tokens=True),
        }
        want["streamed"] = want["decoded_skip"]
        ids_seen += len(ids)
        for key, value in want.items():
            if got[key] != value:
                failures.append(f"{key} of {text!r}:\n  tfm: {got[key]!r}\n"
                                f"  ref: {value!r}")
    if len(results) != len(texts):
        failures.append(f"{len(results)} results for {len(texts)} texts")
    size = int(subprocess.run([tool, "--tokenizer", tool_path, "--vocab-size"],
                              check=True, capture_output=True,
                              text=True).stdout)
    if size != tok.get_vocab_size(with_added_tokens=True):
        failures.append(f"vocabulary size: tfm {size}, "
                        f"tokenizers {tok.get_vocab_size()}")
    if failures:
        print(f"{style}: {len(failures)} differences")
        print("\n".join(failures[:20]))
        return 1
    print(f"{style}: {len(texts)} texts, {ids_seen} ids, all equal")
    return 0


def gguf_scores(vocab, types):
    """SentencePiece-style scores: a normal token's is minus its id (the
    trainer's merge order), the others' 0."""
    return [(-float(i) if t == 1 else 0.0) for i, t in enumerate(types)]


def rebuild_merges(tokens, scores, types):
    """The merges `tokenizers`' SentencePieceExtractor builds from a
    vocabulary with scores: every split of a normal token into two normal
    tokens, ranked by the merged token's score (higher first), its id, the
    left length."""
    ids = {}
    for i, t in enumerate(tokens):
        if types[i] == 1:
            ids.setdefault(t, i)
    found = []
    for i, t in enumerate(tokens):
        if types[i] in (2, 3, 4, 5, 6):
            continue
        for cut in range(1, len(t)):
            left, right = t[:cut], t[cut:]
            if left in ids and right in ids:
                found.append((-scores[i], i, len(left.encode()), left, right))
    found.sort()
    return [f"{left} {right}" for _, _, _, left, right in found]


def compare_gguf(style, workdir):
    """The STYLE tokenizer's vocabulary written to a GGUF file as llama.cpp's
    converter writes it (tokens in id order, token types, merges or
    SentencePiece scores, BOS/EOS flags, the pre-tokenizer's name); tfm reads
    the file's vocabulary. The reference: the same tokenizer.json with what
    a GGUF file cannot hold made plain (added tokens without lstrip, rstrip,
    single_word or normalization), and for SentencePiece the merges rebuilt
    from the scores."""
    import gguf
    directory = os.path.join(workdir, "gguf-" + style)
    spec = json.load(open(build(style, directory)))
    model = spec["model"]
    total = max([*model["vocab"].values()] +
                [a["id"] for a in spec["added_tokens"]]) + 1
    tokens = [None] * total
    for t, i in model["vocab"].items():
        tokens[i] = t
    types = [1] * total
    for a in spec["added_tokens"]:
        tokens[a["id"]] = a["content"]
        types[a["id"]] = 3 if a["special"] else 4
        a.update(single_word=False, lstrip=False, rstrip=False,
                 normalized=False)
    sentencepiece = model.get("byte_fallback", False)
    if sentencepiece:
        for i, t in enumerate(tokens):
            if t.startswith("<0x") and len(t) == 6:
                types[i] = 6
        types[model["vocab"]["<unk>"]] = 2
    w = gguf.GGUFWriter(os.path.join(directory, "vocab.gguf"), "llama")
    if sentencepiece:
        scores = gguf_scores(model["vocab"], types)
        model["merges"] = rebuild_merges(tokens, scores, types)
        w.add_tokenizer_model("llama")
        w.add_token_scores(scores)
        w.add_unk_token_id(model["vocab"]["<unk>"])
        w.add_bos_token_id(model["vocab"]["<s>"])
        w.add_add_bos_token(True)
    else:
        merges = [m if isinstance(m, str) else " ".join(m)
                  for m in model["merges"]]
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre({"gpt2": "gpt-2", "llama3": "llama-bpe",
                             "qwen2": "qwen2"}[style])
        w.add_token_merges(merges)
        if style == "llama3":
            w.add_bos_token_id(model["vocab"]["<|begin_of_text|>"])
        w.add_add_bos_token(style == "llama3")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    reference = os.path.join(directory, "reference.json")
    with open(reference, "w") as f:
        json.dump(spec, f)
    return reference, os.path.join(directory, "vocab.gguf")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1].startswith("gguf-"):
        reference, gguf_path = compare_gguf(sys.argv[1][5:], sys.argv[2])
        sys.exit(compare(sys.argv[1], sys.argv[2], reference, gguf_path))
    if len(sys.argv) == 4 and sys.argv[1] == "--build":
        build(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(compare(sys.argv[1], sys.argv[2]))
