#!/bin/bash
# pty-forwarding.sh: pty → rig → pty forwarding with no impairment, next to
# `chrt -f PROBE_PRIO socat` forwarding between the same kind of pty pairs,
# timed by the same external probe.
#
# Each run: `hilrig run` on two pty endpoints (line framing) with an empty
# hop each way, then socat joining two pseudo-terminals of its own (raw, at
# SCHED_FIFO PROBE_PRIO); in both, tests/perf/probe writes a 29-byte line
# each way every PERIOD for DUR from a thread at SCHED_FIFO PROBE_PRIO and
# times each line's arrival on the other side (threads at the same
# priority). The probe holds /dev/cpu_dma_latency at 0 in both, as the rig
# does of itself, so that the forwarders are measured on the same machine
# (-idle-poll=false in PROBE_ARGS measures socat as it runs alone). Binaries
# and socat alternate run by run. Settings: see lib.sh.
#
# A frame through the rig crosses four pty pairs (the rig's pty endpoint
# is two pairs joined by a bridge, so that the rig runs the serial driver
# on a real /dev/pts device), through socat two: each crossing is a
# kernel worker (flush_to_ldisc, SCHED_OTHER) to be scheduled.
#
#   sudo tests/perf/pty-forwarding.sh
source "$(dirname "$0")/lib.sh"
command -v socat >/dev/null || { echo "socat is missing (Debian: apt-get install socat)" >&2; exit 2; }
profile nodelay 0
results=$OUT/pty-forwarding.txt
echo "pty-forwarding: $RUNS runs of $DUR at $PERIOD each way; files in $OUT ($(machine))" >&2
for run in $(seq "$RUNS"); do
	for spec in $HILRIG; do
		rig_run "${spec%%=*}" "${spec#*=}" nodelay 0 "$results"
	done
	chrt -f "$PROBE_PRIO" socat PTY,link="$OUT/socat-a",rawer PTY,link="$OUT/socat-b",rawer &
	socat=$!
	"$probe" pty -to "$OUT/socat-a" -from "$OUT/socat-b" -back -period "$PERIOD" -for "$DUR" \
		-prio "$PROBE_PRIO" ${PROBE_ARGS:-} socat >>"$results"
	kill "$socat"
	wait "$socat" 2>/dev/null || true
	echo "  socat: $(tail -1 "$results") ($(machine))" >&2
done
"$probe" table < <(grep -v -- '-release ' "$results")
