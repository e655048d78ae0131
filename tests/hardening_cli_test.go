package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/record"
)

// The hardening issue's command-line items: outputs that would clobber an
// input or each other are refused (item 3), hilrig test's outputs are
// each written or their failure said, with the verdict line and an exit
// code that says which (item 13), and hilrig report reads large and
// hostile files in bounded memory (item 8).

// TestOutputsDoNotClobber: every command that writes files refuses, with
// exit 2 and before anything is written, an output that is the same file
// on disk as another output or as a file the command reads (the profile,
// what it extends, the files its values name, the bench, its recordings,
// the replays, the suite's files, the model, the report's files), whether
// named by the same path, a symlink or a hard link; each message names
// both.
func TestOutputsDoNotClobber(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	write("base.yaml", "extends: bottleneck\nname: base\n")
	write("delays.txt", "1ms\n2ms\n")
	write("leaf.yaml", "extends: base.yaml\nhops: {core-up: {jitter: {dist: empirical, file: delays.txt}}}\n")
	if err := os.Link(at("leaf.yaml"), at("hard.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("base.yaml", at("link.yaml")); err != nil {
		t.Fatal(err)
	}
	write("link-profile.yaml", strings.Replace(plainLink, "30s", "1s", 1))
	write("bench.yaml", ptyBenchText("line", ""))
	write("replay-bench.yaml", "endpoints:\n  controller: {replay: {file: rec.pcapng}}\n  plant: {replay: {file: rec.pcapng, endpoint: plant}}\nbind:\n  m2s: {from: controller, to: plant}\n  s2m: {from: plant, to: controller}\n")
	writeRecording(t, at("rec.pcapng"))
	msd, err := os.ReadFile("../profiles/models/mass-spring-damper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write("msd.yaml", string(msd))
	write("suite.yaml", "duration: 1s\ncases:\n  a: {profile: leaf.yaml}\n")
	// A suite whose case replays the trace its report directory holds
	// from an earlier run: the run would overwrite it.
	for _, d := range []string{"rep2/001-a", "run"} {
		if err := os.MkdirAll(at(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out := runHilrig(t, "sim", "bottleneck", "--duration", "1s", "--trace", at("rep2/001-a/trace.csv"), "--summary", at("run/summary.json")); out.code != 0 {
		t.Fatalf("sim: exit %d: %s", out.code, out.stderr)
	}
	write("replaying.yaml", "extends: bottleneck\nhops: {core-up: {delay: {trace: {file: rep2/001-a/trace.csv, flow: m2s}}}}\n")
	write("suite2.yaml", "duration: 1s\ncases:\n  a: {profile: replaying.yaml}\n")
	if out := runHilrig(t, "sim", "bottleneck", "--duration", "1s", "--trace", at("run/trace.csv"), "--summary", os.DevNull); out.code != 0 {
		t.Fatalf("sim: exit %d: %s", out.code, out.stderr)
	}

	for _, tc := range []struct {
		name       string
		args       []string // @name: the file name in the test's directory
		want       []string // in stderr, DIR for the directory
		notCreated []string
	}{
		{"two outputs in one file", []string{"sim", "@leaf.yaml", "--trace", "@same.out", "--summary", "@same.out"},
			[]string{"hilrig: --trace DIR/same.out and --summary DIR/same.out are the same file: give each output a file of its own\n"}, []string{"same.out"}},
		{"the profile run", []string{"sim", "@leaf.yaml", "--trace", "@leaf.yaml"},
			[]string{"hilrig: --trace DIR/leaf.yaml would overwrite DIR/leaf.yaml, the profile: an output may not be a file the command reads\n"}, nil},
		{"the profile run, by a hard link", []string{"sim", "@leaf.yaml", "--trace", "@hard.yaml", "--queues", "@q.csv"},
			[]string{"--trace DIR/hard.yaml would overwrite DIR/leaf.yaml, the profile"}, []string{"q.csv"}},
		{"what the profile extends, by a symlink", []string{"sim", "@leaf.yaml", "--summary", "@link.yaml"},
			[]string{"--summary DIR/link.yaml would overwrite DIR/base.yaml, a file the profile reads"}, nil},
		{"a file the profile names", []string{"sim", "@leaf.yaml", "--queues", "@delays.txt"},
			[]string{"--queues DIR/delays.txt would overwrite DIR/delays.txt, a file the profile reads"}, nil},
		{"the bench", []string{"sim", "@link-profile.yaml", "--bench", "@replay-bench.yaml", "--trace", "@replay-bench.yaml"},
			[]string{"--trace DIR/replay-bench.yaml would overwrite DIR/replay-bench.yaml, the bench"}, nil},
		{"the bench's recording", []string{"sim", "@link-profile.yaml", "--bench", "@replay-bench.yaml", "--record", "@rec.pcapng"},
			[]string{"--record DIR/rec.pcapng would overwrite DIR/rec.pcapng, a file the bench reads"}, nil},
		{"the recording replayed", []string{"sim", "@link-profile.yaml", "--bench", "@bench.yaml", "--replay", "controller=@rec.pcapng", "--replay", "plant=@rec.pcapng", "--record", "@rec.pcapng"},
			[]string{"--record DIR/rec.pcapng would overwrite DIR/rec.pcapng, the recording --replay plays"}, nil},
		{"a pseudo-terminal's link", []string{"run", "--bench", "@bench.yaml", "@link-profile.yaml", "--trace", "@controller", "--summary", "@s.json"},
			[]string{"--trace DIR/controller and the bench's endpoints.controller.pty.link DIR/controller are the same file"}, []string{"controller", "s.json"}},
		{"run: the profile", []string{"run", "--bench", "@bench.yaml", "@link-profile.yaml", "--summary", "@link-profile.yaml"},
			[]string{"--summary DIR/link-profile.yaml would overwrite DIR/link-profile.yaml, the profile"}, []string{"controller"}},
		{"demo: the profile", []string{"demo", "--profile", "@leaf.yaml", "--summary", "@leaf.yaml", "--duration", "1s"},
			[]string{"--summary DIR/leaf.yaml would overwrite DIR/leaf.yaml, the profile"}, nil},
		{"test: the suite", []string{"test", "@suite.yaml", "--junit", "@suite.yaml"},
			[]string{"--junit DIR/suite.yaml would overwrite DIR/suite.yaml, the suite"}, nil},
		{"test: a file its profiles read", []string{"test", "@suite.yaml", "--junit", "@delays.txt"},
			[]string{"--junit DIR/delays.txt would overwrite DIR/delays.txt, a file the suite reads"}, nil},
		{"test: the JUnit XML in the report", []string{"test", "@suite.yaml", "--report", "@rep", "--junit", "@rep/index.html"},
			[]string{"--junit DIR/rep/index.html and --report DIR/rep/index.html are the same file"}, []string{"rep"}},
		{"test: the report over what the suite replays", []string{"test", "@suite2.yaml", "--report", "@rep2"},
			[]string{"--report DIR/rep2/001-a/trace.csv would overwrite DIR/rep2/001-a/trace.csv, a file the suite reads"}, []string{"rep2/index.html"}},
		{"report: the trace", []string{"report", "@run", "--out", "@run/trace.csv"},
			[]string{"--out DIR/run/trace.csv would overwrite DIR/run/trace.csv, a file the report reads"}, nil},
		{"couple: two outputs", []string{"couple", "quarter-car", "--csv", "@c.out", "--svg", "@c.out"},
			[]string{"--csv DIR/c.out and --svg DIR/c.out are the same file"}, []string{"c.out"}},
		{"couple: the model", []string{"couple", "@msd.yaml", "--svg", "@msd.yaml"},
			[]string{"--svg DIR/msd.yaml would overwrite DIR/msd.yaml, the model"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, dir)
			var args []string
			for _, a := range tc.args {
				// Files are named by absolute paths (@name), so that the
				// messages name them so.
				if before, name, ok := strings.Cut(a, "@"); ok {
					a = before + at(name)
				}
				args = append(args, a)
			}
			start := time.Now()
			out := runHilrig(t, args...)
			if out.code != 2 {
				t.Fatalf("exit %d, want 2\n%s%s", out.code, out.stdout, out.stderr)
			}
			for _, want := range tc.want {
				if want = strings.ReplaceAll(want, "DIR", dir); !strings.Contains(out.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, out.stderr)
				}
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("refused after %v: it ran first", took)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("files changed:\nbefore\n%s\nafter\n%s", before, after)
			}
			for _, name := range tc.notCreated {
				if _, err := os.Lstat(at(name)); err == nil {
					t.Errorf("%s was created", name)
				}
			}
		})
	}
	// Devices are written as streams: two outputs may share one.
	if out := runHilrig(t, "sim", at("leaf.yaml"), "--trace", os.DevNull, "--summary", os.DevNull); out.code != 0 {
		t.Errorf("--trace and --summary %s: exit %d: %s", os.DevNull, out.code, out.stderr)
	}
}

// snapshot lists the files below dir with their contents' sizes and
// hashes, for a test to see that nothing changed.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %d %x\n", path, len(data), sha256.Sum256(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// writeRecording writes a recording, as hilrig run --record makes one, of
// a bench with a controller and a plant: a frame each way.
func writeRecording(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewRecording(f, "a test", []record.RecordingInterface{{Name: "controller"}, {Name: "plant"}}, []string{"m2s", "s2m"})
	rec.Begin(time.Unix(0, 0))
	rec.Frame(0, false, time.Millisecond, 0, 0, []byte("PING 0\n"))
	rec.Frame(1, false, 2*time.Millisecond, 1, 0, []byte("PONG 0\n"))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTestOutputsOnAFullDisk: hilrig test writes the JUnit XML whatever
// becomes of the report, and the report whatever becomes of the JUnit
// XML; every file it could not write is said, with its file; the verdict
// line comes always; and the exit code is 2, an output that could not be
// written, whether the cases passed or not (README, Regression suites).
// /dev/full fails every write as a full disk does; a 64 kB tmpfs is one.
func TestTestOutputsOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	suite := writeCISuite(t, dir, "")
	verdict := func(t *testing.T, stdout string) {
		t.Helper()
		if !strings.Contains(stdout, "PASS 9 cases\n") && !strings.Contains(stdout, " of 9 cases: ") {
			t.Errorf("no verdict line:\n%s", stdout)
		}
	}
	t.Run("the JUnit XML", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full here")
		}
		report := filepath.Join(dir, "report")
		out := runHilrig(t, "test", suite, "--junit", "/dev/full", "--report", report)
		if out.code != 2 {
			t.Fatalf("exit %d, want 2\n%s%s", out.code, out.stdout, out.stderr)
		}
		verdict(t, out.stdout)
		if !strings.Contains(out.stdout, "PASS 9 cases\nreport: "+filepath.Join(report, "index.html")+"\n") {
			t.Errorf("stdout:\n%s", out.stdout)
		}
		if want := "hilrig: not written: the JUnit XML: write /dev/full: no space left on device\n"; out.stderr != want {
			t.Errorf("stderr:\n%s\nwant\n%s", out.stderr, want)
		}
		if page, err := os.ReadFile(filepath.Join(report, "index.html")); err != nil || !bytes.Contains(page, []byte("PASS: all 9 passed")) {
			t.Errorf("the report: %v", err)
		}
	})
	t.Run("the report", func(t *testing.T) {
		full := filepath.Join(dir, "full")
		if err := os.Mkdir(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a small tmpfs to fill (%v: %s): the full disk is not tried", err, bytes.TrimSpace(out))
		}
		t.Cleanup(func() { syscall.Unmount(full, 0) })
		junit, report := filepath.Join(dir, "junit.xml"), filepath.Join(full, "report")
		out := runHilrig(t, "test", suite, "--junit", junit, "--report", report)
		if out.code != 2 {
			t.Fatalf("exit %d, want 2\n%s%s", out.code, out.stdout, out.stderr)
		}
		verdict(t, out.stdout)
		for _, want := range []string{"hilrig: not written: the report: ", filepath.Join(report, "index.html") + ": no space left on device\n", " files of the cases could not be written (each said under its case)\n"} {
			if !strings.Contains(out.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, out.stderr)
			}
		}
		if !strings.Contains(out.stdout, "    not written: write "+report) {
			t.Errorf("no case says which of its files were not written:\n%s", out.stdout)
		}
		validateJUnit(t, junit)
		data, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests int `xml:"tests,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
				Err  string `xml:"system-err"`
			} `xml:"testsuite>testcase"`
		}
		if err := xml.Unmarshal(data, &doc); err != nil || doc.Tests != 9 || len(doc.Cases) != 9 {
			t.Fatalf("the JUnit XML: %v, %d tests, %d cases\n%s", err, doc.Tests, len(doc.Cases), data)
		}
		said := 0
		for _, c := range doc.Cases {
			if strings.Contains(c.Err, "not written: write "+report) {
				said++
			}
		}
		if said == 0 {
			t.Errorf("the JUnit XML says of no case that its files were not written:\n%s", data)
		}
	})
}

// TestReportReadsBoundedFiles: hilrig report takes regular files only,
// and lines of at most 1 MiB: a trace linked to /dev/zero (which ran it
// out of memory), a named pipe (whose open blocked), a file of 2 MB
// without a newline are left out, each said on the page, which is made
// of the rest.
func TestReportReadsBoundedFiles(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if out := runHilrig(t, "sim", "bottleneck", "--duration", "2s", "--trace", filepath.Join(run, "trace.csv"), "--summary", filepath.Join(run, "summary.json")); out.code != 0 {
		t.Fatalf("sim: exit %d: %s", out.code, out.stderr)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(run, "a-zero.csv")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(run, "b-pipe.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "c-long.csv"), bytes.Repeat([]byte("t"), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runHilrig(t, "report", run)
	if out.code != 0 {
		t.Fatalf("exit %d: %s", out.code, out.stderr)
	}
	page, err := os.ReadFile(filepath.Join(run, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"a-zero.csv: is not a regular file (a character device)",
		"b-pipe.csv: is not a regular file (a named pipe)",
		"c-long.csv: line 1 is longer than 1048576 bytes",
		"One-way delay over time",
	} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

// TestReportMemoryFlat: hilrig report keeps what its plots show of a
// trace, not the trace: on a run of 100 MB of trace its peak resident
// memory is under half the file (it took two and a half times the file
// when it read the trace whole).
func TestReportMemoryFlat(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if out := runHilrig(t, "sim", "shared-ethernet", "--duration", "1000s", "--trace", trace, "--summary", filepath.Join(dir, "summary.json")); out.code != 0 {
		t.Fatalf("sim: exit %d: %s", out.code, out.stderr)
	}
	info, err := os.Stat(trace)
	if err != nil {
		t.Fatal(err)
	}
	peak, code := residentPeak(t, exec.Command(hilrig, "report", dir))
	if code != 0 {
		t.Fatalf("report: exit %d", code)
	}
	if peak > info.Size()/2 {
		t.Errorf("the report of a %d MB trace peaked at %d MB resident", info.Size()>>20, peak>>20)
	}
	t.Logf("the report of a %d MB trace peaked at %d MB resident", info.Size()>>20, peak>>20)
}
