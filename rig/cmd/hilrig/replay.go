package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hilrig/hilrig/rig"
)

// replayFlag adds --replay ENDPOINT=FILE (repeatable): the bench's
// endpoint is played from a recording instead of opened.
func replayFlag(fs *pflag.FlagSet) *[]string {
	return fs.StringArray("replay", nil, "play the bench's endpoint from a recording (`ENDPOINT=FILE`, a --record of an earlier run) instead of opening it (repeatable)")
}

// players reads the recordings --replay names.
func players(replays []string) (map[string]rig.Player, error) {
	if len(replays) == 0 {
		return nil, nil
	}
	out := map[string]rig.Player{}
	read := map[string]*rig.RecordingFile{}
	for _, r := range replays {
		endpoint, file, ok := cutReplay(r)
		if !ok {
			return nil, fmt.Errorf("--replay %q: want ENDPOINT=FILE", r)
		}
		rec := read[file]
		if rec == nil {
			var err error
			if rec, err = rig.ReadRecording(file); err != nil {
				return nil, fmt.Errorf("--replay: %w", err)
			}
			read[file] = rec
		}
		p, err := rig.Replay(rec, endpoint)
		if err != nil {
			return nil, fmt.Errorf("--replay %s: %w", r, err)
		}
		out[endpoint] = p
	}
	return out, nil
}

// cutReplay splits --replay's ENDPOINT=FILE.
func cutReplay(r string) (endpoint, file string, ok bool) {
	endpoint, file, ok = strings.Cut(r, "=")
	return endpoint, file, ok && endpoint != "" && file != ""
}
