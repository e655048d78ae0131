package emulator

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestHopKeysFromTags(t *testing.T) {
	var keys []string
	for _, k := range HopKeys() {
		keys = append(keys, k.Key)
		if k.Doc == "" || k.Default == "" {
			t.Errorf("key %s has no doc or default", k.Key)
		}
	}
	want := []string{"rate", "delay", "queue", "overhead", "per_frame", "loss", "jitter", "reorder", "duplicate", "corrupt", "flap"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	// The named constants are the keys' bits.
	for key, field := range map[string]HopField{"rate": FieldRate, "delay": FieldDelay, "queue": FieldQueue, "overhead": FieldOverhead, "per_frame": FieldPerFrame,
		"loss": FieldLoss, "jitter": FieldJitter, "reorder": FieldReorder, "duplicate": FieldDuplicate, "corrupt": FieldCorrupt, "flap": FieldFlap} {
		if k, _ := LookupHopKey(key); k.Field != field {
			t.Errorf("%s: field %b, want %b", key, k.Field, field)
		}
	}
	if got := (FieldDelay | FieldCorrupt).String(); got != "delay,corrupt" {
		t.Errorf("fields %q", got)
	}
}

func TestCopyFieldsCopiesOnlyTheNamedKeys(t *testing.T) {
	src := HopParams{Rate: 5, Delay: 6, DelayTrace: []time.Duration{1}, Queue: Limit{N: 7, Unit: Frames}, Overhead: 8, PerFrame: 9,
		Loss: Bernoulli{P: 0.1}, Jitter: Jitter{Dist: Normal{Sigma: 1}}, Reorder: Reorder{Mode: ReorderAllowed}, Duplicate: 0.2,
		Corrupt: Corruption{BER: 0.3}, Flap: Flap{Rate: 1, Every: 2, For: 1}}
	for _, k := range HopKeys() {
		var dst HopParams
		dst.copyFields(&src, k.Field)
		if !reflect.DeepEqual(k.Value(&dst), k.Value(&src)) {
			t.Errorf("%s not copied", k.Key)
		}
		for _, other := range HopKeys() {
			if other.Key != k.Key && !reflect.DeepEqual(other.Value(&dst), other.Value(&HopParams{})) {
				t.Errorf("copying %s copied %s too", k.Key, other.Key)
			}
		}
	}
	dst := new(HopParams) // a hop's, which is on the heap already
	if n := testing.AllocsPerRun(100, func() { dst.copyFields(&src, ^HopField(0)) }); n != 0 {
		t.Errorf("copying every key allocates %v times", n)
	}
}

func TestDefaultMatters(t *testing.T) {
	reorder, _ := LookupHopKey("reorder")
	queue, _ := LookupHopKey("queue")
	loss, _ := LookupHopKey("loss")
	for _, tc := range []struct {
		p                    HopParams
		reorder, queue, loss bool
	}{
		{HopParams{}, true, false, false},
		{HopParams{Rate: Mbitps}, true, true, false},
		{HopParams{PerFrame: ms}, true, true, false},
		{HopParams{Flap: Flap{Rate: 1, Every: 2, For: 1}}, true, true, false},
	} {
		if got := [3]bool{reorder.DefaultMatters(&tc.p), queue.DefaultMatters(&tc.p), loss.DefaultMatters(&tc.p)}; got != [3]bool{tc.reorder, tc.queue, tc.loss} {
			t.Errorf("%+v: reorder, queue, loss matter %v", tc.p, got)
		}
	}
}
