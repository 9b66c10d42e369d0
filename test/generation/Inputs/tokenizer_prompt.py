"""A tiny random Llama saved by Hugging Face `transformers` with a
tokenizer.json trained by `tokenizers` (test/common/tokenizer_reference.py),
and the reference for transformer-runner --prompt on it.

usage:
  tokenizer_prompt.py make STYLE DIR
      DIR/config.json, DIR/model.safetensors (f32, save_pretrained) and
      DIR/tokenizer.json in STYLE (llama2, llama3, ...)
  tokenizer_prompt.py engine DIR PROMPT N STDOUT TOKENS
      the same through the Python API (tfm.load(DIR).generate(PROMPT)):
      writes the text as a "text: " line to STDOUT, the ids to TOKENS, and
      checks encode(PROMPT) against `tokenizers` and decode against
      generate's text
  tokenizer_prompt.py stop DIR PROMPT N OUTDIR
      picks a stop string from the reference generation's text and runs
      transformer-runner --stop with it: the generation must end with the
      token whose text completes the string
  tokenizer_prompt.py check DIR PROMPT N STDOUT TOKENS
      greedy generation of up to N tokens by `transformers` from the ids
      `tokenizers` gives PROMPT, stopping after EOS; compares them with the
      runner's --output-tokens TOKENS (.npy) and its printed text (the
      "text: " line of STDOUT) with decode(ids, skip_special_tokens=True)
"""
import os
import subprocess
import sys

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import LlamaConfig, LlamaForCausalLM

import tokenizer_reference


def make(style, directory):
    path = tokenizer_reference.build(style, directory)
    tok = Tokenizer.from_file(path)
    bos = tok.token_to_id("<s>") if tok.token_to_id("<s>") is not None \
        else tok.token_to_id("<|begin_of_text|>")
    eos = tok.token_to_id("</s>") if tok.token_to_id("</s>") is not None \
        else tok.token_to_id("<|eot_id|>")
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=96,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=128, rms_norm_eps=1e-5, bos_token_id=bos,
        eos_token_id=eos, tie_word_embeddings=False,
        # Wider than the default 0.02, so that greedy choices are not
        # near-ties that rounding could flip.
        initializer_range=0.2)
    torch.manual_seed(5)
    model = LlamaForCausalLM(config).float().eval()
    model.save_pretrained(directory, safe_serialization=True)


def greedy(directory, tok, prompt, count):
    """`tokenizers`' prompt ids and `transformers`' greedy continuation."""
    model = LlamaForCausalLM.from_pretrained(
        directory, torch_dtype=torch.float32).eval()
    prompt_ids = tok.encode(prompt).ids
    ids = list(prompt_ids)
    eos = model.config.eos_token_id
    with torch.no_grad():
        for _ in range(count):
            logits = model(torch.tensor([ids])).logits[0, -1]
            ids.append(int(torch.argmax(logits)))
            if ids[-1] == eos:
                break
    return prompt_ids, ids


def stop(directory, prompt, count, outdir):
    tok = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    prompt_ids, ids = greedy(directory, tok, prompt, count)
    generated = ids[len(prompt_ids):]
    # The text of the first k generated tokens, decoded alone as the engine
    # does; the stop string is the last 3 characters the middle token
    # completes (whole characters, no U+FFFD).
    texts = [tok.decode(generated[:k], skip_special_tokens=True)
             for k in range(len(generated) + 1)]
    for k in range(len(generated) // 2, len(generated)):
        string = texts[k][-3:]
        if len(texts[k]) > len(texts[k - 1]) and "\ufffd" not in string and \
                string.strip():
            break
    else:
        sys.exit("no stop string found in " + repr(texts[-1]))
    end = next(k for k in range(1, len(texts)) if string in texts[k])
    tokens_path = os.path.join(outdir, "stop.npy")
    tool = os.path.join(os.environ["TFM_TOOLS_DIR"], "transformer-runner")
    subprocess.run([tool, os.path.join(directory, "config.json"), "--weights",
                    os.path.join(directory, "model.safetensors"), "--prompt",
                    prompt, "--generate", str(count), "--stop", string,
                    "--output-tokens", tokens_path], check=True,
                   stdout=subprocess.DEVNULL)
    got = np.load(tokens_path)[0].tolist()
    want = prompt_ids + generated[:end]
    if got != want:
        sys.exit(f"--stop {string!r}: tfm {got}, expected {want}")
    print(f"--stop: ended after {end} of {len(generated)} tokens")


def check(directory, prompt, count, stdout_path, tokens_path):
    tok = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    prompt_ids, ids = greedy(directory, tok, prompt, count)
    got = np.load(tokens_path)[0].tolist()
    errors = []
    if got[:len(prompt_ids)] != prompt_ids:
        errors.append(f"prompt ids: tfm {got[:len(prompt_ids)]}, "
                      f"tokenizers {prompt_ids}")
    # After an EOS the runner pads the row (its later entries are not
    # tokens): compare up to the reference's end.
    if got[:len(ids)] != ids:
        errors.append(f"generated ids: tfm {got}, transformers {ids}")
    with open(stdout_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    text_lines = [l for l in lines if l.startswith("text: ")]
    want = tok.decode(ids, skip_special_tokens=True)
    if not text_lines or text_lines[0][len("text: "):] != want:
        errors.append(f"text: tfm {text_lines!r}, tokenizers {want!r}")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print(f"prompt: {len(prompt_ids)} ids equal; generated: "
          f"{len(ids) - len(prompt_ids)} ids equal; text equal "
          f"({len(want)} characters)")


def engine(directory, prompt, count, stdout_path, tokens_path):
    import tfm
    tok = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    with tfm.load(directory, threads=1) as m:
        assert m.has_tokenizer, "the model's tokenizer.json was not found"
        ids = m.encode(prompt).tolist()
        assert ids == tok.encode(prompt).ids, (ids, tok.encode(prompt).ids)
        text = m.generate(prompt, max_new_tokens=count)
        tokens = m.generate(np.array(ids), max_new_tokens=count)
        assert m.decode(tokens) == text, (m.decode(tokens), text)
        assert m.decode(tokens, skip_special_tokens=False) == \
            tok.decode(tokens.tolist(), skip_special_tokens=False)
    np.save(tokens_path, tokens[None, :])
    with open(stdout_path, "w", encoding="utf-8") as f:
        f.write("text: " + text + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "stop":
        stop(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "engine":
        engine(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5],
               sys.argv[6])
    else:
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5],
              sys.argv[6])
