#!/usr/bin/env python3
"""libmpix_interpose.so on programs never built for mpix (tests/interpose/).

  test_interpose.py MODE INTERPOSER C_PROGRAM FORTRAN_COMPILER LAUNCHER [ARGS...]

MODE c: the C program (exchange.c), 3 ranks, without LD_PRELOAD, then with it
(auto; algorithms from the environment; MPIX_INTERPOSE=0), communicators freed in
both orders: every rank prints the same lines in every run, MPIX_VERBOSE=1 shows
mpix's choices ("[mpix]" lines naming the algorithms; with MPICH 4, the persistent
MPI_Alltoall(v)_init made mpix requests) and its fallback on an intercommunicator
and on aliased buffers, and MPIX_INTERPOSE=0 shows nothing of mpix.
MODE fortran: exchange_mpi.f90 (use mpi) and exchange_f08.f90 (use mpi_f08),
compiled here with the MPI's own Fortran wrapper; the same comparisons. With MPICH
also persistent_f08.f90 (MPI_Alltoall(v)_init), which the interposer leaves to MPI.
MODE linked: linked.c, which links libmpix, run with the interposer preloaded: the
library's own MPI_Alltoall(v) calls are left to MPI (one decision line per call,
each the algorithm asked for, none of auto's).
MODE errors: errors.c, 3 ranks, without and with the interposer: the class each
erroneous call returns and the calls of the program's error handler are the same
(MPI_Start on an active persistent MPI_Alltoall_init request, with MPICH 4, among
them); with MPIX_VERBOSE=1, mpix's message of that start. With arguments wrong on
one rank only, where MPI hangs: with the interposer, every rank fails the call. Then the same start under
the default handler: the run ends there in both, and with the interposer mpix's
message is on stderr.
MODE lifecycle: lifecycle.c, 3 ranks, without and with the interposer, the same
lines: MPI_Request_get_status leaves a persistent request active for the completion
after it (MPI 4), a delete callback on MPI_COMM_SELF that MPI_Finalize runs makes
persistent and blocking exchanges, and (MPI 4) a communicator of a session, without
MPI_Init, exchanges. With the interposer, MPIX_VERBOSE shows that mpix made the
persistent request.
MODE valgrind: the C program at 2 ranks under valgrind with the interposer: no
block that mpix's code allocated is lost (MPI's own losses are MPI's).
Exit 77 (skipped) when the Fortran compiler or valgrind is missing.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# mpix's decision lines (MPIX_VERBOSE=1) start with "[mpix]" and the operation,
# "[mpix] alltoallv on 3 ranks ..." or "[mpix] MPIX_Alltoallv: ...", and name the
# algorithm; matched without case.
ALLTOALL = r"(?i)^\[mpix\] (mpix_)?alltoall(_plan)?\b"
ALLTOALLV = r"(?i)^\[mpix\] (mpix_)?alltoallv(_plan)?\b"


def run(launcher, ranks, program, args=(), env=None, wrapper=()):
    """Stdout lines sorted (ranks print in any order), and stderr."""
    env_args = ["env"] + [f"{k}={v}" for k, v in (env or {}).items()]
    cmd = launcher + ["-n", str(ranks)] + env_args + list(wrapper) + [program] + list(args)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return sorted(result.stdout.splitlines()), result.stderr


def mpix_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("[mpix]")]


def compare(name, reference, lines):
    if lines != reference:
        diff = [f"- {a}\n+ {b}" for a, b in zip(reference, lines) if a != b][:5]
        sys.exit(f"FAIL: {name}: output differs from the run without the interposer\n" + "\n".join(diff))
    print(f"ok: {name}: {len(lines)} lines as without the interposer")


def expect_lines(name, stderr, patterns):
    lines = mpix_lines(stderr)
    for pattern in patterns:
        if not any(re.search(pattern, line) for line in lines):
            sys.exit(f"FAIL: {name}: no [mpix] line matches {pattern!r}; stderr:\n{stderr}")
    print(f"ok: {name}: [mpix] lines match {patterns}")


def check_program(name, launcher, program, interposer, args=()):
    ranks = 3
    reference, stderr = run(launcher, ranks, program, args)
    if mpix_lines(stderr):
        sys.exit(f"FAIL: {name}: [mpix] lines without the interposer:\n{stderr}")
    preload = {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1"}
    lines, stderr = run(launcher, ranks, program, args, preload)
    compare(f"{name} auto", reference, lines)
    expect_lines(f"{name} auto", stderr, [ALLTOALL, ALLTOALLV])
    chosen = dict(preload, MPIX_ALLTOALL_ALGORITHM="bruck", MPIX_ALLTOALLV_ALGORITHM="pairwise")
    lines, stderr = run(launcher, ranks, program, args, chosen)
    compare(f"{name} bruck/pairwise", reference, lines)
    expect_lines(f"{name} bruck/pairwise", stderr,
                 [ALLTOALL + r".*\bbruck\b", ALLTOALLV + r".*\bpairwise\b"])
    if "exchange: persistent collectives" in stderr:
        expect_lines(f"{name} persistent", stderr,
                     [r"^\[mpix\] interpose: MPI_Alltoall_init: an mpix persistent request",
                      r"^\[mpix\] interpose: MPI_Alltoallv_init: an mpix persistent request"])
    return reference, stderr


def mode_c(interposer, program, launcher):
    check_program("C", launcher, program, interposer)
    preload = {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1", "MPIX_ALLTOALLV_ALGORITHM": "nonblocking"}
    reference, _ = run(launcher, 3, program, ["reverse"])
    forward = reference  # freeing order does not change what is printed
    lines, stderr = run(launcher, 3, program, ["reverse"], preload)
    compare("C, communicators freed in reverse", reference, lines)
    expect_lines("C fallbacks", stderr, [r"^\[mpix\] interpose: MPI_Alltoall: an intercommunicator; calling PMPI_Alltoall",
                                         r"^\[mpix\] interpose: MPI_Alltoall: .*same buffer"])
    inter = [line for line in mpix_lines(stderr) if "an intercommunicator" in line]
    if len(inter) != 1:  # one line per communicator, not one per group
        sys.exit("FAIL: the intercommunicator fallback is reported %d times:\n%s" % (len(inter), "\n".join(inter)))
    off = dict(preload, MPIX_INTERPOSE="0")
    lines, stderr = run(launcher, 3, program, [], off)
    compare("C, MPIX_INTERPOSE=0", forward, lines)
    if mpix_lines(stderr):
        sys.exit(f"FAIL: MPIX_INTERPOSE=0 still routes through mpix:\n{stderr}")
    print("ok: MPIX_INTERPOSE=0: no [mpix] line")
    # A hint mpix cannot follow: MPI does the work, and rank 0 says so once, also
    # without MPIX_VERBOSE.
    typo = {"LD_PRELOAD": interposer, "MPIX_ALLTOALLV_ALGORITHM": "fast"}
    lines, stderr = run(launcher, 3, program, [], typo)
    compare("C, MPIX_ALLTOALLV_ALGORITHM=fast", forward, lines)
    said = [line for line in mpix_lines(stderr) if "MPIX_ALLTOALLV_ALGORITHM (environment)=fast" in line]
    if len(said) != 1 or "calling PMPI_Alltoallv" not in said[0]:
        sys.exit(f"FAIL: a malformed MPIX_ALLTOALLV_ALGORITHM is not said once:\n{stderr}")
    print("ok: a malformed hint is said once without MPIX_VERBOSE")
    # The same for an environment variable outside the info keys (MPIX_ERR_ARG).
    cma = {"LD_PRELOAD": interposer, "MPIX_ALLTOALLV_ALGORITHM": "ipc_hybrid", "MPIX_CMA": "fast"}
    lines, stderr = run(launcher, 3, program, [], cma)
    compare("C, MPIX_CMA=fast", forward, lines)
    said = [line for line in mpix_lines(stderr) if "MPIX_CMA=fast (environment)" in line]
    if len(said) != 1:
        sys.exit(f"FAIL: a malformed MPIX_CMA is not said once:\n{stderr}")
    print("ok: a malformed MPIX_CMA is said once without MPIX_VERBOSE")
    # MPIX_INTERPOSE takes the words MPIX_VERBOSE takes.
    lines, stderr = run(launcher, 3, program, [], dict(preload, MPIX_INTERPOSE="off"))
    compare("C, MPIX_INTERPOSE=off", forward, lines)
    if mpix_lines(stderr):
        sys.exit(f"FAIL: MPIX_INTERPOSE=off still routes through mpix:\n{stderr}")
    print("ok: MPIX_INTERPOSE=off: no [mpix] line")
    # A hint set on rank 1 alone: ranks that differ are said without MPIX_VERBOSE,
    # and under it the rank whose value is wrong names it (the others say "another rank").
    def on_rank_1(assignment):
        return ("sh", "-c", 'if [ "${PMI_RANK:-$OMPI_COMM_WORLD_RANK}" = 1 ]; then export %s; fi; exec "$@"' % assignment,
                "sh")
    lines, stderr = run(launcher, 3, program, [], {"LD_PRELOAD": interposer},
                        wrapper=on_rank_1("MPIX_ALLTOALLV_ALGORITHM=pairwise"))
    compare("C, MPIX_ALLTOALLV_ALGORITHM on one rank", forward, lines)
    said = [line for line in mpix_lines(stderr) if "MPI_Alltoallv: MPIX_Alltoallv: ranks asked for different" in line]
    if len(said) != 1 or "calling PMPI_Alltoallv" not in said[0]:
        sys.exit(f"FAIL: an algorithm asked for on one rank only is not said once:\n{stderr}")
    lines, stderr = run(launcher, 3, program, [], {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1"},
                        wrapper=on_rank_1("MPIX_ALLTOALLV_ALGORITHM=fast"))
    compare("C, MPIX_ALLTOALLV_ALGORITHM=fast on one rank", forward, lines)
    if not any("MPIX_ALLTOALLV_ALGORITHM (environment)=fast" in line for line in mpix_lines(stderr)):
        sys.exit(f"FAIL: the rank with a malformed hint does not name it under MPIX_VERBOSE:\n{stderr}")
    print("ok: a hint on one rank only: said without MPIX_VERBOSE, named by its rank with it")


def run_failing(launcher, ranks, program, args, env=None):
    """A run that must fail: its stdout and stderr."""
    env_args = ["env"] + [f"{k}={v}" for k, v in (env or {}).items()]
    cmd = launcher + ["-n", str(ranks)] + env_args + [program] + list(args)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if result.returncode == 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited 0\n{result.stdout}\n{result.stderr}")
    return result.stdout, result.stderr


def mode_errors(interposer, program, launcher):
    reference, stderr = run(launcher, 3, program)
    persistent = "no MPI_Alltoall_init" not in stderr
    lines, stderr = run(launcher, 3, program, (), {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1"})
    compare("errors", reference, lines)
    # Open MPI 4.1 takes aliased buffers without an error: class=0 lines call nothing.
    if any("handler_calls=0" in line and " class=0 " not in line for line in lines):
        sys.exit("FAIL: errors: an error that did not call the handler:\n" + "\n".join(lines))
    mode_errors_one_rank(interposer, program, launcher)
    if not persistent:
        print("ok: errors: no MPI_Alltoall_init in this MPI; the persistent cases are not run")
        return
    expect_lines("errors", stderr, [r"^\[mpix\] interpose: MPI_Alltoall_init: an mpix persistent request",
                                    r"^\[mpix\] interpose: MPI_Start: .*already active"])
    run_failing(launcher, 3, program, ["fatal"])
    stdout, stderr = run_failing(launcher, 3, program, ["fatal"], {"LD_PRELOAD": interposer})
    if "survived" in stdout:
        sys.exit(f"FAIL: errors: MPI_Start on an active request did not end the run:\n{stdout}\n{stderr}")
    expect_lines("errors, fatal", stderr, [r"^\[mpix\] interpose: MPI_Start: .*already active"])
    print("ok: errors: the start on an active request ends the run, with mpix's message")


def mode_errors_one_rank(interposer, program, launcher):
    """Arguments wrong on rank 1 only (without the interposer, MPI hangs): every rank
    returns an error and calls its handler once with it, rank 1 with MPI's class for
    its fault (MPI_ERR_COUNT for a negative count, MPI_ERR_TRUNCATE for a block
    larger than it expects), rank 1 prints mpix's message, and the next right call
    works."""
    lines, stderr = run(launcher, 3, program, ["one-rank"], {"LD_PRELOAD": interposer})
    calls = [line for line in lines if " one-rank-" in line]
    count_class = next((line.split("=")[1] for line in lines if " MPI_ERR_COUNT=" in line), None)
    truncate_class = next((line.split("=")[1] for line in lines if " MPI_ERR_TRUNCATE=" in line), None)
    pattern = re.compile(r"^rank (\d) one-rank-\S+ class=(\d+) handler_calls=1 handler_class=(\d+)$")
    for line in calls:
        match = pattern.match(line)
        if not match or match.group(2) == "0" or match.group(2) != match.group(3):
            sys.exit("FAIL: errors, one rank: a call that did not fail through the handler:\n" + "\n".join(lines))
        expected = truncate_class if "-truncated " in line else count_class
        if match.group(1) == "1" and match.group(2) != expected:
            sys.exit(f"FAIL: errors, one rank: rank 1's class is not MPI's ({expected}):\n" + "\n".join(lines))
    if len(calls) < 9 or sorted(line for line in lines if " after " in line) != \
            [f"rank {r} after rc=0 right" for r in range(3)]:
        sys.exit("FAIL: errors, one rank:\n" + "\n".join(lines) + "\n" + stderr)
    expect_lines("errors, one rank", stderr, [r"^\[mpix\] interpose: MPI_Alltoall: .*sendcount=-1: must be >= 0",
                                              r"^\[mpix\] interpose: MPI_Alltoallv: .*counts\[0\]=-1"])
    print(f"ok: errors, one rank: {len(calls)} calls failed on every rank through the handler, the next one works")


def mode_linked(interposer, program, launcher):
    env = {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1"}
    lines, stderr = run(launcher, 3, program, [], env)
    if len(lines) != 9 or any(not line.endswith(" right") for line in lines):
        sys.exit("FAIL: linked: wrong results:\n" + "\n".join(lines))
    decisions = [line for line in mpix_lines(stderr) if re.search(ALLTOALL, line) or re.search(ALLTOALLV, line)]
    if len(decisions) != 3 or any("(asked for)" not in line for line in decisions):
        sys.exit("FAIL: linked: the library's own calls went through the interposer's mpix:\n" + stderr)
    expect_lines("linked", stderr, [r"^\[mpix\] interpose: MPI_Alltoallv?: a communicator of the libmpix linked"])
    print("ok: linked: the library's own calls went to MPI, one decision per call")


def mode_fortran(interposer, fortran_compiler, launcher):
    if not shutil.which(fortran_compiler):
        print(f"skip: {fortran_compiler} not found")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        for source in ("exchange_mpi.f90", "exchange_f08.f90"):
            program = os.path.join(tmp, source[:-4])
            subprocess.run([fortran_compiler, "-w", "-o", program, os.path.join(HERE, source)], check=True,
                           cwd=tmp)
            check_program(f"Fortran {source}", launcher, program, interposer)
        # MPI-4's persistent collectives (MPICH; Open MPI 4.1 has none): MPICH's
        # mpi_f08 drives them through PMPI_, so the interposer leaves them to MPI.
        if "mpich" in fortran_compiler:
            program = os.path.join(tmp, "persistent_f08")
            subprocess.run([fortran_compiler, "-w", "-o", program, os.path.join(HERE, "persistent_f08.f90")],
                           check=True, cwd=tmp)
            reference, _ = run(launcher, 3, program, ())
            lines, stderr = run(launcher, 3, program, (), {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1"})
            compare("Fortran persistent_f08.f90", reference, lines)
            expect_lines("Fortran persistent_f08.f90", stderr,
                         [r"^\[mpix\] interpose: MPI_Alltoall_init: called by MPICH's Fortran library",
                          r"^\[mpix\] interpose: MPI_Alltoallv_init: called by MPICH's Fortran library"])
            # Turned off, the interposer says nothing there either (it named the caller).
            lines, stderr = run(launcher, 3, program, (),
                                {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1", "MPIX_INTERPOSE": "0"})
            compare("Fortran persistent_f08.f90, MPIX_INTERPOSE=0", reference, lines)
            if mpix_lines(stderr):
                sys.exit("FAIL: Fortran persistent_f08.f90, MPIX_INTERPOSE=0: [mpix] lines:\n" + stderr)


def mode_lifecycle(interposer, program, launcher):
    for args in (["world"], ["session"]):
        reference, _ = run(launcher, 3, program, args)
        if not reference and args == ["session"]:
            print("ok: lifecycle: no MPI 4 Sessions in this MPI; not run")
            continue
        if any(re.search(r"rc=[1-9]|right=0|refused=0|index=-1", line) for line in reference):
            sys.exit("FAIL: lifecycle %s: wrong without the interposer:\n%s" % (args[0], "\n".join(reference)))
        lines, stderr = run(launcher, 3, program, args, {"LD_PRELOAD": interposer, "MPIX_VERBOSE": "1"})
        compare(f"lifecycle {args[0]}", reference, lines)
        if any("get_status" in line for line in reference):
            expect_lines("lifecycle", stderr, [r"^\[mpix\] interpose: MPI_Alltoallv_init: an mpix persistent request"])


def mode_valgrind(interposer, program, launcher):
    if not shutil.which("valgrind"):
        print("skip: valgrind not found")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "vg.%p")
        run(launcher, 2, program, ["reverse"], {"LD_PRELOAD": interposer},
            ["valgrind", "-q", "--leak-check=full", "--show-leak-kinds=definite,indirect",
             "--num-callers=30", f"--log-file={log}"])
        logs = glob.glob(os.path.join(tmp, "vg.*"))
        if len(logs) != 2:
            sys.exit(f"FAIL: expected 2 valgrind logs, found {len(logs)}")
        ours = 0
        for path in logs:
            text = open(path).read()
            for record in re.split(r"\n==\d+== \n", text):
                if "lost in loss record" not in record:
                    continue
                frames = re.findall(r"(?:at|by) 0x[0-9A-F]+: (.*)", record)
                # The frame that asked for the memory, past the allocators (malloc,
                # strdup, operator new, the C++ runtime): a function of mpix or the
                # interposer there is a leak of ours; one of the MPI library (the
                # attribute table Open MPI keeps for MPI_COMM_WORLD) is MPI's.
                for frame in frames[1:]:
                    if re.match(r"(strn?dup|operator new|std::|__gnu_cxx::)", frame) or "libstdc++" in frame:
                        continue
                    if re.search(r"\bmpix|MPIX_", frame):
                        ours += 1
                        print(f"LEAK in {path}:\n{record}")
                    break
        if ours:
            sys.exit(f"FAIL: {ours} block(s) allocated by mpix were lost")
        print(f"ok: valgrind: nothing allocated by mpix or the interposer is lost ({len(logs)} ranks)")


def main():
    mode, interposer, program, fortran_compiler = sys.argv[1:5]
    launcher = sys.argv[5:]
    if mode == "c":
        mode_c(interposer, program, launcher)
    elif mode == "fortran":
        mode_fortran(interposer, fortran_compiler, launcher)
    elif mode == "errors":
        mode_errors(interposer, program, launcher)
    elif mode == "linked":
        mode_linked(interposer, program, launcher)
    elif mode == "lifecycle":
        mode_lifecycle(interposer, program, launcher)
    elif mode == "valgrind":
        mode_valgrind(interposer, program, launcher)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
