package record

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Writer writes records of type T to a file, after a header, and accounts
// for every record it is given: written whole to the file, dropped by a
// full ring, or unwritten because the file failed.
//
// A synchronous Writer formats each record as it is published. An
// asynchronous one hands records to a goroutine of its own through a ring
// of fixed-size slots, so that no system call for a file ever happens on
// the publisher's thread; a full ring (the disk far behind) drops the
// record and counts it, and the file is written every 100 ms, so that it
// is readable up to then whatever happens next.
//
// A file that fails (a full disk) is not written again, so that it ends
// where it failed rather than going on after a hole: every record after
// is counted unwritten. The run goes on: its timing and its devices
// matter more than a file, and its summary says what the file lost.
type Writer[T any] struct {
	file   io.Writer
	buf    []byte  // what is formatted and not yet written: the header, then records
	ends   []int32 // where each record in buf ends
	format func(b []byte, r *T) []byte
	failed bool // touched only by the goroutine that writes

	written, dropped, unwritten atomic.Uint64

	mu        sync.Mutex
	err       error // the file's write error
	onFailure func(error)
	told      bool // onFailure has been called

	async   bool
	ring    []T
	head    atomic.Uint64 // next slot the publisher fills
	tail    atomic.Uint64 // next slot the writer goroutine reads
	kick    chan struct{}
	done    chan struct{}
	closing atomic.Bool
}

// writeSize is how much is formatted before it is written to the file;
// rowRoom the space a record may take there without allocating (a
// record's line is far shorter); minRecord the shortest record (a
// signals row of one column, "0.000000000,0\n", is 14 bytes), so that
// where the records of a full buffer end is held without growing.
const (
	writeSize = 256 << 10
	rowRoom   = 4 << 10
	minRecord = 12
)

// NewWriter writes header and returns a writer. slots > 0 makes it
// asynchronous with a ring of that many slots; init, if set, prepares
// each slot once (to preallocate what it holds).
func NewWriter[T any](w io.Writer, header []byte, slots int, init func(*T), format func([]byte, *T) []byte) *Writer[T] {
	a := &Writer[T]{file: w, buf: make([]byte, 0, writeSize), ends: make([]int32, 0, writeSize/minRecord), format: format, async: slots > 0}
	if !a.async {
		slots = 1
	}
	a.ring = make([]T, slots)
	if init != nil {
		for i := range a.ring {
			init(&a.ring[i])
		}
	}
	a.buf = append(a.buf, header...)
	if a.async {
		a.kick, a.done = make(chan struct{}, 1), make(chan struct{})
		go a.loop()
	}
	return a
}

// OnFailure has f called once, with the error, when the file fails: on
// the goroutine that writes (the publisher's for a synchronous writer,
// the writer's own for an asynchronous one), or at once if it has failed
// already.
func (a *Writer[T]) OnFailure(f func(error)) {
	a.mu.Lock()
	a.onFailure = f
	tell := a.err != nil && !a.told
	a.told = a.told || tell
	err := a.err
	a.mu.Unlock()
	if tell {
		f(err)
	}
}

// Next returns the slot to fill, or nil when the ring is full; Publish
// hands it to the writer.
func (a *Writer[T]) Next() *T {
	head := a.head.Load()
	if a.async && head-a.tail.Load() == uint64(len(a.ring)) {
		a.dropped.Add(1)
		return nil
	}
	return &a.ring[head%uint64(len(a.ring))]
}

// Publish writes the slot Next returned, at once or from the writer's
// goroutine.
func (a *Writer[T]) Publish() {
	if !a.async {
		a.write(&a.ring[0])
		return
	}
	a.head.Add(1)
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// write formats r into the buffer, which it first writes out if it has
// less than rowRoom left.
func (a *Writer[T]) write(r *T) {
	if !a.failed && cap(a.buf)-len(a.buf) < rowRoom {
		a.flush()
	}
	if a.failed {
		a.unwritten.Add(1)
		return
	}
	a.buf = a.format(a.buf, r)
	a.ends = append(a.ends, int32(len(a.buf)))
}

// flush writes the buffer to the file. A write that fails part way wrote
// the records that end within what it took; the others, and every one
// after, are unwritten.
func (a *Writer[T]) flush() {
	if a.failed || len(a.buf) == 0 {
		return
	}
	n, err := a.file.Write(a.buf)
	if err == nil && n < len(a.buf) {
		err = io.ErrShortWrite
	}
	whole := len(a.ends)
	if err != nil {
		whole = 0
		for whole < len(a.ends) && int(a.ends[whole]) <= n {
			whole++
		}
		a.failed = true
		a.unwritten.Add(uint64(len(a.ends) - whole))
	}
	a.written.Add(uint64(whole))
	a.buf, a.ends = a.buf[:0], a.ends[:0]
	if err != nil {
		a.mu.Lock()
		a.err = err
		tell := a.onFailure
		a.told = tell != nil
		a.mu.Unlock()
		if tell != nil {
			tell(err)
		}
	}
}

func (a *Writer[T]) loop() {
	defer close(a.done)
	flush := time.NewTicker(100 * time.Millisecond)
	defer flush.Stop()
	for {
		for tail := a.tail.Load(); tail < a.head.Load(); tail++ {
			a.write(&a.ring[tail%uint64(len(a.ring))])
			a.tail.Store(tail + 1)
		}
		if a.closing.Load() && a.tail.Load() == a.head.Load() {
			return
		}
		select {
		case <-a.kick:
		case <-flush.C:
			a.flush()
		}
	}
}

// Account is what became of the records a writer was given. Once it is
// closed, every record is in exactly one of Written, Dropped and
// Unwritten; while it runs, those still on their way are in none.
type Account struct {
	// Written are whole in the file. Dropped were lost to a full ring
	// (the disk far behind), Unwritten to the file failing.
	Written, Dropped, Unwritten uint64
	// Err is the file's write error, nil if it has not failed.
	Err error
}

// Lost is how many records the file does not have.
func (c Account) Lost() uint64 { return c.Dropped + c.Unwritten }

// Account says what became of the records so far; safe to call from any
// goroutine.
func (a *Writer[T]) Account() Account {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Account{Written: a.written.Load(), Dropped: a.dropped.Load(), Unwritten: a.unwritten.Load(), Err: a.err}
}

// Close writes out every record published; it returns the file's write
// error.
func (a *Writer[T]) Close() error {
	if a.async {
		a.closing.Store(true)
		select {
		case a.kick <- struct{}{}:
		default:
		}
		<-a.done
	}
	a.flush()
	return a.Account().Err
}
