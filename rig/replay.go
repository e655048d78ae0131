package rig

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// RecordingFile is a recording of an earlier run (run --record FILE),
// read through once to check it before anything runs, and read again, as
// it goes, by each endpoint that replays it: what a replay holds does not
// grow with the file.
type RecordingFile struct {
	path       string
	info       os.FileInfo // the file checked, which a replay reads again
	whole      int64       // the bytes of its whole blocks: what is replayed
	interfaces []record.RecordingInterface
	sent       []sentFrames // per interface
	// CutShort is where the recording ends inside a block (the recording
	// of a run that was killed), or nil: the whole blocks before it are
	// replayed, and each endpoint replayed says so.
	CutShort *record.CutShortError
}

// sentFrames are the frames an endpoint's device sent in a recording.
type sentFrames struct {
	n    uint64
	last time.Duration
}

// ReadRecording reads a recording through, checking every block, and
// keeps what a replay needs to know beforehand: its endpoints, how many
// frames each sent, and where it ends. It must be a regular file (a
// device or a FIFO might never end, or block).
func ReadRecording(path string) (*RecordingFile, error) {
	f, info, err := lang.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec := &RecordingFile{path: path, info: info}
	rr, err := record.NewRecordingReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for {
		var fr record.RecordedFrame
		err := rr.Next(&fr)
		if err == io.EOF {
			break
		}
		if errors.As(err, &rec.CutShort) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for len(rec.sent) < len(rr.Interfaces) {
			rec.sent = append(rec.sent, sentFrames{})
		}
		if !fr.Outbound {
			rec.sent[fr.Interface].n++
			rec.sent[fr.Interface].last = fr.At
		}
	}
	rec.interfaces, rec.whole = rr.Interfaces, rr.Offset()
	return rec, nil
}

// withBenchReplays adds to players one for every bench endpoint that
// replays a recording (replay: in the bench), unless players plays it
// already; players itself is not changed.
func withBenchReplays(b *benchfile.LoadedBench, players map[string]Player) (map[string]Player, error) {
	var out map[string]Player
	read := map[string]*RecordingFile{}
	for i, name := range b.Endpoints.Names {
		r := b.Endpoints.Values[i].Replay
		if r == nil || players[name] != nil {
			continue
		}
		rec := read[r.Path()]
		if rec == nil {
			var err error
			if rec, err = ReadRecording(r.Path()); err != nil {
				return nil, fmt.Errorf("endpoint %s: %w", name, err)
			}
			read[r.Path()] = rec
		}
		p, err := Replay(rec, r.Recorded())
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %s: %w", name, r.Path(), err)
		}
		if out == nil {
			out = make(map[string]Player, len(players)+1)
			for k, v := range players {
				out[k] = v
			}
		}
		out[name] = p
	}
	if out == nil {
		return players, nil
	}
	return out, nil
}

// replay plays a bench endpoint from a recording: it sends the frames the
// endpoint's device sent in the recorded run, at the times they entered
// the rig then, and takes (and counts) what is written to it. It reads
// the recording as it goes, ahead of the run on a goroutine of its own,
// so that a replay in real time does not wait for the disk on the
// executor's thread, and allocates nothing per frame.
type replay struct {
	rec      *RecordingFile
	endpoint string // the recording's
	iface    int
	flow     int
	received uint64

	file   *os.File // open from the run's beginning to its end
	ahead  *readAhead
	reader *record.RecordingReader
	next   record.RecordedFrame // the frame to send next, if pending
	state  replayState
	err    error // reading the recording again failed
}

type replayState uint8

const (
	replayUnopened replayState = iota
	replayPending              // next is the frame to send
	replayDone
)

var _ Player = (*replay)(nil)

// Replay is a Player of endpoint as rec recorded it.
func Replay(rec *RecordingFile, endpoint string) (Player, error) {
	var names []string
	for i, in := range rec.interfaces {
		names = append(names, in.Name)
		if in.Name == endpoint {
			return &replay{rec: rec, endpoint: endpoint, iface: i, flow: -1}, nil
		}
	}
	return nil, fmt.Errorf("the recording has no endpoint %s (it has %s)", endpoint, strings.Join(names, ", "))
}

func (r *replay) Feed(flow int) { r.flow = flow }

// cutShort says, for a recording cut short, what of it the endpoint
// replays; "" for a whole one.
func (r *replay) cutShort() string {
	cut := r.rec.CutShort
	if cut == nil {
		return ""
	}
	sent := sentFrames{}
	if r.iface < len(r.rec.sent) {
		sent = r.rec.sent[r.iface]
	}
	return fmt.Sprintf("%s is %v (the recording of a run that was killed?): %s replays the %d frames its device sent before, to %.6f s", r.rec.path, cut, r.endpoint, sent.n, sent.last.Seconds())
}

func (r *replay) Next() time.Duration {
	if r.state == replayUnopened { // a session opens it before the run
		r.open()
	}
	if r.flow < 0 || r.state != replayPending {
		return math.MaxInt64
	}
	return r.next.At
}

func (r *replay) Emit(now time.Duration, inject func(flow int, payload []byte)) {
	for r.state == replayPending && r.next.At <= now {
		inject(r.flow, r.next.Payload)
		r.advance()
	}
}

// open opens the recording again, the file that was checked, up to the
// end of its whole blocks, and reads up to the first frame to send; the
// session does it before the run begins.
func (r *replay) open() {
	if r.state != replayUnopened {
		return
	}
	r.state = replayDone
	f, info, err := lang.OpenFile(r.rec.path)
	if err == nil && (!os.SameFile(info, r.rec.info) || info.Size() < r.rec.whole) {
		f.Close()
		err = errors.New("it changed since it was checked")
	}
	if err != nil {
		r.err = err
		return
	}
	r.file, r.ahead = f, newReadAhead(io.LimitReader(f, r.rec.whole))
	if r.reader, err = record.NewRecordingReader(r.ahead); err != nil {
		r.err = err
		return
	}
	r.advance()
}

// advance reads up to the next frame the endpoint's device sent.
func (r *replay) advance() {
	for {
		err := r.reader.Next(&r.next)
		switch {
		case err == io.EOF:
			r.state = replayDone
			return
		case err != nil:
			r.state, r.err = replayDone, err
			return
		case r.next.Interface == r.iface && !r.next.Outbound:
			r.state = replayPending
			return
		}
	}
}

// failure is what went wrong reading the recording again, if anything:
// the frames after it were not replayed.
func (r *replay) failure() error {
	if r.err == nil {
		return nil
	}
	var from int64
	if r.reader != nil {
		from = r.reader.Offset()
	}
	return fmt.Errorf("replaying %s from %s: %w: the frames after byte %d were not sent", r.endpoint, r.rec.path, r.err, from)
}

// close stops reading the recording.
func (r *replay) close() {
	if r.ahead != nil {
		r.ahead.Close()
		r.file.Close()
		r.ahead, r.file = nil, nil
	}
}

func (r *replay) Write([]byte) error {
	r.received++
	return nil
}

var _ executor.Source = (*replay)(nil)

// readAhead reads a file ahead of its reader, on a goroutine of its own,
// into a few chunks that go round: the reader waits only for a disk
// slower than it reads, and nothing is allocated once they are made.
type readAhead struct {
	full, free chan []byte
	chunk      []byte // the chunk being read, which goes back to free once read
	rest       []byte // what of it is not read yet
	err        error  // why the file ended, set before full is closed
	stop, done chan struct{}
}

// aheadChunks of aheadChunk bytes: half a megabyte ahead, seconds of
// frames at the rates devices send.
const (
	aheadChunk  = 64 << 10
	aheadChunks = 8
)

func newReadAhead(r io.Reader) *readAhead {
	a := &readAhead{full: make(chan []byte, aheadChunks), free: make(chan []byte, aheadChunks), stop: make(chan struct{}), done: make(chan struct{})}
	for range aheadChunks {
		a.free <- make([]byte, aheadChunk)
	}
	go a.fill(r)
	return a
}

func (a *readAhead) fill(r io.Reader) {
	defer close(a.done)
	defer close(a.full)
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		case <-a.stop:
			return
		}
		n, err := io.ReadFull(r, buf[:cap(buf)])
		if n > 0 {
			select {
			case a.full <- buf[:n]:
			case <-a.stop:
				return
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return
		}
		if err != nil {
			a.err = err
			return
		}
	}
}

func (a *readAhead) Read(p []byte) (int, error) {
	for len(a.rest) == 0 {
		if a.chunk != nil {
			a.free <- a.chunk // never waits: free has room for every chunk
			a.chunk = nil
		}
		chunk, ok := <-a.full
		if !ok {
			if a.err != nil {
				return 0, a.err
			}
			return 0, io.EOF
		}
		a.chunk, a.rest = chunk, chunk
	}
	n := copy(p, a.rest)
	a.rest = a.rest[n:]
	return n, nil
}

// Close stops reading ahead.
func (a *readAhead) Close() {
	close(a.stop)
	<-a.done
}
