#!/bin/bash
# pty-forwarding.sh: pty → rig → pty forwarding with no impairment, next to
# `chrt -f PROBE_PRIO socat` forwarding between the same pseudo-terminals,
# timed by the same external probe.
#
# Each run, for each binary and then socat, twice:
# - serial: the probe makes two pseudo-terminals and holds their masters;
#   the rig's two serial endpoints (line framing, an empty hop each way),
#   then socat (rawer, at SCHED_FIFO PROBE_PRIO), forward between their
#   devices. A frame crosses two pty pairs either way.
# - pty: the rig's own pty endpoints, then socat joining two pty pairs of
#   its own. A frame through the rig crosses four pairs here (a pty
#   endpoint is two pairs joined by a bridge thread, so that the rig runs
#   the serial driver on a real /dev/pts device), through socat two.
# In both the probe writes a 29-byte line each way every PERIOD for DUR
# from a thread at SCHED_FIFO PROBE_PRIO and times each line's arrival on
# the other side (threads at the same priority). It holds
# /dev/cpu_dma_latency at 0, as the rig does of itself, so that the
# forwarders are measured on the same machine (-idle-poll=false in
# PROBE_ARGS measures socat as it runs alone). Each crossing of a pair is a
# kernel worker (flush_to_ldisc, SCHED_OTHER) to be scheduled. Settings:
# see lib.sh.
#
#   sudo tests/perf/pty-forwarding.sh
source "$(dirname "$0")/lib.sh"
command -v socat >/dev/null || { echo "socat is missing (Debian: apt-get install socat)" >&2; exit 2; }
profile nodelay 0
results=$OUT/pty-forwarding.txt
echo "pty-forwarding: $RUNS runs of $DUR at $PERIOD each way; files in $OUT ($(machine))" >&2
# socat_run LABEL BENCH RESULTS: socat forwards for DUR while the probe
# times it, between the probe's pseudo-terminals (serial) or its own (pty).
socat_run() {
	local label=$1 bench=$2 results=$3 ends
	ends='PTY,link=$0,rawer PTY,link=$1,rawer'
	[ "$bench" = pty ] || ends='$0,rawer $1,rawer'
	probe_run "$label" "$bench" 0 "$results" sh -c "exec chrt -f $PROBE_PRIO socat $ends" "$OUT/controller" "$OUT/plant"
	echo "  $label: $(tail -1 "$results") ($(machine))" >&2
}

for run in $(seq "$RUNS"); do
	for bench in serial pty; do
		for spec in $HILRIG; do
			rig_run "${spec%%=*}-$bench" "${spec#*=}" nodelay 0 "$results" "$bench"
		done
		socat_run "socat-$bench" "$bench" "$results"
	done
done
"$probe" table < <(grep -v -- '-release ' "$results")
