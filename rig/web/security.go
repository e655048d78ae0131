package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DefaultAddr is where a server listens unless told otherwise: the
// loopback only.
const DefaultAddr = "127.0.0.1:8470"

// TokenEnv is the environment variable that may carry the token instead
// of a flag (which other users of the machine could read in ps).
const TokenEnv = "HILRIG_TOKEN"

// ResolveAddr fills in what an address to listen on leaves out: no host
// is the loopback (127.0.0.1; all interfaces are 0.0.0.0 or [::]), no
// port is 8470, and nothing at all is DefaultAddr.
func ResolveAddr(addr string) string {
	if addr == "" {
		return DefaultAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil { // no port: a host alone, or a port alone
		if _, numeric := strconv.Atoi(addr); numeric == nil {
			host, port = "", addr
		} else {
			host, port = strings.Trim(addr, "[]"), ""
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		_, port, _ = net.SplitHostPort(DefaultAddr)
	}
	return net.JoinHostPort(host, port)
}

// MinTokenLength is the fewest characters a token may have. Sixteen
// random characters are 64 bits as hexadecimal digits and 96 as base64,
// beyond what guessing over a network reaches; NewToken's have 128 bits.
const MinTokenLength = 16

// CheckToken refuses a token that cannot protect a server: an empty one,
// one shorter than MinTokenLength, or one with a character that is not
// printable ASCII. A space or a control character could not come back
// as it was given (an Authorization header's value is trimmed, a query's
// %20 decodes to a space), and a blank token is no secret.
func CheckToken(token string) error {
	if token == "" {
		return errors.New("the token is empty")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			what := "a space"
			switch {
			case c >= 0x80:
				what = "a character beyond ASCII"
			case c != ' ':
				what = fmt.Sprintf("the control character %q", c)
			}
			return fmt.Errorf("the token has %s at character %d: a token is printable ASCII without spaces", what, i+1)
		}
	}
	if len(token) < MinTokenLength {
		return fmt.Errorf("the token is %d characters long, shorter than the %d that resist guessing (--token-file FILE writes a random one to FILE when it does not exist)", len(token), MinTokenLength)
	}
	return nil
}

// NewToken returns a token of 128 random bits, as 32 hexadecimal digits
// (which a terminal selects with a double click, as it does not base64's
// '-').
func NewToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// CheckListen refuses to serve an address that is not a loopback one
// without a token (anyone who can reach the port could change the run),
// and a token that CheckToken refuses on any address.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (want host:port, e.g. %s)", addr, err, DefaultAddr)
	}
	if token != "" {
		return CheckToken(token)
	}
	if isLoopback(host) {
		return nil
	}
	if host == "" {
		host = "every interface"
	}
	return fmt.Errorf("--listen %s: serving %s lets anyone who reaches it change the run; give a token with --token or %s, or --token-file FILE (which writes a new one to FILE when there is none), or listen on 127.0.0.1", addr, host, TokenEnv)
}

// isLoopback reports whether host names the loopback: localhost, or an
// address in 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guard checks every request before it reaches the API: the token, the
// name the client used for the server, and for changes where a browser
// sent them from and what they carry.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opt.Token == "" {
			// Without a token the loopback is the only protection, and a
			// web page can reach it through a name of its own that
			// resolves to 127.0.0.1 (DNS rebinding): only loopback names
			// are served.
			host, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				host = r.Host
			}
			if !isLoopback(host) {
				writeError(w, http.StatusForbidden, fmt.Sprintf("this server answers only to loopback names (127.0.0.1, localhost), not %q; serving other names needs a token", r.Host), "")
				return
			}
		} else if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hilrig"`)
			writeError(w, http.StatusUnauthorized, "a token is needed: Authorization: Bearer TOKEN, or ?token=TOKEN", "")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("requests from %s are not accepted: only from the dashboard's own origin", origin), "")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorized reports whether the request carries the token, as a bearer
// token or (for browsers' WebSockets, which cannot set headers) in the
// query. A token CheckToken refuses authorises nothing, whatever the
// server was given.
func (s *Server) authorized(r *http.Request) bool {
	got := r.URL.Query().Get("token")
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, token, _ := strings.Cut(auth, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		got = strings.TrimSpace(token)
	}
	return CheckToken(got) == nil && tokensMatch(got, s.opt.Token)
}

// tokensMatch compares the SHA-256 digests of two tokens in constant
// time: comparing the tokens themselves would return at once when their
// lengths differ, and tell a guesser the length.
func tokensMatch(presented, token string) bool {
	a, b := sha256.Sum256([]byte(presented)), sha256.Sum256([]byte(token))
	return constantTimeCompare(a[:], b[:]) == 1
}

// constantTimeCompare is crypto/subtle's; a variable so that a test sees
// what it is given.
var constantTimeCompare = subtle.ConstantTimeCompare

// sameOrigin reports whether a browser's Origin is the server's own, as
// the client named it.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && (u.Scheme == "http" || u.Scheme == "https")
}

// errNotJSON is a change whose body is not declared as JSON. Requiring
// the type keeps a web page from sending a change as a plain form: it
// would need the server's consent (CORS), which it never gives.
var errNotJSON = errors.New("a change is sent as JSON: Content-Type: application/json")

func checkJSON(r *http.Request) error {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || t != "application/json" {
		return errNotJSON
	}
	return nil
}
