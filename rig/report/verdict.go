package report

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// VerdictFile is the name of a run's verdict in its directory.
const VerdictFile = "verdict.json"

// Verdict is a run's outcome as a suite judged it, kept next to the run's
// outputs so that a report can be made again from the directory alone.
type Verdict struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Passed      bool    `json:"passed"`
	Error       string  `json:"error,omitempty"` // the run itself failed
	Expect      []Check `json:"expect,omitempty"`
	Script      []Check `json:"script,omitempty"`
	ElapsedS    float64 `json:"elapsed_s"`
	// Unwritten says which of the run's files could not be written, and
	// why: the verdict stands, and the page lacks their plots.
	Unwritten []string `json:"unwritten,omitempty"`
}

// Check is one line of a verdict: an expectation with what was measured,
// or a step of a script with what happened.
type Check struct {
	Text     string `json:"text"`
	OK       bool   `json:"ok"`
	Measured string `json:"measured,omitempty"`
	Limit    string `json:"limit,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// WriteVerdict writes v into dir.
func WriteVerdict(dir string, v Verdict) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, VerdictFile), append(data, '\n'), 0o644)
}

// failing are the lines that say why the run failed, each with what was
// measured: the run's own failure first, then the expectations and steps
// that failed, in the verdict's order.
func (v *Verdict) failing() []string {
	var out []string
	if v.Error != "" {
		out = append(out, "the run failed: "+v.Error)
	}
	for _, c := range v.Expect {
		if !c.OK {
			out = append(out, c.line())
		}
	}
	for _, c := range v.Script {
		if !c.OK {
			out = append(out, c.line())
		}
	}
	return out
}

// line is the check in a line: what was expected, and what was measured
// or happened.
func (c Check) line() string {
	switch {
	case c.Measured != "":
		return c.Text + ": measured " + c.Measured
	case c.Detail != "":
		return c.Text + ": " + c.Detail
	}
	return c.Text
}
