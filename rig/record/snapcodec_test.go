package record

import (
	"reflect"
	"testing"
	"time"
)

// fill sets every field reachable from v to a value of its own, so that a
// field the binary form forgets shows as a difference.
func fill(v reflect.Value, n *int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			*n++
			v.Set(reflect.ValueOf(time.Unix(1700000000, int64(*n))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.String:
		*n++
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		*n++
		v.SetInt(int64(-*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		*n++
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		*n++
		v.SetFloat(float64(*n) + 0.5)
	default:
		panic("fill: " + v.Kind().String())
	}
}

// fullSnapshot is a snapshot with every field set.
func fullSnapshot() Snapshot {
	var s Snapshot
	n := 0
	fill(reflect.ValueOf(&s).Elem(), &n)
	for i := range s.Models {
		s.Models[i].NCut = MaxCut
	}
	return s
}

// TestSnapshotBinaryRoundTrip: every field of a snapshot crosses in its
// binary form, into a fresh snapshot and into one that held another.
func TestSnapshotBinaryRoundTrip(t *testing.T) {
	want := fullSnapshot()
	b, err := want.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip\n%+v\nwant\n%+v", got, want)
	}
	small := Snapshot{Seq: 3, Flows: []FlowProgress{{Name: "m2s"}}}
	b2, _ := small.AppendBinary(nil)
	if err := got.UnmarshalBinary(b2); err != nil || !reflect.DeepEqual(got.Flows, small.Flows) || got.Seq != 3 || len(got.Hops) != 0 || !got.Wall.IsZero() {
		t.Errorf("a smaller snapshot over a full one: %v, %+v", err, got)
	}
}

// TestSnapshotBinaryAllocatesNothing: the rig's side appends to a buffer
// it keeps.
func TestSnapshotBinaryAllocatesNothing(t *testing.T) {
	s := fullSnapshot()
	buf, _ := s.AppendBinary(nil)
	if n := testing.AllocsPerRun(100, func() { buf, _ = s.AppendBinary(buf[:0]) }); n != 0 {
		t.Errorf("%v allocations an encoding", n)
	}
}

// TestSnapshotBinaryRefusesWhatIsCut: every proper prefix of a form, and
// a form with a byte more, is refused.
func TestSnapshotBinaryRefusesWhatIsCut(t *testing.T) {
	s := fullSnapshot()
	b, _ := s.AppendBinary(nil)
	var got Snapshot
	for n := range len(b) {
		if got.UnmarshalBinary(b[:n]) == nil {
			t.Fatalf("%d of %d bytes taken for a snapshot", n, len(b))
		}
	}
	if got.UnmarshalBinary(append(b, 0)) == nil {
		t.Error("a byte too many taken")
	}
}

func FuzzSnapshotBinary(f *testing.F) {
	s := fullSnapshot()
	b, _ := s.AppendBinary(nil)
	f.Add(b)
	f.Add([]byte{})
	small := Snapshot{Seq: 1, Flows: []FlowProgress{{Name: "m2s", Sent: 4}}}
	b, _ = small.AppendBinary(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Snapshot
		if s.UnmarshalBinary(data) != nil {
			return
		}
		again, _ := s.AppendBinary(nil)
		var s2 Snapshot
		if err := s2.UnmarshalBinary(again); err != nil {
			t.Fatalf("a form written is refused: %v", err)
		}
		// Compared as bytes: a NaN is not equal to itself.
		if third, _ := s2.AppendBinary(nil); string(third) != string(again) {
			t.Fatal("a form read back differs")
		}
	})
}
