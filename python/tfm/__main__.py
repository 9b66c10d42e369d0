"""Command line of the tfm Python package.

  python3 -m tfm emit config.json [--batch B] [--seq-len S] [--kv-cache N]
                                  [--block LAYER] [--dtype T] [-o FILE]

prints the tfm module of a Hugging Face config.json, built by the C++
importer (libtfm_engine.so, as transformer-translate --import-hf-config):
@forward (and @prefill/@decode with --kv-cache), or with --block one decoder
layer as a `tfm.block` function. Errors go to stderr with exit status 1.
"""
import argparse
import sys

from .engine import TfmError, import_hf_config


def _emit(args):
    try:
        with open(args.config, "rb") as fh:
            config = fh.read()
    except OSError as e:
        raise TfmError(f"cannot read {args.config}: {e.strerror}")
    try:
        text = import_hf_config(config, batch=args.batch, seq_len=args.seq_len,
                                kv_cache=args.kv_cache, block=args.block,
                                dtype=args.dtype)
    except TfmError as e:
        # Config errors name the file, as transformer-translate's do; option
        # errors ("--seq-len: ...") stand alone.
        if str(e).startswith("--"):
            raise
        raise TfmError(f"{args.config}: {e}")
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
    emit.add_argument("--dtype", default=None, choices=["f32", "bf16", "f16"],
                      help="compute type (default f32)")
    emit.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)
    try:
        _emit(args)
    except TfmError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
