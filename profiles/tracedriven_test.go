package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzTraceSeries: any file given as a recorded delay or loss series is
// read into a series or refused with positioned errors; nothing panics.
func FuzzTraceSeries(f *testing.F) {
	f.Add("flow,seq,bytes,t_send,t_recv,status\nm2s,0,100,0.001000000,0.006000000,delivered\nm2s,1,100,0.002000000,,loss_drop\n", false)
	f.Add("flow,seq,bytes,t_send,t_recv,status\nm2s,0,100,0.001000000,0.006000000,delivered\nm2s,1,100,0.002000000,,loss_drop\n", true)
	f.Add("5ms\n7.5ms # a comment\n\n12ms\n", false)
	f.Add("0\n1\n1\n0\n", true)
	f.Add("flow,seq,bytes,t_send,t_recv,status\nx,y\n", true)
	f.Fuzz(func(t *testing.T, content string, loss bool) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "series.csv"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		key := "delay: {trace: series.csv}"
		if loss {
			key = "loss: {trace: series.csv}"
		}
		l, err := Parse(filepath.Join(dir, "p.yaml"), []byte("duration: 1s\nhops:\n  h: {"+key+"}\nflows:\n  m2s: {route: [h]}\n"))
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("not a positioned error: %v", err)
			}
			return
		}
		h := l.Config.Hops[0]
		if loss && h.Loss == nil || !loss && len(h.DelayTrace) == 0 {
			t.Fatalf("accepted, but no series: %+v", h)
		}
	})
}
