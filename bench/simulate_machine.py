"""bench/simulate's machines: the platform files of bench/platforms/ (loaded and checked), the
lower bound of an exchange on one (docs/performance.md, "The lower bound"), and what smpirun
and mpix are given of it: the host file, the command's prefix and the machine profile."""
import functools
import heapq
import json
import math
import os
import threading
import xml.etree.ElementTree as ElementTree

import workload  # bench/workload.py

HERE = os.path.dirname(os.path.abspath(__file__))
PLATFORM_DIR = os.path.join(HERE, "platforms")

PLATFORMS = ("fattree", "torus", "dragonfly")



class PlatformError(Exception):
    """A platform file that cannot describe a machine: the message names the file and the field."""



# Fields every platform file has (bench/platforms/README.md): positive rates, times >= 0.
PLATFORM_RATES = ("injection_bandwidth", "intra_node_bandwidth", "copy_bandwidth")

PLATFORM_TIMES = ("inter_node_latency_min", "inter_node_latency_max", "intra_node_latency", "send_overhead",
                  "recv_overhead")



def load_platform(name):
    path = os.path.join(PLATFORM_DIR, name + ".json")
    try:
        with open(path) as f:
            plat = json.load(f)
    except (OSError, ValueError) as e:
        raise PlatformError("%s: %s" % (path, e))
    check_platform(plat, path)
    return plat



def xml_host_names(xml_path):
    """The host names a SimGrid platform file declares: <host id> and the
    prefix + radical + suffix of every <cluster> and <cabinet>."""
    names = set()
    for element in ElementTree.parse(xml_path).getroot().iter():
        if element.tag == "host":
            names.add(element.get("id", ""))
        elif element.tag in ("cluster", "cabinet"):
            for part in element.get("radical", "").split(","):
                first, _, last = part.strip().partition("-")
                if not first.isdigit() or (last and not last.isdigit()):
                    raise ValueError("<%s id=\"%s\">: radical '%s' is not a list of N or N-M"
                                     % (element.tag, element.get("id", ""), element.get("radical", "")))
                for i in range(int(first), int(last or first) + 1):
                    names.add("%s%d%s" % (element.get("prefix", ""), i, element.get("suffix", "")))
    return names



def check_platform(plat, path):
    def bad(why):
        raise PlatformError("%s: %s" % (path, why))

    def number(value):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    if not isinstance(plat, dict):
        bad("expected a JSON object")
    for key in ("name", "machine", "xml"):
        if not isinstance(plat.get(key), str) or not plat[key]:
            bad("'%s' missing or not a string" % key)
    stem = os.path.splitext(os.path.basename(path))[0]
    if plat["name"] != stem:
        bad("'name' is '%s' but the file is %s.json (--platforms names the file)" % (plat["name"], stem))
    xml_path = os.path.join(PLATFORM_DIR, plat["xml"])
    if not os.path.exists(xml_path):
        bad("xml: %s not found in %s" % (plat["xml"], PLATFORM_DIR))
    hosts = plat.get("hosts")
    if not isinstance(hosts, int) or isinstance(hosts, bool) or hosts < 1:
        bad("'hosts' missing or not an integer >= 1 (the XML's host count)")
    try:
        names = xml_host_names(xml_path)
    except (ElementTree.ParseError, ValueError) as e:
        bad("xml: %s: %s" % (plat["xml"], e))
    # hostfile() places ranks on node-0 .. node-(hosts-1).
    missing = [i for i in range(hosts) if "node-%d" % i not in names]
    if len(names) != hosts or missing:
        bad("'hosts' is %d but %s has %d hosts%s" % (
            hosts, plat["xml"], len(names),
            "" if not missing else " and no node-%d (ranks are placed on node-0 .. node-%d)" % (missing[0], hosts - 1)))
    for key in PLATFORM_RATES:
        if not number(plat.get(key)) or plat[key] <= 0:
            bad("'%s' missing or not a number > 0 (bytes/s)" % key)
    for key in PLATFORM_TIMES:
        if not number(plat.get(key)) or plat[key] < 0:
            bad("'%s' missing or not a number >= 0 (seconds)" % key)
    if plat["inter_node_latency_max"] < plat["inter_node_latency_min"]:
        bad("inter_node_latency_max is below inter_node_latency_min")
    # Per node count N = 2..hosts: bisection [A->B, B->A] and (optional) alltoall, bytes/s.
    if not isinstance(plat.get("bisection"), dict):
        bad("'bisection' missing: an object of node count -> [A->B, B->A] bytes/s")
    for N in range(2, hosts + 1):
        pair = plat["bisection"].get(str(N))
        if not (isinstance(pair, list) and len(pair) == 2 and all(number(v) and v > 0 for v in pair)):
            bad("bisection[\"%d\"]: expected [A->B, B->A], two numbers > 0 (bytes/s), one for each node count "
                "2..hosts" % N)
    alltoall = plat.get("alltoall", {})
    if not isinstance(alltoall, dict) or any(not number(v) or v < 0 for v in alltoall.values()):
        bad("'alltoall': expected an object of node count -> bytes/s >= 0 (0: no limit)")



_stats_cache = {}

_stats_lock = threading.Lock()



def workload_stats(dist, S, P, ppn):
    key = (dist, S, P, ppn)
    with _stats_lock:
        if key not in _stats_cache:
            _stats_cache[key] = workload.stats(dist, S, P, ppn)
        return _stats_cache[key]



@functools.lru_cache(maxsize=None)
def broadcast_time(P, latency, send_overhead, recv_overhead):
    """The least time in which one rank's data can reach P ranks in the LogP model
    with g = 0: the greedy tree, in which every informed rank sends back to back (one
    message per send_overhead) and a message informs its receiver latency +
    recv_overhead after its send ends (optimal for broadcast in LogP: Karp, Sahay,
    Santos and Schauser, SPAA 1993)."""
    free = [0.0]  # when each informed rank can start its next send
    last = 0.0
    for _ in range(P - 1):
        start = heapq.heappop(free)
        informed = start + send_overhead + latency + recv_overhead
        last = max(last, informed)
        heapq.heappush(free, start + send_overhead)
        heapq.heappush(free, informed)
    return last



def lower_bound(plat, P, ppn, dist, S, overhead_scale):
    """(bound, kind, latency, node, bisection, stats): docs/performance.md, "The lower bound"."""
    st = workload_stats(dist, 0 if dist in workload.FIXED else S, P, ppn)
    nodes = st["nodes"]
    o_s, o_r = plat["send_overhead"] * overhead_scale, plat["recv_overhead"] * overhead_scale
    # Every rank's data must reach every rank: at least a broadcast, each hop at the
    # smaller latency, and, over several nodes, at least one inter-node message.
    hop = min(plat["intra_node_latency"], plat["inter_node_latency_min"]) if nodes > 1 else plat["intra_node_latency"]
    t_lat = broadcast_time(P, hop, o_s, o_r) if P > 1 else 0.0
    if nodes > 1:
        t_lat = max(t_lat, plat["inter_node_latency_min"] + o_s + o_r)
    t_node = t_bis = 0.0
    if nodes > 1:
        t_node = max(st["node_out_max"], st["node_in_max"]) / plat["injection_bandwidth"]
        ab, ba = plat["bisection"][str(nodes)]
        t_bis = max(st["a_to_b"] / ab, st["b_to_a"] / ba)
    terms = {"latency": t_lat, "injection": t_node, "bisection": t_bis}
    kind = max(terms, key=lambda k: terms[k])
    return terms[kind], kind, t_lat, t_node, t_bis, st



def machine_file(plat, P, ppn, scale, workdir):
    """The platform as a machine profile (src/core/model.hpp) for mpix's selection."""
    nodes = (P + ppn - 1) // ppn
    path = os.path.join(workdir, "machine-%s-%d-%d-%g" % (plat["name"], P, ppn, scale))
    if not os.path.exists(path):
        o_s, o_r = plat["send_overhead"] * scale, plat["recv_overhead"] * scale
        lines = {
            "inter_latency": (plat["inter_node_latency_min"] + plat["inter_node_latency_max"]) / 2,
            "intra_latency": plat["intra_node_latency"],
            "inter_send_overhead": o_s, "inter_recv_overhead": o_r,
            # SMPI charges its overheads on every message, inside a node too.
            "intra_send_overhead": o_s, "intra_recv_overhead": o_r,
            "inter_bandwidth": plat["injection_bandwidth"],
            # SMPI carries every message between hosts as its payload plus 16 bytes
            # (measured: 1000 empty messages between two hosts take 16000 B of link
            # time on every platform; none on a host's loopback).
            "inter_message_bytes": 16,
            "intra_bandwidth": plat["intra_node_bandwidth"],
            "copy_bandwidth": plat["copy_bandwidth"],
            "bisection_bandwidth": min(plat["bisection"][str(nodes)]) if nodes > 1 else 0,
            # A sidecar written before generate.py computed it: no limit, as before.
            "alltoall_bandwidth": plat.get("alltoall", {}).get(str(nodes), 0) if nodes > 1 else 0,
            # The loopback moves an intra-node message without CPU copies, and SMPI's
            # collectives cost their messages only.
            "intra_copies": 0,
            "collective_overhead": 0,
            # SMPI matches a message with its receive at no cost, however many are
            # posted (the built-in profile charges real MPIs' list search).
            "match_cost": 0,
            # SMPI sends a message of 64 KiB or more synchronously, its send waiting
            # for the receive (smpi/send-is-detached-thresh's default, which the
            # runs leave as it is; mpix-tune --profile measures 65536 under smpirun).
            "eager_bytes": 65536,
        }
        with open(path, "w") as f:
            f.write("# %s, %d nodes (bench/simulate)\n" % (plat["name"], nodes))
            for key, value in lines.items():
                f.write("%s = %.6g\n" % (key, value))
    return path



def hostfile(plat_name, P, ppn, workdir):
    path = os.path.join(workdir, "hosts-%s-%d-%d" % (plat_name, P, ppn))
    if not os.path.exists(path):
        with open(path, "w") as f:
            for r in range(P):
                f.write("node-%d\n" % (r // ppn))
    return path



def scaled(value_s, scale):
    return "0:%g:0" % (value_s * scale)



def smpirun_prefix(plat, P, hosts):
    """smpirun on `plat` with P ranks placed by `hosts`, SMPI's MPICH selector; the program follows."""
    return ["smpirun", "-np", str(P), "-platform", os.path.join(PLATFORM_DIR, plat["xml"]), "-hostfile", hosts,
            "--cfg=smpi/coll-selector:mpich", "--cfg=maxmin/precision:1e-3"]
