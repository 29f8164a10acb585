#!/usr/bin/python3
"""Writes the SimGrid platforms of bench/platforms/ and their sidecars.

    bench/platforms/generate.py            # rewrites fattree, torus, dragonfly .xml/.json

One source of truth for each simulated machine: the cluster parameters go into
<name>.xml (SimGrid 3.32 platform, with the SMPI model settings in its <config>), and
what the lower bound of bench/simulate needs goes into <name>.json: latencies,
per-node injection bandwidth, loopback (intra-node) link, per-message overheads and
the bisection bandwidth between the first and the second half of the first N
hosts, for every N, computed here as a maximum flow over the same link graph that
SimGrid builds (so any routing, not just SimGrid's static one, is allowed: the
bound stays a bound). See bench/platforms/README.md for what each machine stands for.
Standard library only.
"""
import collections
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

GB = 1e9  # SimGrid's "GBps" is 10^9 bytes per second
US = 1e-6

# Every platform: one <cluster> of SimGrid's topology zones, full-duplex links
# (SPLITDUPLEX: each direction has the whole bandwidth), a loopback link per host
# for intra-node messages (SimGrid makes it a FATPIPE: every intra-node message
# gets its full bandwidth), and the SMPI settings in <config>.
PLATFORMS = {
    "fattree": dict(
        machine="LLNL Quartz (paper 001): Intel Omni-Path 100 Gb/s, two-level fat tree",
        topology="FAT_TREE",
        # 2 levels; 16 hosts per leaf switch, 16 leaves per spine; each host has
        # 1 uplink, each leaf one uplink to each of the 16 spines: non-blocking.
        topo_parameters="2;16,16;1,16;1,1",
        hosts=256,
        link_bw=12.5 * GB,  # Omni-Path 100 Gb/s per port and direction
        link_lat=0.2 * US,  # per link: host-leaf-host 0.4 us, host-leaf-spine-leaf-host 0.8 us
        loopback_bw=20 * GB,
        loopback_lat=0.15 * US,
        overhead=0.25 * US,  # smpi/os, smpi/ois, smpi/or: CPU time per send and per receive
    ),
    "torus": dict(
        machine="Fugaku Tofu-D (paper 000): 6D mesh/torus, 6.8 GB/s links; here a 3D torus",
        topology="TORUS",
        topo_parameters="8,8,4",
        hosts=256,
        link_bw=6.8 * GB,  # Tofu-D link bandwidth per direction
        link_lat=0.15 * US,  # per hop; nearest neighbour 0.15 us + overheads ~ Tofu-D's 0.5 us
        loopback_bw=20 * GB,
        loopback_lat=0.1 * US,
        overhead=0.2 * US,
    ),
    "dragonfly": dict(
        machine="ALCF Polaris (paper 000): HPE Slingshot 11 (200 Gb/s), dragonfly",
        topology="DRAGONFLY",
        # 16 groups, 2 global (blue) links between every two groups; 1 chassis per
        # group; 16 routers per chassis, all-to-all (green, 1 link); 1 host per router.
        topo_parameters="16,2;1,1;16,1;1",
        hosts=256,
        link_bw=25 * GB,  # Slingshot 200 Gb/s per port and direction
        link_lat=0.3 * US,  # per link: same router 0.6 us, other group up to 1.5 us
        loopback_bw=30 * GB,
        loopback_lat=0.15 * US,
        overhead=0.25 * US,
    ),
    # Two machines the model was not tuned on (a generalisation check, not project platforms).
    "ethernet": dict(
        machine="Commodity 25 GbE cluster (RoCE/TCP-class MPI): slow links, microsecond latencies and overheads, "
        "2:1 oversubscribed two-level fat tree",
        topology="FAT_TREE",
        # 2 levels; 4 hosts per leaf switch, 64 leaves; each host has 1 uplink, each leaf
        # one uplink to each of 2 spines: 4 hosts' injection over 2 uplinks (2:1 taper),
        # so a job of 8 nodes (2 leaves) crosses the spines through half its injection.
        topo_parameters="2;4,64;1,2;1,1",
        hosts=256,
        link_bw=2.5 * GB,  # 25 GbE, ~20 Gb/s effective per direction
        link_lat=2.0 * US,  # per link: same leaf 4 us, through a spine 8 us
        loopback_bw=10 * GB,
        loopback_lat=0.3 * US,
        overhead=1.0 * US,  # CPU time per send and per receive: a software-heavy stack
    ),
    "fatnode": dict(
        machine="Fast network (400 Gb/s class, sub-microsecond) with slow intra-node copies: "
        "the loopback is slower than a network link",
        topology="FAT_TREE",
        topo_parameters="2;16,16;1,16;1,1",  # as fattree: non-blocking, 16 hosts per leaf
        hosts=256,
        link_bw=50 * GB,  # 400 Gb/s per port and direction
        link_lat=0.1 * US,  # per link: same leaf 0.2 us, through a spine 0.4 us
        loopback_bw=8 * GB,  # intra-node copies slower than one network link
        loopback_lat=0.3 * US,  # and a higher latency than a same-leaf network route
        overhead=0.1 * US,
    ),
    "lowlat": dict(
        machine="Slow network with cheap messages: 1 GB/s links of 0.05 us, 0.05 us per send and receive, "
        "fast intra-node copies; 16 nodes",
        topology="FAT_TREE",
        topo_parameters="2;4,4;1,4;1,1",  # 4 hosts per leaf, 4 leaves, non-blocking
        hosts=16,
        link_bw=1 * GB,  # where many small messages are limited by their bytes on the link, not by o
        link_lat=0.05 * US,
        loopback_bw=40 * GB,
        loopback_lat=0.05 * US,
        overhead=0.05 * US,
    ),
}


def smpi_config(p):
    """The SMPI model settings every platform carries (a --cfg on the command line wins)."""
    o = "0:%g:0" % p["overhead"]  # size:startup seconds:per-byte seconds
    return [
        ("smpi/simulate-computation", "no", "real CPU bursts are not timed (noise); library copies are charged instead"),
        ("smpi/bw-factor", "0:1", "link bandwidths are effective MPI bandwidths: no per-size correction"),
        ("smpi/lat-factor", "0:1", "link latencies are effective: no per-size correction"),
        ("smpi/os", o, "LogGP o: CPU time of every MPI_Send"),
        ("smpi/ois", o, "CPU time of every MPI_Isend"),
        ("smpi/or", o, "CPU time of every receive"),
        ("smpi/test", "1e-7", "an MPI_Test costs 0.1 us (SMPI's default 100 us penalises polling)"),
        ("smpi/iprobe", "1e-7", "same for MPI_Iprobe"),
        ("smpi/grow-injected-times", "no", "constant cost per test, no back-off"),
    ]


def write_xml(name, p):
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        "<!-- Generated by bench/platforms/generate.py: edit that file, not this one. -->",
        "<!-- %s -->" % p["machine"],
        '<platform version="4.1">',
        "  <config>",
    ]
    for key, value, why in smpi_config(p):
        lines.append('    <prop id="%s" value="%s"/> <!-- %s -->' % (key, value, why))
    lines += [
        "  </config>",
        '  <cluster id="%s" prefix="node-" suffix="" radical="0-%d" speed="1Gf"' % (name, p["hosts"] - 1),
        '           bw="%gGBps" lat="%gus" sharing_policy="SPLITDUPLEX"' % (p["link_bw"] / GB, p["link_lat"] / US),
        '           loopback_bw="%gGBps" loopback_lat="%gus"' % (p["loopback_bw"] / GB, p["loopback_lat"] / US),
        '           topology="%s" topo_parameters="%s"/>' % (p["topology"], p["topo_parameters"]),
        "</platform>",
        "",
    ]
    with open(os.path.join(HERE, name + ".xml"), "w") as f:
        f.write("\n".join(lines))


# --- link graphs ------------------------------------------------------------------
# Undirected edges (a, b, bandwidth); every edge carries `bandwidth` in each
# direction (SPLITDUPLEX). Hosts are ("h", i).


def fat_tree_edges(p):
    levels, down, up, count = p["topo_parameters"].split(";")
    assert levels == "2"
    down = [int(x) for x in down.split(",")]
    up = [int(x) for x in up.split(",")]
    count = [int(x) for x in count.split(",")]
    per_leaf, leaves = down
    assert up[0] == 1 and per_leaf * leaves == p["hosts"]
    spines = up[1]
    bw = p["link_bw"]
    edges = []
    for h in range(p["hosts"]):
        edges.append((("h", h), ("leaf", h // per_leaf), bw * count[0]))
    for leaf in range(leaves):
        for s in range(spines):
            edges.append((("leaf", leaf), ("spine", s), bw * count[1]))
    return edges


def torus_dims(p):
    return [int(x) for x in p["topo_parameters"].split(",")]


def torus_edges(p):
    dims = torus_dims(p)
    bw = p["link_bw"]
    edges = []
    n = p["hosts"]
    stride = 1
    for d in dims:
        for h in range(n):
            coord = (h // stride) % d
            nxt = h - coord * stride + ((coord + 1) % d) * stride
            if d > 1:  # SimGrid: one link per host and dimension, to the next host
                edges.append((("h", h), ("h", nxt), bw))
        stride *= d
    return edges


def dragonfly_parts(p):
    g, c, r, n = p["topo_parameters"].split(";")
    groups, blue = [int(x) for x in g.split(",")]
    chassis, black = [int(x) for x in c.split(",")]
    routers, green = [int(x) for x in r.split(",")]
    return groups, blue, chassis, black, routers, green, int(n)


def dragonfly_edges(p):
    groups, blue, chassis, black, routers, green, nodes = dragonfly_parts(p)
    assert groups * chassis * routers * nodes == p["hosts"]
    assert groups <= routers, "SimGrid attaches group j's global link to router j of chassis 0"
    bw = p["link_bw"]
    edges = []
    for h in range(p["hosts"]):
        edges.append((("h", h), ("r", h // nodes), bw))

    def rid(gr, ch, bl):
        return ("r", (gr * chassis + ch) * routers + bl)

    for gr in range(groups):
        for ch in range(chassis):
            for a in range(routers):
                for b in range(a + 1, routers):
                    edges.append((rid(gr, ch, a), rid(gr, ch, b), bw * green))
        for a in range(chassis):
            for b in range(a + 1, chassis):
                for bl in range(routers):
                    edges.append((rid(gr, a, bl), rid(gr, b, bl), bw * black))
    for i in range(groups):
        for j in range(i + 1, groups):
            edges.append((rid(i, 0, j), rid(j, 0, i), bw * blue))
    return edges


def edges_of(p):
    return {"FAT_TREE": fat_tree_edges, "TORUS": torus_edges, "DRAGONFLY": dragonfly_edges}[p["topology"]](p)


def route(p, src, dst):
    """The nodes a message from host src to host dst goes through, as SimGrid 3.32
    routes it (FatTreeZone, TorusZone, DragonflyZone get_local_route)."""
    if p["topology"] == "FAT_TREE":
        per_leaf = int(p["topo_parameters"].split(";")[1].split(",")[0])
        spines = int(p["topo_parameters"].split(";")[2].split(",")[1])
        ls, ld = src // per_leaf, dst // per_leaf
        if ls == ld:
            return [("h", src), ("leaf", ls), ("h", dst)]
        # up: d-mod-k on the destination's position
        return [("h", src), ("leaf", ls), ("spine", dst % spines), ("leaf", ld), ("h", dst)]
    if p["topology"] == "TORUS":
        dims = torus_dims(p)
        path = [("h", src)]
        mine, target = [], []
        product = 1
        for d in dims:
            mine.append((src // product) % d)
            target.append((dst // product) % d)
            product *= d
        current = src
        while current != dst:
            product = 1
            for j, d in enumerate(dims):
                c = (current // product) % d
                if c != (dst // product) % d:
                    right = (target[j] > mine[j] and target[j] <= mine[j] + d // 2) or (
                        mine[j] > d // 2 and (mine[j] + d // 2) % d >= target[j])
                    if right:
                        current = current + product - product * d if c == d - 1 else current + product
                    else:
                        current = current - product + product * d if c == 0 else current - product
                    break
                product *= d
            path.append(("h", current))
        return path
    groups, blue, chassis, black, routers, green, nodes = dragonfly_parts(p)

    def coords(h):
        r = h // nodes
        return r // (chassis * routers), (r // routers) % chassis, r % routers

    def rid(gr, ch, bl):
        return ("r", (gr * chassis + ch) * routers + bl)

    (gs, cs, bs), (gd, cd, bd) = coords(src), coords(dst)
    path = [("h", src), rid(gs, cs, bs)]
    cur = [gs, cs, bs]
    if (gs, cs, bs) != (gd, cd, bd):
        if gd != gs:
            if cur[2] != gd:  # to the router of our chassis numbered like the target group
                cur[2] = gd
                path.append(rid(*cur))
            if cur[1] != 0:  # to chassis 0, which holds the global links
                cur[1] = 0
                path.append(rid(*cur))
            cur = [gd, 0, gs]  # the global (blue) link
            path.append(rid(*cur))
        if bd != cur[2]:
            cur[2] = bd
            path.append(rid(*cur))
        if cd != cur[1]:
            cur[1] = cd
            path.append(rid(*cur))
    path.append(("h", dst))
    return path


def route_arcs(p, src, dst):
    path = route(p, src, dst)
    return list(zip(path, path[1:]))


def max_flow(edges, sources, sinks, allowed=None):
    """Maximum flow (bytes/s) from the host set `sources` to `sinks` (Dinic); with
    `allowed`, a link carries flow only in the directions listed there."""
    index = {}

    def node(x):
        if x not in index:
            index[x] = len(index)
        return index[x]

    S, T = node("source"), node("sink")
    graph = collections.defaultdict(list)  # node -> [edge ids]
    to, cap = [], []

    def arc(a, b, c, back):
        graph[a].append(len(to))
        to.append(b)
        cap.append(c)
        graph[b].append(len(to))
        to.append(a)
        cap.append(back)

    for a, b, c in edges:  # full duplex: c each way
        if allowed is None:
            arc(node(a), node(b), c, c)
        else:
            forward, backward = (a, b) in allowed, (b, a) in allowed
            if forward or backward:
                arc(node(a), node(b), c if forward else 0, c if backward else 0)
    inf = float("inf")
    for h in sources:
        arc(S, node(("h", h)), inf, 0)
    for h in sinks:
        arc(node(("h", h)), T, inf, 0)
    flow = 0.0
    while True:
        level = {S: 0}
        queue = collections.deque([S])
        while queue:
            u = queue.popleft()
            for e in graph[u]:
                if cap[e] > 1e-9 and to[e] not in level:
                    level[to[e]] = level[u] + 1
                    queue.append(to[e])
        if T not in level:
            return flow
        pointer = {u: 0 for u in level}

        def push(u, limit):
            if u == T:
                return limit
            while pointer[u] < len(graph[u]):
                e = graph[u][pointer[u]]
                v = to[e]
                if cap[e] > 1e-9 and level.get(v) == level[u] + 1:
                    got = push(v, min(limit, cap[e]))
                    if got > 0:
                        cap[e] -= got
                        cap[e ^ 1] += got
                        return got
                pointer[u] += 1
            return 0.0

        while True:
            got = push(S, inf)
            if got <= 0:
                break
            flow += got


def bisection_table(p, edges):
    """{n: (A->B, B->A)} in bytes/s for the first n hosts, A the first n // 2 of them,
    over the link directions that SimGrid's routes between those n hosts use."""
    allowed = set()
    table = {}
    for n in range(2, p["hosts"] + 1):
        new = n - 1
        for h in range(new):
            allowed.update(route_arcs(p, h, new))
            allowed.update(route_arcs(p, new, h))
        a, b = list(range(n // 2)), list(range(n // 2, n))
        table[n] = (max_flow(edges, a, b, allowed), max_flow(edges, b, a, allowed))
    return table


def alltoall_table(p, edges):
    """{n: bytes/s} for the first n hosts: the rate at which the network carries an
    exchange whose inter-node bytes are spread evenly over the n (n - 1) ordered host
    pairs, each pair's bytes on SimGrid's static route. The busiest link direction,
    carrying k pairs' bytes at bandwidth c, drains last: n (n - 1) c / k. Where routes
    of several hops pile onto a few links (a torus's rings) this is tighter than the
    bisection, whose cut the routes need not load evenly."""
    capacity = {}
    for a, b, c in edges:
        capacity[(a, b)] = capacity[(b, a)] = c
    pairs_on = collections.Counter()
    busiest = 0.0  # most pairs per byte/s of capacity on one link direction
    table = {}
    for n in range(2, p["hosts"] + 1):
        new = n - 1
        for h in range(new):
            for src, dst in ((h, new), (new, h)):
                for arc in route_arcs(p, src, dst):
                    pairs_on[arc] += 1
                    busiest = max(busiest, pairs_on[arc] / capacity[arc])
        table[n] = n * (n - 1) / busiest
    return table


def route_latencies(p):
    """(shortest, longest) latency of a route between two different hosts (links only)."""
    lengths = set()
    for h in range(p["hosts"]):
        for d in range(p["hosts"]):
            if h != d:
                lengths.add(len(route(p, h, d)) - 1)
    return min(lengths) * p["link_lat"], max(lengths) * p["link_lat"]


def injection_bandwidth(p):
    """Bytes/s one host can send (and, separately, receive) into the network."""
    if p["topology"] == "TORUS":
        dims = torus_dims(p)
        return sum(2 for d in dims if d > 1) * p["link_bw"]
    return p["link_bw"]


def write_json(name, p):
    edges = edges_of(p)
    edge_set = set((a, b) for a, b, _ in edges) | set((b, a) for a, b, _ in edges)
    for h in range(0, p["hosts"], 7):  # the routes follow existing links
        for d in range(0, p["hosts"], 5):
            if h != d:
                assert all(arc in edge_set for arc in route_arcs(p, h, d)), (h, d)
    bisection = {str(n): list(v) for n, v in bisection_table(p, edges).items()}
    alltoall = {str(n): v for n, v in alltoall_table(p, edges).items()}
    data = {
        "name": name,
        "machine": p["machine"],
        "xml": name + ".xml",
        "hosts": p["hosts"],
        "topology": p["topology"],
        "topo_parameters": p["topo_parameters"],
        "link_bandwidth": p["link_bw"],
        "link_latency": p["link_lat"],
        "injection_bandwidth": injection_bandwidth(p),
        "inter_node_latency_min": route_latencies(p)[0],
        "inter_node_latency_max": route_latencies(p)[1],
        "intra_node_bandwidth": p["loopback_bw"],
        "intra_node_latency": p["loopback_lat"],
        "send_overhead": p["overhead"],
        "recv_overhead": p["overhead"],
        "copy_bandwidth": p["loopback_bw"],
        "bisection_note": "bisection[N] = [A->B, B->A] in bytes/s: maximum flow from hosts 0..N/2-1 "
        "to hosts N/2..N-1 (N = nodes used) over the link directions that SimGrid's static routes "
        "between two of the N hosts use, each carrying the link bandwidth",
        "bisection": bisection,
        "alltoall_note": "alltoall[N] in bytes/s: inter-node bytes spread evenly over the N (N - 1) ordered "
        "pairs of the first N hosts, each on SimGrid's static route, drain at N (N - 1) c / k, where the "
        "busiest link direction carries k pairs at bandwidth c",
        "alltoall": alltoall,
    }
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def main():
    for name, p in PLATFORMS.items():
        write_xml(name, p)
        write_json(name, p)
        print("wrote %s.xml and %s.json" % (name, name))


if __name__ == "__main__":
    main()
