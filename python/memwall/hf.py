"""Hugging Face models from their configuration classes, randomly initialised.

No hub download happens: each model is built from a transformers config
class (`GPT2Config`, ...) with `from_config`-style construction and the
library's own initialisation under a fixed seed. `tiny` presets are small
enough for CI parity tests; `published` presets are the released sizes
(exported and planned, not run in CI).
"""

from __future__ import annotations

from typing import Dict, Tuple

import torch

from .fx_importer import MwImportError

#: family -> preset -> config keyword arguments
PRESETS: Dict[str, Dict[str, dict]] = {
    "gpt2": {
        "tiny": dict(n_layer=2, n_embd=64, n_head=4, n_positions=64,
                     vocab_size=256, bos_token_id=0, eos_token_id=0),
        "published": dict(),  # GPT2Config() is GPT-2 small, 124M
    },
    "bert": {
        "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                     intermediate_size=256, vocab_size=256,
                     max_position_embeddings=64, pad_token_id=0),
        "published": dict(),  # BertConfig() is bert-base
    },
    "llama": {
        "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                     num_key_value_heads=4, intermediate_size=176,
                     vocab_size=256, max_position_embeddings=64,
                     bos_token_id=0, eos_token_id=0, pad_token_id=None),
        "published": dict(),  # LlamaConfig() is Llama-2-7B's shape
    },
    "opt": {
        "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                     ffn_dim=256, vocab_size=256, max_position_embeddings=64,
                     word_embed_proj_dim=64, bos_token_id=0, eos_token_id=0,
                     pad_token_id=1),
        "published": dict(),  # OPTConfig() is OPT-125m
    },
}

#: Dropout off: mw has no dropout op, and parity needs a deterministic model.
_NO_DROPOUT = {
    "gpt2": dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),
    "bert": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
    "llama": dict(attention_dropout=0.0),
    "opt": dict(dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                layerdrop=0.0),
}


def _classes(family: str):
    import transformers as tf
    return {
        "gpt2": (tf.GPT2Config, tf.GPT2LMHeadModel),
        "bert": (tf.BertConfig, tf.BertForMaskedLM),
        "llama": (tf.LlamaConfig, tf.LlamaForCausalLM),
        "opt": (tf.OPTConfig, tf.OPTForCausalLM),
    }[family]


def parse_value(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


ATTENTION = ("sdpa", "eager")


def build_model(family: str, preset: str = "tiny", overrides: Dict[str, object] = None,
                seed: int = 0, materialize: bool = True, attention: str = "sdpa"):
    """The model and its config, weights from the library's init under `seed`.

    Without `materialize` the parameters are fake tensors (shapes and dtypes,
    no memory: Llama-7B exports in 1 GB), as mw-models builds GPT-3 without
    weights; buffers, which the importer folds, are real.

    `attention` is transformers' attention implementation: sdpa (the default,
    what a user gets) maps onto the fused mw.attention; eager is PyTorch's
    reference form (matmul, scale, additive mask, softmax, matmul), whose
    probabilities are activations as in PyTorch eager."""
    if attention not in ATTENTION:
        raise MwImportError(
            f"unknown attention '{attention}' (known: {', '.join(ATTENTION)})")
    if family not in PRESETS:
        raise MwImportError(
            f"unknown model family '{family}' (known: {', '.join(PRESETS)})")
    if preset not in PRESETS[family]:
        raise MwImportError(
            f"unknown preset '{preset}' for {family} "
            f"(known: {', '.join(PRESETS[family])})")
    config_cls, model_cls = _classes(family)
    kwargs = dict(PRESETS[family][preset])
    kwargs.update(_NO_DROPOUT[family])
    kwargs.update(overrides or {})
    # Config classes keep unknown keyword arguments as attributes: a typo
    # would be silently ignored, so check against the defaults' fields.
    known = set(config_cls().to_dict()) | set(getattr(config_cls, "attribute_map", {}))
    for k in (overrides or {}):
        if k not in known:
            raise MwImportError(f"{config_cls.__name__} has no field '{k}'")
    config = config_cls(**kwargs)
    config._attn_implementation = attention
    torch.manual_seed(seed)
    if materialize:
        return model_cls(config).eval(), config
    from torch._subclasses.fake_tensor import FakeTensorMode, is_fake
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    with FakeTensorMode(allow_non_fake_inputs=True, shape_env=ShapeEnv()):
        model = model_cls(config).eval()
    # Buffers (rotary frequencies, position ids) are small and folded into
    # the IR: take them from a real instance of the module that owns them.
    for owner_name, owner in model.named_modules():
        for name, buf in list(owner._buffers.items()):
            if buf is None or not is_fake(buf):
                continue
            try:
                fresh = type(owner)(config=config)
            except Exception as e:  # noqa: BLE001
                raise MwImportError(
                    f"buffer '{owner_name}.{name}' of the unmaterialized "
                    f"{model_cls.__name__} has no value ({type(owner).__name__}"
                    f"(config=...) failed: {e}); pass --weights to build the "
                    f"model with real tensors")
            owner._buffers[name] = fresh._buffers[name]
    return model, config


class _CausalLMLoss(torch.nn.Module):
    """forward(input_ids, labels) -> loss, the model's own loss."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids, labels):
        return self.m(input_ids=input_ids, labels=labels, use_cache=False).loss


class _Logits(torch.nn.Module):
    """forward(input_ids) -> logits."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids):
        kw = {} if isinstance(self.m, _bert_cls()) else {"use_cache": False}
        return self.m(input_ids=input_ids, **kw).logits


class _MaskedLMLoss(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids, labels):
        return self.m(input_ids=input_ids, labels=labels).loss


def _bert_cls():
    import transformers as tf
    return tf.BertForMaskedLM


def wrap(family: str, model, train: bool) -> torch.nn.Module:
    if not train:
        return _Logits(model)
    return _MaskedLMLoss(model) if family == "bert" else _CausalLMLoss(model)


def example_inputs(family: str, config, batch: int, seq: int, train: bool,
                   seed: int = 0) -> Tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed + 1)
    vocab = config.vocab_size
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    if not train:
        return (ids,)
    if family == "bert":
        # Masked LM: about 15% of the positions carry labels, others -100.
        labels = torch.randint(0, vocab, (batch, seq), generator=g)
        keep = torch.rand(batch, seq, generator=g) < 0.15
        keep[:, 0] = True
        labels = torch.where(keep, labels, torch.full_like(labels, -100))
        return (ids, labels)
    return (ids, torch.randint(0, vocab, (batch, seq), generator=g))
