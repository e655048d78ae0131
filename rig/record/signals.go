package record

import (
	"io"
	"strconv"
	"strings"
	"time"
)

// Signals writes a model's signals as CSV: a row per exchange, a column per
// signal after the time t.
type Signals struct {
	*Writer[SignalRow]
}

// SignalRow is the values of the signals at T.
type SignalRow struct {
	T      time.Duration
	Values []float64
}

// signalSlots is the ring of a real-time signals file: 16 s of exchanges
// at 1 kHz.
const signalSlots = 1 << 14

// NewSignals writes the header (t, then columns) and returns the writer;
// real makes it asynchronous.
func NewSignals(w io.Writer, columns []string, real bool) *Signals {
	slots := 0
	if real {
		slots = signalSlots
	}
	width := len(columns)
	return &Signals{NewWriter(w, []byte(strings.Join(append([]string{"t"}, columns...), ",")+"\n"), slots,
		func(r *SignalRow) { r.Values = make([]float64, width) }, formatSignals)}
}

// Row returns the row to fill for time t, or nil when the ring is full;
// Publish writes it.
func (s *Signals) Row(t time.Duration) []float64 {
	r := s.Next()
	if r == nil {
		return nil
	}
	r.T = t
	return r.Values
}

func formatSignals(b []byte, r *SignalRow) []byte {
	b = AppendSeconds(b, r.T)
	for _, v := range r.Values {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, '\n')
}
