#!/usr/bin/env python3
"""Writes the hand-picked seed inputs of fuzz/corpus/<harness>/seed-*.

The byte layouts follow the decoders in fuzz_forward.c / fuzz_backward.c
(parameters from the front, data from the back); each seed names the corner it
aims at. Inputs the fuzzers find are added next to them under their own names.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def put(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(bytes(data))


def fwd(rb, cb, dt, wb, eps, mb, ab, sb, pads, gens, tail=b""):
    return [rb, cb, dt, wb, eps, mb, ab, sb] + pads + gens + list(tail)


Z9 = [0] * 9
rng = random.Random(7)
# forward: cols index 0=1 14=127 15=128 16=129 18=256 24=1025 30=8999
put("fuzz_forward", "f16-residual-h-rstd", fwd(4, 15, 1, 2, 0, 0x81, 0x04, 0, Z9, [0x60, 0x60, 0x00]))
put("fuzz_forward", "f16-300-specials", fwd(2, 16, 1, 0, 0, 0x00, 0, 0, Z9, [0x70, 0, 0], b"\x04\x00" * 40))
put("fuzz_forward", "zero-rows-eps0", fwd(3, 14, 0, 0, 2, 0x80, 0, 0, Z9, [0x03]))
put("fuzz_forward", "token-e4m3-pow2-ub", fwd(5, 15, 1, 2, 0, 0xC4, 0x03, 2, Z9, [0x20, 0x00]))
put("fuzz_forward", "block-e5m2", fwd(8, 18, 2, 1, 0, 0x0E, 0x00, 0, Z9, [0x00, 0x00, 0x00]))
put("fuzz_forward", "tensor-fnuz", fwd(4, 16, 0, 0, 1, 0x12, 0x00, 2, Z9, [0x08]))
put("fuzz_forward", "bf16-llama-gemma", fwd(6, 24, 2, 5, 0, 0x20, 0x00, 0, Z9, [0x00, 0x00]))
put("fuzz_forward", "f32-rawbits-64x129", fwd(194, 16, 0, 2, 0, 0x80, 0, 0, Z9, [0x01, 0x01],
                                               bytes(rng.randrange(256) for _ in range(200))))
put("fuzz_forward", "inplace-y-x-h-res-padded", fwd(7, 7, 1, 2, 0, 0x81, 0x09, 0, [3, 4, 0, 5, 3, 6, 1, 2, 4],
                                                    [0x00, 0x00, 0x00]))
put("fuzz_forward", "one-row-8999", fwd(1, 30, 2, 2, 0, 0x80, 0, 0, Z9, [0x00, 0x00]))
put("fuzz_forward", "eps-huge-and-tiny", fwd(3, 0, 0, 0, 9, 0x80, 0, 0, Z9, [0x00]))
put("fuzz_forward", "zero-rows-quant", fwd(0, 15, 1, 2, 0, 0x84, 0, 0, Z9, [0x00]))
# one wide row (avx512 splits its columns over threads): cols byte 255 =
# 65536 + 128 r, 254 = 65536 + (r | 1), r from the next two bytes (1 + v %
# 9000), then the "keep the rows" bool of a case over 65536 elements
WIDE_128 = [1, 255, 0, 46, 0]   # 1 x 71552
WIDE_ODD = [1, 254, 3, 232, 0]  # 1 x 66537
put("fuzz_forward", "wide-bf16-residual-h-rstd", WIDE_128 + [2, 2, 0, 0x81, 0x04, 0] + Z9 + [0x60, 0x60, 0x00])
put("fuzz_forward", "wide-bf16-block-e5m2", WIDE_128 + [2, 1, 0, 0x0E, 0x00, 0] + Z9 + [0x00, 0x00, 0x00])
put("fuzz_forward", "wide-f16-token-pow2-ub", WIDE_ODD + [1, 2, 0, 0xC4, 0x03, 2] + Z9 + [0x20, 0x00])

# backward: cols index 0=1 12=127 13=128 14=129 20=4097
def bwd(rb, cb, dt, wb, eps, mb, pads, gens, tail=b""):
    return [rb, cb, dt, wb, eps, mb] + pads + gens + list(tail)


Z8 = [0] * 8
put("fuzz_backward", "f32-dw-recompute", bwd(8, 13, 0, 0x0A, 0, 0x00, Z8, [0, 0, 0]))
put("fuzz_backward", "f16-rstd-given-dres", bwd(4, 14, 1, 0x0A, 0, 0x06, Z8, [0, 0, 0, 0]))
put("fuzz_backward", "bf16-llama-gemma-dw", bwd(16, 12, 2, 0x0D, 0, 0x01, Z8, [0, 0, 0]))
put("fuzz_backward", "dx-in-dy-padded", bwd(3, 7, 1, 0x02, 0, 0x08, [1, 2, 3, 4, 5, 1, 2, 3], [0, 0]))
put("fuzz_backward", "dx-in-dres", bwd(5, 9, 0, 0x01, 0, 0x14, Z8, [0, 0x60, 0, 0]))
put("fuzz_backward", "specials", bwd(2, 13, 1, 0x0A, 2, 0x00, Z8, [0x60, 0x60, 0x60]))
put("fuzz_backward", "zero-dy-rows", bwd(4, 5, 0, 0x0A, 0, 0x04, Z8, [0x00, 0x03, 0x00]))
put("fuzz_backward", "rows64-4097", bwd(194, 20, 2, 0x0A, 0, 0x00, Z8, [1], b"\x01"))
# one wide row: 65536 + 4001 columns (cols bytes as for the forward's)
put("fuzz_backward", "wide-bf16-dw-recompute", [1, 255, 15, 160, 0] + [2, 0x0A, 0, 0x00] + Z8 + [0, 0, 0])
put("fuzz_backward", "wide-f32-rstd-given-dres", [1, 254, 15, 160, 0] + [0, 0x0A, 0, 0x06] + Z8 + [0, 0, 0, 0])

# fp8: kind byte (bit 3 clear: 4 raw bytes; set: code, ulp offset, mode, pad)
recs = []
for fmt in range(3):
    for code in (0, 1, 7, 8, 0x77, 0x7b, 0x7e, 0x7f):
        for off in (0xFF, 0, 1):
            for mode in (0, 1, 3):
                recs += [0x08 | fmt, code, off, mode, 0]
put("fuzz_fp8", "boundaries", recs)
put("fuzz_fp8", "raw-specials", [0, 0x7f, 0x80, 0, 0, 0, 0xff, 0xc0, 0, 0, 1, 0, 0, 0, 1,
                                 2, 0x43, 0xe0, 0, 0, 1, 0x47, 0x60, 0, 0])

# abi: layouts are long; random inputs of a few sizes reach every mutation
for i, n in enumerate((8, 24, 48, 96, 160, 320)):
    put("fuzz_abi", "random-%d" % i, bytes(rng.randrange(256) for _ in range(n)))
for name in (b"ref", b"avx512", b"auto", b"cuda"):
    put("fuzz_abi", "name-" + name.decode(), [0, 0, 0, 0, len(name)] + list(name) + [0] * 40)
