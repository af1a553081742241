package githubtest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// App is the GitHub App a Server plays in App mode: its id, its slug (the
// bot acts as <slug>[bot]) and its private key, as GitHub hands it out.
type App struct {
	ID            int64
	Slug          string
	PrivateKeyPEM []byte
}

// AuthEntry is one request as the App-mode server authenticated it:
// Identity is "app" (the App's JWT), "installation:<id>" (an installation
// token), "user:<login>" (a person's token) or "" (refused).
type AuthEntry struct {
	Method, Path, Identity string
}

type appState struct {
	app      App
	key      *rsa.PrivateKey
	installs map[int64][]string   // installation id → repositories
	tokens   map[string]instToken // installation tokens minted
	users    map[string]string    // a person's token → login
	minted   map[int64]int        // tokens minted per installation
	log      []AuthEntry
	now      func() time.Time
}

type instToken struct {
	installation int64
	expires      time.Time
}

func (a *appState) installed(id int64, repo string) bool {
	return slices.ContainsFunc(a.installs[id], func(r string) bool { return strings.EqualFold(r, repo) })
}

// installationOf is the installation whose token authenticated r.
func installationOf(r *http.Request) (int64, bool) {
	id, ok := r.Context().Value(identityKey{}).(int64)
	return id, ok
}

type identityKey struct{}

// EnableApp turns on App mode: the server is GitHub for the App id (with
// a fresh 2048-bit key), and from then on checks credentials as GitHub
// does. /app endpoints and GET /repos/{owner}/{repo}/installation take
// only the App's JWT (RS256, signed with the App's key, iss the App id,
// issued in the past, expiring within 10 minutes); every other REST
// request and every git fetch or push needs an unexpired installation
// token minted by POST /app/installations/{id}/access_tokens, and sees
// only that installation's repositories (others are 404), or a person's
// token from UserToken. Anything else is 401.
func (f *Server) EnableApp(id int64, slug string) App {
	f.t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.t.Fatal(err)
	}
	app := App{ID: id, Slug: slug, PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.app = &appState{app: app, key: key, installs: map[int64][]string{}, tokens: map[string]instToken{},
		users: map[string]string{}, minted: map[int64]int{}, now: time.Now}
	return app
}

// Install installs the App on repos as installation id.
func (f *Server) Install(id int64, repos ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.app.installs[id] = append(f.app.installs[id], repos...)
}

// UserToken returns a token a person (the test acting as login) uses in
// App mode.
func (f *Server) UserToken(login string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok := "ghp_" + randomHex(f.t)
	f.app.users[tok] = login
	return tok
}

// Minted is how many installation tokens installation id was given.
func (f *Server) Minted(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.app.minted[id]
}

// AuthLog returns every request App mode authenticated (or refused), in
// order.
func (f *Server) AuthLog() []AuthEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.app.log)
}

func randomHex(t interface{ Fatal(...any) }) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// appEndpoint reports the requests GitHub authenticates with the App's
// JWT, not an installation's token.
func appEndpoint(path string) bool {
	if path == "/app" || strings.HasPrefix(path, "/app/") {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/repos/")
	parts := strings.Split(rest, "/")
	return ok && len(parts) == 3 && parts[2] == "installation"
}

// repoOf is owner/name of a /repos/{owner}/{repo}/... path ("" otherwise).
func repoOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/repos/")
	parts := strings.SplitN(rest, "/", 3)
	if !ok || len(parts) < 2 {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// authorize checks r's credentials in App mode, answering GitHub's 401 or
// 404 itself when they do not reach what r asks for. The request it
// returns carries the installation, for handlers that list by it.
func (f *Server) authorize(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.app
	if a == nil {
		return r, true
	}
	cred := r.Header.Get("Authorization")
	for _, scheme := range []string{"Bearer ", "token "} {
		if c, ok := strings.CutPrefix(cred, scheme); ok {
			cred = strings.TrimSpace(c)
		}
	}
	entry := AuthEntry{Method: r.Method, Path: r.URL.Path}
	defer func() { a.log = append(a.log, entry) }()
	if appEndpoint(r.URL.Path) {
		if err := a.verifyJWT(cred); err != nil {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded: " + err.Error()})
			return r, false
		}
		entry.Identity = "app"
		return r, true
	}
	if login, ok := a.users[cred]; ok && cred != "" {
		entry.Identity = "user:" + login
		return r, true
	}
	tok, ok := a.tokens[cred]
	if !ok || !a.now().Before(tok.expires) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return r, false
	}
	entry.Identity = fmt.Sprintf("installation:%d", tok.installation)
	if repo := repoOf(r.URL.Path); repo != "" && !a.installed(tok.installation, repo) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, tok.installation)), true
}

// gitAuth checks git's Basic credentials in App mode: the password is an
// installation token (x-access-token) or a person's token, and the
// repository must be one the installation holds.
func (f *Server) gitAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		a := f.app
		ok, found := a == nil, true
		if a != nil {
			_, pass, _ := r.BasicAuth()
			parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
			repo := ""
			if len(parts) >= 2 {
				repo = parts[0] + "/" + strings.TrimSuffix(parts[1], ".git")
			}
			entry := AuthEntry{Method: "git " + r.Method, Path: r.URL.Path}
			if login, isUser := a.users[pass]; isUser && pass != "" {
				ok, entry.Identity = true, "user:"+login
			} else if tok, isTok := a.tokens[pass]; isTok && a.now().Before(tok.expires) {
				ok, found, entry.Identity = true, a.installed(tok.installation, repo), fmt.Sprintf("installation:%d", tok.installation)
			}
			a.log = append(a.log, entry)
		}
		f.mu.Unlock()
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		case !found:
			http.Error(w, "Repository not found.", http.StatusNotFound)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// verifyJWT checks the App's JWT as GitHub does: RS256 over header and
// claims with the App's key, iss the App id (a string or a number), iat
// not in the future (a minute of clock drift allowed), exp in the future
// but at most 10 minutes away.
func (a *appState) verifyJWT(tok string) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil || header.Alg != "RS256" {
		return fmt.Errorf("header alg %q, want RS256 (%v)", header.Alg, err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&a.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return errors.New("signature does not verify with the App's key")
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat float64         `json:"iat"`
		Exp float64         `json:"exp"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("claims: %w", err)
	}
	want := strconv.FormatInt(a.app.ID, 10)
	if iss := strings.Trim(string(claims.Iss), `"`); iss != want {
		return fmt.Errorf("'Issuer' claim ('iss') %s, want the App id %s", claims.Iss, want)
	}
	now := a.now()
	iat, exp := time.Unix(int64(claims.Iat), 0), time.Unix(int64(claims.Exp), 0)
	switch {
	case claims.Iat == 0 || iat.After(now.Add(time.Minute)):
		return errors.New("'Issued at' claim ('iat') must be an Integer representing a time in the past")
	case !exp.After(now):
		return errors.New("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires")
	case exp.After(now.Add(10*time.Minute + 30*time.Second)):
		return errors.New("'Expiration time' claim ('exp') is too far in the future")
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// appRoutes are the App's own endpoints (App mode only; 404 otherwise).
func (f *Server) appRoutes(mux *http.ServeMux) {
	appOnly := func(h func(w http.ResponseWriter, r *http.Request, a *appState)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.app == nil {
				writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
				return
			}
			h(w, r, f.app)
		}
	}
	installation := func(a *appState, id int64) map[string]any {
		return map[string]any{"id": id, "app_id": a.app.ID, "app_slug": a.app.Slug, "target_type": "Organization",
			"account": userJSON(strings.Split(a.installs[id][0], "/")[0]), "repository_selection": "selected",
			"access_tokens_url": fmt.Sprintf("%s/app/installations/%d/access_tokens", f.URL, id), "permissions": map[string]string{}}
	}
	mux.HandleFunc("GET /app", appOnly(func(w http.ResponseWriter, r *http.Request, a *appState) {
		writeJSON(w, http.StatusOK, map[string]any{"id": a.app.ID, "slug": a.app.Slug, "name": a.app.Slug, "owner": userJSON("acme")})
	}))
	mux.HandleFunc("GET /app/installations", appOnly(func(w http.ResponseWriter, r *http.Request, a *appState) {
		out := []map[string]any{}
		ids := make([]int64, 0, len(a.installs))
		for id := range a.installs {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, installation(a, id))
		}
		writeJSON(w, http.StatusOK, out)
	}))
	mux.HandleFunc("GET /repos/{owner}/{repo}/installation", appOnly(func(w http.ResponseWriter, r *http.Request, a *appState) {
		name := r.PathValue("owner") + "/" + r.PathValue("repo")
		for id := range a.installs {
			if a.installed(id, name) {
				writeJSON(w, http.StatusOK, installation(a, id))
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}))
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", appOnly(func(w http.ResponseWriter, r *http.Request, a *appState) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if _, ok := a.installs[id]; !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		tok := "ghs_" + randomHex(f.t)
		expires := a.now().Add(time.Hour)
		a.tokens[tok] = instToken{installation: id, expires: expires}
		a.minted[id]++
		writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": expires.UTC().Format(time.RFC3339),
			"permissions":          map[string]string{"contents": "write", "pull_requests": "write", "issues": "write", "checks": "write"},
			"repository_selection": "selected"})
	}))
}
