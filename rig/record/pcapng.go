package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// A recording keeps every frame that entered the rig from a device and
// every frame the rig wrote to one, with its payload and its time, in
// pcapng (the format Wireshark reads, written as the run goes, so that a
// recording cut short is readable up to its last block). Each endpoint is
// an interface; a frame read from the device is inbound, stamped when it
// entered the emulated network (its ingress stamp, or later if the
// executor took it up after the engine had moved on), and one written to
// it outbound, stamped when its write returned. Times are nanoseconds
// since the epoch (if_tsresol 9): the
// run's start, written in the section header's comment, plus the run's
// clock. The link type is LINKTYPE_USER0 (147): the payload as the
// framing delivered it, without the framing's bytes. Each frame's comment
// says its flow and sequence number ("m2s#12").
//
// Block layouts (pcapng, draft-ietf-opsawg-pcapng), all little-endian:
//
//	section header  0x0A0D0D0A, length, 0x1A2B3C4D, 1, 0, -1 (int64), options, length
//	interface       1, length, 147 (u16), 0 (u16), 0 (snaplen), options, length
//	enhanced packet 6, length, interface, time high, time low, captured, original, data (padded to 4), options, length
//
// with the options shb_comment "hilrig run started at N ns since the
// epoch; …", if_name, if_description and if_tsresol 9, and epb_flags
// (direction: 1 inbound, 2 outbound) and opt_comment.
//
// Why not github.com/gopacket/gopacket's pcapgo (NgWriter, NgReader),
// which Wireshark's and gopacket's users rely on: measured at v1.7.7 (issue
// 22), the files are the same to both (its reader reads these
// recordings, directions, comments and section comment included, and
// this reader reads its files), but its writer allocates 6 times a frame
// with the two options a frame carries here (none without), where this
// one allocates nothing on the goroutine beside the executor
// (TestRecordingFormatsWithoutAllocating); its reader 3 times a frame even
// zero-copy, where a replay reads without allocating
// (TestRecordingReaderAllocatesNothing); a file cut short is to it an
// "unexpected EOF", where a replay says at which byte and block, and
// replays what came before; it reads on past a block whose trailing
// length is damaged, and reads two recordings joined together as one.
// (google/gopacket v1.1.19, the module it forked, writes and reads no
// per-frame options at all.)

// LinkTypeUser0 is the link type of a recording's interfaces.
const LinkTypeUser0 = 147

// RecordingInterface is an endpoint of a recording.
type RecordingInterface struct {
	Name        string // the endpoint's name in the bench
	Description string // its kind and device
}

// Recording writes a recording. It writes nothing before it begins
// (Begin), at the instant the run's clock is zero, which its section
// header states: that instant is known only when the run starts.
type Recording struct {
	*Writer[recordedFrame]
	w         io.Writer
	about     string
	ifaces    []RecordingInterface
	flows     []string
	onFailure func(error)
}

type recordedFrame struct {
	iface    int32
	outbound bool
	flow     int32 // -1: none
	seq      uint64
	at       int64 // ns since the epoch
	payload  []byte
}

// recordingSlots is the ring of a recording: about a second of frames
// at 8 kHz; slotPayload the payload each slot holds without allocating
// (a larger frame grows its slot once).
const (
	recordingSlots = 1 << 13
	slotPayload    = 512
)

// NewRecording returns the recording, to w, of the frames on the
// interfaces, of the flows named; about says what ran.
func NewRecording(w io.Writer, about string, ifaces []RecordingInterface, flows []string) *Recording {
	return &Recording{w: w, about: about, ifaces: ifaces, flows: flows}
}

// Begin writes the section header and the interfaces, start being when
// the run's clock was zero, and starts the recording's writer: it writes
// from a goroutine of its own, so recording never blocks the executor.
// Frames are recorded after Begin only.
func (r *Recording) Begin(start time.Time) {
	var h []byte
	h = appendBlock(h, 0x0A0D0D0A, func(b []byte) []byte {
		b = binary.LittleEndian.AppendUint32(b, 0x1A2B3C4D)
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint64(b, ^uint64(0)) // section length unknown
		b = appendOption(b, 1, []byte(fmt.Sprintf("hilrig run started at %d ns since the epoch; %s", start.UnixNano(), r.about)))
		b = appendOption(b, 4, []byte("hilrig")) // shb_userappl
		return appendOption(b, 0, nil)
	})
	for _, in := range r.ifaces {
		h = appendBlock(h, 1, func(b []byte) []byte {
			b = binary.LittleEndian.AppendUint16(b, LinkTypeUser0)
			b = binary.LittleEndian.AppendUint16(b, 0)
			b = binary.LittleEndian.AppendUint32(b, 0)
			b = appendOption(b, 2, []byte(in.Name))
			b = appendOption(b, 3, []byte(in.Description))
			b = appendOption(b, 9, []byte{9}) // if_tsresol: 10^-9 s
			return appendOption(b, 0, nil)
		})
	}
	epoch := start.UnixNano()
	r.Writer = NewWriter(r.w, h, recordingSlots, func(f *recordedFrame) { f.payload = make([]byte, 0, slotPayload) },
		func(b []byte, f *recordedFrame) []byte { return r.appendPacket(b, f, epoch) })
	if r.onFailure != nil {
		r.Writer.OnFailure(r.onFailure)
	}
}

// OnFailure has f called once, with the error, when the file fails (see
// Writer.OnFailure).
func (r *Recording) OnFailure(f func(error)) {
	if r.Writer != nil {
		r.Writer.OnFailure(f)
		return
	}
	r.onFailure = f
}

// Account says what became of the frames recorded so far (none before
// Begin).
func (r *Recording) Account() Account {
	if r.Writer == nil {
		return Account{}
	}
	return r.Writer.Account()
}

// Close writes out every frame recorded and flushes the file. A recording
// of a run that never started is a header alone, dated now.
func (r *Recording) Close() error {
	if r.Writer == nil {
		r.Begin(time.Now())
	}
	return r.Writer.Close()
}

// Frame records a frame of interface iface (the endpoint's index) at the
// run's time at: read from the device (inbound) or written to it, of flow
// (-1: none) with sequence number seq. It never blocks; it allocates only
// for a frame larger than any before.
func (r *Recording) Frame(iface int, outbound bool, at time.Duration, flow int, seq uint64, payload []byte) {
	if slot := r.Next(); slot != nil {
		slot.iface, slot.outbound, slot.flow, slot.seq, slot.at = int32(iface), outbound, int32(flow), seq, int64(at)
		slot.payload = append(slot.payload[:0], payload...)
		r.Publish()
	}
}

func (r *Recording) appendPacket(b []byte, f *recordedFrame, epoch int64) []byte {
	return appendBlock(b, 6, func(b []byte) []byte {
		t := uint64(epoch + f.at)
		b = binary.LittleEndian.AppendUint32(b, uint32(f.iface))
		b = binary.LittleEndian.AppendUint32(b, uint32(t>>32))
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f.payload)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f.payload)))
		b = append(b, f.payload...)
		b = pad4(b, len(f.payload))
		dir := [4]byte{1} // epb_flags: inbound 1, outbound 2, little-endian
		if f.outbound {
			dir[0] = 2
		}
		b = appendOption(b, 2, dir[:])
		if f.flow >= 0 {
			b = appendOptionString(b, 1, r.flows[f.flow], f.seq)
		}
		return appendOption(b, 0, nil)
	})
}

// appendBlock appends a block: type, length, body, length.
func appendBlock(b []byte, typ uint32, body func([]byte) []byte) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = binary.LittleEndian.AppendUint32(b, 0) // length, below
	b = body(b)
	n := uint32(len(b) - start + 4)
	binary.LittleEndian.PutUint32(b[start+4:], n)
	return binary.LittleEndian.AppendUint32(b, n)
}

func appendOption(b []byte, code uint16, value []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(value)))
	b = append(b, value...)
	return pad4(b, len(value))
}

// appendOptionString appends the option "flow#seq" without allocating.
func appendOptionString(b []byte, code uint16, flow string, seq uint64) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	at := len(b)
	b = binary.LittleEndian.AppendUint16(b, 0)
	start := len(b)
	b = append(b, flow...)
	b = append(b, '#')
	b = strconv.AppendUint(b, seq, 10)
	n := len(b) - start
	binary.LittleEndian.PutUint16(b[at:], uint16(n))
	return pad4(b, n)
}

func pad4(b []byte, n int) []byte {
	for ; n%4 != 0; n++ {
		b = append(b, 0)
	}
	return b
}

// Recorded is a recording read back whole (ReadRecording).
type Recorded struct {
	Start      time.Time
	About      string
	Interfaces []RecordingInterface
	Frames     []RecordedFrame
}

// RecordedFrame is a frame of a recording.
type RecordedFrame struct {
	Interface int
	Outbound  bool
	At        time.Duration // since the run's start
	Payload   []byte
	Comment   string // "flow#seq"
}

// ReadRecording reads a whole recording into memory, for one known to be
// small (a test's); a replay reads as it goes (RecordingReader). A
// recording cut short is returned up to its last whole block, with a
// *CutShortError.
func ReadRecording(r io.Reader) (*Recorded, error) {
	rr, err := NewRecordingReader(r)
	if err != nil {
		return nil, err
	}
	out := &Recorded{Start: rr.Start, About: rr.About}
	for {
		var f RecordedFrame
		err := rr.Next(&f)
		out.Interfaces = rr.Interfaces
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var cut *CutShortError
			if errors.As(err, &cut) {
				return out, err
			}
			return nil, err
		}
		f.Payload = append([]byte{}, f.Payload...)
		f.Comment = string(rr.Comment())
		out.Frames = append(out.Frames, f)
	}
}

// RecordingReader reads a recording (pcapng, little-endian, one section,
// as hilrig writes it) a block at a time, so that what it holds does not
// grow with the file: the largest block (MaxRecordingBlock at most).
type RecordingReader struct {
	// Start is when the recorded run's clock was zero; About says what ran.
	Start time.Time
	About string
	// Interfaces are the recorded endpoints described so far (hilrig
	// describes them all before the first frame).
	Interfaces []RecordingInterface

	r       *bufio.Reader
	resol   []int64 // per interface: ns per unit of its timestamps
	epoch   int64
	offset  int64 // where the next block begins
	block   int   // its number, the section header's being 0
	body    []byte
	comment []byte // of the frame read last
}

// MaxRecordingBlock is the longest block a recording may have: a frame of
// 16 MiB, far beyond any frame a device sends (a UDP datagram is at most
// 64 KiB), so that a damaged length cannot make the reader take the
// machine's memory.
const MaxRecordingBlock = 1 << 24

// CutShortError is a recording that ends inside a block, as the recording
// of a run that was killed does: the blocks before Offset are whole, and
// have been read.
type CutShortError struct {
	Offset int64  // where the cut block begins: the whole blocks end there
	Block  int    // its number, the section header's being 0
	Length uint32 // the length its header gives; 0 when that is cut too
	Have   int64  // the bytes of it there are
}

func (e *CutShortError) Error() string {
	if e.Length == 0 {
		return fmt.Sprintf("cut short at byte %d: block %d has %d of the 8 bytes of its header", e.Offset, e.Block, e.Have)
	}
	return fmt.Sprintf("cut short at byte %d: block %d has %d of its %d bytes", e.Offset, e.Block, e.Have, e.Length)
}

// NewRecordingReader reads the section header of a recording that hilrig
// wrote.
func NewRecordingReader(r io.Reader) (*RecordingReader, error) {
	rr := &RecordingReader{r: bufio.NewReaderSize(r, 64<<10)}
	typ, body, err := rr.nextBlock()
	switch {
	case err == io.EOF:
		return nil, errors.New("not a recording: empty")
	case errors.As(err, new(*CutShortError)) && bytes.HasPrefix(sectionMagic, rr.body[:min(err.(*CutShortError).Have, 4)]):
		return nil, fmt.Errorf("not a recording: its section header is %w", err)
	case err != nil && !errors.Is(err, errNotPcapng) && !errors.As(err, new(*CutShortError)):
		return nil, err
	case err != nil || typ != 0x0A0D0D0A || len(body) < 16 || binary.LittleEndian.Uint32(body) != 0x1A2B3C4D:
		return nil, errors.New("not a recording: no little-endian pcapng section header")
	}
	opts, err := options(body[16:])
	if err != nil {
		return nil, fmt.Errorf("section header: %w", err)
	}
	comment := string(opts[1])
	rest, ok := strings.CutPrefix(comment, "hilrig run started at ")
	ns, _, ok2 := strings.Cut(rest, " ns since the epoch")
	if !ok || !ok2 {
		return nil, errors.New("not a hilrig recording: the section header does not say when the run started")
	}
	if rr.epoch, err = strconv.ParseInt(ns, 10, 64); err != nil {
		return nil, fmt.Errorf("section header: run start %q", ns)
	}
	rr.Start = time.Unix(0, rr.epoch)
	rr.About = strings.TrimPrefix(rest[len(ns):], " ns since the epoch; ")
	return rr, nil
}

// sectionMagic is how a section header begins.
var sectionMagic = []byte{0x0A, 0x0D, 0x0D, 0x0A}

// errNotPcapng is a first block whose length no pcapng block has.
var errNotPcapng = errors.New("not pcapng")

// Offset is where the blocks read so far end.
func (rr *RecordingReader) Offset() int64 { return rr.offset }

// Next reads up to the next frame and fills in f but its Comment (see
// Comment), without allocating: f.Payload is valid until the next call.
// At the end of the recording it returns io.EOF; a recording cut short
// ends with a *CutShortError.
func (rr *RecordingReader) Next(f *RecordedFrame) error {
	for {
		at, n := rr.offset, rr.block
		typ, body, err := rr.nextBlock()
		if err != nil {
			if errors.Is(err, errNotPcapng) {
				return fmt.Errorf("block %d at byte %d: length %d, which no block has", n, at, binary.LittleEndian.Uint32(rr.body[4:]))
			}
			return err
		}
		switch typ {
		case 1: // interface description
			if len(body) < 8 {
				return fmt.Errorf("block %d at byte %d: short interface description", n, at)
			}
			opts, err := options(body[8:])
			if err != nil {
				return fmt.Errorf("interface %d (block %d at byte %d): %w", len(rr.Interfaces), n, at, err)
			}
			res := int64(1000) // pcapng's default: microseconds
			if v := opts[9]; len(v) == 1 {
				if v[0]&0x80 != 0 || v[0] > 9 {
					return fmt.Errorf("interface %d (block %d at byte %d): time resolution %#x", len(rr.Interfaces), n, at, v[0])
				}
				res = 1
				for range 9 - int(v[0]) {
					res *= 10
				}
			}
			rr.resol = append(rr.resol, res)
			rr.Interfaces = append(rr.Interfaces, RecordingInterface{Name: string(opts[2]), Description: string(opts[3])})
		case 6: // enhanced packet
			if len(body) < 20 {
				return fmt.Errorf("block %d at byte %d: short packet", n, at)
			}
			iface := int(binary.LittleEndian.Uint32(body))
			if iface >= len(rr.Interfaces) {
				return fmt.Errorf("block %d at byte %d: interface %d undescribed", n, at, iface)
			}
			t := int64(binary.LittleEndian.Uint32(body[4:]))<<32 | int64(binary.LittleEndian.Uint32(body[8:]))
			captured := int(binary.LittleEndian.Uint32(body[12:]))
			padded := (captured + 3) &^ 3
			if captured > len(body)-20 || 20+padded > len(body) {
				return fmt.Errorf("block %d at byte %d: %d bytes captured in a block of %d", n, at, captured, len(body)+12)
			}
			opts, err := options(body[20+padded:])
			if err != nil {
				return fmt.Errorf("block %d at byte %d: %w", n, at, err)
			}
			*f = RecordedFrame{Interface: iface, At: time.Duration(t*rr.resol[iface] - rr.epoch), Payload: body[20 : 20+captured : 20+captured]}
			if v := opts[2]; len(v) == 4 && binary.LittleEndian.Uint32(v)&3 == 2 {
				f.Outbound = true
			}
			rr.comment = opts[1]
			return nil
		case 0x0A0D0D0A:
			return fmt.Errorf("block %d at byte %d: a second section: recordings joined together, which hilrig does not replay", n, at)
		}
	}
}

// Comment is the comment of the frame Next read last ("flow#seq"),
// valid until the next call.
func (rr *RecordingReader) Comment() []byte { return rr.comment }

// nextBlock reads the next block into rr.body and returns its type and
// its body without the trailing length.
func (rr *RecordingReader) nextBlock() (typ uint32, body []byte, err error) {
	if cap(rr.body) < 8 {
		rr.body = make([]byte, 8, 4<<10)
	}
	head := rr.body[:8]
	if n, err := io.ReadFull(rr.r, head); err == io.ErrUnexpectedEOF {
		return 0, nil, &CutShortError{Offset: rr.offset, Block: rr.block, Have: int64(n)}
	} else if err != nil {
		return 0, nil, err
	}
	typ, length := binary.LittleEndian.Uint32(head), binary.LittleEndian.Uint32(head[4:])
	if length < 12 || length%4 != 0 || length > MaxRecordingBlock {
		return 0, nil, errNotPcapng
	}
	if cap(rr.body) < int(length) {
		grown := make([]byte, length)
		copy(grown, head)
		rr.body = grown
	}
	rr.body = rr.body[:length]
	if n, err := io.ReadFull(rr.r, rr.body[8:]); err == io.EOF || err == io.ErrUnexpectedEOF {
		return 0, nil, &CutShortError{Offset: rr.offset, Block: rr.block, Length: length, Have: 8 + int64(n)}
	} else if err != nil {
		return 0, nil, err
	}
	if binary.LittleEndian.Uint32(rr.body[length-4:]) != length {
		return 0, nil, fmt.Errorf("block %d at byte %d: its trailing length differs from its length %d", rr.block, rr.offset, length)
	}
	rr.offset += int64(length)
	rr.block++
	return typ, rr.body[8 : length-4], nil
}

// options reads a block's options by code, those below 10 (all that are
// read here), without allocating; the last of a code wins.
func options(b []byte) (opts [10][]byte, err error) {
	for len(b) >= 4 {
		code, n := binary.LittleEndian.Uint16(b), int(binary.LittleEndian.Uint16(b[2:]))
		if code == 0 {
			return opts, nil
		}
		if 4+n > len(b) {
			return opts, fmt.Errorf("option %d of %d bytes overruns its block", code, n)
		}
		if code < uint16(len(opts)) {
			opts[code] = b[4 : 4+n]
		}
		if next := 4 + (n+3)&^3; next <= len(b) {
			b = b[next:]
		} else {
			b = nil
		}
	}
	return opts, nil
}
