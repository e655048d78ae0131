package fmu

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// The link between the rig and an isolated FMU's process (the host) is a
// region of shared memory, a memfd the rig seals against shrinking so
// that nothing the host does can make the rig's reads fault. It holds the
// request (the inputs and the time to step to), the response (the
// outputs, the time reached, the counts, an error's report) and the last
// lines the FMU logged, which the host writes as they come, so that the
// rig has them even when the host dies. Each side waits for the other on
// a futex word of the region, and wakes the other only when it sleeps.
// Measured against a socketpair with a fixed binary message
// (BENCHMARKS.md), a futex round trip takes half the time, and the
// region gives the log lines of a host that crashed.
//
// The host is the same binary as the rig, so both read the region with
// the same Go types; what the host writes is still checked (lengths,
// sequence numbers) before the rig uses it, since an FMU that scribbles
// over memory runs there.

// protocol numbers the link's layout and messages; a host that speaks
// another (a binary replaced during a run) is refused.
const protocol = 1

// deadWord is what the rig's watcher writes in the response word when the
// host has ended, to wake a rig waiting on it; no response number is it.
const deadWord = ^uint32(0)

// errCapacity is the room for an error's report (JSON): the message, and
// the FMU's last TailLines lines of MaxLine bytes.
const errCapacity = 64 << 10

// slotSize is a log line's room in the region: its length, then the line
// (at most MaxLine bytes and "…"), rounded up to 8 bytes.
const slotSize = (4 + MaxLine + len("…") + 7) &^ 7

// Operations of a request.
const (
	opStep  = 1
	opClose = 2
)

// Results of a response.
const (
	resultOK = 0
	// resultFailed: the stepping stopped (the Stepper's Err is set).
	resultFailed = 1
	// resultRefused: the step was refused (a time that does not
	// increase); the stepping goes on.
	resultRefused = 2
)

// header starts the region. Each futex word is written by one side and
// has its cache line.
type header struct {
	request   uint32 // the request's number, which the host waits for
	hostSleep uint32 // the host is asleep on request
	_         [56]byte
	response  uint32 // the response's number, which the rig waits for
	rigSleep  uint32 // the rig is asleep on response
	_         [56]byte
	logLines  uint64 // what the FMU logged, as the host counts it
	logBytes  uint64
	_         [48]byte
}

type request struct {
	op  uint32
	set uint32 // 1: the inputs were set since the last step
	to  float64
	// the inputs follow
}

type response struct {
	result uint32
	errLen uint32
	time   float64
	stats  fmi.Stats
	// the outputs follow, then the error's report
}

// layout is where each part of a region for n inputs and m outputs is.
type layout struct {
	request, inputs, response, outputs, report, ring, size int
}

func newLayout(n, m int) layout {
	var l layout
	l.request = int(unsafe.Sizeof(header{}))
	l.inputs = l.request + int(unsafe.Sizeof(request{}))
	l.response = l.inputs + 8*n
	l.outputs = l.response + int(unsafe.Sizeof(response{}))
	l.report = l.outputs + 8*m
	l.ring = l.report + errCapacity
	l.size = l.ring + TailLines*slotSize
	page := unix.Getpagesize()
	l.size = (l.size + page - 1) / page * page
	return l
}

// link is a mapped region.
type link struct {
	mem    []byte
	h      *header
	req    *request
	in     []float64
	resp   *response
	out    []float64
	report []byte
	ring   []byte
}

// maxSignals bounds the inputs and outputs an isolated FMU may have, and
// with them the region's size (16 MiB of values).
const maxSignals = 1 << 20

// mapLink maps the region of fd for n inputs and m outputs.
func mapLink(fd, n, m int) (*link, error) {
	if n < 0 || m < 0 || n > maxSignals || m > maxSignals {
		return nil, fmt.Errorf("%d inputs and %d outputs: an isolated FMU has at most %d of each", n, m, maxSignals)
	}
	l := newLayout(n, m)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size < int64(l.size) {
		return nil, fmt.Errorf("the shared memory is %d bytes; %d inputs and %d outputs need %d", st.Size, n, m, l.size)
	}
	mem, err := unix.Mmap(fd, 0, l.size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the shared memory: %w", err)
	}
	k := &link{mem: mem, h: (*header)(unsafe.Pointer(&mem[0])), req: (*request)(unsafe.Pointer(&mem[l.request])),
		resp: (*response)(unsafe.Pointer(&mem[l.response])), report: mem[l.report:l.ring], ring: mem[l.ring : l.ring+TailLines*slotSize]}
	k.in = unsafe.Slice((*float64)(unsafe.Pointer(&mem[l.inputs])), n)
	k.out = unsafe.Slice((*float64)(unsafe.Pointer(&mem[l.outputs])), m)
	return k, nil
}

func (k *link) unmap() error {
	if k == nil || k.mem == nil {
		return nil
	}
	err := unix.Munmap(k.mem)
	k.mem = nil
	return err
}

// The futex operations, on a word shared between processes (no
// FUTEX_PRIVATE_FLAG).
const (
	futexWait = 0
	futexWake = 1
)

func wake(word *uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWake, 1, 0, 0, 0)
}

// post publishes n in word and wakes the other side if it sleeps on it.
// The store and the load are sequentially consistent, as await's are: a
// side going to sleep either sees n or is seen asleep.
func post(word, sleeping *uint32, n uint32) {
	atomic.StoreUint32(word, n)
	if atomic.LoadUint32(sleeping) != 0 {
		wake(word)
	}
}

// What await saw.
const (
	arrived = iota
	expired // the budget ran out
	ended   // the other side has gone
)

// await waits until word holds n, until gone says the other side has
// ended (nil: it is never asked), or until budget has passed since start
// (0: no budget). It allocates nothing.
func await(word, sleeping *uint32, n uint32, start time.Time, budget time.Duration, gone *atomic.Bool) int {
	var ts unix.Timespec
	for {
		v := atomic.LoadUint32(word)
		if v == n {
			return arrived
		}
		if gone != nil && gone.Load() {
			return ended
		}
		var timeout uintptr
		if budget > 0 {
			left := budget - time.Since(start)
			if left <= 0 {
				return expired
			}
			ts = unix.NsecToTimespec(int64(left))
			timeout = uintptr(unsafe.Pointer(&ts))
		}
		atomic.StoreUint32(sleeping, 1)
		if atomic.LoadUint32(word) == v {
			// Returns at a wake, at the timeout, at a signal, or at once when
			// the word is no longer v: each is looked at again above.
			unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWait, uintptr(v), timeout, 0, 0)
		}
		atomic.StoreUint32(sleeping, 0)
	}
}

// writeLine is the host's Log mirror: the line into its slot, then the
// counts, which tell the rig it is there.
func (k *link) writeLine(line string, lines, bytes uint64) {
	slot := k.ring[int((lines-1)%TailLines)*slotSize:][:slotSize]
	n := copy(slot[4:], line)
	binary.NativeEndian.PutUint32(slot, uint32(n))
	atomic.StoreUint64(&k.h.logBytes, bytes)
	atomic.StoreUint64(&k.h.logLines, lines)
}

// readLog gives log the lines the host has written since log's count. It
// allocates only when there are some.
func (k *link) readLog(log *Log) {
	lines, bytes := atomic.LoadUint64(&k.h.logLines), atomic.LoadUint64(&k.h.logBytes)
	seen, _ := log.Counts()
	if lines == seen {
		return
	}
	var last []string
	if lines > seen { // a count that goes back is the host's memory scribbled on: no lines, the counts
		for i := lines - min(lines-seen, TailLines); i < lines; i++ {
			slot := k.ring[int(i%TailLines)*slotSize:][:slotSize]
			n := min(int(binary.NativeEndian.Uint32(slot)), slotSize-4)
			last = append(last, strings.ToValidUTF8(string(slot[4:4+n]), "\uFFFD"))
		}
	}
	log.received(last, lines, bytes)
}

// wireError is an error of the FMU's stepping as the host reports it, its
// type kept: the rig's error reads as the in-process one would, and
// errors.As finds the same *fmi.CallError or *fmi.OutputError in it.
type wireError struct {
	Message    string      `json:"message"`
	Call       *wireCall   `json:"call,omitempty"`
	Output     *wireOutput `json:"output,omitempty"`
	Terminated bool        `json:"terminated,omitempty"` // wraps fmi.ErrTerminated
}

type wireCall struct {
	Function string   `json:"function"`
	Version  int      `json:"version"`
	Status   int      `json:"status"`
	Log      []string `json:"log,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

// wireOutput carries the numbers as their bits: JSON has no NaN.
type wireOutput struct {
	Signal string `json:"signal"`
	Value  uint64 `json:"value"`
	Time   uint64 `json:"time"`
	When   string `json:"when"`
}

// maxMessage bounds an error's message in a report; the FMU's log lines
// are bounded by its Log already.
const maxMessage = 16 << 10

func encodeError(err error) *wireError {
	w := &wireError{Message: err.Error()}
	if len(w.Message) > maxMessage {
		w.Message = strings.ToValidUTF8(w.Message[:maxMessage], "") + "…"
	}
	var ce *fmi.CallError
	var oe *fmi.OutputError
	switch {
	case errors.As(err, &ce):
		w.Call = &wireCall{Function: ce.Function, Version: int(ce.Version), Status: int(ce.Status), Log: ce.Log, Detail: ce.Detail}
		if len(w.Call.Log) > TailLines {
			w.Call.Log = w.Call.Log[len(w.Call.Log)-TailLines:]
		}
	case errors.As(err, &oe):
		w.Output = &wireOutput{Signal: oe.Signal, Value: math.Float64bits(oe.Value), Time: math.Float64bits(oe.Time), When: oe.When}
	case errors.Is(err, fmi.ErrTerminated):
		w.Terminated = true
	}
	return w
}

// err is the error the report describes.
func (w *wireError) err() error {
	var cause error
	switch {
	case w.Call != nil:
		c := w.Call
		cause = &fmi.CallError{Function: c.Function, Version: fmi.Version(c.Version), Status: fmi.Status(c.Status), Log: c.Log, Detail: c.Detail}
	case w.Output != nil:
		o := w.Output
		cause = &fmi.OutputError{Signal: o.Signal, Value: math.Float64frombits(o.Value), Time: math.Float64frombits(o.Time), When: o.When}
	case w.Terminated:
		cause = fmi.ErrTerminated
	default:
		return errors.New(w.Message)
	}
	if cause.Error() == w.Message {
		return cause
	}
	return &reportedError{w.Message, cause}
}

// reportedError is an error whose text the host gave, around the typed
// error it wraps.
type reportedError struct {
	message string
	cause   error
}

func (e *reportedError) Error() string { return e.message }
func (e *reportedError) Unwrap() error { return e.cause }

// writeReport puts an error's report in the response's room for it.
func (k *link) writeReport(err error) {
	data, _ := json.Marshal(encodeError(err))
	if len(data) > len(k.report) { // cannot happen within the bounds above; a plain message then
		data, _ = json.Marshal(&wireError{Message: strings.ToValidUTF8(err.Error()[:min(len(err.Error()), maxMessage)], "")})
	}
	k.resp.errLen = uint32(copy(k.report, data))
}

// decodeReport reads an error's report; a report that cannot be read is
// said to be one.
func decodeReport(data []byte) error {
	var w wireError
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("the FMU's process reported an error hilrig cannot read (%v): %.200q", err, data)
	}
	return w.err()
}

// The start of a host: one request and one reply on the control socket,
// each a length and JSON.

// startRequest is what the rig asks of a host.
type startRequest struct {
	Protocol  int    `json:"protocol"`
	Path      string `json:"path"`    // the .fmu, for messages
	Dir       string `json:"dir"`     // where the rig unpacked it
	Library   string `json:"library"` // the library to load, in the archive
	Name      string `json:"name"`
	LoggingOn bool   `json:"logging_on"`
	Config    wireConfig
}

// wireConfig is an fmi.Config, its numbers as bits (a NaN is refused by
// the Stepper, with its message, not by JSON).
type wireConfig struct {
	Kind       fmi.Kind          `json:"kind"`
	Experiment [4]uint64         `json:"experiment"` // start, stop, tolerance, step
	Params     map[string]uint64 `json:"params"`
	Inputs     []string          `json:"inputs"` // null: every input; []: none
	Outputs    []string          `json:"outputs"`
	Initial    []uint64          `json:"initial"`
}

func encodeConfig(c fmi.Config) wireConfig {
	e := c.Experiment
	w := wireConfig{Kind: c.Kind, Inputs: c.Inputs, Outputs: c.Outputs,
		Experiment: [4]uint64{math.Float64bits(e.Start), math.Float64bits(e.Stop), math.Float64bits(e.Tolerance), math.Float64bits(e.Step)}}
	if c.Params != nil {
		w.Params = make(map[string]uint64, len(c.Params))
		for k, v := range c.Params {
			w.Params[k] = math.Float64bits(v)
		}
	}
	if c.Initial != nil {
		w.Initial = make([]uint64, len(c.Initial))
		for i, v := range c.Initial {
			w.Initial[i] = math.Float64bits(v)
		}
	}
	return w
}

func (w wireConfig) config() fmi.Config {
	f := math.Float64frombits
	c := fmi.Config{Kind: w.Kind, Inputs: w.Inputs, Outputs: w.Outputs,
		Experiment: fmi.Experiment{Start: f(w.Experiment[0]), Stop: f(w.Experiment[1]), Tolerance: f(w.Experiment[2]), Step: f(w.Experiment[3])}}
	if w.Params != nil {
		c.Params = make(map[string]float64, len(w.Params))
		for k, v := range w.Params {
			c.Params[k] = f(v)
		}
	}
	if w.Initial != nil {
		c.Initial = make([]float64, len(w.Initial))
		for i, v := range w.Initial {
			c.Initial[i] = f(v)
		}
	}
	return c
}

// startReply is the host's answer: the stepping started, or why not.
type startReply struct {
	Protocol int        `json:"protocol"`
	Err      *wireError `json:"error,omitempty"`
	Inputs   []string   `json:"inputs"`
	Outputs  []string   `json:"outputs"`
	Time     uint64     `json:"time"`
	Values   []uint64   `json:"values"` // the outputs at Time
	Stats    fmi.Stats  `json:"stats"`
}

// maxStartMessage bounds a start message: an FMU's every output's name.
const maxStartMessage = 64 << 20

func writeMessage(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(data) > maxStartMessage {
		return fmt.Errorf("a message of %d bytes: at most %d", len(data), maxStartMessage)
	}
	msg := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data)))
	_, err = w.Write(append(msg, data...))
	return err
}

func readMessage(r io.Reader, v any) error {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return err
	}
	n := binary.LittleEndian.Uint32(size[:])
	if n > maxStartMessage {
		return fmt.Errorf("a message of %d bytes: at most %d", n, maxStartMessage)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
