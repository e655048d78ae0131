package suite

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hilrig/hilrig/rig/expect"
)

// JUnit XML as Jenkins, GitLab and GitHub's test reporters read it (the
// Ant/Surefire dialect, as Jenkins' xunit plugin's junit-10.xsd describes
// it): a testsuite for the suite, a testcase per case, a failure for a case
// whose expectations or script failed and an error for one whose run
// failed, each with the measured values and limits. Files go along as
// attachments by path, [[ATTACHMENT|path]] lines in system-out, which
// Jenkins' junit-attachments plugin and GitLab both understand.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	File       string          `xml:"file,attr"`
	Properties junitProperties `xml:"properties"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  *cdata          `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Props []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut *cdata        `xml:"system-out,omitempty"`
	SystemErr *cdata        `xml:"system-err,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// cdata is text kept as written, its lines unescaped, for a person reading
// the XML.
type cdata struct {
	Text string `xml:",cdata"`
}

// JUnitOptions add to the XML what the command line knows.
type JUnitOptions struct {
	Shard  string    // i/n, when the suite was sharded
	Report string    // the HTML report's path, attached to every case
	Start  time.Time // when the suite started
	// Note, when not empty, is said in the suite's system-out: why it
	// holds no case (Suite.EmptyShard).
	Note string
}

// WriteJUnit writes the results as JUnit XML.
func WriteJUnit(w io.Writer, s *Suite, results []*Result, opt JUnitOptions) error {
	ts := junitSuite{Name: s.Name, File: s.Source, Timestamp: opt.Start.UTC().Format("2006-01-02T15:04:05")}
	ts.Hostname, _ = os.Hostname()
	props := []junitProperty{{"suite", s.Source}}
	if opt.Shard != "" {
		props = append(props, junitProperty{"shard", opt.Shard})
	}
	ts.Properties.Props = props
	var total time.Duration
	for _, r := range results {
		c := r.Case
		jc := junitCase{Name: c.ID, Classname: s.Name, Time: secondsText(r.Elapsed)}
		total += r.Elapsed
		failures := r.Failures()
		switch {
		case r.Err != nil:
			ts.Errors++
			jc.Error = &junitProblem{Message: failures[0], Type: "run", Text: strings.Join(failures, "\n")}
		case len(failures) > 0:
			ts.Failures++
			kind := "expectation"
			if len(expect.Failed(r.Expect)) == 0 {
				kind = "script"
			}
			jc.Failure = &junitProblem{Message: failures[0], Type: kind, Text: strings.Join(failures, "\n")}
		}
		jc.SystemOut = &cdata{systemOut(r, opt.Report)}
		if len(r.OutputErrors) > 0 {
			var lines []string
			for _, err := range r.OutputErrors {
				lines = append(lines, "not written: "+err.Error())
			}
			jc.SystemErr = &cdata{strings.Join(lines, "\n") + "\n"}
		}
		ts.Cases = append(ts.Cases, jc)
	}
	if opt.Note != "" {
		ts.SystemOut = &cdata{opt.Note + "\n"}
	}
	ts.Tests = len(results)
	ts.Time = secondsText(total)
	doc := junitSuites{Name: s.Name, Tests: ts.Tests, Failures: ts.Failures, Errors: ts.Errors, Time: ts.Time, Suites: []junitSuite{ts}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// systemOut is everything the case checked, with what was measured, and
// its files as attachments.
func systemOut(r *Result, reportPath string) string {
	var b strings.Builder
	c := r.Case
	fmt.Fprintf(&b, "profile %s", c.Profile.Name)
	if c.Bench != nil {
		fmt.Fprintf(&b, ", bench %s", c.Bench.Name)
	}
	fmt.Fprintf(&b, ", %s time, stopped: %s\n", map[bool]string{false: "virtual", true: "real"}[c.Real], r.Summary.Stopped)
	for _, e := range r.Expect {
		fmt.Fprintf(&b, "%s %s\n", passWord(e.OK), e)
	}
	for _, s := range r.Script {
		fmt.Fprintf(&b, "%s %s\n", passWord(s.OK), s)
	}
	for _, name := range []string{SummaryFile, TraceFile, SignalsFile, QueuesFile} {
		if path := r.writtenFile(name); path != "" {
			fmt.Fprintf(&b, "[[ATTACHMENT|%s]]\n", path)
		}
	}
	if reportPath != "" {
		fmt.Fprintf(&b, "[[ATTACHMENT|%s]]\n", reportPath)
	}
	return b.String()
}

func passWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func secondsText(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
