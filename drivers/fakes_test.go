package drivers

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Fakes of the rig's side for the package's own tests, which cannot use
// driverstest's (driverstest imports this package).

// noticed keeps the notices a sink was given, and when; it is safe for
// concurrent use.
type noticed struct {
	mu   sync.Mutex
	said []string
}

func (s *noticed) Frame(int, []byte, time.Duration)      {}
func (s *noticed) Gone(int, time.Duration, error)        {}
func (s *noticed) Back(int, time.Duration)               {}
func (s *noticed) Read(int, *ReaderMeter, time.Duration) {}
func (s *noticed) Notice(_ int, at time.Duration, kind string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.said = append(s.said, fmt.Sprintf("%v %s: %v", at, kind, err))
}

// notices are the notices so far, as "at kind: error".
func (s *noticed) notices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.said...)
}

// setClock is a clock the test sets.
type setClock struct{ now time.Duration }

func (c *setClock) Now() time.Duration { return c.now }

// goneSink is a sink that counts the devices gone and keeps the notices.
type goneSink struct {
	noticed
	gone atomic.Int32
}

func (s *goneSink) Gone(int, time.Duration, error) { s.gone.Add(1) }
