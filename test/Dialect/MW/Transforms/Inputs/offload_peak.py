"""Compares the device peak of a planned step with and without --mw-offload.

Usage: offload_peak.py BASE.json OFFLOADED.json PREFETCH PINNED

Both files are mw-translate --mw-plan-json output. The device peak is the
arena plus the bytes of the Device persistents (Host and File persistents are
host memory or a file). With prefetch K >= 1 the arena holds K+1 layers'
weights (at least that much, at most the base arena more), so the peak drops
by (streamed - K - 1) x layer bytes, or up to the base arena more where the
activations peak without the slots; TOLERANCE of a layer covers alignment.
With K = 0 a weight is fetched where it is used: the drop is at least
(streamed - 1) layers. Prints one line; exits non-zero when it is not so.
"""
import json
import math
import sys

SIZES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "i8": 1}
TOLERANCE = 0.05


def layer_of(name):
    for part in name.split("."):
        if part.isdigit():
            return int(part)
    return None


def nbytes(p):
    return SIZES[p["dtype"]] * math.prod(p["shape"])


def device_peak(plan):
    return plan["arena_size"] + sum(
        nbytes(p) for p in plan["persistents"] if p.get("placement", "device") == "device")


def main():
    base, off = (json.load(open(f)) for f in sys.argv[1:3])
    k, pinned = int(sys.argv[3]), int(sys.argv[4])
    layers = {}
    for p in base["persistents"]:
        if p["role"] == "param" and layer_of(p["name"]) is not None:
            layers[layer_of(p["name"])] = layers.get(layer_of(p["name"]), 0) + nbytes(p)
    sizes = set(layers.values())
    if len(sizes) != 1:
        sys.exit(f"layers of different sizes: {sorted(layers.items())}")
    layer = sizes.pop()
    streamed = len(layers) - pinned
    placed = sum(1 for p in off["persistents"] if p.get("placement") in ("host", "file"))
    expected_placed = sum(1 for p in base["persistents"] if p["role"] == "param"
                          and layer_of(p["name"]) is not None) * streamed // len(layers)
    if placed != expected_placed:
        sys.exit(f"{placed} offloaded persistents, expected {expected_placed}")
    before, after = device_peak(base), device_peak(off)
    saved = before - after
    # The slots: K+1 layers' weights in the arena (one weight at a time with
    # K = 0, which only bounds the arena from above).
    slots = k + 1 if k > 0 else 1
    slack = TOLERANCE * layer
    arena_ok = off["arena_size"] <= base["arena_size"] + slots * layer + slack
    if k > 0:
        arena_ok = arena_ok and off["arena_size"] >= slots * layer
    # The slots' peak and the activations' need not coincide, so the drop is
    # (streamed - slots) layers, and at most the base arena more.
    expected = (streamed - slots) * layer
    ok = arena_ok and saved >= expected - slack and (
        k == 0 or saved <= expected + base["arena_size"])
    print(f"{'OK' if ok else 'WRONG'}: arena {base['arena_size']} -> {off['arena_size']} B "
          f"({slots} slots of {layer} B); peak {before} -> {after} B, saved {saved} B, "
          f"({streamed} streamed - {slots}) x {layer} B = {expected} B")
    sys.exit(0 if ok else 1)

main()
