package benchfile

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hilrig/hilrig/profiles/lang"
	"go.yaml.in/yaml/v4"
)

// Device endpoint kinds register here, each from its own file (as periph's
// driverreg has drivers register): its bench key, its settings' struct,
// whose tags are its keys in the bench language, and its line in the key
// reference. The bench's decoder, its "give only one of" message, the
// checks of a bench and the key reference read the registry, so a new
// kind is its file here and its driver's in rig (rig/endpoint_KIND.go),
// which a test keeps in agreement with this list.

// DeviceConfig is a device endpoint's settings as a bench writes them: a
// pointer to a kind's struct.
type DeviceConfig interface {
	// check reports what is wrong with the settings; path is the kind's
	// key (endpoints.NAME.KIND).
	check(c *deviceCheck, path string)
	// Frames returns how the device's byte stream is cut into frames, nil
	// when the device has no stream to cut (datagrams, GPIO edges).
	Frames() *FrameSettings
	// Wire reports whether the device's frames are rig wire protocol
	// messages (codec wire).
	Wire() bool
}

// DeviceKind is a kind of device endpoint.
type DeviceKind struct {
	Key string // its key in a bench: serial, pty, gpio, udp, tcp
	Doc string // its line in the key reference
	// Bytes: its frames are bytes (a line's frames, datagrams), which a
	// model exchanges; GPIO edges are not.
	Bytes bool
	// Place orders the kinds in messages and the key reference: lines
	// first (serial, then their virtual stand-in), pins, then sockets.
	Place  int
	config reflect.Type // the settings' struct, not the pointer
}

// New returns empty settings of the kind.
func (k *DeviceKind) New() DeviceConfig { return reflect.New(k.config).Interface().(DeviceConfig) }

var deviceRegistry struct {
	sync.Mutex
	kinds  []DeviceKind
	schema reflect.Type // made of kinds when first needed
}

// registerDevice registers kind, whose settings are of config's type. It
// is called from the kind's file, at init.
func registerDevice(kind DeviceKind, config DeviceConfig) {
	r := &deviceRegistry
	r.Lock()
	defer r.Unlock()
	t := reflect.TypeOf(config)
	switch {
	case t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct:
		panic("profiles: device kind " + kind.Key + "'s settings are not a pointer to a struct")
	case kind.Key == "" || kind.Doc == "":
		panic(fmt.Sprintf("profiles: device kind %T needs a key and a doc line", config))
	}
	for _, k := range r.kinds {
		if k.Key == kind.Key || k.config == t.Elem() {
			panic("profiles: device kind " + kind.Key + " registered twice")
		}
	}
	kind.config = t.Elem()
	r.kinds = append(slices.Clip(r.kinds), kind)
	slices.SortStableFunc(r.kinds, func(a, b DeviceKind) int { return a.Place - b.Place })
	r.schema = nil
}

// DeviceKinds returns the device endpoint kinds in their order. The caller
// must not change them.
func DeviceKinds() []DeviceKind {
	r := &deviceRegistry
	r.Lock()
	defer r.Unlock()
	return r.kinds
}

// DeviceKindOf returns the kind whose settings c is.
func DeviceKindOf(c DeviceConfig) (*DeviceKind, bool) {
	kinds := DeviceKinds()
	t := reflect.TypeOf(c)
	for i := range kinds {
		if t.Kind() == reflect.Pointer && kinds[i].config == t.Elem() {
			return &kinds[i], true
		}
	}
	return nil, false
}

// endpointSchema is the struct the bench language decodes an endpoint
// into: a pointer field per device kind, tagged with its key and doc, then
// Endpoint's own alternatives (model, fmu, replay).
func endpointSchema() reflect.Type {
	r := &deviceRegistry
	r.Lock()
	defer r.Unlock()
	if r.schema == nil {
		r.schema = schemaOf(r.kinds)
	}
	return r.schema
}

func schemaOf(kinds []DeviceKind) reflect.Type {
	var fields []reflect.StructField
	for _, k := range kinds {
		fields = append(fields, reflect.StructField{
			Name: "Device_" + k.Key,
			Type: reflect.PointerTo(k.config),
			Tag:  reflect.StructTag(fmt.Sprintf("yaml:%q doc:%q", k.Key, k.Doc)),
		})
	}
	own := reflect.TypeFor[Endpoint]()
	for i := range own.NumField() {
		if f := own.Field(i); f.Tag.Get("yaml") != "" {
			fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	return reflect.StructOf(fields)
}

func (*Endpoint) SchemaType() reflect.Type { return endpointSchema() }

// DecodeNode decodes an endpoint through its schema, then keeps the one
// alternative given.
func (e *Endpoint) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want %s, got %s", lang.WantOf(reflect.TypeFor[Endpoint]()), lang.Describe(n))
		return
	}
	schema := endpointSchema()
	s := reflect.New(schema).Elem()
	d.DecodeFields(n, s, path, lang.FieldsOf(schema), true)
	own := reflect.ValueOf(e).Elem()
	for i := range schema.NumField() {
		v := s.Field(i)
		if v.IsNil() {
			continue
		}
		sf := schema.Field(i)
		e.Kind = sf.Tag.Get("yaml")
		if c, device := v.Interface().(DeviceConfig); device {
			e.Device = c
		} else {
			own.FieldByName(sf.Name).Set(v)
		}
	}
}

// deviceCheck is what a kind's check needs of the bench around it.
type deviceCheck struct {
	d         *lang.Decoder
	endpoint  string            // the endpoint's name
	listening map[string]string // "udp ADDR" → the endpoint listening there
}

// listenOnce reports a second socket listening at proto's addr.
func (c *deviceCheck) listenOnce(path, proto string, addr *string) {
	if addr == nil {
		return
	}
	if other, taken := c.listening[proto+" "+*addr]; taken {
		c.d.ErrorAt(path, "%s listens on %s %s already; one socket per address", other, proto, *addr)
		return
	}
	c.listening[proto+" "+*addr] = c.endpoint
}

// A bindingChecker is a device whose frames need a certain kind of device
// at the other end of a flow (GPIO edges need pins to replay them on).
type bindingChecker interface {
	checkBinding(d *lang.Decoder, b *Bench, path, from, to string)
}

// byteKinds lists the kinds a model's frames may go to, for messages.
func byteKinds() string {
	var keys []string
	for _, k := range DeviceKinds() {
		if k.Bytes {
			keys = append(keys, k.Key)
		}
	}
	return orList(keys)
}

// orList writes a, b, c or d.
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// checkAddresses checks a socket's listen or dial address, exactly one of
// which it has.
func checkAddresses(d *lang.Decoder, path string, listen, dial *string) {
	if (listen == nil) == (dial == nil) {
		d.ErrorAt(path, "give listen or dial")
		return
	}
	key, addr := "listen", listen
	if dial != nil {
		key, addr = "dial", dial
	}
	checkHostPort(d, path+"."+key, *addr)
}

// checkHostPort checks an address as the run will use it: host:port, the
// port a number up to 65535 (a host name is looked up at the run).
func checkHostPort(d *lang.Decoder, path, addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		d.ErrorAt(path, "%q is not host:port", addr)
		return false
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || port == "" {
		d.ErrorAt(path, "%q: the port must be a number from 0 to 65535", addr)
		return false
	} else if n == 0 && !strings.HasSuffix(path, ".listen") {
		d.ErrorAt(path, "%q: port 0 is only for listen (any free port)", addr)
		return false
	}
	return true
}

func positiveDuration(d *lang.Decoder, path string, v *lang.Duration) {
	if v != nil && *v <= 0 {
		d.ErrorAt(path, "must be positive")
	}
}
