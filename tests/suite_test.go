package tests

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// failingCase is added to the shipped CI suite: paper 000's plateau
// (L·8/C = 60 ms over the uncongested 6.16 ms) exceeds a 60 ms budget.
const failingCase = `  plateau-budget:
    description: A control budget that the bottleneck's plateau exceeds, on purpose.
    profile: bottleneck
    expect:
      - flows.m2s.delay.p95 < 60ms
      - flows.m2s.lost == 0
`

// TestSuiteEndToEnd runs the shipped CI suite with a deliberately failing
// case added, as a CI job would: exit 1, the JUnit XML valid against
// Jenkins' schema and naming the failure with what was measured, and the
// HTML report with a plot for every figure of every case.
func TestSuiteEndToEnd(t *testing.T) {
	dir := t.TempDir()
	suite := writeCISuite(t, dir, failingCase)
	junit, report := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report")
	r := runHilrig(t, "test", suite, "--junit", junit, "--report", report)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"hilrig test ci: 10 of its 10 cases\n",
		"--- PASS: link-echo (",
		"--- FAIL: plateau-budget (",
		"    flows.m2s.delay.p95 < 60ms failed: measured 65.7654ms, limit 60ms\n",
		"FAIL 1 of 10 cases: plateau-budget\n",
		"report: " + filepath.Join(report, "index.html") + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r.stdout)
		}
	}

	// The JUnit XML.
	validateJUnit(t, junit)
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 10 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 10 {
		t.Fatalf("tests %d, failures %d, suites %+v", doc.Tests, doc.Failures, doc.Suites)
	}
	for _, c := range doc.Suites[0].Cases {
		if (c.Failure != nil) != (c.Name == "plateau-budget") {
			t.Errorf("%s: failure %+v", c.Name, c.Failure)
		}
		if c.Failure != nil {
			const want = "flows.m2s.delay.p95 < 60ms failed: measured 65.7654ms, limit 60ms"
			if c.Failure.Message != want || c.Failure.Text != want {
				t.Errorf("the failure says %q / %q, want %q", c.Failure.Message, c.Failure.Text, want)
			}
			for _, attached := range []string{"010-plateau-budget/trace.csv]]", "010-plateau-budget/summary.json]]", "index.html]]", "PASS flows.m2s.lost == 0: measured 0"} {
				if !strings.Contains(c.Out, attached) {
					t.Errorf("system-out lacks %q:\n%s", attached, c.Out)
				}
			}
		}
	}

	// The report: one page, a section per case, its plots inline.
	page, err := os.ReadFile(filepath.Join(report, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	svgs, text := readReport(t, page)
	// Each case has a trace (delay, its distribution, frames in the
	// network) and a queue-depth plot when one of its hops ever held a
	// byte; none has a model; none ran in real time.
	queued := casesThatQueued(t, report)
	if queued == 0 || queued == 10 {
		t.Errorf("%d of 10 cases queued: the shipped suite has both kinds", queued)
	}
	if want := 3*10 + queued; len(svgs) != want || strings.Count(strings.Join(svgs, "\n"), "Queue depth") != queued {
		t.Errorf("%d plots, want %d (%d queue-depth plots): %q", len(svgs), want, queued, svgs)
	}
	for _, want := range []string{"FAIL: 1 of 10 failed", "flows.m2s.delay.p95 < 60ms", "65.7654ms", "A control budget that the bottleneck's plateau exceeds, on purpose.",
		`expect line "PING 49" at plant within 4.1ms`} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q", want)
		}
	}

	// The same page again from the directory alone.
	r = runHilrig(t, "report", report, "--out", filepath.Join(dir, "again.html"))
	if r.code != 0 {
		t.Fatalf("hilrig report: exit %d: %s", r.code, r.stderr)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "again.html"))
	if svgs2, _ := readReport(t, again); len(svgs2) != len(svgs) {
		t.Errorf("hilrig report made %d plots of the suite's directory, hilrig test %d", len(svgs2), len(svgs))
	}
}

// writeCISuite writes the shipped CI suite into dir, its bench found from
// there, with extra cases.
func writeCISuite(t *testing.T, dir, extra string) string {
	t.Helper()
	data, err := os.ReadFile("../profiles/suites/ci.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bench, _ := filepath.Abs("../profiles/benches/virtual.yaml")
	text := strings.ReplaceAll(string(data), "../benches/virtual.yaml", bench) + extra
	path := filepath.Join(dir, "ci.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// validateJUnit checks the file against Jenkins' JUnit schema with
// xmllint (Debian's libxml2-utils, which .ci/run installs); without it the
// check is skipped, except in CI.
func validateJUnit(t *testing.T, path string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint is missing: install libxml2-utils")
		}
		t.Log("xmllint is missing (libxml2-utils): the JUnit XML is not checked against its schema")
		return
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit-10.xsd", path).CombinedOutput()
	if err != nil {
		t.Errorf("the JUnit XML does not validate: %v\n%s", err, out)
	}
}

// readReport parses a report as XML (it is written well-formed) and
// returns the titles of its plots, each checked to draw lines and text,
// and the page's text outside them.
// casesThatQueued counts the suite's cases whose queues.csv has a hop that
// held at least one byte at a sample.
func casesThatQueued(t *testing.T, report string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(report, "*", "queues.csv"))
	if err != nil || len(files) != 10 {
		t.Fatalf("queues.csv of %d cases (%v), want 10", len(files), err)
	}
	n := 0
	for _, f := range files {
		rows, err := csv.NewReader(bytes.NewReader(mustRead(t, f))).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s: %d rows, %v", f, len(rows), err)
		}
		held := false
		for c, col := range rows[0] {
			for _, row := range rows[1:] {
				held = held || strings.HasSuffix(col, ".queue_bytes") && row[c] != "0"
			}
		}
		if held {
			n++
		}
	}
	return n
}

func readReport(t *testing.T, page []byte) (titles []string, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var b strings.Builder
	depth, paths := 0, 0
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the report does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local == "svg" {
				depth, paths, texts = depth+1, 0, nil
			} else if depth > 0 && tok.Name.Local == "path" {
				paths += subpaths(tok) // a plot joins the lines it strokes alike
			}
		case xml.EndElement:
			if tok.Name.Local == "svg" {
				depth--
				if paths < 10 || len(texts) < 5 {
					t.Errorf("a plot with %d paths and texts %q", paths, texts)
					continue
				}
				titles = append(titles, texts[0])
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); depth > 0 && s != "" {
				texts = append(texts, s)
			} else if depth == 0 {
				b.Write(tok)
			}
		}
	}
	return titles, b.String()
}

// TestSuiteInputErrors: a wrong suite or shard is a usage error, found
// before anything runs.
func TestSuiteInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("cases:\n  a:\n    profile: bottlenek\n    expect: [flows.m2s.lost = 0]\n"), 0o644)
	suite := writeCISuite(t, dir, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Every problem at once: the profile's, and the expectation of
		// the case that did not load.
		{[]string{"test", bad}, "hilrig: " + bad + ":3:14: cases.a.profile: cannot find \"bottlenek\": no such file next to the suite, and no shipped profile by that name; did you mean bottleneck?\n" +
			"hilrig: " + bad + ":4:29: cases.a.expect[0]: write == to compare\n"},
		{[]string{"test", suite, "--shard", "4/3"}, "hilrig: --shard \"4/3\": i must be from 1 to 3\n"},
		{[]string{"test", filepath.Join(dir, "none.yaml")}, "no such file or directory"},
		{[]string{"test", suite, "--junit", filepath.Join(dir, "no", "such", "dir", "j.xml")}, "no such file or directory"},
		{[]string{"sim", "bottleneck", "--expect", "flows.cmd.lost == 0"}, "hilrig: --expect \"flows.cmd.lost == 0\": column 7: flows has no \"cmd\" (it has m2s, s2m, cross)\n"},
	} {
		r := runHilrig(t, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stdout, "--- ") {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestSuiteShards: the three parts of a suite, run as three CI jobs would,
// run every case once.
func TestSuiteShards(t *testing.T) {
	dir := t.TempDir()
	suite := writeCISuite(t, dir, failingCase)
	seen := map[string]int{}
	failed := 0
	for _, part := range []string{"1/3", "2/3", "3/3"} {
		r := runHilrig(t, "test", suite, "--shard", part)
		if r.code == 1 {
			failed++
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if name, ok := strings.CutPrefix(line, "--- "); ok {
				name = name[strings.Index(name, ": ")+2 : strings.LastIndex(name, " (")]
				seen[name]++
			}
		}
	}
	if len(seen) != 10 || failed != 1 {
		t.Errorf("the parts ran %d distinct cases (want 10), %d failed (want 1): %v", len(seen), failed, seen)
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s ran %d times", name, n)
		}
	}
}

// TestExpectOnRuns: --expect on sim, with the measured value and the limit
// of what failed; hilrig report on the run's files.
func TestExpectOnRuns(t *testing.T) {
	dir := t.TempDir()
	files := []string{"--trace", filepath.Join(dir, "t.csv"), "--signals", filepath.Join(dir, "s.csv"), "--summary", filepath.Join(dir, "sum.json")}
	args := append([]string{"sim", "internet-hil", "--bench", "../profiles/suites/benches/quarter-car-cp1.yaml", "--duration", "4s",
		"--expect", "models.car.deflection.error_pct < 1", "--expect", "flows.to-remote.delay.p95 < 30ms"}, files...)
	r := runHilrig(t, args...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"hilrig: expect models.car.deflection.error_pct < 1 failed: measured ",
		", limit 1\n",
		"hilrig: expect flows.to-remote.delay.p95 < 30ms: measured 21.",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = runHilrig(t, "report", dir)
	if r.code != 0 || strings.TrimSpace(r.stdout) != filepath.Join(dir, "report.html") {
		t.Fatalf("hilrig report: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	titles, _ := readReport(t, page)
	if strings.Join(titles, "|") != "One-way delay over time|Delay distribution|Frames in the network|car: deflection|car: v1|car: Fs" {
		t.Errorf("plots %q", titles)
	}
}

// subpaths counts the lines a path element draws: one per move in its
// data (the report joins the lines it draws alike into one element).
func subpaths(path xml.StartElement) int {
	for _, a := range path.Attr {
		if a.Name.Local == "d" {
			return strings.Count(a.Value, "M")
		}
	}
	return 0
}
