package profiles

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
)

// library is the shipped profiles, compiled into the binary so that hilrig
// knows them by name on any machine.
//
//go:embed *.yaml
var library embed.FS

// Shipped lists the names of the shipped profiles, sorted.
func Shipped() []string {
	entries, _ := fs.ReadDir(library, ".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}
