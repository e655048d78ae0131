package record

import (
	"io"
	"testing"
	"time"
)

// TestRecordingFormatsWithoutAllocating: the writer's goroutine formats a
// frame's block straight into the file's buffer, allocating nothing (it
// runs beside the executor, whose allocation tests count it too).
func TestRecordingFormatsWithoutAllocating(t *testing.T) {
	r := NewRecording(io.Discard, "test", []RecordingInterface{{Name: "a"}}, []string{"m2s"})
	r.Begin(time.Unix(0, 0))
	defer r.Close()
	f := &recordedFrame{iface: 0, outbound: true, flow: 0, seq: 1234567, at: int64(time.Second), payload: []byte("a control frame")}
	buf := make([]byte, 0, 4096)
	if allocs := testing.AllocsPerRun(1000, func() { buf = r.appendPacket(buf[:0], f, 0) }); allocs != 0 {
		t.Errorf("%v allocations per frame formatted", allocs)
	}
}
