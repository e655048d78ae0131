package web

import (
	"crypto/subtle"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		want  string // "" when taken
	}{
		{"", "the token is empty"},
		{" ", "a space at character 1"},
		{strings.Repeat(" ", 20), "a space at character 1"},
		{"\t", "the control character '\\t' at character 1"},
		{"0123456789abcdef\n", "the control character '\\n' at character 17"},
		{"0123456789 abcdef", "a space at character 11"},
		{"0123456789abcdéf", "a character beyond ASCII at character 15"},
		{"s3cret", "is 6 characters long, shorter than the 16"},
		{"0123456789abcde", "is 15 characters long, shorter than the 16"},
		{"0123456789abcdef", ""},
		{"~!#$%&'()*+,-./:;<=>?@[]^_`{|}", ""},
		{NewToken(), ""},
	} {
		err := CheckToken(tc.token)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckToken(%q) = %v, want %q", tc.token, err, tc.want)
		}
	}
	a, b := NewToken(), NewToken()
	if len(a) != 32 || a == b || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("NewToken: %q, then %q", a, b)
	}
}

// TestCheckListenChecksTheToken: a token given is checked on any address,
// the loopback's too; no token is refused beyond the loopback only.
func TestCheckListenChecksTheToken(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"0.0.0.0:8470", " ", false},
		{"0.0.0.0:8470", "short", false},
		{"127.0.0.1:8470", " ", false},
		{"127.0.0.1:8470", "", true},
		{"0.0.0.0:8470", "", false},
		{"0.0.0.0:8470", "0123456789abcdef", true},
	} {
		if err := CheckListen(tc.addr, tc.token); (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, %q) = %v", tc.addr, tc.token, err)
		}
	}
}

// TestTokenComparedInConstantTime: the presented token is compared with
// crypto/subtle's constant-time comparison, and what it compares is two
// digests of one length whatever the length of the token presented, so
// that the time taken tells nothing of the token's length either. A
// token that is blank, or too short to be one, authorises nothing, even
// on a server given that very token.
func TestTokenComparedInConstantTime(t *testing.T) {
	if reflect.ValueOf(constantTimeCompare).Pointer() != reflect.ValueOf(subtle.ConstantTimeCompare).Pointer() {
		t.Fatal("tokens are not compared by crypto/subtle.ConstantTimeCompare")
	}
	var lengths [][2]int
	constantTimeCompare = func(x, y []byte) int {
		lengths = append(lengths, [2]int{len(x), len(y)})
		return subtle.ConstantTimeCompare(x, y)
	}
	defer func() { constantTimeCompare = subtle.ConstantTimeCompare }()

	const token = "0123456789abcdef-and-more"
	for _, tc := range []struct {
		server, query, header string
		ok                    bool
	}{
		{token, "token=" + token, "", true},
		{token, "", "Bearer " + token, true},
		{token, "", "Bearer  " + token + " ", true},
		{token, "token=" + token[:len(token)-1] + "X", "", false},
		{token, "token=" + token[:20], "", false},
		{token, "token=" + token + "0", "", false},
		{token, "token=" + strings.Repeat("x", 1000), "", false},
		{token, "token=", "", false},
		{token, "", "Bearer " + strings.ToUpper(token), false},
		// A server given a token it should have refused: presenting it
		// does not let one in.
		{" ", "token=%20", "", false},
		{" ", "", "Bearer  ", false},
		{"", "token=", "", false},
		{"short", "token=short", "", false},
	} {
		lengths = lengths[:0]
		s := &Server{opt: Options{Token: tc.server}}
		r := httptest.NewRequest("PATCH", "/api/v1/hops/a?"+tc.query, nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := s.authorized(r); got != tc.ok {
			t.Errorf("server token %q, ?%.60s, Authorization %q: authorised %v", tc.server, tc.query, tc.header, got)
		}
		for _, l := range lengths {
			if l != [2]int{32, 32} {
				t.Errorf("server token %q, ?%.60s: compared %d bytes with %d, not two SHA-256 digests", tc.server, tc.query, l[0], l[1])
			}
		}
	}
}
