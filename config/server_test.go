package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, wantErr string
	}{
		{"minimal github", "github:\n  tokenFile: t\n", ""},
		{"unknown field", "github:\n  tokenFile: t\nworkerz: 3\n", "workerz"},
		{"nested unknown", "github:\n  tokenFlie: t\n", "github.tokenFlie"},
		{"no forge", "listen: :9090\n", "configure github, gitlab or both"},
		{"both modes", "github:\n  appID: 1\n  privateKeyFile: k\n  tokenFile: t\n", "exclude each other"},
		{"bad duration", "resyncInterval: often\ngitlab: {tokenFile: t}\n", "want a positive Go duration"},
		{"bad fan-out", "fanOut: sideways\ngitlab: {tokenFile: t}\n", "want direct or dispatch"},
		{"bad write mode", "writeMode: none\ngitlab: {tokenFile: t}\n", `writeMode "none": want standard or single`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseServer("server.yaml", []byte(tc.in))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("ParseServer: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("ParseServer error = %v, want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

func TestServerDefaultsAndSecrets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hook"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "server.yaml")
	if err := os.WriteFile(path, []byte("github:\n  webhookSecretFile: hook\ngitlab:\n  projects: [g/sub/p]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadServer(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Listen != ":8080" || s.BotName != "kptbot" || s.BotLogin != "" || s.Resync != 10*time.Minute || s.Workers != 4 || s.QueueSize != 1000 || s.GitLab.BaseURL != "https://gitlab.com/api/v4" {
		t.Errorf("defaults = %+v", s)
	}
	if b, err := s.Secret(s.GitHub.WebhookSecretFile, EnvGitHubWebhookSecret); err != nil || string(b) != "s3cret" {
		t.Errorf("secret from a relative file = %q, %v", b, err)
	}
	t.Setenv(EnvGitLabToken, " glpat-x ")
	if b, err := s.Secret("", EnvGitLabToken); err != nil || string(b) != "glpat-x" {
		t.Errorf("secret from the environment = %q, %v", b, err)
	}
}
