package lang

import (
	"fmt"
	"testing"
)

// TestNameIndex holds a Map's index of names to a linear search: every
// name added is found at its position, a name not added is not, through
// the table's growth and the probes of names whose slots collide; and the
// table, at most three quarters full and a power of two long, takes less
// than 32/3 bytes a name (4 bytes a slot, fewer than 8/3 slots a name).
func TestNameIndex(t *testing.T) {
	for _, count := range []int{0, 1, 3, 4, 5, 100, 10_000} {
		for _, reserved := range []bool{false, true} {
			var m Map[int]
			if reserved {
				m.index.reserve(nil, count)
			}
			for i := range count {
				m.Names = append(m.Names, fmt.Sprintf("h%d", i))
				m.index.add(m.Names, i)
			}
			for i, name := range m.Names {
				if got := m.Index(name); got != i {
					t.Fatalf("%d names (reserved: %v): %q is at %d, found at %d", count, reserved, name, i, got)
				}
			}
			for _, name := range []string{"", "h", fmt.Sprintf("h%d", count), "x0"} {
				if got := m.Index(name); got != -1 && m.Names[got] != name {
					t.Fatalf("%d names: %q found at %d, where %q is", count, name, got, m.Names[got])
				}
			}
			if size := 4 * len(m.index.slots); count > 4 && 3*size >= 32*count {
				t.Errorf("%d names (reserved: %v): the index takes %d bytes, want less than %d", count, reserved, size, 32*count/3)
			}
		}
	}
}
