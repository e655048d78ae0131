package fmi_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/emulator/plant/fmi/fmitest"
)

// entry is a file of a test archive.
type entry struct {
	name string
	data string
	mode fs.FileMode
	// declared, when not zero, is the size the header claims (the data
	// is stored as it is).
	declared uint64
}

func zipOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		var f io.Writer
		var err error
		if e.declared != 0 {
			h.Method = zip.Store
			h.CompressedSize64 = uint64(len(e.data))
			h.UncompressedSize64 = e.declared
			f, err = w.CreateRaw(h)
		} else {
			f, err = w.CreateHeader(h)
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, e.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var ballXML = entry{name: "modelDescription.xml", data: fmitest.BouncingBall().XML}

func TestReadArchive(t *testing.T) {
	data := zipOf(t, ballXML,
		entry{name: "binaries/", mode: fs.ModeDir | 0o755},
		entry{name: "binaries/linux64/BouncingBall.so", data: "\x7fELF"},
		entry{name: "binaries/win64/BouncingBall.dll", data: "MZ"},
		entry{name: "resources/table.csv", data: "1,2\n"},
		entry{name: "sources/model.c", data: "int x;"},
	)
	a, err := fmi.ReadArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if a.Description.ModelName != "BouncingBall" || len(a.Files) != 5 {
		t.Errorf("%s with %d files", a.Description.ModelName, len(a.Files))
	}
	if len(a.Binaries) != 2 || a.Binaries[0].Name != "linux64" || a.Binaries[1].Files[0] != "BouncingBall.dll" {
		t.Errorf("binaries %+v", a.Binaries)
	}
	if r := a.Resources(); len(r) != 1 || r[0] != "table.csv" {
		t.Errorf("resources %v", r)
	}
	name, platform, err := a.Library(fmi.CS, "linux", "amd64")
	if err != nil || name != "binaries/linux64/BouncingBall.so" || platform != "linux64" {
		t.Errorf("library %q %q %v", name, platform, err)
	}
	_, _, err = a.Library(fmi.ME, "linux", "arm64")
	if err == nil || !strings.Contains(err.Error(), "no BouncingBall.so for this machine (linux/arm64: binaries/aarch64-linux/BouncingBall.so); it has binaries for linux64, win64 only") {
		t.Errorf("on arm64: %v", err)
	}
	unpacked := map[string]string{}
	err = a.Unpack(func(name string) (io.WriteCloser, error) {
		b := &closingBuffer{}
		unpacked[name] = ""
		b.done = func() { unpacked[name] = b.String() }
		return b, nil
	})
	if err != nil || unpacked["resources/table.csv"] != "1,2\n" || unpacked[fmi.DescriptionFile] != fmitest.BouncingBall().XML {
		t.Errorf("unpacked %v, %v", unpacked, err)
	}
}

type closingBuffer struct {
	bytes.Buffer
	done func()
}

func (b *closingBuffer) Close() error { b.done(); return nil }

// overlapping is an archive of two entries whose central directory
// records point at the same local file: the overlapping zip bomb's trick.
func overlapping(t *testing.T) []byte {
	data := zipOf(t, ballXML, entry{name: "a.bin", data: strings.Repeat("x", 100)}, entry{name: "b.bin", data: strings.Repeat("x", 100)})
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	aOff, _ := zr.File[1].DataOffset()
	aHeader := aOff - 30 - int64(len("a.bin")) // local header: 30 bytes and the name
	cd := bytes.Index(data, []byte("PK\x01\x02\x14\x00\x14\x00\x08\x00\x08\x00"))
	for i := cd; i >= 0; {
		if bytes.HasPrefix(data[i+46:], []byte("b.bin")) {
			binary.LittleEndian.PutUint32(data[i+42:], uint32(aHeader))
			return data
		}
		next := bytes.Index(data[i+4:], []byte("PK\x01\x02"))
		if next < 0 {
			break
		}
		i += 4 + next
	}
	t.Fatal("no central directory record for b.bin")
	return nil
}

// TestArchiveRefuses: what could harm the machine an FMU is unpacked on,
// or is not an FMU, is refused with what is wrong.
func TestArchiveRefuses(t *testing.T) {
	zeros := strings.Repeat("\x00", 2<<20)
	small := fmi.DefaultLimits
	small.MaxEntries = 3
	for _, tc := range []struct {
		name   string
		data   []byte
		limits fmi.Limits
		want   string
	}{
		{"zip-slip", zipOf(t, ballXML, entry{name: "../evil.so", data: "x"}), fmi.DefaultLimits, `the entry "../evil.so" climbs out with ..`},
		{"zip-slip inside", zipOf(t, ballXML, entry{name: "resources/../../evil.so", data: "x"}), fmi.DefaultLimits, `climbs out with ..`},
		{"absolute", zipOf(t, ballXML, entry{name: "/etc/cron.d/evil", data: "x"}), fmi.DefaultLimits, `the entry "/etc/cron.d/evil" is an absolute path`},
		{"backslash", zipOf(t, ballXML, entry{name: `..\evil.so`, data: "x"}), fmi.DefaultLimits, `has a backslash in its name`},
		{"symbolic link", zipOf(t, ballXML, entry{name: "resources/passwd", data: "/etc/passwd", mode: fs.ModeSymlink | 0o777}), fmi.DefaultLimits, `the entry "resources/passwd" is a symbolic link, not a file`},
		{"too many entries", zipOf(t, ballXML, entry{name: "a"}, entry{name: "b"}, entry{name: "c"}), small, "the archive holds 4 entries; hilrig takes at most 3"},
		{"declared too large", zipOf(t, ballXML, entry{name: "big.bin", data: "x", declared: 2 << 30}), fmi.DefaultLimits, "expand to more than 1024 MiB"},
		{"compression ratio", zipOf(t, ballXML, entry{name: "binaries/linux64/bomb.so", data: zeros}), fmi.DefaultLimits, `the entry "binaries/linux64/bomb.so" expands`},
		{"overlapping", overlapping(t), fmi.DefaultLimits, `the entries "a.bin" and "b.bin" share compressed data`},
		{"duplicate", zipOf(t, ballXML, entry{name: "a", data: "1"}, entry{name: "a", data: "2"}), fmi.DefaultLimits, `the archive holds "a" twice`},
		{"file as directory", zipOf(t, ballXML, entry{name: "a", data: "1"}, entry{name: "a/b", data: "2"}), fmi.DefaultLimits, `the entry "a/b" is inside "a", which is a file`},
		{"no description", zipOf(t, entry{name: "binaries/linux64/x.so", data: "x"}), fmi.DefaultLimits, "no modelDescription.xml in the archive: not an FMU"},
		{"zipped folder", zipOf(t, entry{name: "Ball/modelDescription.xml", data: ballXML.data}), fmi.DefaultLimits, "no modelDescription.xml at the top of the archive, but Ball/modelDescription.xml"},
		{"bad description", zipOf(t, entry{name: "modelDescription.xml", data: "<fmiModelDescription fmiVersion=\"2.0\">\n<oops"}), fmi.DefaultLimits, "modelDescription.xml:2:1: malformed XML"},
		{"not a zip", []byte("this is not a zip archive at all, just text"), fmi.DefaultLimits, "not a zip archive, which an FMU is"},
		{"lying description size", zipOf(t, entry{name: "modelDescription.xml", data: ballXML.data, declared: 10}), fmi.DefaultLimits, `the entry "modelDescription.xml" does not hold what its header declares (10 bytes and their checksum)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.limits.ReadArchive(bytes.NewReader(tc.data), int64(len(tc.data)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want %q", err, tc.want)
			}
		})
	}
}

// TestArchiveDuplicatesAlike: a directory or a file given twice alike (as
// the Reference FMUs' build writes Roberts.fmu's extra/) is unpacked once;
// a name given twice with different contents is refused.
func TestArchiveDuplicatesAlike(t *testing.T) {
	data := zipOf(t, ballXML, entry{name: "extra/", mode: fs.ModeDir | 0o755}, entry{name: "extra/x.csv", data: "1,2"},
		entry{name: "extra/", mode: fs.ModeDir | 0o755}, entry{name: "extra/x.csv", data: "1,2"})
	a, err := fmi.ReadArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != 2 || a.Files[1].Name != "extra/x.csv" {
		t.Errorf("files %+v", a.Files)
	}
	data = zipOf(t, ballXML, entry{name: "extra/x.csv", data: "1,2"}, entry{name: "extra/x.csv", data: "3,4"})
	if _, err := fmi.ReadArchive(bytes.NewReader(data), int64(len(data))); err == nil || !strings.Contains(err.Error(), `holds "extra/x.csv" twice`) {
		t.Errorf("different contents: %v", err)
	}
}

// TestUnpackCountsWhatItWrites: a file whose header understates its size
// is cut off where its declaration ends, whatever the archive says.
func TestUnpackCountsWhatItWrites(t *testing.T) {
	data := zipOf(t, ballXML, entry{name: "resources/liar.bin", data: strings.Repeat("y", 4096), declared: 16})
	a, err := fmi.ReadArchive(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	written := 0
	err = a.Unpack(func(name string) (io.WriteCloser, error) {
		b := &closingBuffer{}
		b.done = func() { written += b.Len() }
		return b, nil
	})
	if err == nil || !strings.Contains(err.Error(), `"resources/liar.bin" does not hold what its header declares (16 bytes`) {
		t.Fatalf("%v", err)
	}
	if max := len(ballXML.data) + 17; written > max {
		t.Errorf("%d bytes written; at most %d may be", written, max)
	}
}

func TestPlatforms(t *testing.T) {
	for _, tc := range []struct {
		v            fmi.Version
		goos, goarch string
		want         string
	}{
		{fmi.FMI2, "linux", "amd64", "linux64"},
		{fmi.FMI2, "linux", "386", "linux32"},
		{fmi.FMI2, "linux", "arm64", "aarch64-linux"},
		{fmi.FMI2, "linux", "arm", "aarch32-linux"},
		{fmi.FMI3, "linux", "amd64", "x86_64-linux"},
		{fmi.FMI3, "linux", "386", "x86-linux"},
		{fmi.FMI3, "linux", "arm64", "aarch64-linux"},
		{fmi.FMI3, "linux", "arm", "aarch32-linux"},
		{fmi.FMI2, "windows", "amd64", "win64"},
		{fmi.FMI3, "darwin", "arm64", "aarch64-darwin"},
		{fmi.FMI3, "linux", "riscv64", ""},
	} {
		if got := strings.Join(fmi.Platforms(tc.v, tc.goos, tc.goarch), ","); got != tc.want {
			t.Errorf("FMI %d on %s/%s: %q; want %q", tc.v, tc.goos, tc.goarch, got, tc.want)
		}
	}
}

// FuzzArchive: whatever the bytes, ReadArchive returns an archive or an
// error and never panics; an archive it returns holds only clean relative
// names, and unpacks to no more than it declares.
func FuzzArchive(f *testing.F) {
	f.Add(zipOf(f, ballXML, entry{name: "binaries/linux64/BouncingBall.so", data: "\x7fELF"}, entry{name: "resources/a.txt", data: "a"}))
	f.Add(zipOf(f, ballXML, entry{name: "../evil", data: "x"}))
	f.Add(zipOf(f, ballXML, entry{name: "extra/", mode: fs.ModeDir | 0o755}, entry{name: "extra/", mode: fs.ModeDir | 0o755}))
	f.Add(zipOf(f, entry{name: "modelDescription.xml", data: ballXML.data, declared: 10}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := fmi.ReadArchive(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var declared int64
		for _, file := range a.Files {
			if strings.HasPrefix(file.Name, "/") || strings.Contains(file.Name, "..") || strings.Contains(file.Name, `\`) {
				t.Fatalf("an unclean name %q", file.Name)
			}
			declared += file.Size
		}
		written := int64(0)
		a.Unpack(func(string) (io.WriteCloser, error) {
			b := &closingBuffer{}
			b.done = func() { written += int64(b.Len()) }
			return b, nil
		})
		if written > declared {
			t.Fatalf("unpacked %d bytes of %d declared", written, declared)
		}
	})
}
