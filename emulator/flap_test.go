package emulator

import (
	"slices"
	"testing"
	"time"
)

// The hand calculations below use a 1 Mbit/s hop that drops to 100 kbit/s
// for the first 50 ms of every 100 ms: 1000 bits take 10 ms in a window
// and 1 ms outside one.
var flap100k = Flap{Rate: 100 * Kbitps, Every: 100 * ms, For: 50 * ms}

func TestFlapSendTime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flap  Flap
		own   Rate
		bytes int64
		since time.Duration
		want  time.Duration
	}{
		{"inside a window", flap100k, Mbitps, 125, 0, 10 * ms},
		{"outside", flap100k, Mbitps, 125, 60 * ms, ms},
		// 5 ms at 100 kbit/s carry 500 bits; the other 500 take 0.5 ms.
		{"crosses a window's end", flap100k, Mbitps, 125, 45 * ms, 5*ms + 500*time.Microsecond},
		// 0.5 ms at 1 Mbit/s carry 500 bits; the other 500 take 5 ms.
		{"crosses a window's start", flap100k, Mbitps, 125, 99*ms + 500*time.Microsecond, 5*ms + 500*time.Microsecond},
		{"a second period", flap100k, Mbitps, 125, 1050 * ms, ms},
		// 100 000 bits: 5000 + 50 000 in the first period, 5000 in the
		// second's window, the last 40 000 at 1 Mbit/s.
		{"over two periods", flap100k, Mbitps, 12_500, 0, 190 * ms},
		// 1000 periods of 55 000 bits each, exactly: whole periods skipped.
		{"a thousand periods", flap100k, Mbitps, 6_875_000, 0, 100 * time.Second},
		{"no rate of its own, inside", flap100k, 0, 125, 0, 10 * ms},
		{"no rate of its own, outside", flap100k, 0, 125, 60 * ms, 0},
		{"no rate of its own, across", flap100k, 0, 125, 45 * ms, 5 * ms},
		// 8 bits at 3 bit/s: 2.666… s, floored like transmitTime.
		{"floors", Flap{Rate: 3, Every: time.Hour, For: time.Hour}, Mbitps, 1, 0, 2666666666},
		{"window as long as the period", Flap{Rate: 100 * Kbitps, Every: 10 * ms, For: 10 * ms}, Mbitps, 1250, 5 * ms, 100 * ms},
		{"the largest frame at 1 bit/s", Flap{Rate: 1, Every: MaxDuration, For: MaxDuration}, 1, MaxFrameSize, 0, MaxFrameSize * 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.flap.sendTime(tc.bytes, tc.own, tc.since); got != tc.want {
				t.Errorf("%d B from %v: %v, want %v", tc.bytes, tc.since, got, tc.want)
			}
		})
	}
}

func TestFlapCheck(t *testing.T) {
	for _, tc := range []struct {
		flap Flap
		ok   bool
	}{
		{Flap{}, true},
		{flap100k, true},
		{Flap{Rate: 1, Every: ms, For: ms}, true},
		{Flap{Rate: 0, Every: ms, For: ms}, false},
		{Flap{Rate: 1, Every: 0, For: 0}, false},
		{Flap{Rate: 1, Every: ms, For: 2 * ms}, false},
		{Flap{Rate: 1, Every: ms, For: 0}, false},
		{Flap{Rate: 1, Every: MaxDuration + 1, For: ms}, false},
	} {
		if err := tc.flap.check(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v, want ok %v", tc.flap, err, tc.ok)
		}
	}
}

// TestFlapOnAHop sends a 125-byte frame every 20 ms through the hop; each
// leaves when the hand calculation says.
func TestFlapOnAHop(t *testing.T) {
	var in []injection
	for at := time.Duration(0); at < 200*ms; at += 20 * ms {
		in = append(in, injection{at: at, size: 125})
	}
	rec := runInjections(t, oneHop(HopParams{Rate: Mbitps, Delay: ms, Flap: flap100k}), in, time.Second)
	var got []time.Duration
	for _, f := range rec.bySeq(0) {
		got = append(got, f.Done)
	}
	// Sent at 0, 20, 40: in the window (the one at 40 ms crosses its end:
	// 10 ms carry 1000 bits); 60, 80: 1 ms; then the next period. Plus
	// 1 ms of delay.
	want := []time.Duration{11 * ms, 31 * ms, 51 * ms, 62 * ms, 82 * ms, 111 * ms, 131 * ms, 151 * ms, 162 * ms, 182 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("left at %v, want %v", got, want)
	}
}

// TestFlapCountsFromItsChange: a flap set at 30 ms opens its first window
// then, and undoing it brings the hop's own rate back.
func TestFlapCountsFromItsChange(t *testing.T) {
	cfg := oneHop(HopParams{Rate: Mbitps})
	cfg.Schedule = []Scheduled{{At: 30 * ms, For: 100 * ms, Change: SetHop{Hop: 0, Set: FieldFlap, Params: HopParams{Flap: flap100k}}}}
	rec := runInjections(t, cfg, []injection{{at: 0, size: 125}, {at: 30 * ms, size: 125}, {at: 85 * ms, size: 125}, {at: 130 * ms, size: 125}}, time.Second)
	var got []time.Duration
	for _, f := range rec.bySeq(0) {
		got = append(got, f.Done)
	}
	want := []time.Duration{ms, 40 * ms, 86 * ms, 131 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("left at %v, want %v", got, want)
	}
}

// FuzzFlapSendTime: a flapping hop takes no less than the faster of its
// two rates would and no more than the slower would (outside its windows
// a hop without a rate of its own takes nothing), and a longer frame never
// takes less time.
func FuzzFlapSendTime(f *testing.F) {
	f.Add(int64(100_000), int64(1_000_000), int64(100e6), int64(50e6), int64(125), int64(45e6))
	f.Add(int64(1), int64(0), int64(1), int64(1), int64(MaxFrameSize), int64(0))
	f.Fuzz(func(t *testing.T, rate, own, every, length, nbytes, since int64) {
		fl := Flap{Rate: Rate(rate), Every: time.Duration(every), For: time.Duration(length)}
		if fl.check() != nil || !fl.active() || own < 0 || nbytes < 0 || nbytes > 2*MaxFrameSize || since < 0 || since > int64(MaxDuration) {
			return
		}
		got := fl.sendTime(nbytes, Rate(own), time.Duration(since))
		at := func(r Rate) time.Duration { d, _ := transmitTime(nbytes, r, 0); return d }
		slow, fast := at(min(fl.Rate, max(Rate(own), 1))), time.Duration(0)
		if own > 0 {
			slow, fast = min(at(min(fl.Rate, Rate(own))), MaxDuration), at(max(fl.Rate, Rate(own)))
		}
		if got < 0 || got > MaxDuration || got+1 < fast || own > 0 && got > slow+1 {
			t.Fatalf("%+v own %d: %d B from %v took %v, not within [%v, %v]", fl, own, nbytes, time.Duration(since), got, fast, slow)
		}
		if nbytes > 0 && fl.sendTime(nbytes-1, Rate(own), time.Duration(since)) > got {
			t.Fatalf("%+v own %d: %d B take less than %d B from %v", fl, own, nbytes, nbytes-1, time.Duration(since))
		}
	})
}
