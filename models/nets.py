"""The alert models: input x [batch, T, F] raw features (T in 30..120), output prob [batch, 1].

Every model starts with Normalize (per-feature mean/std of the training split, stored as buffers
and exported as Sub + Mul), so C++ serving feeds raw feature rows. `logits()` is what training
uses (BCE with logits is stable); `forward()` applies the sigmoid, as the exported graph does.
Only ops the ticksentry engine imports are used (GRU, LSTM, MatMul/Gemm, the decomposed
attention, LayerNormalization, Conv, Relu, Slice/Gather, Sigmoid).
"""
import torch
from torch import nn

KINDS = ("gru", "lstm", "transformer", "tcn")


class Normalize(nn.Module):
    """(x - mean) * inv_std per feature; clamps std to avoid dividing by ~0 for constant features.

    With clip > 0 the normalized value is squashed softly into (-clip, clip) by
    clip * tanh(z / clip) (exported as Mul, Tanh, Mul): heavy-tailed features (volume z-scores,
    spreads in ticks of an unfamiliar market) then cannot saturate the model."""

    def __init__(self, features, clip=0.0):
        super().__init__()
        self.register_buffer("mean", torch.zeros(features))
        self.register_buffer("inv_std", torch.ones(features))
        self.clip = float(clip)

    def set_stats(self, mean, std):
        """Sets the training split's statistics; returns the indices of the features that are
        constant there (std <= 1e-9 x max(1, |mean|)). They are dropped: weight 0, so they
        enter the model as 0 whatever value they take in another market (a feature that is
        always 0 on LOBSTER used to arrive at ~1e5 sigma on SSE through a std clamped to 1e-6)."""
        std = torch.as_tensor(std, dtype=torch.float64)
        mean = torch.as_tensor(mean, dtype=torch.float64)
        constant = std <= 1e-9 * mean.abs().clamp_min(1.0)
        inv = torch.where(constant, torch.zeros_like(std), 1.0 / std.clamp_min(1e-12))
        self.mean.copy_(mean.to(torch.float32))
        self.inv_std.copy_(inv.to(torch.float32))
        return [int(i) for i in torch.nonzero(constant).flatten()]

    def forward(self, x):
        z = (x - self.mean) * self.inv_std
        if self.clip > 0:
            z = torch.tanh(z * (1.0 / self.clip)) * self.clip
        return z


class AlertModel(nn.Module):
    def __init__(self, features, clip=0.0):
        super().__init__()
        self.norm = Normalize(features, clip)

    def body(self, z):  # [batch, T, F] normalized → [batch, 1] logit
        raise NotImplementedError

    def logits(self, x):
        return self.body(self.norm(x))

    def forward(self, x):
        return torch.sigmoid(self.logits(x))


class RecurrentAlert(AlertModel):
    """GRU or LSTM (batch_first) → last step → Linear(1)."""

    def __init__(self, features, cell, hidden, layers, dropout, clip=0.0):
        super().__init__(features, clip)
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(features, hidden, num_layers=layers, batch_first=True,
                       dropout=dropout if layers > 1 else 0.0)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, 1)

    def body(self, z):
        out, _ = self.rnn(z)
        return self.head(self.drop(out[:, -1, :]))


class TransformerAlert(AlertModel):
    """Linear projection → TransformerEncoder (post-norm) → last step → Linear(1).

    No positional encoding: the readout is the last step, which attends over the window; a
    position table would have to be sliced to the dynamic T. The recency the model needs is in
    the features themselves (returns over 1/10/60/300 s)."""

    def __init__(self, features, d_model, heads, layers, dropout, clip=0.0):
        super().__init__(features, clip)
        self.proj = nn.Linear(features, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model,
                                           dropout=dropout, activation="relu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 1)

    def body(self, z):
        h = self.encoder(self.proj(z))
        return self.head(h[:, -1, :])


class TemporalCnnAlert(AlertModel):
    """Conv1d stack (kernel 3, dilations 1, 2, 4, 8, 16, symmetric padding) + ReLU → last step →
    Linear(1). Receptive field at the last step: 63 rows back (the padding on the right is zeros
    in training and serving alike, so nothing from the future leaks in)."""

    def __init__(self, features, channels, dilations, dropout, clip=0.0):
        super().__init__(features, clip)
        convs = []
        cin = features
        for d in dilations:
            convs += [nn.Conv1d(cin, channels, kernel_size=3, dilation=d, padding=d), nn.ReLU()]
            cin = channels
        self.convs = nn.Sequential(*convs)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(channels, 1)

    def body(self, z):
        h = self.convs(z.transpose(1, 2))  # [batch, C, T]
        return self.head(self.drop(h[:, :, -1]))


def build_model(cfg, features):
    """cfg: the [model] table of a training config."""
    kind = cfg.get("kind")
    dropout = float(cfg.get("dropout", 0.1))
    clip = float(cfg.get("clip", 0.0))  # soft clip of normalized features; 0 = off
    if kind in ("gru", "lstm"):
        return RecurrentAlert(features, kind, int(cfg.get("hidden", 32)),
                              int(cfg.get("layers", 1)), dropout, clip)
    if kind == "transformer":
        return TransformerAlert(features, int(cfg.get("d_model", 32)), int(cfg.get("heads", 4)),
                                int(cfg.get("layers", 1)), dropout, clip)
    if kind == "tcn":
        return TemporalCnnAlert(features, int(cfg.get("channels", 32)),
                                tuple(cfg.get("dilations", (1, 2, 4, 8, 16))), dropout, clip)
    raise ValueError(f"model kind {kind!r} unknown (one of {', '.join(KINDS)})")


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())
