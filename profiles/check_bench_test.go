package profiles

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator"
)

// largeProfile writes a valid profile that is large in one way: n hops,
// each with a flow; n flows through one hop; one flow through a route of
// n hops; n outages on one hop; or n schedule entries each naming a phase
// of its own.
func largeProfile(shape string, n int) []byte {
	var b strings.Builder
	b.WriteString("duration: 1000000s\nhops:\n")
	switch shape {
	case "hops":
		for i := range n {
			fmt.Fprintf(&b, "  h%d: {delay: 1ms}\n", i)
		}
		b.WriteString("flows:\n")
		for i := range n {
			fmt.Fprintf(&b, "  f%d: {route: [h%d]}\n", i, i)
		}
	case "flows":
		b.WriteString("  h: {delay: 1ms}\nflows:\n")
		for i := range n {
			fmt.Fprintf(&b, "  f%d: {route: [h], traffic: {cbr: {interval: 1s, size: 100B}}}\n", i)
		}
	case "route":
		for i := range n {
			fmt.Fprintf(&b, "  h%d: {delay: 1ms}\n", i)
		}
		b.WriteString("flows:\n  f: {route: [")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "h%d", i)
		}
		b.WriteString("]}\n")
	case "outages", "phases":
		b.WriteString("  h: {delay: 1ms}\nflows:\n  f: {route: [h]}\nschedule:\n")
		for i := range n {
			if shape == "outages" {
				fmt.Fprintf(&b, "  - {at: %dms, for: 1ms, hop: h, outage: drop}\n", 2*i)
			} else {
				fmt.Fprintf(&b, "  - {at: %dms, for: 1ms, phase: p%d}\n", 2*i, i)
			}
		}
	default:
		panic("no shape " + shape)
	}
	return []byte(b.String())
}

// BenchmarkCheck times what hilrig check does with a large profile, at
// 10 000 and 100 000 of each kind of thing: linear, the second takes ten
// times the first.
func BenchmarkCheck(b *testing.B) {
	for _, shape := range []string{"hops", "flows", "route", "outages", "phases"} {
		for _, n := range []int{10_000, 100_000} {
			data := largeProfile(shape, n)
			b.Run(fmt.Sprintf("%s=%d", shape, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Parse("large.yaml", data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkParseShipped times parsing each shipped profile, the fuzz
// targets' seeds: what one execution of FuzzParse costs, most of it.
func BenchmarkParseShipped(b *testing.B) {
	for _, name := range Shipped() {
		data, _ := library.ReadFile(name + ".yaml")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("shipped:"+name, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFuzzParseSeeds runs FuzzParse's body on each of its seeds, and
// on each seed with a byte taken out every 7 (what the fuzzer's
// minimisation of an input found among them runs): one op is all of them.
func BenchmarkFuzzParseSeeds(b *testing.B) {
	var inputs [][]byte
	for _, name := range Shipped() {
		data, _ := library.ReadFile(name + ".yaml")
		inputs = append(inputs, data)
		for i := 0; i < len(data); i += 7 {
			inputs = append(inputs, append(append([]byte(nil), data[:i]...), data[i+1:]...))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, data := range inputs {
			p, err := Parse("fuzz.yaml", data)
			if err != nil {
				continue
			}
			if _, err := emulator.New(p.Config, nil); err != nil {
				b.Fatal(err)
			}
			Parse("fuzz.yaml", p.AsWritten())
		}
	}
}
