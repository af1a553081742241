package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Server is the configuration of `kptbot serve` (and of replay, which
// needs the same forges).
type Server struct {
	Listen  string `json:"listen,omitempty"`
	BotName string `json:"botName,omitempty"`
	// BotLogin is the bot's account on GitHub, whose comments hold its
	// state; empty asks GitHub (the App's slug + "[bot]", or the token's
	// user). On GitLab the bot is always the token's user.
	// its state (default: botName + "[bot]").
	BotLogin string `json:"botLogin,omitempty"`
	// ResyncInterval is a Go duration ("10m"); Resync is its value.
	ResyncInterval string          `json:"resyncInterval,omitempty"`
	Resync         time.Duration   `json:"-"`
	Workers        int             `json:"workers,omitempty"`
	QueueSize      int             `json:"queueSize,omitempty"`
	GitHub         *GitHubServer   `json:"github,omitempty"`
	GitLab         *GitLabServer   `json:"gitlab,omitempty"`
	Functions      FunctionsPolicy `json:"functions,omitempty"`
	// FanOut is direct (default: the server opens every follower's change)
	// or dispatch (it tells each follower's own CI to do so).
	FanOut string `json:"fanOut,omitempty"`
	// WriteMode is standard (default: each change the bot opens or moves
	// costs two REST writes, the change and its check) or single (one:
	// the change alone, its render result in its description, no check
	// unless branch protection requires it, no labels where the forge's
	// create call takes none).
	WriteMode string `json:"writeMode,omitempty"`

	// dir is the config file's directory, for relative paths.
	dir string
}

// The write modes (Server.WriteMode).
const (
	WriteStandard = "standard"
	WriteSingle   = "single"
)

// IsWriteMode reports whether m names a write mode (empty is not one: each
// caller says what its default is).
func IsWriteMode(m string) bool { return m == WriteStandard || m == WriteSingle }

// GitHubServer configures the GitHub side: App mode (appID +
// privateKeyFile) or token mode (tokenFile).
type GitHubServer struct {
	BaseURL           string `json:"baseURL,omitempty"`
	AppID             int64  `json:"appID,omitempty"`
	PrivateKeyFile    string `json:"privateKeyFile,omitempty"`
	TokenFile         string `json:"tokenFile,omitempty"`
	WebhookSecretFile string `json:"webhookSecretFile,omitempty"`
	// Repositories are resynced in token mode (an App lists its
	// installations' repositories instead).
	Repositories []string `json:"repositories,omitempty"`
}

// GitLabServer configures the GitLab side.
type GitLabServer struct {
	BaseURL           string   `json:"baseURL,omitempty"`
	TokenFile         string   `json:"tokenFile,omitempty"`
	WebhookSecretFile string   `json:"webhookSecretFile,omitempty"`
	Projects          []string `json:"projects,omitempty"`
}

// FunctionsPolicy is what may run beyond the built-in functions.
type FunctionsPolicy struct {
	AllowExec       bool     `json:"allowExec,omitempty"`
	AllowContainers bool     `json:"allowContainers,omitempty"`
	AllowedImages   []string `json:"allowedImages,omitempty"`
}

// Environment variables that hold secrets instead of files.
const (
	EnvGitHubPrivateKey    = "KPTBOT_GITHUB_PRIVATE_KEY"
	EnvGitHubToken         = "KPTBOT_GITHUB_TOKEN"
	EnvGitHubWebhookSecret = "KPTBOT_GITHUB_WEBHOOK_SECRET"
	EnvGitLabToken         = "KPTBOT_GITLAB_TOKEN"
	EnvGitLabWebhookSecret = "KPTBOT_GITLAB_WEBHOOK_SECRET"
)

// LoadServer reads and validates a server configuration file, applying
// defaults; unknown fields are errors naming the field and its line.
func LoadServer(path string) (*Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading server config: %w", err)
	}
	s, err := ParseServer(path, data)
	if err != nil {
		return nil, err
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

// ParseServer parses a server configuration held in memory.
func ParseServer(name string, data []byte) (*Server, error) {
	ps := &problems{file: name}
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&n); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", name, err)
	}
	s := &Server{}
	if len(n.Content) > 0 {
		checkFields(ps, 0, n.Content[0], reflect.TypeOf(Server{}), "")
		if err := ps.err(); err != nil {
			return nil, err
		}
		if err := sigsyaml.Unmarshal(data, s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if s.Listen == "" {
		s.Listen = ":8080"
	}
	if s.BotName == "" {
		s.BotName = "kptbot"
	}
	var errs []error
	s.Resync = 10 * time.Minute
	if s.ResyncInterval != "" {
		d, err := time.ParseDuration(s.ResyncInterval)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: resyncInterval %q: want a positive Go duration such as 10m or 90s", name, s.ResyncInterval))
		}
		s.Resync = d
	}
	if s.Workers == 0 {
		s.Workers = 4
	}
	if s.QueueSize == 0 {
		s.QueueSize = 1000
	}
	if s.WriteMode != "" && !IsWriteMode(s.WriteMode) {
		errs = append(errs, fmt.Errorf("%s: writeMode %q: want %s or %s", name, s.WriteMode, WriteStandard, WriteSingle))
	}
	if s.FanOut != "" && s.FanOut != "direct" && s.FanOut != "dispatch" {
		errs = append(errs, fmt.Errorf("%s: fanOut %q: want direct or dispatch", name, s.FanOut))
	}
	if s.Workers < 1 || s.QueueSize < 1 {
		errs = append(errs, fmt.Errorf("%s: workers and queueSize must be at least 1", name))
	}
	if s.GitHub == nil && s.GitLab == nil {
		errs = append(errs, fmt.Errorf("%s: configure github, gitlab or both", name))
	}
	if g := s.GitHub; g != nil {
		if g.AppID != 0 && g.TokenFile != "" {
			errs = append(errs, fmt.Errorf("%s: github: appID (App mode) and tokenFile (token mode) exclude each other", name))
		}
		if g.AppID != 0 && g.PrivateKeyFile == "" && os.Getenv(EnvGitHubPrivateKey) == "" {
			errs = append(errs, fmt.Errorf("%s: github.privateKeyFile (or $%s) is required with appID", name, EnvGitHubPrivateKey))
		}
	}
	if s.GitLab != nil && s.GitLab.BaseURL == "" {
		s.GitLab.BaseURL = "https://gitlab.com/api/v4"
	}
	return s, errors.Join(errs...)
}

// Secret reads a secret from file (relative to the config file) or, when
// file is empty, from the environment variable env. Surrounding
// whitespace is trimmed: files often end in a newline.
func (s *Server) Secret(file, env string) ([]byte, error) {
	if file == "" {
		v := os.Getenv(env)
		if v == "" {
			return nil, nil
		}
		return []byte(strings.TrimSpace(v)), nil
	}
	if !filepath.IsAbs(file) && s.dir != "" {
		file = filepath.Join(s.dir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading secret: %w", err)
	}
	return bytes.TrimSpace(b), nil
}
