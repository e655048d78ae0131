# lib.sh: what the scripts of tests/perf share. Sourced, not run.
#
# Environment, all optional:
#   HILRIG="LABEL=PATH ..."  binaries to measure, interleaved run by run
#                            (default: "rig=" a build of this worktree)
#   RUNS=5                   runs of each, interleaved
#   DUR=10s                  how long each run writes frames
#   PERIOD=1ms               one frame each way per period
#   PRIO=80                  the executor's SCHED_FIFO priority (the rig's
#                            default; cyclictest runs at it too)
#   PROBE_PRIO=70            the external probe's and socat's
#   OUT=DIR                  where the runs' files go (default: a new temp dir)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
RUNS=${RUNS:-5}
DUR=${DUR:-10s}
PERIOD=${PERIOD:-1ms}
PRIO=${PRIO:-80}
PROBE_PRIO=${PROBE_PRIO:-70}
OUT=${OUT:-$(mktemp -d /tmp/hilrig-perf.XXXXXX)}
mkdir -p "$OUT"

[ "$(id -u)" = 0 ] || echo "warning: not root: no SCHED_FIFO, no mlockall; the figures mean little" >&2

(cd "$repo" && go build -o "$OUT/probe" ./tests/perf/probe)
probe=$OUT/probe
if [ -z "${HILRIG:-}" ]; then
	(cd "$repo" && go build -o "$OUT/hilrig" ./rig/cmd/hilrig)
	HILRIG="rig=$OUT/hilrig"
fi

# seconds DURATION: a Go duration of whole or fractional s or ms in seconds.
seconds() {
	case $1 in
	*ms) awk -v v="${1%ms}" 'BEGIN{print v/1000}' ;;
	*s) echo "${1%s}" ;;
	*) echo "seconds: $1: want s or ms" >&2; return 1 ;;
	esac
}
period_us=$(awk -v s="$(seconds "$PERIOD")" 'BEGIN{printf "%d", s*1e6}')
frames=$(awk -v d="$(seconds "$DUR")" -v p="$(seconds "$PERIOD")" 'BEGIN{printf "%d", d/p}')

# The benches. pty: two pty endpoints, line framing, links in $OUT (not
# the virtual bench's /tmp/hilrig-*, which other runs on the machine may
# use). serial: two serial endpoints on the devices of the pseudo-terminals
# the probe makes (`probe pty -make`), as a forwarder of a lab's own would
# open them.
bench() {
	cat > "$OUT/$1.yaml" <<YAML
name: perf-$1
endpoints:
  controller: $2
  plant:      $3
bind:
  to-plant:      {from: controller, to: plant}
  to-controller: {from: plant, to: controller}
YAML
}
bench pty "{pty: {link: $OUT/controller, framing: line}}" "{pty: {link: $OUT/plant, framing: line}}"
bench serial "{serial: {device: $OUT/controller, baud: 115200, framing: line}}" \
	"{serial: {device: $OUT/plant, baud: 115200, framing: line}}"

# profile NAME DELAY: a profile of one hop each way with that delay (0: none).
profile() {
	local hop="{}"
	[ "$2" = 0 ] || hop="{delay: $2}"
	cat > "$OUT/$1.yaml" <<YAML
name: $1
duration: 1h
hops:
  down: $hop
  up:   $hop
flows:
  m2s: {route: [down], role: to-plant}
  s2m: {route: [up], role: to-controller}
YAML
}

# machine: the load average and the steal since the last call, for the log.
steal0=$(awk '/^cpu /{print $9}' /proc/stat)
machine() {
	local s
	s=$(awk '/^cpu /{print $9}' /proc/stat)
	echo "load $(cut -d' ' -f1-3 /proc/loadavg), steal $(( (s - steal0) * 1000 / $(getconf CLK_TCK) )) ms"
	steal0=$s
}

# probe_run LABEL BENCH DELAY RESULTS FORWARDER...: the probe times
# FORWARDER, which it starts and stops, between $OUT/controller and
# $OUT/plant: the rig's links for pty, links to pseudo-terminals of the
# probe's own for serial.
probe_run() {
	local label=$1 bench=$2 delay=$3 results=$4 make=
	shift 4
	[ "$bench" = pty ] || make=-make
	rm -f "$OUT/controller" "$OUT/plant" # the last run's, which could name another's pty now
	"$probe" pty $make -to "$OUT/controller" -from "$OUT/plant" -back -delay "$delay" \
		-period "$PERIOD" -for "$DUR" -prio "$PROBE_PRIO" ${PROBE_ARGS:-} "$label" "$@" >>"$results"
}

# rig_run LABEL BIN PROFILE DELAY RESULTS [BENCH]: the rig forwards
# between the devices of BENCH (pty, the default, or serial) for DUR while
# the probe writes both ways and times the arrivals; appends the probe's
# line (LABEL) and the rig's release lateness (LABEL-release) to RESULTS.
rig_run() {
	local label=$1 bin=$2 prof=$3 delay=$4 results=$5 bench=${6:-pty}
	probe_run "$label" "$bench" "$delay" "$results" sh -c "exec '$bin' run --bench '$OUT/$bench.yaml' \
		'$OUT/$prof.yaml' --priority $PRIO --summary '$OUT/$label.json' >/dev/null 2>'$OUT/$label.err'" ||
		{ echo "$label: hilrig failed:" >&2; cat "$OUT/$label.err" >&2; return 1; }
	"$probe" summary "$label-release" "$OUT/$label.json" >>"$results"
	echo "  $label: $(tail -2 "$results" | tr '\n' ' ') ($(machine))" >&2
}
