package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/hilrig/hilrig/profiles/lang"
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

// Reference returns the key reference of the profile language as Markdown,
// generated from the schema's own definitions, so the documentation cannot
// drift from what the parser accepts. profiles/README.md embeds it.
func Reference() string { return lang.ReferenceOf(reflect.TypeFor[Profile](), "top level") }

// readProfileRef finds the profile named by ref from a profile at source: a
// path relative to it, or the name of a shipped profile.
func readProfileRef(ref, source string) ([]byte, string, error) {
	if strings.HasPrefix(source, "shipped:") && !filepath.IsAbs(ref) {
		name := strings.TrimSuffix(ref, ".yaml")
		if data, err := library.ReadFile(name + ".yaml"); err == nil {
			return data, "shipped:" + name, nil
		}
		return nil, "", fmt.Errorf("no shipped profile %q", ref)
	}
	path := ref
	if !filepath.IsAbs(ref) {
		path = filepath.Join(filepath.Dir(source), ref)
	}
	data, err := lang.ReadFile(path, lang.MaxFileBytes)
	if err == nil {
		if abs, absErr := filepath.Abs(path); absErr == nil {
			path = abs
		}
		return data, path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", err
	}
	if !strings.ContainsAny(ref, `/\`) && filepath.Ext(ref) == "" {
		if data, err := library.ReadFile(ref + ".yaml"); err == nil {
			return data, "shipped:" + ref, nil
		}
	}
	return nil, "", fmt.Errorf("cannot find %q: no such file next to this profile, and no shipped profile by that name", ref)
}
