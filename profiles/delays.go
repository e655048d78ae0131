package profiles

import (
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
)

// readRelated reads a file named by the value at path at, relative to the
// file that value was written in (inside the shipped library for a shipped
// profile; shipped:NAME names a file of the library from anywhere), and
// notes it among the files the profile was made from (d.Read). It returns
// the name to use in messages.
func readRelated(d *lang.Decoder, at, name string) ([]byte, string, error) {
	data, file, err := readRelativeTo(d.PosAt(at).File, name)
	if err == nil {
		d.Read = append(d.Read, file)
	}
	return data, file, err
}

// readRelativeTo reads name relative to the file source, for readRelated.
func readRelativeTo(source, name string) ([]byte, string, error) {
	if shipped, ok := strings.CutPrefix(name, "shipped:"); ok {
		full := path.Clean(shipped)
		data, err := fs.ReadFile(library, full)
		return data, "shipped:" + full, err
	}
	if source == lang.SetFile {
		source = "." + string(filepath.Separator) // --set values are relative to the working directory
	}
	if strings.HasPrefix(source, "shipped:") && !filepath.IsAbs(name) {
		full := path.Clean(name)
		data, err := fs.ReadFile(library, full)
		return data, "shipped:" + full, err
	}
	full := name
	if !filepath.IsAbs(name) {
		full = filepath.Join(filepath.Dir(source), name)
	}
	data, err := lang.ReadFile(full, lang.MaxFileBytes)
	return data, full, err
}

// maxDelayErrors bounds how many bad lines of one file are reported.
const maxDelayErrors = 10

// readDelays reads an empirical delay file: one measured delay per line,
// written with its unit (12.5ms) or, when unit is given, as a bare number in
// that unit; blank lines and text after # are ignored. Problems are
// reported at the file's own line and column; at is the path of the key
// that names the file, next to its unit.
func readDelays(d *lang.Decoder, name string, unit *lang.TimeUnit, at string) ([]time.Duration, string) {
	data, file, err := readRelated(d, at, name)
	if err != nil {
		d.ErrorAt(at, "cannot read %s: %s", file, lang.FileProblem(err))
		return nil, file
	}
	var samples []time.Duration
	bad := 0
	for i, line := range strings.Split(string(data), "\n") {
		text, _, _ := strings.Cut(line, "#")
		value := strings.TrimSpace(text)
		if value == "" {
			continue
		}
		col := strings.Index(line, value) + 1
		var v lang.Duration
		perr := v.ParseScalar(value)
		if unit != nil {
			if f, ferr := strconv.ParseFloat(value, 64); ferr == nil {
				perr = v.ParseScalar(strconv.FormatFloat(f, 'f', -1, 64) + string(*unit))
			}
		}
		if perr != nil {
			bad++
			if bad <= maxDelayErrors {
				advice := ""
				if _, isNumber := strconv.ParseFloat(value, 64); unit == nil && isNumber == nil {
					advice = "; write each value with its unit, or say the unit of bare numbers (" + lang.ParentPath(at) + ".unit: ms)"
				}
				d.Report(lang.Pos{File: file, Line: i + 1, Col: col}, at, "%q %v%s", value, perr, advice)
			}
			continue
		}
		samples = append(samples, time.Duration(v))
	}
	if bad > maxDelayErrors {
		d.Report(lang.Pos{File: file}, at, "%d more bad lines", bad-maxDelayErrors)
	}
	if bad == 0 && len(samples) == 0 {
		d.ErrorAt(at, "%s holds no delays", file)
	}
	if bad > 0 {
		d.Fail(at)
		return nil, file
	}
	return samples, file
}
