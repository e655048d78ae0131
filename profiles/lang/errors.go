package lang

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pos is a place in a profile source.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return clip(p.File, MaxNamed)
	}
	return fmt.Sprintf("%s:%d:%d", clip(p.File, MaxNamed), p.Line, p.Col)
}

// Error is one problem in a profile: where it is, which key or value, and
// what was expected.
type Error struct {
	Pos  Pos
	Path string // e.g. hops.core-up.rate
	Msg  string

	// omitted, when positive, makes the entry the count of the problems
	// found after the list was full, rather than a problem: it closes the
	// list, as "... and N more problems".
	omitted int
}

func (e *Error) Error() string {
	switch {
	case e.omitted > 0:
		return e.Msg
	case e.Path == "":
		return e.Pos.String() + ": " + e.Msg
	}
	return e.Pos.String() + ": " + clip(e.Path, MaxNamed) + ": " + e.Msg
}

// ErrorList is every problem found in a profile, in source order, up to
// maxErrors of them; a last entry counts the rest.
type ErrorList []*Error

// MaxErrors bounds the problems a list holds: a file with millions of
// mistakes is reported in a screenful, and its checks stop making
// messages once the list is full (they only count what they find).
const MaxErrors = 100

func (l ErrorList) Error() string {
	lines := make([]string, 0, len(l))
	omitted := 0
	for _, e := range l {
		if e.omitted > 0 {
			omitted += e.omitted // last, wherever a caller sorted it to
			continue
		}
		lines = append(lines, e.Error())
	}
	if omitted > 0 {
		lines = append(lines, omittedEntry(omitted).Msg)
	}
	return strings.Join(lines, "\n")
}

// omittedEntry is the entry that closes a list whose n further problems
// were counted, not kept.
func omittedEntry(n int) *Error {
	more := "problems"
	if n == 1 {
		more = "problem"
	}
	return &Error{Msg: fmt.Sprintf("... and %d more %s", n, more), omitted: n}
}

func (l ErrorList) sorted() ErrorList {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.omitted, b.omitted), cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return l
}

// Err returns nil for an empty list, so callers can return it directly.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l.sorted()
}

// How much of its input a message quotes: a value (in quotes, as Go
// writes it) at most maxQuoted characters, the key path and the file it
// is about at most maxNamed bytes, any other text it is made of at most
// maxText; what is cut ends with "…". A value can be a whole file's line,
// and a file can be 64 MiB of anything.
const (
	MaxQuoted = 80
	MaxNamed  = 200
	maxText   = 1000
)

// Quoted is s as Go quotes it (strconv.Quote), cut so that the quotes and
// what is between them take at most maxQuoted characters.
func Quoted(s string) string {
	if len(s) <= MaxQuoted/4-2 { // every byte fits even escaped as \xff
		return strconv.Quote(s)
	}
	var b strings.Builder
	b.WriteByte('"')
	width := 2 // the quotes
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+size])
		q = q[1 : len(q)-1]
		if width += utf8.RuneCountInString(q); width > MaxQuoted {
			return b.String() + `"…`
		}
		b.WriteString(q)
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// clip is s cut to at most max bytes (on a character's boundary), with
// "…" when it was cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// excerpt is a string argument of a message, printed bounded: %q quotes
// at most maxQuoted characters of it, %s and %v print at most maxText
// bytes.
type excerpt string

func (e excerpt) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprint(f, Quoted(string(e)))
		return
	}
	fmt.Fprint(f, clip(string(e), maxText))
}

// message formats a problem's message with its string arguments bounded
// (see excerpt) and its hints worked out now that they are printed.
func message(format string, args []any) string {
	for i, a := range args {
		switch v := a.(type) {
		case hint:
			args[i] = excerpt(v.String())
		case fmt.Stringer, error:
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				args[i] = excerpt(rv.String())
			}
		}
	}
	return fmt.Sprintf(format, args...)
}

// Listed is names joined with ", ", at most maxListed of them, then how
// many more there are: a message may list the flows of a profile that has
// a hundred thousand.
func Listed(names []string) string {
	const maxListed = 10
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
}
