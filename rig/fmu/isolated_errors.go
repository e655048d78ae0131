package fmu

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Where is where in its life an isolated FMU failed.
type Where struct {
	Phase    string  // "start", "step" or "close"
	From, To float64 // the step's communication points, in a step
}

func (w Where) String() string {
	if w.Phase == "step" {
		return fmt.Sprintf("in the step from %g to %g", w.From, w.To)
	}
	return "in its " + w.Phase
}

// CrashError is an isolated FMU's process ended by a signal: a fault in
// the FMU (SIGSEGV, SIGBUS, SIGFPE, SIGILL), its abort (SIGABRT), or a
// signal from elsewhere (SIGKILL: the out-of-memory killer, a user).
type CrashError struct {
	Signal syscall.Signal
	Where  Where
	// Report is what the process said as it died: for a fault in the
	// FMU's code, the Go runtime's first lines (the signal, the address,
	// "signal arrived during cgo execution").
	Report []string
	// Log is the FMU's last messages, oldest first, up to its crash.
	Log []string
}

func (e *CrashError) Error() string {
	return fmt.Sprintf("the FMU's process crashed with %s (%v) %v", signalName(e.Signal), e.Signal, e.Where) + logSuffix(e.Log)
}

// ExitError is an isolated FMU's process that ended by itself: the FMU
// called exit, or the process failed, as its report says.
type ExitError struct {
	Code   int
	Where  Where
	Report []string
	Log    []string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("the FMU's process exited with status %d %v", e.Code, e.Where)
	if len(e.Report) > 0 {
		msg += " (it said: " + e.Report[0] + ")"
	}
	return msg + logSuffix(e.Log)
}

// TimeoutError is an isolated FMU that took longer than its budget: its
// process was killed, and the call returned at the budget.
type TimeoutError struct {
	Budget time.Duration
	Where  Where
	Log    []string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the FMU took longer than its budget of %v %v: its process was killed", e.Budget, e.Where) + logSuffix(e.Log)
}

// logSuffix says what the FMU logged last, as fmi.CallError does.
func logSuffix(log []string) string {
	switch len(log) {
	case 0:
		return " (the FMU logged nothing)"
	case 1:
		return "; the FMU logged: " + log[0]
	}
	return "; the FMU's last messages:\n  " + strings.Join(log, "\n  ")
}

// signalName is a signal's name as C calls it: SIGSEGV.
func signalName(s syscall.Signal) string {
	for name, sig := range signalNames {
		if sig == s {
			return name
		}
	}
	return fmt.Sprintf("signal %d", int(s))
}

// signalNames are the signals that end an FMU's process, by name.
var signalNames = map[string]syscall.Signal{
	"SIGSEGV": syscall.SIGSEGV, "SIGBUS": syscall.SIGBUS, "SIGFPE": syscall.SIGFPE, "SIGILL": syscall.SIGILL,
	"SIGABRT": syscall.SIGABRT, "SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM, "SIGTRAP": syscall.SIGTRAP,
	"SIGSYS": syscall.SIGSYS, "SIGPIPE": syscall.SIGPIPE, "SIGQUIT": syscall.SIGQUIT, "SIGINT": syscall.SIGINT, "SIGHUP": syscall.SIGHUP,
}

// reportedSignal is the signal the Go runtime says ended its process, from
// the first lines it printed, or 0: "SIGSEGV: segmentation violation" for
// a fault in foreign code (the FMU's), "[signal SIGSEGV: segmentation
// violation ...]" for one in Go's (the FMU scribbled over it).
func reportedSignal(report []string) syscall.Signal {
	for _, line := range report {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "[signal "), ":")
		if sig, known := signalNames[name]; ok && known {
			return sig
		}
	}
	return 0
}

// headWriter keeps the first headSize bytes written to it: the start of
// what a dying process says, where the Go runtime names the signal.
type headWriter struct {
	mu   sync.Mutex
	head []byte
}

const headSize = 4 << 10

func (w *headWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := headSize - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// lines is the first n lines kept that are not blank.
func (w *headWriter) lines(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, line := range bytes.Split(w.head, []byte("\n")) {
		if s := strings.TrimSpace(strings.ToValidUTF8(string(line), "\uFFFD")); s != "" && len(out) < n {
			out = append(out, s)
		}
	}
	return out
}
