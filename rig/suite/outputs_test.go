package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/rig/report"
)

// TestOutputsThatCannotBeWritten: a case whose files cannot be written
// (here linked to /dev/full, where every write fails as on a full disk)
// says which, each with its file; the files that were written stay, its
// verdict lists the others, the report is made from what is in memory
// (with the plots of the files there are), and the JUnit XML attaches
// only the files written and says the others in system-err. A case whose
// directory cannot be made at all still runs and is judged.
func TestOutputsThatCannotBeWritten(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here to stand for a full disk")
	}
	s, err := Parse("testdata/outputs.yaml", []byte("duration: 2s\ncases:\n  a: {profile: bottleneck, expect: [flows.m2s.lost == 0]}\n  b: {profile: bottleneck}\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caseA := filepath.Join(dir, s.Cases[0].Dir())
	if err := os.Mkdir(caseA, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{QueuesFile, SummaryFile} {
		if err := os.Symlink("/dev/full", filepath.Join(caseA, name)); err != nil {
			t.Fatal(err)
		}
	}
	// Case b's directory is a file: it cannot be made.
	if err := os.WriteFile(filepath.Join(dir, s.Cases[1].Dir()), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	results := Run(context.Background(), s.Cases, Options{Dir: dir, Progress: &progress})
	a, b := results[0], results[1]

	var unwritten []string
	for _, err := range a.OutputErrors {
		unwritten = append(unwritten, err.Error())
	}
	want := []string{
		"write " + filepath.Join(caseA, QueuesFile) + ": no space left on device",
		"write " + filepath.Join(caseA, SummaryFile) + ": no space left on device",
	}
	if !slices.Equal(unwritten, want) {
		t.Errorf("case a: output errors %q, want %q", unwritten, want)
	}
	if !slices.Equal(a.written, []string{TraceFile}) || a.Summary.Profile != "bottleneck" || len(a.Expect) != 1 || !a.Expect[0].OK {
		t.Errorf("case a: written %q, summary of %q, expectations %v", a.written, a.Summary.Profile, a.Expect)
	}
	var v report.Verdict
	data, err := os.ReadFile(filepath.Join(caseA, report.VerdictFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v); err != nil || !slices.Equal(v.Unwritten, want) {
		t.Errorf("the verdict lists %q (%v), want %q", v.Unwritten, err, want)
	}
	if len(b.OutputErrors) != 1 || !strings.Contains(b.OutputErrors[0].Error(), s.Cases[1].Dir()) || b.Dir != "" || b.Err != nil || !b.Passed() {
		t.Errorf("case b: output errors %v, dir %q, run error %v, passed %v", b.OutputErrors, b.Dir, b.Err, b.Passed())
	}
	for _, line := range append(want, "not written: mkdir "+filepath.Join(dir, s.Cases[1].Dir())) {
		if !strings.Contains(progress.String(), line) {
			t.Errorf("progress lacks %q:\n%s", line, progress.String())
		}
	}

	// The report: both cases, from memory; a's delay plots from its trace.
	path, err := WriteReport(dir, s, results, "", "")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="run-1"`, `id="run-2"`, "One-way delay over time", "Not written: write " + filepath.Join(caseA, QueuesFile)} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}

	// The JUnit XML.
	var x bytes.Buffer
	if err := WriteJUnit(&x, s, results, JUnitOptions{Report: path}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(x.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ja := doc.Suites[0].Cases[0]
	if out := ja.SystemOut.Text; !strings.Contains(out, "[[ATTACHMENT|"+filepath.Join(caseA, TraceFile)+"]]") ||
		strings.Contains(out, QueuesFile) || strings.Contains(out, SummaryFile) {
		t.Errorf("case a's attachments:\n%s", out)
	}
	if ja.SystemErr == nil || ja.SystemErr.Text != "not written: "+want[0]+"\nnot written: "+want[1]+"\n" {
		t.Errorf("case a's system-err: %+v", ja.SystemErr)
	}
}
