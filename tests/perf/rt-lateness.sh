#!/bin/bash
# rt-lateness.sh: the rig's release lateness, from its own summary, next to
# cyclictest's wakeup lateness at the same priority, period and duration.
#
# Each run: `hilrig run` on two pty endpoints with a 5 ms hop each way
# (every frame a timed release) while tests/perf/probe writes a 29-byte
# line each way every PERIOD for DUR; the summary's
# timing.release_lateness_s; then `cyclictest -p PRIO -i PERIOD -l
# DUR/PERIOD -m -q -t 1 -h 20000` read off its 1 µs histogram. Binaries
# and cyclictest alternate run by run, so that they share the machine's
# minutes. Settings: see lib.sh (RUNS, DUR, PERIOD, PRIO, HILRIG, OUT).
#
#   sudo tests/perf/rt-lateness.sh
#   HILRIG="old=/tmp/hilrig-old new=/tmp/hilrig-new" RUNS=7 tests/perf/rt-lateness.sh
source "$(dirname "$0")/lib.sh"
command -v cyclictest >/dev/null || { echo "cyclictest is missing (Debian: apt-get install rt-tests)" >&2; exit 2; }
profile delay5ms 5ms
results=$OUT/rt-lateness.txt
echo "rt-lateness: $RUNS runs of $DUR at $PERIOD, priority $PRIO; files in $OUT ($(machine))" >&2
for run in $(seq "$RUNS"); do
	for spec in $HILRIG; do
		rig_run "${spec%%=*}" "${spec#*=}" delay5ms 5ms "$results"
	done
	cyclictest -p "$PRIO" -i "$period_us" -l "$frames" -m -q -t 1 -h 20000 2>/dev/null |
		"$probe" hist cyclictest >>"$results"
	echo "  cyclictest: $(tail -1 "$results") ($(machine))" >&2
done

"$probe" table < <(grep -E -- '-release |^cyclictest ' "$results")
