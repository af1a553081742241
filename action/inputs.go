package action

import (
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/kptbot/kptbot/config"
)

// Input names, as action.yml declares them. A test checks that action.yml
// declares exactly these, so an input cannot be added on one side only.
const (
	InputToken    = "token"
	InputConfig   = "config"
	InputMode     = "mode"
	InputDryRun   = "dry-run"
	InputLogLevel = "log-level"
	InputBotLogin = "bot-login"
	InputFanOut   = "fan-out"
	InputWrites   = "write-mode"
)

// InputNames lists every input the action reads.
func InputNames() []string {
	return []string{InputToken, InputConfig, InputMode, InputDryRun, InputLogLevel, InputBotLogin, InputFanOut, InputWrites}
}

// Output names, as action.yml declares them.
const (
	OutputChanges   = "changes"
	OutputPublished = "published"
)

// OutputNames lists every output the action writes.
func OutputNames() []string { return []string{OutputChanges, OutputPublished} }

// Modes. The empty mode handles the triggering event and then reconciles
// the repository: the event gets a prompt answer and the reconcile repairs
// whatever a missed run left behind.
const (
	ModeDefault   = ""
	ModeEvent     = "event"
	ModeReconcile = "reconcile"
)

// GitHubInputEnv is the variable GitHub Actions sets for an action input:
// INPUT_ and the name upper-cased with spaces as underscores; hyphens are
// kept (INPUT_DRY-RUN), which is why the code never reads them through a
// shell.
func GitHubInputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// VariableEnv is the variable that sets an input outside an action: in a
// GitLab CI job (whose variable names cannot hold hyphens) or in a plain
// `run:` step. KPTBOT_ and the name upper-cased with hyphens as underscores
// (KPTBOT_DRY_RUN).
func VariableEnv(name string) string {
	return "KPTBOT_" + strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(name))
}

// Inputs are the action's inputs, parsed and checked.
type Inputs struct {
	// Token authenticates to the forge. Never logged.
	Token string
	// Config is the path of kptbot.yaml in the repository, read from the
	// default branch; empty means the bot's usual places.
	Config   string
	Mode     string
	DryRun   bool
	LogLevel slog.Level
	// BotLogin is the account the token acts as on GitHub (empty:
	// github-actions[bot], GITHUB_TOKEN's). The bot trusts only comments
	// by this login, since its state lives in them.
	BotLogin string
	// FanOut is FanOutDirect or FanOutDispatch.
	FanOut string
	// WriteMode is config.WriteStandard or config.WriteSingle, as the
	// server's writeMode: single opens each change the bot opens for a
	// variant in one REST write.
	WriteMode string
}

// Fan-out modes: after a publish, open each follower's change from this
// job (direct), or tell each follower's own CI to do it (dispatch).
const (
	FanOutDirect   = "direct"
	FanOutDispatch = "dispatch"
)

// botLoginPattern is a GitHub login, optionally an App's "[bot]" account.
var botLoginPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`) })

// input reads one input: the action's INPUT_ variable first, then the
// KPTBOT_ variable, trimmed as GitHub's own toolkit trims inputs.
func input(getenv func(string) string, name string) string {
	if v := strings.TrimSpace(getenv(GitHubInputEnv(name))); v != "" {
		return v
	}
	return strings.TrimSpace(getenv(VariableEnv(name)))
}

// readInputs parses the inputs. tokenFallback names the variable the forge's
// CI sets with a usable token (GITHUB_TOKEN; GITLAB_TOKEN by convention).
func readInputs(getenv func(string) string, tokenFallback string) (Inputs, error) {
	in := Inputs{
		Token:  input(getenv, InputToken),
		Config: input(getenv, InputConfig),
		Mode:   input(getenv, InputMode),
	}
	if in.Token == "" && tokenFallback != "" {
		in.Token = strings.TrimSpace(getenv(tokenFallback))
	}
	if in.Token == "" {
		return Inputs{}, fmt.Errorf("input %s: no token: set the %q input (%s) or %s", InputToken, InputToken, VariableEnv(InputToken), tokenFallback)
	}
	switch in.Mode {
	case ModeDefault, ModeEvent, ModeReconcile:
	default:
		return Inputs{}, fmt.Errorf("input %s: %q: expected %q, %q or empty (event, then reconcile)", InputMode, in.Mode, ModeEvent, ModeReconcile)
	}
	if in.Config != "" {
		clean := path.Clean(strings.TrimPrefix(in.Config, "./"))
		if path.IsAbs(in.Config) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(in.Config, `\`) {
			return Inputs{}, fmt.Errorf("input %s: %q: expected a slash path inside the repository, such as kptbot.yaml or .github/kptbot.yaml", InputConfig, in.Config)
		}
		in.Config = clean
	}
	in.BotLogin = input(getenv, InputBotLogin)
	if in.BotLogin != "" && !botLoginPattern().MatchString(in.BotLogin) {
		return Inputs{}, fmt.Errorf("input %s: %q: expected a GitHub login such as my-app[bot] (an App's slug followed by [bot])", InputBotLogin, in.BotLogin)
	}
	switch in.FanOut = input(getenv, InputFanOut); in.FanOut {
	case "":
		in.FanOut = FanOutDirect
	case FanOutDirect, FanOutDispatch:
	default:
		return Inputs{}, fmt.Errorf("input %s: %q: expected %q or %q", InputFanOut, in.FanOut, FanOutDirect, FanOutDispatch)
	}
	if in.WriteMode = input(getenv, InputWrites); in.WriteMode == "" {
		in.WriteMode = config.WriteStandard
	}
	if !config.IsWriteMode(in.WriteMode) {
		return Inputs{}, fmt.Errorf("input %s: %q: expected %q or %q", InputWrites, in.WriteMode, config.WriteStandard, config.WriteSingle)
	}
	var err error
	if in.DryRun, err = parseBool(input(getenv, InputDryRun)); err != nil {
		return Inputs{}, fmt.Errorf("input %s: %w", InputDryRun, err)
	}
	level := input(getenv, InputLogLevel)
	if level == "" && getenv("RUNNER_DEBUG") == "1" {
		level = "debug" // "Re-run with debug logging" on GitHub
	}
	if in.LogLevel, err = parseLevel(level); err != nil {
		return Inputs{}, fmt.Errorf("input %s: %w", InputLogLevel, err)
	}
	return in, nil
}

// parseBool accepts the YAML 1.2 core booleans, as GitHub's
// core.getBooleanInput does; empty is false.
func parseBool(s string) (bool, error) {
	switch s {
	case "", "false", "False", "FALSE":
		return false, nil
	case "true", "True", "TRUE":
		return true, nil
	}
	return false, fmt.Errorf("%q: expected true or false", s)
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q: expected debug, info, warn or error", s)
}
