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
