package tests

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// updateReadme rewrites README.md's generated blocks, the command
// reference from the binary's help and the fuzz targets from the code
// (go generate ./rig/cmd/hilrig runs this).
var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's generated blocks: the command reference from hilrig help, the fuzz targets from the code")

func TestCLIExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("duration: 1s\nhops: {a: {rate: 4 Mbps}}\nflows: {f: {route: [a]}}\n"), 0o644)
	// A usage or input error exits 2 with nothing on stdout; help exits 0
	// with nothing on stderr.
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"no command", nil, 2, "", "usage: hilrig COMMAND"},
		{"help", []string{"help"}, 0, "usage: hilrig COMMAND", ""},
		{"--help", []string{"--help"}, 0, "usage: hilrig COMMAND", ""},
		{"-h", []string{"-h"}, 0, "usage: hilrig COMMAND", ""},
		{"command help", []string{"sim", "-h"}, 0, "usage: hilrig sim PROFILE", ""},
		{"command --help among arguments", []string{"sim", "bottleneck", "--help"}, 0, "usage: hilrig sim PROFILE", ""},
		{"help command", []string{"help", "run"}, 0, "usage: hilrig run --bench BENCH PROFILE", ""},
		{"unknown command", []string{"simulation"}, 2, "", `unknown command "simulation"`},
		{"missing profile argument", []string{"sim"}, 2, "", "hilrig sim: missing PROFILE\nusage: hilrig sim PROFILE"},
		{"one argument too many", []string{"demo", "extra"}, 2, "", "hilrig demo: unexpected argument \"extra\"\nusage: hilrig demo"},
		{"missing required flag", []string{"run", "bottleneck"}, 2, "", `required flag(s) "bench" not set`},
		{"missing flag value", []string{"sim", "bottleneck", "--seed"}, 2, "", "flag needs an argument: --seed"},
		{"missing file", []string{"sim", filepath.Join(dir, "nope.yaml")}, 2, "", "nope.yaml: no such file"},
		{"unknown shipped name", []string{"sim", "nope"}, 2, "", "no shipped profile by that name"},
		{"bad profile", []string{"sim", bad}, 2, "", `bad.yaml:2:18: hops.a.rate: "4 Mbps" is not a rate`},
		{"bad flag value", []string{"sim", "bottleneck", "--duration", "5"}, 2, "", `"5" is not a duration`},
		{"bad seed", []string{"sim", "bottleneck", "--seed", "x"}, 2, "", `--seed "x"`},
		{"a run of no time", []string{"sim", "bottleneck", "--duration", "0s"}, 2, "", `"0s": give a duration longer than 0s`},
		{"a priority SCHED_FIFO has not", []string{"run", "--bench", "profiles/benches/virtual.yaml", "bottleneck", "--priority", "200"}, 2, "", `"200": give a SCHED_FIFO priority from 1 to 99`},
		{"standard output as a dash", []string{"sim", "bottleneck", "--trace", "-"}, 2, "", `"-" is not an output file here`},
		{"a token with nothing to guard", []string{"sim", "bottleneck", "--token", "x"}, 2, "", "--token is for --listen"},
		{"an expectation virtual time cannot measure", []string{"sim", "bottleneck", "--expect", "timing.release_lateness.p99 < 300us"}, 2, "", "timing is measured in real time only"},
		{"bad param", []string{"models", "quarter-car", "--param", "ks"}, 2, "", `want name=value, got "ks"`},
		{"trace into a missing directory", []string{"sim", "bottleneck", "--trace", filepath.Join(dir, "no", "t.csv")}, 2, "", "no such file or directory"},
		{"unknown shell", []string{"completion", "tcsh"}, 2, "", `no completion for the shell "tcsh"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runHilrig(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d\nstdout %q\nstderr %q\nwant exit %d, %q on stdout and %q on stderr", r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr)
			}
			if tc.code == 2 && r.stdout != "" || tc.code == 0 && r.stderr != "" {
				t.Errorf("exit %d with stdout %q and stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestCLISuggestions: a mistyped command, flag, shipped profile, model or
// shell is a usage error that names what was probably meant.
func TestCLISuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simm"}, `unknown command "simm"; did you mean sim?`},
		{[]string{"simm", "bottleneck", "--seed", "3"}, `unknown command "simm"; did you mean sim?`},
		{[]string{"chek", "lte"}, "did you mean check?"},
		{[]string{"profile"}, "did you mean profiles?"},
		{[]string{"help", "coupel"}, "did you mean couple?"},
		{[]string{"sim", "bottleneck", "--durration", "3s"}, "unknown flag: --durration; did you mean --duration?"},
		{[]string{"sim", "--sed", "3", "bottleneck"}, "did you mean --seed?"},
		{[]string{"sim", "bottleneck", "-duration", "3s"}, "did you mean --duration?"}, // one dash, as Go's flag package took it
		{[]string{"run", "--bech", "b.yaml", "lte"}, "did you mean --bench?"},
		{[]string{"couple", "quarter-car", "--cut", "CP1"}, "did you mean --cuts?"},
		{[]string{"sim", "botleneck"}, "botleneck: no such file, and no shipped profile by that name (see hilrig profiles); did you mean bottleneck?"},
		{[]string{"sim", "bottle"}, "did you mean bottleneck?"},
		{[]string{"show", "internet-hill"}, "did you mean internet-hil?"},
		{[]string{"check", "lte", "wifi-burst"}, "did you mean wifi-bursty?"},
		{[]string{"run", "--bench", "../profiles/benches/virtual.yaml", "twin-dropot"}, "did you mean twin-dropout?"},
		{[]string{"demo", "--profile", "internet-hl"}, "did you mean internet-hil?"},
		{[]string{"models", "quater-car"}, "did you mean quarter-car?"},
		{[]string{"completion", "zhs"}, "did you mean zsh?"},
		{[]string{"sim", "bottleneck", "--set", "hops.core-upp.rate=2Mbit"}, `--set:1:6: hops.core-upp: the profile has no hop "core-upp", and no flow crosses the one this would add; did you mean core-up?`},
	} {
		r := runHilrig(t, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("hilrig %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	// Nothing is suggested for a name like none of them.
	if r := runHilrig(t, "sim", "zzzzzz"); r.code != 2 || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("sim zzzzzz: exit %d, %s", r.code, r.stderr)
	}
}

// TestCLIFlagsAnywhere: flags before, between and after the positional
// arguments, with = or a space, and -- ending the flags, run the same.
func TestCLIFlagsAnywhere(t *testing.T) {
	var first string
	for _, args := range [][]string{
		{"sim", "bottleneck", "--duration", "2s", "--seed", "7"},
		{"sim", "--duration", "2s", "bottleneck", "--seed=7"},
		{"sim", "--seed=7", "--duration=2s", "--", "bottleneck"},
	} {
		r := runHilrig(t, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		var s struct {
			Seed     uint64  `json:"seed"`
			Duration float64 `json:"duration_s"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Seed != 7 || s.Duration != 2 {
			t.Errorf("%v: summary %+v, %v", args, s, err)
		}
		if first == "" {
			first = r.stdout
		} else if r.stdout != first {
			t.Errorf("%v: a different summary", args)
		}
	}
}

// TestCLIHelp: each command's help, on stdout, has its usage line and
// every flag with two dashes, each default said once.
func TestCLIHelp(t *testing.T) {
	for _, tc := range []struct {
		command string
		want    []string
	}{
		{"sim", []string{"--duration D", "--seed N", "--set path=value", "(default: the profile's duration)"}},
		{"run", []string{"--bench BENCH", "--spin D", "(default 100us)", "--priority N", "(default 80)"}},
		{"demo", []string{"--cut CP1|CP2", `(default "CP2")`, "--duration D", "(default 10s)"}},
		{"couple", []string{"--delay D", "(default 20ms)", "--param name=value"}},
		{"check", []string{"--bench BENCH", "--set path=value"}},
	} {
		r := runHilrig(t, tc.command, "--help")
		if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: hilrig "+tc.command) {
			t.Errorf("%s --help: exit %d, stderr %q, stdout:\n%s", tc.command, r.code, r.stderr, r.stdout)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s --help lacks %q:\n%s", tc.command, want, r.stdout)
			}
		}
		for i, line := range strings.Split(r.stdout, "\n") {
			field := strings.TrimSpace(line)
			if strings.HasPrefix(field, "-") && !strings.HasPrefix(field, "--") && !strings.HasPrefix(field, "-h, --help") {
				t.Errorf("%s --help line %d: a flag with one dash: %q", tc.command, i+1, line)
			}
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s --help line %d: two defaults: %q", tc.command, i+1, line)
			}
		}
	}
}

// TestCLIVersion: --version and the version command print the version
// the Go toolchain stamped into the binary, as go version -m reads it; a
// build with VCS stamping also names its commit.
func TestCLIVersion(t *testing.T) {
	check := func(t *testing.T, binary string) string {
		flagOut, cmdOut := commandOutput(t, binary, "--version"), commandOutput(t, binary, "version")
		if flagOut != cmdOut || !strings.HasPrefix(flagOut, "hilrig ") || strings.Count(flagOut, "\n") != 1 {
			t.Errorf("--version %q, version %q", flagOut, cmdOut)
		}
		meta := commandOutput(t, "go", "version", "-m", binary)
		for _, line := range strings.Split(meta, "\n") {
			fields := strings.Fields(line)
			switch {
			case len(fields) >= 3 && fields[0] == "mod":
				if !strings.HasPrefix(flagOut, "hilrig "+fields[2]+" (") {
					t.Errorf("version %q; the module's version is %s", flagOut, fields[2])
				}
			case len(fields) == 2 && strings.HasPrefix(fields[1], "vcs.revision="):
				if rev := strings.TrimPrefix(fields[1], "vcs.revision="); !strings.Contains(flagOut, "commit "+rev) {
					t.Errorf("version %q; the binary was built from %s", flagOut, rev)
				}
			}
		}
		return flagOut
	}
	check(t, hilrig)
	t.Run("with VCS stamping", func(t *testing.T) {
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skip("not a git checkout:", err)
		}
		stamped := filepath.Join(t.TempDir(), "hilrig")
		if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", stamped, "../rig/cmd/hilrig").CombinedOutput(); err != nil {
			t.Skipf("no VCS stamping here: %v: %s", err, out)
		}
		if !strings.Contains(commandOutput(t, "go", "version", "-m", stamped), "vcs.revision=") {
			// The go command stamps nothing in a git worktree (.git is a
			// file there), without an error.
			t.Skip("the go command stamped no revision here (a git worktree?)")
		}
		if v := check(t, stamped); !strings.Contains(v, "commit "+strings.TrimSpace(string(head))+" of ") {
			t.Errorf("version %q does not name HEAD %s with its time", v, head)
		}
	})
}

// commandOutput runs a program and returns its stdout, failing the test if it fails.
func commandOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// TestCLICompletion: each shell's script, and what hilrig answers the
// scripts (its __complete command): commands, shipped profile and model
// names, flag values, files for the flags that take one.
func TestCLICompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "complete -o default -F __start_hilrig hilrig",
		"zsh":        "#compdef hilrig",
		"fish":       "complete -c hilrig",
		"powershell": "Register-ArgumentCompleter",
	} {
		r := runHilrig(t, "completion", shell)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, marker) {
			t.Errorf("completion %s: exit %d, stderr %q, no %q in the script", shell, r.code, r.stderr, marker)
		}
	}
	// The directives are cobra's: 4 no file completion, 8 files with these
	// extensions, 0 the shell's default (files); 2 no space after.
	for _, tc := range []struct {
		words     []string
		want      []string
		directive string
	}{
		{[]string{"si"}, []string{"sim\trun a profile in virtual time"}, ":4"},
		{[]string{"sim", "bot"}, []string{"bottleneck\t"}, ":4"},
		{[]string{"sim", "twin-"}, []string{"twin-baseline\t", "twin-degradation\t", "twin-dropout\t"}, ":4"},
		{[]string{"check", "../profiles/"}, []string{"yaml", "yml"}, ":8"},
		{[]string{"sim", "nothing-like-it"}, []string{"yaml", "yml"}, ":8"},
		{[]string{"sim", "lte", "--bench", ""}, []string{"yaml", "yml"}, ":8"},
		{[]string{"sim", "lte", "--trace", ""}, nil, ":0"},
		{[]string{"demo", "--profile", "internet"}, []string{"internet-hil\t"}, ":4"},
		{[]string{"demo", "--cut", ""}, []string{"CP1", "CP2"}, ":4"},
		{[]string{"models", "quarter"}, []string{"quarter-car\t"}, ":4"},
		{[]string{"couple", "quarter-car", "--output", "defl"}, []string{"deflection"}, ":4"},
		{[]string{"couple", "quarter-car", "--cuts", "CP1,"}, []string{"CP1,CP2"}, ":6"},
		{[]string{"couple", "quarter-car", "--param", "k"}, []string{"k1=", "k2="}, ":6"},
		{[]string{"completion", "z"}, []string{"zsh"}, ":4"},
		{[]string{"help", "co"}, []string{"couple\t", "completion\t"}, ":4"},
	} {
		r := runHilrig(t, append([]string{"__complete"}, tc.words...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || lines[len(lines)-1] != tc.directive {
			t.Errorf("completing %q: exit %d, stdout %q; want directive %s", tc.words, r.code, r.stdout, tc.directive)
			continue
		}
		for _, want := range tc.want {
			found := false
			for _, line := range lines {
				found = found || strings.HasPrefix(line, want)
			}
			if !found {
				t.Errorf("completing %q: no %q in %q", tc.words, want, lines)
			}
		}
	}
}

// TestCLIBashCompletion sources the bash script and completes as bash
// would, with a stand-in for the bash-completion package's word splitting
// (_get_comp_words_by_ref) when that package is not installed.
func TestCLIBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "hilrig.bash")
	if err := os.WriteFile(script, []byte(runHilrig(t, "completion", "bash").stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		cmd := exec.Command(bash, "-c", `
declare -F _get_comp_words_by_ref >/dev/null || _get_comp_words_by_ref() {
	cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
}
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
__start_hilrig 2>/dev/null
echo "${COMPREPLY[*]}"`, "bash", script, hilrig)
		cmd.Args = append(cmd.Args, words...)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("bash completing %q: %v", words, err)
		}
		return strings.TrimSpace(out.String())
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"sim", "bottl"}, "bottleneck"},
		{[]string{"pro"}, "profiles"},
		{[]string{"demo", "--cut", ""}, "CP1 CP2"},
		{[]string{"sim", "lte", "--dur"}, "--duration"},
	} {
		if got := complete(tc.words...); got != tc.want {
			t.Errorf("bash completes %q to %q, want %q", tc.words, got, tc.want)
		}
	}
}

// TestCLIReadmeCommands: README.md's command reference is the usage lines
// hilrig help prints, which are made from each command's flags. With
// -update-readme it is rewritten.
func TestCLIReadmeCommands(t *testing.T) {
	r := runHilrig(t, "help")
	var lines []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "  hilrig ") {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	if r.code != 0 || len(lines) < 10 {
		t.Fatalf("help: exit %d, usage lines %q", r.code, lines)
	}
	readmeBlock(t, "commands", "command reference", "hilrig help", "```\n"+strings.Join(lines, "\n")+"\n```\n")
}

// readmeBlock checks README.md's block generated from the code, between
// <!-- NAME:begin ... --> and <!-- NAME:end -->, against want, made from
// source; with -update-readme it rewrites the block.
func readmeBlock(t *testing.T, name, what, source, want string) {
	t.Helper()
	const path = "../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	beginMarker, endMarker := "<!-- "+name+":begin", "<!-- "+name+":end -->"
	begin, end := strings.Index(readme, beginMarker), strings.Index(readme, endMarker)
	if begin < 0 || end < begin {
		t.Fatalf("README.md has no %s ... %s block", beginMarker, endMarker)
	}
	begin += strings.Index(readme[begin:], "-->\n") + len("-->\n")
	if got := readme[begin:end]; got != want {
		if !*updateReadme {
			t.Fatalf("README.md's %s is not what %s says: run go generate ./rig/cmd/hilrig\nREADME.md:\n%s\n%s:\n%s", what, source, got, source, want)
		}
		if err := os.WriteFile(path, []byte(readme[:begin]+want+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote README.md's %s", what)
	}
}

// TestCLIPrivilegeHint runs the demo as a user who may not raise its
// priority, lock memory or keep CPUs awake: besides the warnings, hilrig
// says once, with this binary's path, how to grant the privileges.
func TestCLIPrivilegeHint(t *testing.T) {
	cmd := exec.Command(hilrig, "demo", "--duration", "500ms")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}} // nobody
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "cannot ") {
		t.Skipf("no privilege was refused:\n%s", stderr.String())
	}
	fix := "sudo setcap cap_sys_nice,cap_ipc_lock+ep " + hilrig + "; /dev/cpu_dma_latency needs root, or a udev rule"
	if n := strings.Count(stderr.String(), fix); n != 1 {
		t.Errorf("the fix %q said %d times:\n%s", fix, n, stderr.String())
	}
}
func TestSimByNameWithOverrides(t *testing.T) {
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "s.json")
	r := runHilrig(t, "sim", "bottleneck", "--duration", "10s", "--seed", "5", "--summary", summaryPath)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Profile  string  `json:"profile"`
		Seed     uint64  `json:"seed"`
		Duration float64 `json:"duration_s"`
		Flows    []struct {
			Name string `json:"name"`
			Sent uint64 `json:"sent"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	// m2s sends every 20 ms from 1.3 ms: 500 frames in 10 s.
	if s.Profile != "bottleneck" || s.Seed != 5 || s.Duration != 10 || s.Flows[0].Name != "m2s" || s.Flows[0].Sent != 500 {
		t.Errorf("summary %+v", s)
	}
}
