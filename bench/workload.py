"""Block sizes of mpix-bench's distributions, and what the lower bound needs from them.

A re-implementation, in Python, of tools/workload.cpp (mpix::workload::block_bytes),
with the same integer and floating-point steps: the 64-bit splitmix mixing is done
modulo 2**64, the floating-point operations are the C library's (Python's math
module calls the same libm), and the casts truncate like C's. bench/simulate checks
it against mpix-bench on every run: the bytes a rank sends to others, as mpix-bench
counts them for pmpi and pairwise (payload_bytes, the maximum over ranks), must equal
max_rank_send_bytes computed here, or the row's bytes_check column says MISMATCH.
Standard library only.
"""
import math

MASK = (1 << 64) - 1
DISTRIBUTIONS = ("constant", "uniform", "normal", "powerlaw", "fft_n1", "fft_n2")
FIXED = ("fft_n1", "fft_n2")  # sizes fixed by the distribution: --sizes is ignored


def uniform01(seed, source, dest, draw):
    z = (seed * 0x9E3779B97F4A7C15 + (source << 32) + dest + draw * 0xD1B54A32D192ED03) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return (z >> 11) * (1.0 / 9007199254740992.0)


def llround(x):
    """C's llround: halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def block_bytes(dist, S, source, dest, size, seed=1):
    """Bytes `source` sends to `dest` (tools/workload.cpp, block_bytes)."""
    s = float(S)
    if dist == "constant":
        return S
    if dist == "uniform":
        return min(S, int(uniform01(seed, source, dest, 0) * (s + 1)))
    if dist == "normal":
        u1 = 1.0 - uniform01(seed, source, dest, 0)
        u2 = uniform01(seed, source, dest, 1)
        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)
        x = s / 2 + 0.24 * (s / 2) * z
        return min(max(llround(x), 0), S)
    if dist == "powerlaw":
        return int(s * math.pow(uniform01(seed, source, dest, 0), 20.0))
    if dist == "fft_n1":
        workers, filled = math.ceil(0.625 * size), math.ceil(0.78125 * size)
        return 64 if source < workers and dest < filled else 0
    if dist == "fft_n2":
        return 512 if source < size - 1 else 128
    raise ValueError("unknown distribution " + dist)


def stats(dist, S, P, ppn, seed=1):
    """What the lower bound needs, for P ranks on nodes of ppn consecutive ranks:
    per-node inter-node bytes out and in (the most of them), the bytes crossing from
    the first half of the nodes to the second and back, the most bytes a rank sends to
    other ranks (mpix-bench's payload_bytes of pmpi), the largest block, and the most
    non-empty messages a rank sends plus receives in a direct exchange (a peer's floor)."""
    nodes = (P + ppn - 1) // ppn
    half = nodes // 2
    out = [0] * nodes
    inn = [0] * nodes
    a_to_b = b_to_a = 0
    max_rank_send = 0
    max_block = 0
    total = 0
    sends = [0] * P
    recvs = [0] * P
    for src in range(P):
        sn = src // ppn
        sent = 0
        for dst in range(P):
            b = block_bytes(dist, S, src, dst, P, seed)
            if not b:
                continue
            if b > max_block:
                max_block = b
            if dst == src:
                continue
            total += b
            sent += b
            sends[src] += 1
            recvs[dst] += 1
            dn = dst // ppn
            if dn != sn:
                out[sn] += b
                inn[dn] += b
                if sn < half <= dn:
                    a_to_b += b
                elif dn < half <= sn:
                    b_to_a += b
        max_rank_send = max(max_rank_send, sent)
    return {
        "nodes": nodes,
        "node_out_max": max(out),
        "node_in_max": max(inn),
        "a_to_b": a_to_b,
        "b_to_a": b_to_a,
        "max_rank_send": max_rank_send,
        "max_block": max_block,
        "total": total,
        "max_rank_messages": max(s + r for s, r in zip(sends, recvs)) if P else 0,
    }
