package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/rig/record"
)

// encoderJSON is what writeJSON must write: encoding/json's Encoder with
// SetIndent, which hilrig used before.
func encoderJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.Bytes(), err
}

// sameAsEncoder fails t unless writeJSON writes v as encoderJSON does,
// byte for byte, or fails as it does.
func sameAsEncoder(t testing.TB, v any) []byte {
	t.Helper()
	want, wantErr := encoderJSON(v)
	var got bytes.Buffer
	err := writeJSON(&got, v)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("writeJSON: error %v, encoding/json's %v", err, wantErr)
	}
	if !bytes.Equal(got.Bytes(), want) {
		i := 0
		for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
			i++
		}
		t.Fatalf("writeJSON differs from encoding/json at byte %d of %d/%d:\n got …%q\nwant …%q",
			i, got.Len(), len(want), got.Bytes()[max(0, i-40):min(got.Len(), i+40)], want[max(0, i-40):min(len(want), i+40)])
	}
	return want
}

// manyFlowsProfile writes tests/perf/flows_profile.py's profile of n
// flows to a file in t's temporary directory.
func manyFlowsProfile(t testing.TB, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: flows%d\nseed: 1\nduration: 10s\nhops:\n  a: {rate: 1Gbit, delay: 1ms}\n  b: {rate: 1Gbit, delay: 1ms}\nflows:\n", n)
	for i := range n {
		fmt.Fprintf(&b, "  f%d: {route: [a, b], traffic: {poisson: {rate: %dbit, size: 100B}}, trace: false}\n", i, 80_000_000/n)
	}
	path := filepath.Join(t.TempDir(), "flows.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// simSummary runs hilrig sim with args and returns its summary, read back
// from the JSON it wrote (which must be encoderJSON's of what it read).
func simSummary(t testing.TB, args ...string) record.Summary {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"sim", "--json"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("hilrig sim %v: exit %d: %s", args, code, stderr.String())
	}
	var s record.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if want, _ := encoderJSON(s); !bytes.Equal(stdout.Bytes(), want) {
		t.Fatalf("hilrig sim %v wrote other JSON than encoding/json's of its summary", args)
	}
	return s
}

func TestWriteJSONIsEncodingJSONs(t *testing.T) {
	cases := []struct {
		name string
		v    func(t *testing.T) any
	}{
		{"10 000 flows, 1 s", func(t *testing.T) any {
			return simSummary(t, manyFlowsProfile(t, 10000), "--duration", "1s")
		}},
		{"dumbbell", func(t *testing.T) any { return simSummary(t, "../../../tests/reference/dumbbell.yaml") }},
		{"every part of a summary", func(t *testing.T) any {
			s := record.Summary{}
			fill(rand.New(rand.NewPCG(1, 2)), reflect.ValueOf(&s).Elem(), fillAll)
			return s
		}},
		{"NaN", func(t *testing.T) any { return record.OutputError{Peak: math.NaN()} }},
		{"a number", func(t *testing.T) any { return -0.0000001 }},
		{"a string", func(t *testing.T) any { return "<a\\\"&\u2028\xff>" }},
		{"empty object and array", func(t *testing.T) any { return map[string]any{"a": map[string]int{}, "b": []int{}, "c": [][]int{{}}} }},
		{"deep", func(t *testing.T) any {
			var v any = 1
			for range 40 {
				v = []any{1, map[string]any{"k": v}, []int{}}
			}
			return v
		}},
		{"nil", func(t *testing.T) any { return nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { sameAsEncoder(t, c.v(t)) })
	}
}

// TestWriteJSONOfRandomSummaries compares summaries with every field
// drawn at random, the optional parts there or not, the numbers and
// strings among those that encoding/json writes in its own ways.
func TestWriteJSONOfRandomSummaries(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		var s record.Summary
		fill(r, reflect.ValueOf(&s).Elem(), fillSome)
		sameAsEncoder(t, s)
	}
}

func FuzzWriteJSON(f *testing.F) {
	f.Add(uint64(1), uint64(2), true)
	f.Add(uint64(5), uint64(0), false)
	f.Fuzz(func(t *testing.T, a, b uint64, all bool) {
		var s record.Summary
		how := fillSome
		if all {
			how = fillAll
		}
		fill(rand.New(rand.NewPCG(a, b)), reflect.ValueOf(&s).Elem(), how)
		sameAsEncoder(t, s)
	})
}

// FuzzWriteIndented compares the indenting with json.Indent's on any
// valid JSON, compacted as json.Marshal writes it.
func FuzzWriteIndented(f *testing.F) {
	for _, s := range []string{`{"a":[1,{},[]],"b":"x\"}\\"}`, `[]`, `"\\\\"`, `-1.5e-7`, `{"<&>":"\u2028"}`, `[[[[{"":null}]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		want.WriteByte('\n')
		var got bytes.Buffer
		if err := writeIndented(&got, compact.Bytes()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%q indented as\n%s\nnot\n%s", compact.Bytes(), got.Bytes(), want.Bytes())
		}
	})
}

// TestWriteJSONWritesInChunks checks that a large summary goes out in
// pieces of about indentChunk, the same bytes in all, and that a writer's
// error stops the writing.
func TestWriteJSONWritesInChunks(t *testing.T) {
	s := simSummary(t, manyFlowsProfile(t, 2000), "--duration", "1s")
	want, _ := encoderJSON(s)
	w := &chunkWriter{}
	if err := writeJSON(w, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatal("chunked output differs from encoding/json's")
	}
	// Each write but the last holds indentChunk bytes and at most one
	// newline and its indent more.
	if fewest, most := len(want)/(indentChunk+1024), len(want)/indentChunk+1; w.writes < fewest || w.writes > most {
		t.Errorf("%d B in %d writes, want %d to %d", len(want), w.writes, fewest, most)
	}
	failing := &chunkWriter{failAt: 2}
	if err := writeJSON(failing, s); !errors.Is(err, errWriteFailed) || failing.writes != 2 {
		t.Errorf("writer failing at its 2nd write: %v after %d writes", err, failing.writes)
	}
}

var errWriteFailed = errors.New("write failed")

type chunkWriter struct {
	bytes.Buffer
	writes, failAt int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes == w.failAt {
		return 0, errWriteFailed
	}
	return w.Buffer.Write(p)
}

// TestWriteJSONAllocation bounds what writing a large summary allocates:
// json.Marshal's buffer grown by doubling (at most twice the compact JSON,
// itself smaller than the indented) and its copy, and one chunk. The
// encoder with SetIndent allocated 6.6 times the output (36 MB for 5.5).
func TestWriteJSONAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("-race allocates where the code does not")
	}
	s := simSummary(t, manyFlowsProfile(t, 10000), "--duration", "1s")
	var out countWriter
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := writeJSON(&out, s); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := 3*out.n + 2*indentChunk; allocated > limit {
		t.Errorf("writing %d B of JSON allocated %d B, more than %d", out.n, allocated, limit)
	}
	t.Logf("writing %d B of JSON allocated %d B", out.n, allocated)
}

type countWriter struct{ n uint64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += uint64(len(p)); return len(p), nil }

// fillHow says how fill draws: fillAll gives every pointer, slice and map
// a value (every optional part of a summary present), fillSome leaves
// some nil or empty.
type fillHow int

const (
	fillSome fillHow = iota
	fillAll
)

// fillStrings are strings encoding/json escapes or writes in its own ways.
var fillStrings = []string{"", "f0", "a<b>&c", "line\u2028sep\u2029", "bad \xff utf-8", `q"uote\`, "tab\t\nnew", "é 🙂", "\x00\x1f", "}],:{[", `\"`}

// fillFloats are numbers on either side of encoding/json's switch
// between 'f' and 'e' formats, and its other cases.
var fillFloats = []float64{0, math.Copysign(0, -1), 1e-6, 9.999999e-7, 1e-7, -1e-7, 1e20, 1e21, -1e21, 123.456, 0.002001919,
	math.MaxFloat64, math.SmallestNonzeroFloat64, 1 / 3.0, 1e-300, 5e-324, float64(math.MaxInt64)}

// fill gives v, settable, random contents, exported fields only.
func fill(r *rand.Rand, v reflect.Value, how fillHow) { fillDepth(r, v, how, 0) }

func fillDepth(r *rand.Rand, v reflect.Value, how fillHow, depth int) {
	const deepest = 8
	some := func() bool { return how == fillAll || r.IntN(3) > 0 }
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillDepth(r, v.Field(i), how, depth+1)
			}
		}
	case reflect.Pointer:
		if depth < deepest && some() {
			v.Set(reflect.New(v.Type().Elem()))
			fillDepth(r, v.Elem(), how, depth+1)
		}
	case reflect.Slice:
		if depth >= deepest || !some() {
			if r.IntN(2) == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // [] and not null, or omitted
			}
			return
		}
		n := 1 + r.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillDepth(r, v.Index(i), how, depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fillDepth(r, v.Index(i), how, depth+1)
		}
	case reflect.Map:
		if depth >= deepest || !some() {
			if r.IntN(2) == 0 {
				v.Set(reflect.MakeMap(v.Type()))
			}
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for range 1 + r.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillDepth(r, k, how, depth+1)
			fillDepth(r, e, how, depth+1)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(fillStrings[r.IntN(len(fillStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Float32, reflect.Float64:
		switch r.IntN(3) {
		case 0:
			v.SetFloat(fillFloats[r.IntN(len(fillFloats))])
		case 1:
			v.SetFloat(r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25)))
		default:
			v.SetFloat(math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(0x7ff))<<52)) // finite
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := int64(r.Uint64())
		if r.IntN(2) == 0 {
			n = int64(r.IntN(200)) - 100
		}
		shift := 64 - v.Type().Bits()
		v.SetInt(n << shift >> shift)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n := r.Uint64()
		if r.IntN(2) == 0 {
			n = uint64(r.IntN(200))
		}
		v.SetUint(n >> (64 - v.Type().Bits()))
	}
}

// BenchmarkWriteJSON writes the summary of the 10 000-flow run (1 s of
// it: every flow there, with its delay), by writeJSON and, for
// comparison, by encoding/json's Encoder with SetIndent.
func BenchmarkWriteJSON(b *testing.B) {
	s := simSummary(b, manyFlowsProfile(b, 10000), "--duration", "1s")
	b.Run("writeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := writeJSON(io.Discard, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			enc := json.NewEncoder(io.Discard)
			enc.SetIndent("", "  ")
			if err := enc.Encode(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
