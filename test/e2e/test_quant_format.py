"""The quantised weight formats of format/include/ingot/Quant.h, in numpy.

This module is an independent implementation of the formats, written from
their description (not from Quant.cpp): test_quant_models.py compares the
compiler's bytes with it bit for bit and builds float64 references from the
weights it decodes. Here it is checked on its own:

  - pinned bytes for small hand-worked groups (nibble order, ties, zeros);
  - round trips on random rows, ragged last groups, per-channel groups,
    all-zero groups, +-65000 and 1e-7 values, each value within its bound.

Every format quantises a row of K values in groups of `group` along K (the
last group shorter when K is not a multiple); a block is an f16 scale d
(q4m: then an f16 minimum m) and the payload. Scales are rounded to f16
first and values quantised against the rounded scale, rounding half to even:

    q8      d = amax/127        q = clamp(round(x/d), -127, 127)   x = d*q
    q4      d = xbig/-8         q = clamp(round(x/d), -8, 7) + 8   x = d*(q-8)
    q4m     m = min, d = (max-m)/15, q = clamp(round((x-m)/d), 0, 15)   x = d*q+m
    f8e4m3  d = amax/448        q = e4m3(x/d), saturating at 448   x = d*e4m3(q)

(xbig: the value of largest magnitude, with its sign; the first one on a
tie.) A scale of 0 stores every q as the zero level (q4: 8). int4 values
are packed per run of 32 (a short last run has t values): byte i holds value
i in its low nibble and value i + ceil(t/2) in its high nibble.
"""
import numpy as np
import pytest

FORMATS = ("q8", "q4", "q4m", "f8e4m3")
Q4_RUN = 32
_F32 = np.float32

# -----------------------------------------------------------------------------
# e4m3 ("fn": no infinities; 0x7f/0xff are NaN; largest finite 448)
# -----------------------------------------------------------------------------


def e4m3_values(codes):
    """float64 value of each e4m3 byte: 4 exponent bits (bias 7), 3 mantissa
    bits, exponent 0 subnormal (m * 2^-9)."""
    c = np.asarray(codes, dtype=np.int64)
    e, m = (c >> 3) & 15, c & 7
    mag = np.where(e == 0, m * 2.0**-9, (1 + m / 8) * 2.0 ** (e - 7))
    mag = np.where((e == 15) & (m == 7), np.nan, mag)
    return np.where(c & 0x80, -mag, mag)


_E4M3_GRID = e4m3_values(np.arange(0x7F))  # codes 0..0x7e: 0 .. 448, ascending


def to_e4m3(y):
    """Nearest e4m3 code of each float32 value, ties to the even code (the
    even mantissa), magnitudes beyond 448 saturating to 448. Distances are
    taken in float64, where they are exact."""
    a = np.abs(np.asarray(y, dtype=np.float64))
    hi = np.clip(np.searchsorted(_E4M3_GRID, a), 1, len(_E4M3_GRID) - 1)
    below, above = a - _E4M3_GRID[hi - 1], _E4M3_GRID[hi] - a
    up = (below > above) | ((below == above) & (hi % 2 == 0))
    code = np.where(up, hi, hi - 1).astype(np.uint8)
    return code | np.where(np.signbit(y), 0x80, 0).astype(np.uint8)


# -----------------------------------------------------------------------------
# Block layout
# -----------------------------------------------------------------------------


def header_bytes(fmt):
    return 4 if fmt == "q4m" else 2


def payload_bytes(fmt, g):
    if fmt in ("q8", "f8e4m3"):
        return g
    return (g // Q4_RUN) * (Q4_RUN // 2) + (g % Q4_RUN + 1) // 2


def row_bytes(fmt, k, group):
    return sum(header_bytes(fmt) + payload_bytes(fmt, min(group, k - k0))
               for k0 in range(0, k, group))


def pack_nibbles(q):
    """[n, g] values 0..15 -> [n, payload] bytes, per run of 32."""
    out = []
    for r0 in range(0, q.shape[1], Q4_RUN):
        run = q[:, r0:r0 + Q4_RUN].astype(np.uint8)
        t, h = run.shape[1], (run.shape[1] + 1) // 2
        high = np.zeros((q.shape[0], h), np.uint8)
        high[:, :t - h] = run[:, h:]
        out.append(run[:, :h] | (high << 4))
    return np.concatenate(out, axis=1)


def unpack_nibbles(b, g):
    out, at = [], 0
    for r0 in range(0, g, Q4_RUN):
        t = min(Q4_RUN, g - r0)
        h = (t + 1) // 2
        run = b[:, at:at + h]
        at += h
        out += [run & 15, (run >> 4)[:, :t - h]]
    return np.concatenate(out, axis=1)


def _f16(v):
    """The stored scale: float32 -> float16, round to nearest even."""
    return np.asarray(v, dtype=_F32).astype(np.float16)


def _round_against(x, d, lo, hi, zero_level):
    """clamp(round_half_even(x / d), lo, hi) per row (float32 division as the
    stored scale is used); rows whose scale is 0 get zero_level."""
    d32 = d.astype(_F32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(np.rint(x / d32), lo, hi)
    return np.where(d32 == 0, zero_level, q).astype(np.int64)


def _quantize_groups(fmt, x):
    """x [n, g] float32: one group per row -> [n, block bytes]."""
    amax = np.abs(x).max(axis=1)
    if fmt == "q8":
        d = _f16(amax / _F32(127))
        payload = _round_against(x, d, -127, 127, 0).astype(np.int8).view(np.uint8)
        header = [d]
    elif fmt == "q4":
        big = x[np.arange(len(x)), np.abs(x).argmax(axis=1)]
        d = _f16(big / _F32(-8))
        payload = pack_nibbles(_round_against(x, d, -8, 7, 0) + 8)
        header = [d]
    elif fmt == "q4m":
        m = _f16(x.min(axis=1))
        d = _f16((x.max(axis=1) - m.astype(_F32)) / _F32(15))
        shifted = x - m.astype(_F32)[:, None]
        payload = pack_nibbles(_round_against(shifted, d, 0, 15, 0))
        header = [d, m]
    else:
        d = _f16(amax / _F32(448))
        with np.errstate(divide="ignore", invalid="ignore"):
            y = x / d.astype(_F32)[:, None]
        payload = np.where(d[:, None] == 0, 0, to_e4m3(y)).astype(np.uint8)
        header = [d]
    heads = [h.astype("<f2")[:, None].view(np.uint8) for h in header]
    return np.concatenate(heads + [payload], axis=1)


def quantize(fmt, x, group):
    """Row-major [n, k] values -> [n, row_bytes] uint8, the artifact's bytes."""
    x = np.atleast_2d(np.asarray(x, dtype=_F32))
    return np.concatenate([_quantize_groups(fmt, x[:, k0:k0 + group])
                           for k0 in range(0, x.shape[1], group)], axis=1)


def decode(fmt, data, k, group):
    """[n, row_bytes] bytes -> (values, scales, minimums, codes), float64
    [n, k] each (the scale/minimum of every value's group; minimums are 0
    except for q4m; codes are the signed levels q or e4m3 bytes)."""
    data = np.atleast_2d(np.asarray(data, dtype=np.uint8))
    parts, at = [], 0
    for k0 in range(0, k, group):
        g = min(group, k - k0)
        block = data[:, at:at + header_bytes(fmt) + payload_bytes(fmt, g)]
        at += block.shape[1]
        d = block[:, 0:2].copy().view("<f2").astype(np.float64)
        m = block[:, 2:4].copy().view("<f2").astype(np.float64) if fmt == "q4m" else 0 * d
        p = block[:, header_bytes(fmt):]
        if fmt == "q8":
            q = p.view(np.int8).astype(np.float64)
            x = d * q
        elif fmt == "q4":
            q = unpack_nibbles(p, g).astype(np.float64) - 8
            x = d * q
        elif fmt == "q4m":
            q = unpack_nibbles(p, g).astype(np.float64)
            x = d * q + m
        else:
            q = p.astype(np.float64)
            x = d * e4m3_values(p)
        parts.append([x, np.broadcast_to(d, x.shape), np.broadcast_to(m, x.shape), q])
    assert at == data.shape[1], f"{data.shape[1]} bytes for {at}"
    return tuple(np.concatenate(c, axis=1) for c in zip(*parts))


def dequantize(fmt, data, k, group):
    """The float64 values the stored bytes stand for."""
    return decode(fmt, data, k, group)[0]


# -----------------------------------------------------------------------------
# Pinned bytes (worked by hand from the description above)
# -----------------------------------------------------------------------------


def test_q8_ties_round_to_even_and_clamp():
    # amax 127 -> d = 1 exactly, so x/d is x: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
    x = [127, 0.5, 1.5, 2.5, -0.5, -1.5, -127, 3]
    got = quantize("q8", x, 8)[0]
    assert got[:2].tolist() == [0x00, 0x3C]                # f16 1.0
    assert got[2:].view(np.int8).tolist() == [127, 0, 2, 2, 0, -2, -127, 3]


def test_q4_nibbles_of_a_short_run_and_the_clamped_side():
    # xbig = -8 -> d = 1; +7.5 rounds to 8 and clamps to level 7 (q = 15).
    x = [-8, 1, 2, 7.5, -3]                     # t = 5, ceil(5/2) = 3
    got = quantize("q4", x, 5)[0]
    q = [0, 9, 10, 15, 5]
    assert got.tolist() == [0x00, 0x3C, q[0] | q[3] << 4, q[1] | q[4] << 4, q[2]]


def test_q4m_min_and_scale():
    x = [0, 15, 0.5, 1.5, 7]                    # m = 0, d = 1: 0.5 -> 0, 1.5 -> 2
    got = quantize("q4m", x, 5)[0]
    assert got.tolist() == [0x00, 0x3C, 0x00, 0x00, 0 | 2 << 4, 15 | 7 << 4, 0]


def test_e4m3_codes():
    # amax 448 -> d = 1. 1.0625 lies halfway between 1 and 1.125 -> 1 (even
    # mantissa); 1.1875 -> 1.25; 232 between 224 and 240 -> 224; 1.5 * 2^-9
    # between the subnormals 1 and 2 (* 2^-9) -> 2; -0.5 * 2^-9 -> -0; 0.01
    # (below the smallest normal 2^-6) is 5.12 * 2^-9 -> subnormal 5.
    x = [448, 1.0625, 1.1875, 232, 1.5 * 2.0**-9, -0.5 * 2.0**-9, -1, 0.01]
    got = quantize("f8e4m3", x, 8)[0]
    assert got[:2].tolist() == [0x00, 0x3C]
    assert got[2:].tolist() == [0x7E, 0x38, 0x3A, 0x76, 0x02, 0x80, 0xB8, 0x05]
    assert e4m3_values([0x7E, 0x15, 0x08, 0x07, 0xFF]).tolist()[:4] == [
        448, 1.625 * 2**-5, 2**-6, 7 * 2**-9]
    assert np.isnan(e4m3_values(0xFF))


@pytest.mark.parametrize("fmt", FORMATS)
def test_all_zero_group_stores_a_zero_scale(fmt):
    x = np.zeros((2, 40), _F32)
    x[1, 32:] = [1, -2, 3, -4, 5, -6, 7, -8]    # row 1: one zero group, one not
    got = quantize(fmt, x, 32)
    zero_level = {"q4": 8 | 8 << 4}.get(fmt, 0)
    for block in (got[0, :row_bytes(fmt, 32, 32)], got[1, :row_bytes(fmt, 32, 32)]):
        # q4 stores -0.0 (0x8000) as llama.cpp's Q4_0 does: 0 / -8 = -0.
        assert block[:2].view("<f2")[0] == 0
        assert np.all(block[header_bytes(fmt):] == zero_level)
    back = dequantize(fmt, got, 40, 32)
    assert np.array_equal(back[:, :32], x[:, :32]) and np.all(back[0] == 0)


# -----------------------------------------------------------------------------
# Round trips: every value within its format's bound
# -----------------------------------------------------------------------------


def _f16_rounding(v):
    """Bound on |f16(v) - v|: half an ulp, 2^-11 relative for normal f16,
    2^-25 absolute (half the smallest subnormal) below."""
    return np.maximum(np.abs(v) * 2.0**-11, 2.0**-25)


def error_bound(fmt, x, d, m):
    """Largest |dequantised - x| the format allows, per value. Inside the
    range of a group's levels a value is off by at most half a step (d/2;
    e4m3: half an ulp, 2^-4 of the value, or 2^-10 d for subnormals). A
    value can fall outside that range only because the scale (and q4m's
    minimum) were rounded to f16 before quantising: by at most that rounding
    times the level count. q4 spends its 16th level on the side of the
    largest magnitude, so values on the other side near the extreme clamp
    to level 7: there the bound is a whole step."""
    x = x.astype(np.float64)
    g_amax = lambda v: np.broadcast_to(v.max(axis=1, keepdims=True), v.shape)  # noqa: E731
    amax, ad = g_amax(np.abs(x)), np.abs(d)
    if fmt == "q8":
        return ad / 2 + 127 * _f16_rounding(amax / 127)
    if fmt == "q4":
        short_side = x / np.where(d == 0, 1, d) > 7.5
        return np.where(short_side, ad, ad / 2) + 8 * _f16_rounding(amax / 8)
    if fmt == "q4m":
        lo, hi = -g_amax(-x), g_amax(x)
        return d / 2 + _f16_rounding(lo) + 15 * _f16_rounding((hi - m) / 15)
    return (np.maximum(np.abs(x) * 2.0**-4, ad * 2.0**-10)
            + 448 * _f16_rounding(amax / 448))


def _per_group(a, k, group, reduce):
    return np.concatenate([np.broadcast_to(reduce(a[:, k0:k0 + group]),
                                           a[:, k0:k0 + group].shape)
                           for k0 in range(0, k, group)], axis=1)


def _special_rows(rng, k):
    """Rows that stress the corners: zeros, a zero group among others,
    +-65000 (near f16's 65504), 1e-7 values (scales that are f16
    subnormals or flush to 0), one huge value among small ones, constants."""
    rows = [np.zeros(k), rng.standard_normal(k), rng.standard_normal(k) * 1e-7,
            rng.choice([-65000.0, 65000.0], k), rng.uniform(-65000, 65000, k),
            np.full(k, 3.0), np.full(k, -1e-7), rng.standard_normal(k) * 1e-3]
    rows[1][: min(k, 32)] = 0
    rows[-1][k // 2] = 500.0
    return np.stack(rows)


SHAPES = [(8, 72, 32), (4, 576, 128), (6, 64, 64), (5, 100, 100), (3, 130, 48),
          (4, 7, 32)]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n, k, group", SHAPES, ids=[f"{n}x{k}g{g}" for n, k, g in SHAPES])
def test_round_trip_within_bound(fmt, n, k, group):
    rng = np.random.default_rng(n * 1000 + k + group)
    x = np.concatenate([rng.standard_normal((n, k)) * rng.uniform(0.01, 3, (n, 1)),
                        _special_rows(rng, k)]).astype(_F32)
    data = quantize(fmt, x, group)
    assert data.shape == (len(x), row_bytes(fmt, k, group))
    back, d, m, _ = decode(fmt, data, k, group)
    err = np.abs(back - x.astype(np.float64))
    bound = error_bound(fmt, x, d, m)
    bad = np.argwhere(err > bound)
    assert bad.size == 0, (f"{fmt}: {len(bad)} values beyond the bound, first at "
                           f"{bad[0].tolist()}: x={x[tuple(bad[0])]!r} "
                           f"back={back[tuple(bad[0])]!r}")
    # The bound is not loose: some values use a good part of it.
    assert (err / np.where(bound > 0, bound, 1)).max() > 0.5
    # The level grid spans each group: its extreme value (q4: the one of
    # largest magnitude, signed) comes back within the scale's rounding.
    first_max = lambda a: a[np.arange(len(a)), np.abs(a).argmax(axis=1)][:, None]  # noqa: E731
    big = _per_group(x.astype(np.float64), k, group, first_max)
    extreme = (x == big) if fmt == "q4" else (np.abs(x) == np.abs(big))
    amax = np.abs(big)
    assert np.all(err[extreme] <= amax[extreme] * 2.0**-4 + 2.0**-18)


@pytest.mark.parametrize("fmt", FORMATS)
def test_quantize_is_a_fixed_point_on_its_own_values(fmt):
    """Dequantised values quantise back to the same bytes (the scale is
    recovered, then every value sits on a level): the rounding is
    consistent, not merely close."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 96)).astype(_F32)
    data = quantize(fmt, x, 32)
    again = quantize(fmt, dequantize(fmt, data, 96, 32).astype(_F32), 32)
    assert np.array_equal(again, data)
