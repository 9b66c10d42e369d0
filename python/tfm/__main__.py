"""Command line of the tfm Python package.

  python3 -m tfm emit config.json [--batch B] [--seq-len S] [--kv-cache N]
                                  [--block LAYER] [-o FILE]

prints the tfm module of a Hugging Face gpt2/llama/mixtral config.json:
@forward (and @prefill/@decode with --kv-cache), or with --block one decoder
block as a `tfm.block` function. Errors go to stderr with exit status 1.
"""
import argparse
import json
import sys

from . import models


def _emit(args):
    try:
        with open(args.config) as fh:
            raw = json.load(fh)
    except OSError as e:
        raise models.ConfigError(f"cannot read {args.config}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise models.ConfigError(f"{args.config}: invalid JSON: {e}")
    config = models.parse_config(raw)
    if args.block is not None:
        module = models.build_block(config, args.block, args.batch,
                                    args.seq_len)
    else:
        module = models.build_model(config, args.batch, args.seq_len,
                                    args.kv_cache)
    text = module.to_mlir()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as fh:
            fh.write(text)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tfm")
    sub = parser.add_subparsers(dest="command", required=True)
    emit = sub.add_parser("emit", help="print the tfm module of a "
                          "Hugging Face config.json")
    emit.add_argument("config")
    emit.add_argument("--batch", type=int, default=1)
    emit.add_argument("--seq-len", type=int, default=None,
                      help="default: 128, or the context length if shorter")
    emit.add_argument("--kv-cache", type=int, default=0,
                      help="also emit @prefill and @decode over a cache of "
                      "this many positions")
    emit.add_argument("--block", type=int, default=None, metavar="LAYER",
                      help="emit only decoder block LAYER (a tfm.block)")
    emit.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)
    try:
        _emit(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
