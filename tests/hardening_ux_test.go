package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyShard: a part of a suite that holds no case (more parts than
// cases) says so, in place of the verdict, in the JUnit XML (a suite of
// no test, with why in its system-out) and on the report's page, and
// exits 0: the other parts run every case. Before, it printed "PASS 0
// cases".
func TestEmptyShard(t *testing.T) {
	dir := t.TempDir()
	suite := writeCISuite(t, dir, "")
	junit, report := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report")
	r := runHilrig(t, "test", suite, "--shard", "10/12", "--junit", junit, "--report", report)
	const why = "part 10/12 holds none of the suite's 9 cases: 12 parts of 9 cases leave parts 10 to 12 empty (each case runs once, in one part)"
	if r.code != 0 || !strings.Contains(r.stdout, "NO CASES: "+why+"\n") || strings.Contains(r.stdout, "PASS") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	xml, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(xml), `tests="0"`) || !strings.Contains(string(xml), "<system-out><![CDATA["+why) {
		t.Errorf("the JUnit XML does not say the part is empty:\n%s", xml)
	}
	validateJUnit(t, junit)
	page, err := os.ReadFile(filepath.Join(report, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), strings.ReplaceAll(why, "'", "&#39;")) {
		t.Errorf("the report does not say the part is empty")
	}
}
