// Package fmu loads an FMU (Functional Mock-up Unit, FMI 2.0 or 3.0): it
// unpacks the .fmu into a private temporary directory, loads the shared
// library for this machine without cgo (github.com/ebitengine/purego),
// checks that it exports every function hilrig calls, and gives each
// instance as an fmi.Instance for emulator/plant/fmi's Stepper. The FMI C
// types and functions are declared here from the standard's published
// signatures.
//
// An FMU is someone else's native code. Unit.Start steps it as a Model,
// either in the rig's process (InProcess), where a crash in it (SIGSEGV,
// abort) ends the process as a crash in Go would and a call that never
// returns never returns, or in a child process (Isolated, on Linux),
// where a crash, an exit or a step longer than its budget is an error of
// the model's and the rig goes on. The logger an FMU is given keeps a
// bounded tail of its messages (TailLines of MaxLine bytes) and counts
// the rest.
//
// Loading is supported on linux/amd64 and linux/arm64, the architectures
// purego supports fully without cgo; elsewhere, and in a build with the
// tag hilrig_nofmu, Instantiate says so. A build that can load FMUs is
// dynamically linked against the C library (loading a shared library
// needs the dynamic loader, cgo or not): hilrig_nofmu keeps a
// CGO_ENABLED=0 build static.
package fmu

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/profiles/benchfile"
)

// Unit is an .fmu unpacked into a private directory, its libraries loaded
// as instances need them.
type Unit struct {
	Path        string
	Archive     *fmi.Archive
	Description *fmi.Description
	dir         string

	mu      sync.Mutex
	libs    map[string]*library // by the library's path in the archive
	fatal   bool                // an instance failed fatally: its library stays loaded
	running map[io.Closer]bool  // the isolated models started, until closed
}

// Instance is an instance of a unit's FMU: an fmi.CoSimulation or an
// fmi.ModelExchange, with what its FMU logged.
type Instance interface {
	fmi.Instance
	Log() *Log
}

// Options are how an FMU is instantiated.
type Options struct {
	// Name is the instance's name, which the FMU puts in its messages;
	// "" is the model's name.
	Name string
	// LoggingOn asks the FMU for its debug messages too, not only its
	// warnings and errors.
	LoggingOn bool
	// Isolate runs the FMU in a child process (Unit.Start): a crash, a
	// hang or an exit of the FMU is then an error of the model's, not the
	// rig's end.
	Isolate bool
	// Budget is the longest an isolated FMU's step may take, in wall
	// time: past it the child is killed and the step returns a
	// *TimeoutError. 0 is no budget. In-process, no budget can be kept.
	Budget time.Duration
	// Priority, when positive, runs an isolated FMU's process at
	// SCHED_FIFO this priority (where the kernel allows it; else at
	// normal priority): a rig whose executor waits for the FMU at every
	// step in real time must not have it wait behind the machine's other
	// work. 0 is normal priority.
	Priority int
	// StartBudget is the longest an isolated FMU's start (loading,
	// instantiating, initialising) and its close may each take;
	// 0 is DefaultStartBudget.
	StartBudget time.Duration
}

// DefaultStartBudget is an isolated FMU's StartBudget when none is given:
// a large FMU may read large resources as it instantiates.
const DefaultStartBudget = time.Minute

// Open reads and checks an .fmu and unpacks it into a private temporary
// directory (mode 0700, in $TMPDIR, which must allow its libraries to be
// mapped executable), which Close removes.
func Open(path string) (*Unit, error) {
	a, f, err := benchfile.OpenFMU(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", "hilrig-fmu-")
	if err != nil {
		return nil, err
	}
	u := &Unit{Path: path, Archive: a, Description: a.Description, dir: dir, libs: map[string]*library{}}
	err = a.Unpack(func(name string) (io.WriteCloser, error) {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			return nil, fmt.Errorf("the entry %q leaves the directory", name) // checked by fmi already
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return nil, err
		}
		return os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	})
	if err == nil {
		err = os.MkdirAll(u.ResourceDir(), 0o700)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// Dir is where the unit is unpacked.
func (u *Unit) Dir() string { return u.dir }

// ResourceDir is the FMU's resources directory, unpacked.
func (u *Unit) ResourceDir() string { return filepath.Join(u.dir, "resources") }

// resourceLocation is how the FMU is told where its resources are: FMI 2
// a file URI, FMI 3 a path; both end in a separator, as FMUs append file
// names to them.
func (u *Unit) resourceLocation() string {
	dir := u.ResourceDir() + "/"
	if u.Description.Version == fmi.FMI3 {
		return dir
	}
	return (&url.URL{Scheme: "file", Path: dir}).String()
}

// Instantiate makes an instance of the FMU for an interface, loading its
// library for this machine first if no instance has.
func (u *Unit) Instantiate(kind fmi.Kind, opts Options) (Instance, error) {
	name, err := u.library(kind)
	if err != nil {
		return nil, err
	}
	return u.instantiate(name, kind, opts)
}

// library is the name in the archive of the library an interface runs.
func (u *Unit) library(kind fmi.Kind) (string, error) {
	if kind != fmi.CS && kind != fmi.ME {
		return "", fmt.Errorf("%s: hilrig instantiates Co-Simulation and Model Exchange, not %s", u.Path, kind)
	}
	if u.Description.Interface(kind) == nil {
		return "", fmt.Errorf("%s: the FMU does not offer %s", u.Path, kind)
	}
	name, _, err := u.Archive.Library(kind, goos, goarch)
	if err != nil {
		return "", fmt.Errorf("%s: %w", u.Path, err)
	}
	return name, nil
}

// instantiate makes an instance from the library at name in the unpacked
// directory.
func (u *Unit) instantiate(name string, kind fmi.Kind, opts Options) (Instance, error) {
	u.mu.Lock()
	lib, ok := u.libs[name]
	var err error
	if !ok {
		lib, err = loadLibrary(filepath.Join(u.dir, filepath.FromSlash(name)), u.Description, kind)
		if err != nil {
			u.mu.Unlock()
			return nil, fmt.Errorf("%s: %s: %w", u.Path, name, err)
		}
		u.libs[name] = lib
	} else if err := lib.require(u.Description, kind); err != nil {
		u.mu.Unlock()
		return nil, fmt.Errorf("%s: %s: %w", u.Path, name, err)
	}
	u.mu.Unlock()
	if opts.Name == "" {
		opts.Name = u.Description.ModelName
	}
	inst, err := lib.instantiate(u, kind, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Path, err)
	}
	return inst, nil
}

// markFatal records that an instance failed fatally: FMI allows no call
// into the FMU after it, not even to unload it.
func (u *Unit) markFatal() {
	u.mu.Lock()
	u.fatal = true
	u.mu.Unlock()
}

// Close closes the isolated models still running, unloads the libraries
// (unless an instance failed fatally) and removes the unpacked directory.
// The in-process instances must have been freed.
func (u *Unit) Close() error {
	u.mu.Lock()
	running := u.running
	u.running = nil
	u.mu.Unlock()
	var errs []error
	for m := range running {
		errs = append(errs, m.Close()) // reaps the child before its files go
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.fatal {
		for _, lib := range u.libs {
			errs = append(errs, lib.close())
		}
	}
	u.libs = nil
	errs = append(errs, os.RemoveAll(u.dir))
	return errors.Join(errs...)
}

// The machine the libraries are for.
var goos, goarch = runtime.GOOS, runtime.GOARCH
