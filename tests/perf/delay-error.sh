#!/bin/bash
# delay-error.sh: the error of a 20 ms emulated delay, measured outside,
# next to the same forwarding with no delay.
#
# Each run: `hilrig run` on two pty endpoints, once with a 20 ms hop each
# way and once with empty hops, while tests/perf/probe writes a 29-byte
# line each way every PERIOD for DUR and times each arrival: the error is
# arrival - write - 20 ms (- 0 ms). A timed release should cost no more
# than an immediate one: the goal is the delay's p99 within 50 µs of the
# no-delay p99. Each line's -release row is the rig's own release
# lateness in that run. Settings: see lib.sh.
#
#   sudo tests/perf/delay-error.sh
source "$(dirname "$0")/lib.sh"
profile delay20ms 20ms
profile nodelay 0
results=$OUT/delay-error.txt
echo "delay-error: $RUNS runs of $DUR at $PERIOD each way; files in $OUT ($(machine))" >&2
for run in $(seq "$RUNS"); do
	for spec in $HILRIG; do
		label=${spec%%=*}
		rig_run "$label-20ms" "${spec#*=}" delay20ms 20ms "$results"
		rig_run "$label-0ms" "${spec#*=}" nodelay 0 "$results"
	done
done
"$probe" table <"$results"
