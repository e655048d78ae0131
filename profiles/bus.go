package profiles

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// Bus makes a hop a shared medium: every flow that crosses it sends from a
// station, and the stations contend for one channel.
type Bus struct {
	Kind        BusKind              `yaml:"kind,required" doc:"csma-cd: half-duplex Ethernet's carrier sense, collisions and back-off; can: CAN's arbitration by identifier"`
	Rate        *lang.Rate           `yaml:"rate" doc:"bit rate of the channel" default:"10Mbit (csma-cd), 500kbit (can)"`
	Slot        *lang.Duration       `yaml:"slot" doc:"csma-cd: the back-off's unit" default:"512 bit times"`
	Jam         *lang.Duration       `yaml:"jam" doc:"csma-cd: how long a station that detects a collision goes on sending" default:"32 bit times"`
	Gap         *lang.Duration       `yaml:"gap" doc:"how long the channel must have been idle before a station sends (csma-cd: the inter-frame gap; can: the intermission)" default:"96 bit times (csma-cd), 3 bit times (can)"`
	Propagation *lang.Duration       `yaml:"propagation" doc:"csma-cd: how long a station's signal takes to reach the others; stations that start within it of each other collide" default:"0s"`
	BackOff     *BackOffRule         `yaml:"backoff" doc:"csma-cd: after the k-th collision of a frame wait r slots, r uniform on [0, 2^min(k, cap)) (exponential: IEEE 802.3) or on [0, min(k+1, cap)) (linear: paper 002's reference implementation)" default:"exponential"`
	BackOffCap  *int                 `yaml:"backoff_cap" doc:"csma-cd: the back-off's cap" default:"10"`
	Attempts    *int                 `yaml:"attempts" doc:"csma-cd: attempts after which a frame is dropped (status collision_drop)" default:"16"`
	FrameTime   *FrameTimeRule       `yaml:"frame_time" doc:"csma-cd: exact, (size+overhead)·8/rate; or slots, whole slots: 1 + ⌊(size+overhead)·8 / bits per slot⌋ (paper 002's reference implementation: 100 B take 2 slots)" default:"exact"`
	Overhead    *lang.Size           `yaml:"overhead" doc:"bytes added to every frame on the channel (preamble, header, checksum)" default:"0B"`
	Queue       *lang.Limit          `yaml:"queue" doc:"limit on what waits at each station, not counting the frame it is sending; a frame over it is dropped (queue_drop)" default:"unlimited"`
	Stations    lang.Map[BusStation] `yaml:"stations" doc:"stations that send several flows from one queue, by name; a flow not listed is a station of its own, named after it"`
	IDs         lang.Map[CANID]      `yaml:"ids" doc:"can: 11-bit identifiers (0 to 0x7ff, CAN 2.0A) by station (or flow) name; the lower wins arbitration" default:"stations in order: listed stations first, then flows, from 0"`
}

// BusStation is a station that sends several flows.
type BusStation struct {
	Flows []FlowName `yaml:"flows,required" doc:"the flows sent from this station, in one queue"`
}

func (Bus) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a bus", Example: "{kind: csma-cd, rate: 10Mbit}"}
}

// BusKind is how a bus is shared.
type BusKind string

func (k *BusKind) ParseScalar(s string) error {
	return lang.ParseEnum(k, s, "a bus kind", "csma-cd", "can")
}

func (BusKind) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "csma-cd or can", Example: ""} }

// BackOffRule is how a CSMA/CD station backs off.
type BackOffRule string

func (r *BackOffRule) ParseScalar(s string) error {
	return lang.ParseEnum(r, s, "a back-off", "exponential", "linear")
}

func (BackOffRule) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "exponential or linear", Example: ""}
}

// FrameTimeRule is how long a frame occupies a CSMA/CD bus.
type FrameTimeRule string

func (r *FrameTimeRule) ParseScalar(s string) error {
	return lang.ParseEnum(r, s, "a frame time", "exact", "slots")
}

func (FrameTimeRule) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "exact or slots", Example: ""}
}

// CANID is a CAN 2.0A identifier, 11 bits: the engine's frame times are
// those of 2.0A data frames (a 29-bit identifier of the extended format
// would take 20 bits more, and arbitrate on its first 11 bits and the IDE
// bit), so larger identifiers are refused rather than timed wrong.
type CANID uint32

func (c *CANID) ParseScalar(s string) error {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 32)
	if err != nil {
		return errors.New("is not a CAN identifier (want a whole number from 0 to 0x7ff, e.g. 0x100 or 256)")
	}
	if v > 0x7ff {
		return errors.New("is not an 11-bit CAN identifier (want 0 to 0x7ff: frames are timed as CAN 2.0A's; 29-bit extended identifiers are not supported)")
	}
	*c = CANID(v)
	return nil
}

func (CANID) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a CAN identifier", Example: "0x100, 256"}
}

// String writes an identifier in hexadecimal, as CAN tools show them.
func (c CANID) String() string { return fmt.Sprintf("%#x", uint32(c)) }

// buildBus turns a hop's bus into the engine's, once the flows are known;
// path is the hop's.
func (p *Profile) buildBus(d *lang.Decoder, path string, hopIndex int, h *Hop) *emulator.Bus {
	b := h.Bus
	path += ".bus"
	out := b.settings(d, path)
	// Stations: the named ones first, then a flow of its own for every
	// other flow that crosses the bus.
	crosses := func(f int) bool {
		for _, hop := range p.Flows.Values[f].Route {
			if p.Hops.Index(string(hop)) == hopIndex {
				return true
			}
		}
		return false
	}
	out.Stations = p.busStations(d, path, b, crosses)
	out.StationNames = append([]string(nil), b.Stations.Names...)
	names := append([]string(nil), b.Stations.Names...)
	for f, name := range p.Flows.Names {
		if out.Stations[f] < 0 && crosses(f) {
			names = append(names, name)
		}
	}
	if out.Kind == emulator.CANBus {
		out.IDs = b.canIDs(d, path, names)
	}
	return &out
}

// settings is the engine's bus of the kind and rate b gives, with the
// timing and limits b sets; a key of the other kind's is refused.
func (b *Bus) settings(d *lang.Decoder, path string) emulator.Bus {
	kind := emulator.CSMACD
	if b.Kind == "can" {
		kind = emulator.CANBus
	}
	var rate emulator.Rate
	if b.Rate != nil {
		if rate = emulator.Rate(*b.Rate); rate <= 0 {
			d.ErrorAt(path+".rate", "must be positive")
		}
	}
	out := emulator.StandardBus(kind, rate)
	b.checkKeysOfKind(d, path, kind)
	for _, dur := range []struct {
		key string
		v   *lang.Duration
		to  *time.Duration
	}{{"slot", b.Slot, &out.Slot}, {"jam", b.Jam, &out.Jam}, {"gap", b.Gap, &out.Gap}, {"propagation", b.Propagation, &out.Propagation}} {
		if dur.v != nil {
			if *dur.v < 0 || dur.key == "slot" && *dur.v == 0 {
				d.ErrorAt(path+"."+dur.key, "must be positive")
			}
			*dur.to = time.Duration(*dur.v)
		}
	}
	if b.BackOff != nil && *b.BackOff == "linear" {
		out.BackOff = emulator.LinearBackOff
	}
	if b.BackOffCap != nil {
		if *b.BackOffCap < 1 || *b.BackOffCap > 30 {
			d.ErrorAt(path+".backoff_cap", "must be 1 to 30")
		}
		out.BackOffCap = *b.BackOffCap
	}
	if b.Attempts != nil {
		if *b.Attempts < 1 {
			d.ErrorAt(path+".attempts", "must be at least 1")
		}
		out.MaxAttempts = *b.Attempts
	}
	if b.FrameTime != nil && *b.FrameTime == "slots" {
		out.FrameTime = emulator.SlotTime
	}
	if b.Overhead != nil {
		out.Overhead = int(*b.Overhead)
	}
	if b.Queue != nil {
		out.Queue = emulator.Limit(*b.Queue)
	}
	return out
}

// checkKeysOfKind refuses the keys of a bus of the other kind: a CAN
// bus's arbitration has no slots, jams or back-off, and a CSMA/CD bus no
// identifiers.
func (b *Bus) checkKeysOfKind(d *lang.Decoder, path string, kind emulator.BusKind) {
	csmaOnly := func(key string, given bool) {
		if given && kind != emulator.CSMACD {
			d.ErrorAt(path+"."+key, "only a csma-cd bus has a %s", strings.ReplaceAll(key, "_", " "))
		}
	}
	csmaOnly("slot", b.Slot != nil)
	csmaOnly("jam", b.Jam != nil)
	csmaOnly("propagation", b.Propagation != nil)
	csmaOnly("backoff", b.BackOff != nil)
	csmaOnly("backoff_cap", b.BackOffCap != nil)
	csmaOnly("attempts", b.Attempts != nil)
	csmaOnly("frame_time", b.FrameTime != nil)
	if kind == emulator.CSMACD && b.IDs.Len() > 0 {
		d.ErrorAt(path+".ids", "only a can bus has identifiers")
	}
}

// busStations is the named station each flow is sent from (-1: a station
// of its own), by flow index, checking that each flow a station lists
// crosses the bus and is listed once.
func (p *Profile) busStations(d *lang.Decoder, path string, b *Bus, crosses func(int) bool) []int {
	stations := make([]int, p.Flows.Len())
	for f := range stations {
		stations[f] = -1
	}
	for s, name := range b.Stations.Names {
		if p.Flows.Index(name) >= 0 && !slices.Contains(b.Stations.Values[s].Flows, FlowName(name)) {
			d.ErrorAt(lang.Join(path+".stations", name), "is the name of a flow that is not in it: a flow not listed is a station of its own, of its name")
		}
		for j, fl := range b.Stations.Values[s].Flows {
			at := fmt.Sprintf("%s.flows[%d]", lang.Join(path+".stations", name), j)
			switch f := p.Flows.Index(string(fl)); {
			case f < 0:
				d.ErrorAt(at, "no flow named %q%s", fl, lang.DidYouMean(string(fl), p.Flows.Names))
			case !crosses(f):
				d.ErrorAt(at, "flow %q does not cross this bus", fl)
			case stations[f] >= 0:
				d.ErrorAt(at, "flow %q is already sent from station %q", fl, b.Stations.Names[stations[f]])
			default:
				stations[f] = s
			}
		}
	}
	return stations
}

// canIDs is the identifier of each station of a CAN bus, by names (the
// stations in order): its index unless ids gives one, each unique.
func (b *Bus) canIDs(d *lang.Decoder, path string, names []string) []uint32 {
	ids := make([]uint32, len(names))
	given := map[uint32]string{}
	for i, name := range names {
		ids[i] = uint32(i)
		if k := b.IDs.Index(name); k >= 0 {
			ids[i] = uint32(*b.IDs.Values[k])
			if other, dup := given[ids[i]]; dup {
				d.ErrorAt(lang.Join(path+".ids", name), "identifier %#x is %q's too: identifiers on a CAN bus are unique", ids[i], other)
			}
			given[ids[i]] = name
		}
	}
	for _, name := range b.IDs.Names {
		if !slices.Contains(names, name) {
			d.ErrorAt(lang.Join(path+".ids", name), "no station named %q on this bus%s", name, lang.DidYouMean(name, names))
		}
	}
	return ids
}
