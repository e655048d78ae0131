package fmi

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Limits bounds what ReadArchive accepts of an .fmu, so that a hostile or
// broken one cannot fill the disk or the memory it is unpacked into.
type Limits struct {
	// MaxEntries is the most entries (files and directories) an archive
	// may hold.
	MaxEntries int
	// MaxUnpacked is the most bytes its files may expand to, all
	// together, counted as they are unpacked (not as the archive claims).
	MaxUnpacked int64
	// MaxDescription is the largest modelDescription.xml, which is read
	// into memory.
	MaxDescription int64
	// MaxRatio is the largest ratio of a file's size to its compressed
	// size, for files larger than RatioFloor: a zip bomb's files expand a
	// thousandfold, an FMU's XML some 10 to 30 times and its binaries 2 to 5.
	MaxRatio, RatioFloor int64
}

// DefaultLimits are the limits hilrig applies: 10 000 entries, 1 GiB
// unpacked, a 64 MiB description, and no file over 1 MiB compressed more
// than 200 to 1.
var DefaultLimits = Limits{MaxEntries: 10_000, MaxUnpacked: 1 << 30, MaxDescription: 64 << 20, MaxRatio: 200, RatioFloor: 1 << 20}

// Archive is a checked .fmu: its description and its files. Every name in
// it is a clean relative path, no entry is a link or a device, and the
// sizes are within its limits.
type Archive struct {
	Description *Description
	Files       []File     // the regular files, in the archive's order
	Binaries    []Platform // the platforms it carries binaries for
	limits      Limits
}

// File is a regular file of an archive.
type File struct {
	Name string
	Size int64 // uncompressed, as the archive declares it
	zf   *zip.File
}

// Platform is a directory of binaries/ and the files in it.
type Platform struct {
	Name  string
	Files []string // names relative to binaries/<Name>/
}

// ReadArchive reads an .fmu of size bytes from r with DefaultLimits.
func ReadArchive(r io.ReaderAt, size int64) (*Archive, error) {
	return DefaultLimits.ReadArchive(r, size)
}

// ReadArchive reads an .fmu of size bytes from r: it checks every entry,
// parses the description and lists the binaries.
func (l Limits) ReadArchive(r io.ReaderAt, size int64) (*Archive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a zip archive, which an FMU is: %w", err)
	}
	if len(zr.File) > l.MaxEntries {
		return nil, fmt.Errorf("the archive holds %d entries; hilrig takes at most %d", len(zr.File), l.MaxEntries)
	}
	a := &Archive{limits: l}
	names := map[string]bool{}
	dirs := map[string]bool{}
	var total uint64
	type span struct {
		from, to int64
		name     string
	}
	var spans []span
	for _, f := range zr.File {
		name := f.Name
		isDir := strings.HasSuffix(name, "/")
		if err := checkName(strings.TrimSuffix(name, "/")); err != nil {
			return nil, fmt.Errorf("the entry %q %w", name, err)
		}
		mode := f.Mode()
		switch {
		case mode.Type()&^fs.ModeDir != 0:
			return nil, fmt.Errorf("the entry %q is a %s, not a file: hilrig unpacks files and directories only", name, describeMode(mode.Type()))
		case mode.IsDir() && !isDir:
			return nil, fmt.Errorf("the entry %q is a directory without a trailing /", name)
		case f.Flags&0x1 != 0:
			return nil, fmt.Errorf("the entry %q is encrypted", name)
		case !isDir && f.Method != zip.Store && f.Method != zip.Deflate:
			return nil, fmt.Errorf("the entry %q is compressed with method %d; FMUs use stored (0) or deflated (8) entries", name, f.Method)
		}
		clean := strings.TrimSuffix(name, "/")
		if names[clean] && isDir && dirs[clean] {
			continue // a directory given twice
		}
		if i := slices.IndexFunc(a.Files, func(g File) bool { return g.Name == name }); i >= 0 &&
			a.Files[i].zf.CRC32 == f.CRC32 && a.Files[i].zf.UncompressedSize64 == f.UncompressedSize64 {
			continue // the same file twice, as some build tools write it: one copy is unpacked
		}
		if names[clean] || (!isDir && dirs[clean]) {
			return nil, fmt.Errorf("the archive holds %q twice, or as both a file and a directory", clean)
		}
		for dir := path.Dir(clean); dir != "."; dir = path.Dir(dir) {
			if names[dir] && !dirs[dir] {
				return nil, fmt.Errorf("the entry %q is inside %q, which is a file", name, dir)
			}
			dirs[dir] = true
		}
		names[clean] = true
		if isDir {
			dirs[clean] = true
			continue
		}
		total += f.UncompressedSize64
		if total > uint64(l.MaxUnpacked) {
			return nil, fmt.Errorf("the archive's files expand to more than %d MiB, hilrig's limit (a zip bomb, or an FMU too large)", l.MaxUnpacked>>20)
		}
		if f.UncompressedSize64 > uint64(l.RatioFloor) && f.UncompressedSize64 > uint64(l.MaxRatio)*f.CompressedSize64 {
			return nil, fmt.Errorf("the entry %q expands %d times (%d bytes to %d): over the limit of %d, a zip bomb", name,
				f.UncompressedSize64/max(f.CompressedSize64, 1), f.CompressedSize64, f.UncompressedSize64, l.MaxRatio)
		}
		off, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("the entry %q: %w", name, err)
		}
		spans = append(spans, span{off, off + int64(f.CompressedSize64), name})
		a.Files = append(a.Files, File{Name: name, Size: int64(f.UncompressedSize64), zf: f})
	}
	// Entries that share their compressed data expand the same bytes many
	// times over: the overlapping zip bomb.
	slices.SortFunc(spans, func(x, y span) int { return int(x.from - y.from) })
	for i := 1; i < len(spans); i++ {
		if spans[i].from < spans[i-1].to {
			return nil, fmt.Errorf("the entries %q and %q share compressed data (an overlapping zip bomb)", spans[i-1].name, spans[i].name)
		}
	}
	desc := a.file(DescriptionFile)
	if desc == nil {
		for _, f := range a.Files {
			if path.Base(f.Name) == DescriptionFile {
				return nil, fmt.Errorf("no %s at the top of the archive, but %s: zip the FMU's contents, not its folder", DescriptionFile, f.Name)
			}
		}
		return nil, fmt.Errorf("no %s in the archive: not an FMU", DescriptionFile)
	}
	if desc.Size > l.MaxDescription {
		return nil, fmt.Errorf("%s is %d MiB; hilrig reads descriptions of up to %d MiB", DescriptionFile, desc.Size>>20, l.MaxDescription>>20)
	}
	var data strings.Builder
	if err := a.copy(&data, *desc, new(int64)); err != nil {
		return nil, err
	}
	if a.Description, err = Parse([]byte(data.String())); err != nil {
		return nil, err
	}
	for _, f := range a.Files {
		rest, ok := strings.CutPrefix(f.Name, "binaries/")
		if !ok {
			continue
		}
		platform, file, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		i := slices.IndexFunc(a.Binaries, func(p Platform) bool { return p.Name == platform })
		if i < 0 {
			a.Binaries = append(a.Binaries, Platform{Name: platform})
			i = len(a.Binaries) - 1
		}
		a.Binaries[i].Files = append(a.Binaries[i].Files, file)
	}
	return a, nil
}

// checkName refuses a name that would leave the directory an archive is
// unpacked into, or that is not the plain relative path it should be.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("has no name")
	case strings.ContainsRune(name, 0):
		return errors.New("has a NUL byte in its name")
	case strings.HasPrefix(name, "/"):
		return errors.New("is an absolute path: it would be written outside the directory the FMU is unpacked into")
	case strings.Contains(name, `\`):
		return errors.New(`has a backslash in its name; a zip's paths use /, and a \ would be taken for part of a name here`)
	case len(name) > 1024:
		return errors.New("has a name over 1024 bytes")
	}
	for _, part := range strings.Split(name, "/") {
		switch part {
		case "..":
			return errors.New("climbs out with ..: it would be written outside the directory the FMU is unpacked into")
		case ".", "":
			return errors.New("is not a clean path (an empty or . component)")
		}
	}
	return nil
}

func describeMode(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeDevice != 0:
		return "device"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file (" + t.String() + ")"
}

func (a *Archive) file(name string) *File {
	for i := range a.Files {
		if a.Files[i].Name == name {
			return &a.Files[i]
		}
	}
	return nil
}

// copy writes a file's contents to w, refusing more than it declared (a
// lying header) and more than the archive's limit in all (*unpacked
// counts what has been written).
func (a *Archive) copy(w io.Writer, f File, unpacked *int64) error {
	rc, err := f.zf.Open()
	if err != nil {
		return fmt.Errorf("the entry %q: %w", f.Name, err)
	}
	defer rc.Close()
	n, err := io.CopyN(w, rc, f.Size+1)
	*unpacked += n
	switch {
	case n > f.Size:
		return fmt.Errorf("the entry %q holds more than the %d bytes it declares", f.Name, f.Size)
	case *unpacked > a.limits.MaxUnpacked:
		return fmt.Errorf("the archive's files expand to more than %d MiB, hilrig's limit", a.limits.MaxUnpacked>>20)
	case err == io.EOF && n == f.Size:
		return nil
	case err == io.EOF:
		return fmt.Errorf("the entry %q holds %d bytes, not the %d it declares", f.Name, n, f.Size)
	case errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum):
		// archive/zip stops reading at the first byte past the declared
		// size, or at a checksum that does not match.
		return fmt.Errorf("the entry %q does not hold what its header declares (%d bytes and their checksum): %w", f.Name, f.Size, err)
	case err != nil:
		return fmt.Errorf("the entry %q: %w", f.Name, err)
	}
	return nil
}

// Unpack writes every file through create, which makes the file of a name
// (a clean relative path; its directories are the caller's to make) and
// returns where its contents go. Each file yields at most the size it
// declares, and all of them together at most the limit.
func (a *Archive) Unpack(create func(name string) (io.WriteCloser, error)) error {
	var unpacked int64
	for _, f := range a.Files {
		w, err := create(f.Name)
		if err != nil {
			return err
		}
		err = a.copy(w, f, &unpacked)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Resources lists the files under resources/.
func (a *Archive) Resources() []string {
	var out []string
	for _, f := range a.Files {
		if rest, ok := strings.CutPrefix(f.Name, "resources/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

// Library finds the shared library of an interface for goos/goarch: its
// name in the archive and the platform directory it is in. The error
// names the platforms the FMU carries binaries for.
func (a *Archive) Library(k Kind, goos, goarch string) (name, platform string, err error) {
	f := a.Description.Interface(k)
	if f == nil {
		return "", "", fmt.Errorf("the FMU does not offer %s", k)
	}
	lib := LibraryName(goos, f.ModelIdentifier)
	want := Platforms(a.Description.Version, goos, goarch)
	for _, p := range want {
		name := "binaries/" + p + "/" + lib
		if a.file(name) != nil {
			return name, p, nil
		}
	}
	carried := make([]string, len(a.Binaries))
	for i, p := range a.Binaries {
		carried[i] = p.Name
	}
	has := "no binaries at all (a source-only FMU: hilrig does not compile sources)"
	if len(carried) > 0 {
		has = "binaries for " + strings.Join(carried, ", ") + " only"
	}
	if len(want) == 0 {
		return "", "", fmt.Errorf("hilrig knows no FMI platform name for %s/%s; the FMU has %s", goos, goarch, has)
	}
	return "", "", fmt.Errorf("the FMU has no %s for this machine (%s/%s: binaries/%s/%s); it has %s", lib, goos, goarch, want[0], lib, has)
}
