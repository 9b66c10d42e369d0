"""The tfm compiler from Python: run models through the engine (tfm.load,
tfm.engine), import Hugging Face configs as tfm IR
(tfm.engine.import_hf_config, `python3 -m tfm emit`), build tfm IR by hand
(tfm.builder), safetensors I/O and PyTorch references (tfm.io,
tfm.reference)."""

__all__ = ["load", "Model", "TfmError"]


def __getattr__(name):
    # Lazily: emitting IR needs neither numpy nor the engine library.
    if name in __all__:
        from . import engine
        return getattr(engine, name)
    raise AttributeError(f"module 'tfm' has no attribute {name!r}")
