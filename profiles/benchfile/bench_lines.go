package benchfile

import (
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
)

// The settings of the devices whose frames are cut from a byte stream
// (serial ports, pseudo-terminals, TCP): a line's character format and its
// framing.

// LineSettings are a serial line's character format.
type LineSettings struct {
	Baud     *int         `yaml:"baud" doc:"bits per second; any rate the driver accepts, standard or not" default:"115200"`
	DataBits *int         `yaml:"data_bits" doc:"5, 6, 7 or 8" default:"8"`
	Parity   *ParityName  `yaml:"parity" doc:"none, odd, even, mark or space" default:"none"`
	StopBits *StopBitSpec `yaml:"stop_bits" doc:"1, 1.5 or 2" default:"1"`
}

// FrameSettings say how a byte stream is cut into frames.
type FrameSettings struct {
	Framing   *FramingName   `yaml:"framing" doc:"line (a delimiter ends a frame), slip, cobs, fixed (frame_size bytes) or idle (a silence ends a frame)" default:"line"`
	Delimiter *string        `yaml:"delimiter" doc:"line: the bytes that end a frame, not part of it; without it a received line ends at CR, LF or CRLF (as terminals send them) and a written one with LF" default:"CR, LF or CRLF; LF written"`
	FrameSize *lang.Size     `yaml:"frame_size" doc:"fixed: the size of every frame"`
	Gap       *lang.Duration `yaml:"gap" doc:"idle: the silence that ends a frame; over TCP, which has no character time, give it" default:"3.5 characters on a serial line"`
	MaxFrame  *lang.Size     `yaml:"max_frame" doc:"longer frames are dropped and counted" default:"4096B"`
	Codec     *LineCodec     `yaml:"codec" doc:"wire: the frames are rig wire protocol messages (firmware/README.md) in COBS frames; the rig forwards them as they are, tracks them and the device's heartbeat, and syncs with the device's clock to measure the one-way delay from it (the summary's wire)" default:"none: the frames are opaque"`
}

// Enumerations of a line's settings.
type (
	ParityName  string
	FramingName string
	LineCodec   string
	StopBitSpec string
)

func (v *ParityName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a parity", "none", "odd", "even", "mark", "space")
}
func (v *FramingName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a framing", "line", "slip", "cobs", "fixed", "idle")
}
func (v *LineCodec) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a line codec", "wire")
}
func (v *StopBitSpec) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a number of stop bits", "1", "1.5", "2")
}

func (ParityName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "none, odd, even, mark or space", Example: ""}
}
func (FramingName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "line, slip, cobs, fixed or idle", Example: ""}
}
func (LineCodec) TypeInfo() lang.TypeInfo   { return lang.TypeInfo{What: "wire", Example: ""} }
func (StopBitSpec) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "1, 1.5 or 2", Example: ""} }

func (s *LineSettings) check(d *lang.Decoder, path string) {
	if s.Baud != nil && *s.Baud <= 0 {
		d.ErrorAt(path+".baud", "must be positive")
	}
	if s.DataBits != nil && (*s.DataBits < 5 || *s.DataBits > 8) {
		d.ErrorAt(path+".data_bits", "must be 5, 6, 7 or 8")
	}
}

// framingKeys says which framing each framing-specific key belongs to.
var framingKeys = []struct{ key, framing string }{{"delimiter", "line"}, {"frame_size", "fixed"}, {"gap", "idle"}}

func (s *FrameSettings) check(d *lang.Decoder, path string) {
	framing := "line"
	if s.Codec != nil {
		framing = "cobs" // the wire protocol's
	}
	if s.Framing != nil {
		framing = string(*s.Framing)
		if s.Codec != nil && framing != "cobs" {
			d.ErrorAt(path+".framing", "codec wire carries COBS frames; leave framing out or make it cobs")
		}
	}
	given := map[string]bool{"delimiter": s.Delimiter != nil, "frame_size": s.FrameSize != nil, "gap": s.Gap != nil}
	for _, k := range framingKeys {
		if given[k.key] && k.framing != framing {
			d.ErrorAt(path+"."+k.key, "%s goes with framing: %s", k.key, k.framing)
		}
	}
	switch {
	case framing == "fixed" && s.FrameSize == nil:
		d.ErrorAt(path, "framing fixed needs frame_size")
	case s.FrameSize != nil && (*s.FrameSize <= 0 || *s.FrameSize > 1<<20):
		d.ErrorAt(path+".frame_size", "must be between 1B and 1MiB")
	case s.Delimiter != nil && *s.Delimiter == "":
		d.ErrorAt(path+".delimiter", "must not be empty")
	case s.Gap != nil && *s.Gap <= 0:
		d.ErrorAt(path+".gap", "must be positive")
	case s.MaxFrame != nil && (*s.MaxFrame <= 0 || *s.MaxFrame > 1<<20):
		d.ErrorAt(path+".max_frame", "must be between 1B and 1MiB")
	}
}

// Wire reports whether the frames are wire protocol messages (codec wire).
func (s *FrameSettings) Wire() bool { return s.Codec != nil }

// Defaults of the bench, applied by whoever builds the endpoints.
const (
	DefaultBaud     = 115200
	DefaultMaxFrame = 4096
)

// Settings returns the line settings with defaults filled in.
func (s LineSettings) Settings() (baud, dataBits int, parity string, stopBits string) {
	baud, dataBits, parity, stopBits = DefaultBaud, 8, "none", "1"
	if s.Baud != nil {
		baud = *s.Baud
	}
	if s.DataBits != nil {
		dataBits = *s.DataBits
	}
	if s.Parity != nil {
		parity = string(*s.Parity)
	}
	if s.StopBits != nil {
		stopBits = string(*s.StopBits)
	}
	return
}

// FramingSpec is a framing with its parameters, defaults filled in.
type FramingSpec struct {
	Name      string
	Delimiter string
	// AnyLineEnd: a line framing without a delimiter given ends a received
	// line at CR, LF or CRLF.
	AnyLineEnd bool
	Size       int
	Gap        time.Duration // 0: 3.5 characters
	MaxFrame   int
	// Wire: the frames are rig wire protocol messages (codec wire).
	Wire bool
}

// Spec returns the framing settings with defaults filled in.
func (s FrameSettings) Spec() FramingSpec {
	f := FramingSpec{Name: "line", Delimiter: "\n", MaxFrame: DefaultMaxFrame}
	if s.Codec != nil {
		f.Name, f.Wire = "cobs", true
	}
	if s.Framing != nil {
		f.Name = string(*s.Framing)
	}
	if s.Delimiter != nil {
		f.Delimiter = *s.Delimiter
	} else {
		f.AnyLineEnd = f.Name == "line"
	}
	if s.FrameSize != nil {
		f.Size = int(*s.FrameSize)
	}
	if s.Gap != nil {
		f.Gap = time.Duration(*s.Gap)
	}
	if s.MaxFrame != nil {
		f.MaxFrame = int(*s.MaxFrame)
	}
	if f.Size > 0 {
		f.MaxFrame = max(f.MaxFrame, f.Size)
	}
	return f
}
