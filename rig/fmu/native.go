//go:build linux && (amd64 || arm64) && !hilrig_nofmu

package fmu

import (
	"errors"
	"fmt"
	"runtime"
	"structs"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// Supported reports whether this build can load FMUs.
const Supported = true

// intRegisterVarargs is how many of an FMI 2 log message's variadic
// integer arguments arrive in registers: the calling convention has 6
// integer registers on amd64 and 8 on arm64 (Linux passes variadic
// arguments as named ones), and the logger's fixed arguments take 5.
var intRegisterVarargs = map[string]int{"amd64": 1, "arm64": 3}[runtime.GOARCH]

// library is a loaded FMU library and the functions hilrig calls.
type library struct {
	handle  uintptr
	version fmi.Version
	fn      map[string]uintptr

	// The functions with floating-point arguments go through purego's
	// typed calls (which allocate: reflection); the others through
	// SyscallN, with an argument list that allocates nothing.
	fmi2SetupExperiment func(c uintptr, tolDefined int32, tol, start float64, stopDefined int32, stop float64) int32
	fmi2DoStep          func(c uintptr, t, h float64, noSetPrior int32) int32
	fmi3EnterInit       func(inst uintptr, tolDefined bool, tol, start float64, stopDefined bool, stop float64) int32
	fmi3DoStep          func(inst uintptr, t, h float64, noSetPrior bool, eventNeeded, terminate, earlyReturn *bool, lastSuccessful *float64) int32
	setTime             func(c uintptr, t float64) int32

	// The getter and setter of each type, by fmi.Type: found once, as
	// naming them takes an allocation.
	getName, setName [fmi.Clock + 1]string
	registered       map[string]bool
}

// functions lists what hilrig calls, by FMI version and interface.
var functions = map[fmi.Version]map[fmi.Kind][]string{
	fmi.FMI2: {
		0:      {"fmi2GetVersion", "fmi2Instantiate", "fmi2FreeInstance", "fmi2SetupExperiment", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode", "fmi2Terminate"},
		fmi.CS: {"fmi2DoStep", "fmi2GetBooleanStatus", "fmi2GetRealStatus"},
		fmi.ME: {"fmi2EnterEventMode", "fmi2NewDiscreteStates", "fmi2EnterContinuousTimeMode", "fmi2CompletedIntegratorStep", "fmi2SetTime", "fmi2SetContinuousStates",
			"fmi2GetDerivatives", "fmi2GetEventIndicators", "fmi2GetContinuousStates", "fmi2GetNominalsOfContinuousStates"},
	},
	fmi.FMI3: {
		0:      {"fmi3GetVersion", "fmi3FreeInstance", "fmi3EnterInitializationMode", "fmi3ExitInitializationMode", "fmi3Terminate"},
		fmi.CS: {"fmi3InstantiateCoSimulation", "fmi3DoStep"},
		fmi.ME: {"fmi3InstantiateModelExchange", "fmi3EnterEventMode", "fmi3UpdateDiscreteStates", "fmi3EnterContinuousTimeMode", "fmi3CompletedIntegratorStep", "fmi3SetTime",
			"fmi3SetContinuousStates", "fmi3GetContinuousStateDerivatives", "fmi3GetEventIndicators", "fmi3GetContinuousStates", "fmi3GetNominalsOfContinuousStates"},
	},
}

// accessors names the getter and setter of a type (FMI 2 sets an
// enumeration as an Integer).
func accessors(v fmi.Version, t fmi.Type) (get, set string) {
	name := t.String()
	if v == fmi.FMI2 {
		name = map[fmi.Type]string{fmi.Float64: "Real", fmi.Int32: "Integer", fmi.Enumeration: "Integer", fmi.Boolean: "Boolean"}[t]
		if name == "" {
			return "", ""
		}
	} else if t == fmi.Enumeration {
		name = "Int64"
	}
	return fmt.Sprintf("fmi%d%s%s", v, "Get", name), fmt.Sprintf("fmi%d%s%s", v, "Set", name)
}

func loadLibrary(path string, d *fmi.Description, kind fmi.Kind) (*library, error) {
	if err := initProcess(); err != nil {
		return nil, err
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("cannot be loaded: %w", err)
	}
	lib := &library{handle: h, version: d.Version, fn: map[string]uintptr{}, registered: map[string]bool{}}
	if err := lib.require(d, kind); err != nil {
		purego.Dlclose(h)
		return nil, err
	}
	getVersion := lib.fn[fmt.Sprintf("fmi%dGetVersion", d.Version)]
	r, _, _ := purego.SyscallN(getVersion)
	if v := cString(r, 16); v == "" || v[0] != byte('0'+d.Version) {
		purego.Dlclose(h)
		return nil, fmt.Errorf("the library says it is FMI %q, the description FMI %s", v, d.FMIVersion)
	}
	return lib, nil
}

// require looks up every function an interface needs, and the getters
// and setters of the types the FMU's variables have.
func (lib *library) require(d *fmi.Description, kind fmi.Kind) error {
	names := append(append([]string{}, functions[d.Version][0]...), functions[d.Version][kind]...)
	seen := map[fmi.Type]bool{}
	for i := range d.Variables {
		t := d.Variables[i].Type
		if !t.Numeric() || seen[t] {
			continue
		}
		seen[t] = true
		get, set := accessors(d.Version, t)
		if get != "" {
			names = append(names, get, set)
			lib.getName[t], lib.setName[t] = get, set
		}
	}
	for _, name := range names {
		if _, ok := lib.fn[name]; ok {
			continue
		}
		sym, err := purego.Dlsym(lib.handle, name)
		if err != nil || sym == 0 {
			return fmt.Errorf("the library does not export %s, which %s needs (an FMU exports every function of its interfaces)", name, kind)
		}
		lib.fn[name] = sym
	}
	// The typed calls, registered once each (registering makes a function
	// by reflection).
	reg := func(ptr any, name string) {
		if sym, ok := lib.fn[name]; ok && !lib.registered[name] {
			purego.RegisterFunc(ptr, sym)
			lib.registered[name] = true
		}
	}
	if d.Version == fmi.FMI2 {
		reg(&lib.fmi2SetupExperiment, "fmi2SetupExperiment")
		reg(&lib.fmi2DoStep, "fmi2DoStep")
		reg(&lib.setTime, "fmi2SetTime")
	} else {
		reg(&lib.fmi3EnterInit, "fmi3EnterInitializationMode")
		reg(&lib.fmi3DoStep, "fmi3DoStep")
		reg(&lib.setTime, "fmi3SetTime")
	}
	return nil
}

func (lib *library) close() error {
	return purego.Dlclose(lib.handle)
}

// The process-wide part: the C library's allocator, and the callbacks,
// which purego can make only a limited number of and never frees.
var (
	processOnce              sync.Once
	processErr               error
	callocFn, freeFn         uintptr
	fmi2LoggerCallback       uintptr
	fmi2StepFinishedCallback uintptr
	fmi3LogMessageCallback   uintptr
	environments             sync.Map // environment → *Log
	environmentMu            sync.Mutex
	nextEnvironment          uintptr = 1
	errNoLibc                        = errors.New("the C library (libc.so.6) cannot be loaded: hilrig loads FMUs on glibc systems")
)

func initProcess() error {
	processOnce.Do(func() {
		libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			processErr = fmt.Errorf("%w (%v)", errNoLibc, err)
			return
		}
		if callocFn, err = purego.Dlsym(libc, "calloc"); err != nil {
			processErr = err
			return
		}
		if freeFn, err = purego.Dlsym(libc, "free"); err != nil {
			processErr = err
			return
		}
		fmi2LoggerCallback = purego.NewCallback(fmi2Logger)
		fmi2StepFinishedCallback = purego.NewCallback(fmi2StepFinished)
		fmi3LogMessageCallback = purego.NewCallback(fmi3LogMessage)
	})
	return processErr
}

// abandoned are the instances that failed fatally, never freed.
var (
	abandoned   []*instance
	abandonedMu sync.Mutex
)

// register gives a log the environment pointer its instance's callbacks
// carry: a number, not a Go pointer, which C may not keep.
func register(l *Log) uintptr {
	environmentMu.Lock()
	defer environmentMu.Unlock()
	env := nextEnvironment
	nextEnvironment++
	environments.Store(env, l)
	return env
}

func logOf(env uintptr) *Log {
	if l, ok := environments.Load(env); ok {
		return l.(*Log)
	}
	return nil
}

// fmi2Logger is FMI 2's logger, void (*)(fmi2ComponentEnvironment,
// fmi2String instanceName, fmi2Status, fmi2String category, fmi2String
// message, ...): printf-style, its variadic arguments taken from the
// registers and stack slots the calling convention puts them in.
func fmi2Logger(env, _, status, category, message,
	i0, i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13, i14, i15 uintptr,
	f0, f1, f2, f3, f4, f5, f6, f7 float64) {
	l := logOf(env)
	if l == nil {
		return
	}
	ints := []uintptr{i0, i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13, i14, i15}
	args := varargs{ints: ints[:intRegisterVarargs], stack: ints[intRegisterVarargs:], floats: []float64{f0, f1, f2, f3, f4, f5, f6, f7}}
	msg := sprintf(cString(message, 4*MaxLine), &args, func(p uintptr) string { return cString(p, 4*MaxLine) })
	l.add(fmi.Status(int32(status)).Name(fmi.FMI2), cString(category, 64), msg)
}

// fmi2StepFinished would be called at the end of an asynchronous doStep,
// which hilrig never asks for.
func fmi2StepFinished(env, status uintptr) {
	if l := logOf(env); l != nil {
		l.add("hilrig", "", "stepFinished called, but hilrig steps synchronously")
	}
}

// fmi3LogMessage is FMI 3's logger, void (*)(fmi3InstanceEnvironment,
// fmi3Status, fmi3String category, fmi3String message).
func fmi3LogMessage(env, status, category, message uintptr) {
	if l := logOf(env); l != nil {
		l.add(fmi.Status(int32(status)).Name(fmi.FMI3), cString(category, 64), cString(message, 4*MaxLine))
	}
}

// pointer turns an address C gave into a pointer, for reading what C
// owns (a uintptr that is not Go memory: the garbage collector does not
// care).
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cString reads a NUL-terminated C string of at most limit bytes, a byte
// at a time: the string may be Go memory that C handed back (a GUID), and
// must not be read past its end.
func cString(p uintptr, limit int) string {
	if p == 0 {
		return ""
	}
	base := pointer(p)
	n := 0
	for n < limit && *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	s := string(unsafe.Slice((*byte)(base), n))
	if n == limit {
		s += "…"
	}
	return s
}

// cBytes is s as a NUL-terminated C string in Go memory.
func cBytes(s string) []byte { return append([]byte(s), 0) }

// fmi2CallbackFunctions is FMI 2's fmi2CallbackFunctions.
type fmi2CallbackFunctions struct {
	_                    structs.HostLayout
	logger               uintptr
	allocateMemory       uintptr
	freeMemory           uintptr
	stepFinished         uintptr
	componentEnvironment uintptr
}

// fmi2EventInfo is FMI 2's fmi2EventInfo: five fmi2Booleans (int) and an
// fmi2Real.
type fmi2EventInfo struct {
	_                                 structs.HostLayout
	newDiscreteStatesNeeded           int32
	terminateSimulation               int32
	nominalsOfContinuousStatesChanged int32
	valuesOfContinuousStatesChanged   int32
	nextEventTimeDefined              int32
	nextEventTime                     float64
}

// instance is an instance of either FMI version: the version decides the
// calls.
type instance struct {
	unit    *Unit
	lib     *library
	version fmi.Version
	kind    fmi.Kind
	c       uintptr // fmi2Component, fmi3Instance
	log     *Log
	env     uintptr
	pinner  runtime.Pinner
	strings [][]byte // the C strings given at instantiation, kept for the instance's life
	fatal   bool

	// Memory C writes into during a call.
	callbacks *fmi2CallbackFunctions
	info2     fmi2EventInfo
	flags2    [2]int32
	flags3    [6]bool
	time3     float64
	scratch   []uint64 // values, converted from and to float64
	vrs       []fmi.ValueReference
	argv      [8]uintptr
}

var (
	_ fmi.CoSimulation  = (*instance)(nil)
	_ fmi.ModelExchange = (*instance)(nil)
)

func (lib *library) instantiate(u *Unit, kind fmi.Kind, opts Options) (Instance, error) {
	in := &instance{unit: u, lib: lib, version: lib.version, kind: kind, log: &Log{}}
	in.env = register(in.log)
	name, token, resources := cBytes(opts.Name), cBytes(u.Description.Token), cBytes(u.resourceLocation())
	in.strings = [][]byte{name, token, resources}
	for _, s := range in.strings {
		in.pinner.Pin(&s[0])
	}
	logging := uintptr(0)
	if opts.LoggingOn {
		logging = 1
	}
	var c uintptr
	var function string
	if lib.version == fmi.FMI2 {
		in.callbacks = &fmi2CallbackFunctions{logger: fmi2LoggerCallback, allocateMemory: callocFn, freeMemory: freeFn,
			stepFinished: fmi2StepFinishedCallback, componentEnvironment: in.env}
		in.pinner.Pin(in.callbacks)
		fmuType := uintptr(0) // fmi2ModelExchange
		if kind == fmi.CS {
			fmuType = 1 // fmi2CoSimulation
		}
		function = "fmi2Instantiate"
		c, _, _ = purego.SyscallN(lib.fn[function], uintptr(unsafe.Pointer(&name[0])), fmuType, uintptr(unsafe.Pointer(&token[0])),
			uintptr(unsafe.Pointer(&resources[0])), uintptr(unsafe.Pointer(in.callbacks)), 0, logging)
	} else if kind == fmi.CS {
		function = "fmi3InstantiateCoSimulation"
		// Not visible, no event mode, no early return, no intermediate
		// variables and no intermediate update callback.
		c, _, _ = purego.SyscallN(lib.fn[function], uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&token[0])),
			uintptr(unsafe.Pointer(&resources[0])), 0, logging, 0, 0, 0, 0, in.env, fmi3LogMessageCallback, 0)
	} else {
		function = "fmi3InstantiateModelExchange"
		c, _, _ = purego.SyscallN(lib.fn[function], uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&token[0])),
			uintptr(unsafe.Pointer(&resources[0])), 0, logging, in.env, fmi3LogMessageCallback)
	}
	runtime.KeepAlive(in.strings)
	if c == 0 {
		err := &fmi.CallError{Function: function, Version: lib.version, Status: fmi.Error, Detail: "returned NULL: the FMU refused to instantiate (a wrong GUID/instantiationToken, a missing resource, ...)", Log: in.log.Tail(8)}
		in.release()
		return nil, err
	}
	in.c = c
	return in, nil
}

// release forgets the instance's environment and unpins its memory.
func (in *instance) release() {
	environments.Delete(in.env)
	in.pinner.Unpin()
}

func (in *instance) Log() *Log { return in.log }

// status turns a function's result into an error: OK and Warning (whose
// message is in the log) are success.
func (in *instance) status(function string, r uintptr) error {
	st := fmi.Status(int32(r))
	if st == fmi.OK || st == fmi.Warning {
		return nil
	}
	if st == fmi.Fatal && !in.fatal {
		in.fatal = true
		in.unit.markFatal()
		// FMI allows no call after a fatal error, not even to free the
		// instance: what it was given stays pinned, in case the FMU
		// still reaches for it.
		abandonedMu.Lock()
		abandoned = append(abandoned, in)
		abandonedMu.Unlock()
	}
	return &fmi.CallError{Function: function, Version: in.version, Status: st, Log: in.log.Tail(8)}
}

// call calls a function of the instance alone: fmiXFunction(instance).
func (in *instance) call(function string) error {
	in.argv[0] = in.c
	return in.syscall(function, 1)
}

// syscall calls a function with the first n arguments of argv. Every
// pointer among them points into memory the instance owns (its buffers
// and flags, on the heap and alive as long as the instance is; Go's
// collector does not move heap memory), never into the caller's: a
// caller's slice is copied in and out. So the argument list can be the
// instance's too, where a list built for each call (SyscallN's variadic
// arguments) would be allocated for each call.
func (in *instance) syscall(function string, n int) error {
	r, _, _ := purego.SyscallN(in.lib.fn[function], in.argv[:n]...)
	runtime.KeepAlive(in)
	return in.status(function, r)
}

// owned points at a value the instance owns, for argv.
func owned[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// valueRefs copies value references into the instance's memory.
func (in *instance) valueRefs(vrs []fmi.ValueReference) uintptr {
	if cap(in.vrs) < len(vrs) {
		in.vrs = make([]fmi.ValueReference, len(vrs))
	}
	in.vrs = in.vrs[:len(vrs)]
	copy(in.vrs, vrs)
	return owned(&in.vrs[0])
}

func (in *instance) name(fmi2, fmi3 string) string {
	if in.version == fmi.FMI2 {
		return fmi2
	}
	return fmi3
}

// typed is the scratch memory as n values of T.
func typed[T any](in *instance, n int) []T {
	var zero T
	words := (n*int(unsafe.Sizeof(zero)) + 7) / 8
	if len(in.scratch) < words {
		in.scratch = make([]uint64, words)
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&in.scratch[0])), n)
}

type number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// getAs calls a getter with a buffer of T and converts what it got.
// FMI 2's getters take no nValues: the extra argument is ignored.
func getAs[T number](in *instance, function string, vrs []fmi.ValueReference, values []float64) error {
	buf := typed[T](in, len(values))
	in.argv = [8]uintptr{in.c, in.valueRefs(vrs), uintptr(len(vrs)), owned(&buf[0]), uintptr(len(buf))}
	if err := in.syscall(function, 5); err != nil {
		return err
	}
	for i, v := range buf {
		values[i] = float64(v)
	}
	return nil
}

// setAs converts the values into a buffer of T and calls a setter.
func setAs[T number](in *instance, function string, vrs []fmi.ValueReference, values []float64) error {
	buf := typed[T](in, len(values))
	for i, v := range values {
		buf[i] = T(v)
	}
	in.argv = [8]uintptr{in.c, in.valueRefs(vrs), uintptr(len(vrs)), owned(&buf[0]), uintptr(len(buf))}
	return in.syscall(function, 5)
}

func (in *instance) Get(t fmi.Type, vrs []fmi.ValueReference, values []float64) error {
	if len(vrs) == 0 {
		return nil
	}
	if in.version == fmi.FMI2 && len(values) != len(vrs) {
		return fmt.Errorf("FMI 2 has no arrays: %d values for %d variables", len(values), len(vrs))
	}
	get := in.lib.getName[t]
	switch {
	case get == "" || in.lib.fn[get] == 0:
		return fmt.Errorf("hilrig cannot get %s variables of FMI %d", t, in.version)
	case t == fmi.Float64:
		return getAs[float64](in, get, vrs, values)
	case in.version == fmi.FMI2 || t == fmi.Int32:
		return getAs[int32](in, get, vrs, values)
	}
	switch t {
	case fmi.Float32:
		return getAs[float32](in, get, vrs, values)
	case fmi.Int8:
		return getAs[int8](in, get, vrs, values)
	case fmi.UInt8, fmi.Boolean: // fmi3Boolean is C's bool, a byte of 0 or 1
		return getAs[uint8](in, get, vrs, values)
	case fmi.Int16:
		return getAs[int16](in, get, vrs, values)
	case fmi.UInt16:
		return getAs[uint16](in, get, vrs, values)
	case fmi.UInt32:
		return getAs[uint32](in, get, vrs, values)
	case fmi.Int64, fmi.Enumeration:
		return getAs[int64](in, get, vrs, values)
	case fmi.UInt64:
		return getAs[uint64](in, get, vrs, values)
	}
	return fmt.Errorf("hilrig cannot get %s variables", t)
}

func (in *instance) Set(t fmi.Type, vrs []fmi.ValueReference, values []float64) error {
	if len(vrs) == 0 {
		return nil
	}
	if in.version == fmi.FMI2 && len(values) != len(vrs) {
		return fmt.Errorf("FMI 2 has no arrays: %d values for %d variables", len(values), len(vrs))
	}
	set := in.lib.setName[t]
	switch {
	case set == "" || in.lib.fn[set] == 0:
		return fmt.Errorf("hilrig cannot set %s variables of FMI %d", t, in.version)
	case t == fmi.Float64:
		return setAs[float64](in, set, vrs, values)
	case in.version == fmi.FMI2 || t == fmi.Int32:
		return setAs[int32](in, set, vrs, values)
	}
	switch t {
	case fmi.Float32:
		return setAs[float32](in, set, vrs, values)
	case fmi.Int8:
		return setAs[int8](in, set, vrs, values)
	case fmi.UInt8, fmi.Boolean:
		return setAs[uint8](in, set, vrs, values)
	case fmi.Int16:
		return setAs[int16](in, set, vrs, values)
	case fmi.UInt16:
		return setAs[uint16](in, set, vrs, values)
	case fmi.UInt32:
		return setAs[uint32](in, set, vrs, values)
	case fmi.Int64, fmi.Enumeration:
		return setAs[int64](in, set, vrs, values)
	case fmi.UInt64:
		return setAs[uint64](in, set, vrs, values)
	}
	return fmt.Errorf("hilrig cannot set %s variables", t)
}

func (in *instance) EnterInitializationMode(e fmi.Experiment) error {
	if in.version == fmi.FMI2 {
		tolDefined, stopDefined := int32(0), int32(0)
		if e.Tolerance > 0 {
			tolDefined = 1
		}
		if e.Stop > e.Start {
			stopDefined = 1
		}
		if err := in.status("fmi2SetupExperiment", uintptr(in.lib.fmi2SetupExperiment(in.c, tolDefined, e.Tolerance, e.Start, stopDefined, e.Stop))); err != nil {
			return err
		}
		return in.call("fmi2EnterInitializationMode")
	}
	r := in.lib.fmi3EnterInit(in.c, e.Tolerance > 0, e.Tolerance, e.Start, e.Stop > e.Start, e.Stop)
	return in.status("fmi3EnterInitializationMode", uintptr(r))
}

func (in *instance) ExitInitializationMode() error {
	return in.call(in.name("fmi2ExitInitializationMode", "fmi3ExitInitializationMode"))
}

func (in *instance) Terminate() error {
	return in.call(in.name("fmi2Terminate", "fmi3Terminate"))
}

func (in *instance) Free() {
	if in.c == 0 {
		return
	}
	if !in.fatal {
		purego.SyscallN(in.lib.fn[in.name("fmi2FreeInstance", "fmi3FreeInstance")], in.c) // void: no status
	}
	in.c = 0
	in.release()
}

func (in *instance) DoStep(t, h float64) (bool, float64, error) {
	if in.version == fmi.FMI2 {
		r := uintptr(in.lib.fmi2DoStep(in.c, t, h, 1))
		if fmi.Status(int32(r)) == fmi.Discard {
			// The FMU may have ended the simulation (fmi2Terminated says),
			// at the time it reached (fmi2LastSuccessfulTime).
			const fmi2LastSuccessfulTime, fmi2Terminated = 2, 3
			in.flags2[0] = 0
			in.argv = [8]uintptr{in.c, fmi2Terminated, owned(&in.flags2[0])}
			if in.syscall("fmi2GetBooleanStatus", 3) == nil && in.flags2[0] != 0 {
				in.time3 = t
				in.argv = [8]uintptr{in.c, fmi2LastSuccessfulTime, owned(&in.time3)}
				if in.syscall("fmi2GetRealStatus", 3) != nil {
					in.time3 = t
				}
				return true, in.time3, nil
			}
		}
		return false, t + h, in.status("fmi2DoStep", r)
	}
	f := &in.flags3
	*f = [6]bool{}
	in.time3 = t + h
	r := uintptr(in.lib.fmi3DoStep(in.c, t, h, true, &f[0], &f[1], &f[2], &in.time3))
	if err := in.status("fmi3DoStep", r); err != nil && !(f[1] && fmi.Status(int32(r)) == fmi.Discard) {
		return false, t, err
	}
	if !f[1] {
		return false, t + h, nil
	}
	return true, in.time3, nil
}

func (in *instance) EnterEventMode() error {
	return in.call(in.name("fmi2EnterEventMode", "fmi3EnterEventMode"))
}

func (in *instance) UpdateDiscreteStates() (fmi.EventInfo, error) {
	if in.version == fmi.FMI2 {
		in.info2 = fmi2EventInfo{}
		in.argv = [8]uintptr{in.c, owned(&in.info2)}
		if err := in.syscall("fmi2NewDiscreteStates", 2); err != nil {
			return fmi.EventInfo{}, err
		}
		i := &in.info2
		return fmi.EventInfo{DiscreteStatesNeedUpdate: i.newDiscreteStatesNeeded != 0, TerminateSimulation: i.terminateSimulation != 0,
			NominalsOfContinuousStatesChanged: i.nominalsOfContinuousStatesChanged != 0, ValuesOfContinuousStatesChanged: i.valuesOfContinuousStatesChanged != 0,
			NextEventTimeDefined: i.nextEventTimeDefined != 0, NextEventTime: i.nextEventTime}, nil
	}
	f := &in.flags3
	*f = [6]bool{}
	in.time3 = 0
	in.argv = [8]uintptr{in.c, owned(&f[0]), owned(&f[1]), owned(&f[2]), owned(&f[3]), owned(&f[4]), owned(&in.time3)}
	if err := in.syscall("fmi3UpdateDiscreteStates", 7); err != nil {
		return fmi.EventInfo{}, err
	}
	return fmi.EventInfo{DiscreteStatesNeedUpdate: f[0], TerminateSimulation: f[1], NominalsOfContinuousStatesChanged: f[2],
		ValuesOfContinuousStatesChanged: f[3], NextEventTimeDefined: f[4], NextEventTime: in.time3}, nil
}

func (in *instance) EnterContinuousTimeMode() error {
	return in.call(in.name("fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode"))
}

func (in *instance) SetTime(t float64) error {
	return in.status(in.name("fmi2SetTime", "fmi3SetTime"), uintptr(in.lib.setTime(in.c, t)))
}

// vector passes a vector of doubles, fmiXFunction(instance, x[], n): in
// (set) or out (get).
func (in *instance) vector(fmi2, fmi3 string, x []float64, out bool) error {
	if len(x) == 0 {
		in.argv = [8]uintptr{in.c, 0, 0}
		return in.syscall(in.name(fmi2, fmi3), 3)
	}
	buf := typed[float64](in, len(x))
	if !out {
		copy(buf, x)
	}
	in.argv = [8]uintptr{in.c, owned(&buf[0]), uintptr(len(x))}
	err := in.syscall(in.name(fmi2, fmi3), 3)
	if out {
		copy(x, buf)
	}
	return err
}

func (in *instance) SetContinuousStates(x []float64) error {
	return in.vector("fmi2SetContinuousStates", "fmi3SetContinuousStates", x, false)
}

func (in *instance) GetContinuousStates(x []float64) error {
	return in.vector("fmi2GetContinuousStates", "fmi3GetContinuousStates", x, true)
}

func (in *instance) GetDerivatives(dx []float64) error {
	return in.vector("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives", dx, true)
}

func (in *instance) GetEventIndicators(z []float64) error {
	return in.vector("fmi2GetEventIndicators", "fmi3GetEventIndicators", z, true)
}

func (in *instance) GetNominalsOfContinuousStates(nominals []float64) error {
	return in.vector("fmi2GetNominalsOfContinuousStates", "fmi3GetNominalsOfContinuousStates", nominals, true)
}

func (in *instance) CompletedIntegratorStep(noSetPrior bool) (enter, terminate bool, err error) {
	if in.version == fmi.FMI2 {
		in.flags2 = [2]int32{}
		prior := uintptr(0)
		if noSetPrior {
			prior = 1
		}
		in.argv = [8]uintptr{in.c, prior, owned(&in.flags2[0]), owned(&in.flags2[1])}
		err = in.syscall("fmi2CompletedIntegratorStep", 4)
		return in.flags2[0] != 0, in.flags2[1] != 0, err
	}
	f := &in.flags3
	*f = [6]bool{}
	prior := uintptr(0)
	if noSetPrior {
		prior = 1
	}
	in.argv = [8]uintptr{in.c, prior, owned(&f[0]), owned(&f[1])}
	err = in.syscall("fmi3CompletedIntegratorStep", 4)
	return f[0], f[1], err
}
