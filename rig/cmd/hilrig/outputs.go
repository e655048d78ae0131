package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hilrig/hilrig/profiles/benchfile"
)

// A namedFile is a file a command reads or writes, with what it is to the
// command, for messages: "--trace", "the profile", "a file the bench
// reads".
type namedFile struct {
	what, path string
}

// output is a file a flag asks for, and the writer to point at it; one
// without a writer is a file the command makes otherwise (a bench's pty
// link), checked with the others but not created here.
type output struct {
	flag, path string
	into       *io.Writer
}

// createOutputs creates the files asked for (an empty path is not asked
// for) and points their writers at them, before anything runs, so that a
// path that cannot be written is a usage error and not a lost run. An
// output that is another one, or a file the command reads (reads), is
// refused before any is created (checkOutputs). close closes what was
// created, also after an error, and says what went wrong; it may be
// called again, to no effect.
func createOutputs(reads []namedFile, outs ...output) (close func() error, err error) {
	var files []*os.File
	close = func() error {
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Close())
		}
		files = nil
		return errors.Join(errs...)
	}
	var writes []namedFile
	for _, o := range outs {
		switch o.path {
		case "":
			continue
		case "-": // not a file named -, which is what os.Create would make
			return close, fmt.Errorf(`%s "-": "-" is not an output file here: give a file, or /dev/stdout (the summary goes there unless --summary names a file)`, o.flag)
		}
		writes = append(writes, namedFile{o.flag, o.path})
	}
	if err := checkOutputs(writes, reads); err != nil {
		return close, err
	}
	for _, o := range outs {
		if o.path == "" || o.into == nil {
			continue
		}
		f, err := os.Create(o.path)
		if err != nil {
			return close, fmt.Errorf("%s: %w", o.flag, err)
		}
		files = append(files, f)
		*o.into = f
	}
	return close, nil
}

// checkOutputs refuses an output that is the same file on disk as another
// output, which would mix the two, or as a file the command reads, which
// it would overwrite: each problem, naming both. The same file is the
// same device and inode where it exists (through symlinks and hard links
// alike), else the same absolute path it would be created at, through the
// symlinks on the way. An output that exists and is not a regular file (a
// device such as /dev/null, a pipe) is written as a stream and clobbers
// nothing: two outputs may share it. An empty path is an output not asked
// for.
func checkOutputs(writes, reads []namedFile) error {
	read := map[fileKey]namedFile{}
	for _, r := range reads {
		if key, ok := identify(r.path); ok {
			if _, seen := read[key]; !seen {
				read[key] = r
			}
		}
	}
	var problems []error
	written := map[fileKey]namedFile{}
	for _, w := range writes {
		if w.path == "" { // not asked for
			continue
		}
		key, ok := identify(w.path)
		if !ok {
			continue
		}
		if r, clash := read[key]; clash {
			problems = append(problems, fmt.Errorf("%s %s would overwrite %s, %s: an output may not be a file the command reads", w.what, w.path, r.path, r.what))
		}
		if e, clash := written[key]; clash {
			problems = append(problems, fmt.Errorf("%s %s and %s %s are the same file: give each output a file of its own", e.what, e.path, w.what, w.path))
		} else {
			written[key] = w
		}
	}
	return errors.Join(problems...)
}

// fileKey is what makes two paths one file: the file's device and inode
// where it exists, else the path it would be created at.
type fileKey struct {
	dev, ino uint64
	path     string // absolute, through symlinks
}

// identify finds path's key; ok is false for a file that exists and is
// not a regular file (a device, a pipe, a directory: no output overwrites
// it as a file).
func identify(path string) (key fileKey, ok bool) {
	if info, err := os.Stat(path); err == nil {
		st, isUnix := info.Sys().(*syscall.Stat_t)
		if !isUnix { // not reached where hilrig builds (it needs syscall.Dup)
			return fileKey{path: path}, false
		}
		return fileKey{dev: uint64(st.Dev), ino: st.Ino}, info.Mode().IsRegular()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fileKey{path: filepath.Clean(path)}, true
	}
	// A dangling symlink: the file would be created where it points.
	for range maxLinks {
		target, err := os.Readlink(abs)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		abs = filepath.Clean(target)
	}
	// The directories on the way, as far as they exist, may be symlinks.
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if resolved, err := filepath.EvalSymlinks(dir); err == nil {
			return fileKey{path: filepath.Join(resolved, rest)}, true
		} else if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			return fileKey{path: abs}, true
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// maxLinks bounds a chain of symlinks followed, as the kernel does (40).
const maxLinks = 40

// madeFrom names the files a thing (a profile, a bench, a suite, a model,
// a report) was made from, as checkOutputs takes them: its own file
// (source) is "the profile", the others "a file the profile reads".
func madeFrom(thing, source string, files []string) []namedFile {
	var reads []namedFile
	for _, f := range files {
		what := "a file the " + thing + " reads"
		if f == source {
			what = "the " + thing
		}
		reads = append(reads, namedFile{what, f})
	}
	return reads
}

// benchReads are the files a bench was made from; none without a bench.
func benchReads(b *benchfile.LoadedBench) []namedFile {
	if b == nil {
		return nil
	}
	return madeFrom("bench", b.Source, b.Files())
}

// replayReads are the recordings --replay plays.
func replayReads(replays []string) []namedFile {
	var reads []namedFile
	for _, r := range replays {
		if _, file, ok := cutReplay(r); ok {
			reads = append(reads, namedFile{"the recording --replay plays", file})
		}
	}
	return reads
}

// ptyLinks are the symlinks a bench's pseudo-terminals make, which a run
// writes as it does its outputs (replacing what is there).
func ptyLinks(b *benchfile.LoadedBench) []output {
	var links []output
	for i, name := range b.Endpoints.Names {
		if pty, ok := b.Endpoints.Values[i].Device.(*benchfile.PtyPort); ok && pty.Link != nil {
			links = append(links, output{flag: fmt.Sprintf("the bench's endpoints.%s.pty.link", name), path: *pty.Link})
		}
	}
	return links
}
